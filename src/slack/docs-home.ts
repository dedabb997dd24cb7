import type { HomeView } from '@slack/types';
import type { WebClient } from '@slack/web-api';
import type { DocsReader, WorkspaceRef } from '../workspaces/docs-admin.ts';
import { connectedBlocks, notConnectedHome } from './connect-blocks.ts';
import type { HomePublisher, WorkspaceHome } from './home.ts';

/**
 * The App Home of a distributed workspace: before a docs project is connected, the
 * connect page (./connect-blocks.ts) alone; once one is, the jobs Home (./home.ts) with the
 * docs project's part after it, and its agent budget meter for that project.
 */

/** The jobs Home's workspace part: the docs project, as this person may act on it. */
export function workspaceHome(reader: Pick<DocsReader, 'stateOfTeam'>): WorkspaceHome {
  return async (teamId, userId) => {
    const state = await reader.stateOfTeam(teamId);
    return { blocks: connectedBlocks(state, userId), projectId: state.connection?.projectId };
  };
}

/** The Home of a workspace with no docs project connected, as this person sees it. */
export function notConnectedHomeOf(reader: Pick<DocsReader, 'state'>) {
  return async (ws: WorkspaceRef, userId: string): Promise<HomeView> =>
    notConnectedHome(await reader.state(ws), userId);
}

/** Publishes the person's Home as it is now: after a connect, a disconnect, a settings save. */
export function docsHomePublisher(reader: Pick<DocsReader, 'state'>, home: HomePublisher) {
  return async (ws: WorkspaceRef, userId: string, client: WebClient): Promise<void> => {
    const state = await reader.state(ws);
    if (state.connection && ws.teamId) {
      await home.publish(ws.teamId, userId, ws.enterpriseId ?? undefined);
      return;
    }
    await client.views.publish({ user_id: userId, view: notConnectedHome(state, userId) });
  };
}
