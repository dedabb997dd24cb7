import type { App } from '@slack/bolt';
import type { Logger } from '../log.ts';
import {
  type AccessDeps,
  type Args,
  type Requester,
  readRequester,
  refuse,
} from './access-middleware.ts';
import { NOT_CONNECTED_TEXT, notConnectedHome } from './connect-blocks.ts';

/**
 * Distributed mode: a workspace that installed Docs Agent but has no docs project connected
 * reaches no listener, so nothing of it reaches the docs API. The person asking is told how
 * to connect, and only them: an ephemeral answer (a command's ack, a mention's or DM's
 * ephemeral, a button's or form's reply), or the Home tab's explanation. Requests with no
 * person (edits, bot messages) stop silently. The install's lifecycle events pass: they are
 * how an uninstall is heard.
 */

/** The workspace a request was authorized for, as the docs connections are keyed. */
export interface GateWorkspace {
  enterpriseId: string | undefined;
  teamId: string | undefined;
}

export interface DocsGateDeps extends Pick<AccessDeps, 'isJobThread'> {
  /** Whether the workspace has a docs project connected (its key stays sealed). */
  connected(ws: GateWorkspace): Promise<boolean>;
  log: Logger;
}

/** Events that must reach their listeners whatever the workspace's state. */
const LIFECYCLE = new Set(['app_uninstalled', 'tokens_revoked']);

function eventOf(body: unknown): { type?: unknown; tab?: unknown } | undefined {
  return (body as { event?: { type?: unknown; tab?: unknown } } | undefined)?.event;
}

export function registerDocsGate(app: App, deps: DocsGateDeps): void {
  const log = deps.log.child({ component: 'docs-gate' });
  app.use(async (args: Args) => {
    const event = eventOf(args.body);
    if (typeof event?.type === 'string' && LIFECYCLE.has(event.type)) return args.next();
    const ws = { enterpriseId: args.context.enterpriseId, teamId: args.context.teamId };
    if ((ws.teamId || ws.enterpriseId) && (await deps.connected(ws))) return args.next();
    const who = readRequester(args.body);
    // No person asking, or the Messages tab opened: nothing to say.
    if (!who || (who.surface === 'home' && event?.tab !== 'home')) return;
    const told = await tell(args, who, deps).catch((err: unknown) => {
      log.warn({ err, surface: who.surface, ...ws }, 'docs.not_connected_answer_failed');
      return false;
    });
    log.info({ surface: who.surface, ...ws, told }, 'docs.not_connected');
  });
}

/** The person alone hears how to connect; the Home tab shows it. */
async function tell(args: Args, who: Requester, deps: DocsGateDeps): Promise<boolean> {
  if (who.surface !== 'home') return refuse(args, who, NOT_CONNECTED_TEXT, deps);
  await args.client.views.publish({ user_id: who.userId, view: notConnectedHome() });
  return true;
}
