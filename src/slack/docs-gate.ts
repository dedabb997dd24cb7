import type { App } from '@slack/bolt';
import type { HomeView } from '@slack/types';
import type { Logger } from '../log.ts';
import {
  type AccessDeps,
  type Args,
  type Requester,
  readRequester,
  refuse,
} from './access-middleware.ts';
import { DOCS_ACTIONS, DOCS_VIEWS, NOT_CONNECTED_TEXT } from './connect-blocks.ts';

/**
 * Distributed mode: a workspace that installed Docs Agent but has no docs project connected
 * reaches no listener, so nothing of it reaches the docs API. The person asking is told how
 * to connect, and only them: an ephemeral answer (a command's ack, a mention's or DM's
 * ephemeral, a button's or form's reply), or the Home tab, where an admin finds the Connect
 * button. Requests with no person (edits, bot messages) stop silently. Two kinds pass: the
 * install's lifecycle events (how an uninstall is heard), and the Home's docs buttons and
 * forms (how a workspace connects; their listener admits admins only), and `/agent doctor`
 * (which says how to connect, and calls no API while nothing is connected).
 */

/** The workspace a request was authorized for, as the docs connections are keyed. */
export interface GateWorkspace {
  enterpriseId: string | undefined;
  teamId: string | undefined;
  isEnterpriseInstall?: boolean | undefined;
}

export interface DocsGateDeps extends Pick<AccessDeps, 'isJobThread'> {
  /** Whether the workspace has a docs project connected (its key stays sealed). */
  connected(ws: GateWorkspace): Promise<boolean>;
  /** The Home tab of a workspace with none connected, as this person sees it. */
  home(ws: GateWorkspace, userId: string): Promise<HomeView>;
  log: Logger;
}

const ADMIN_ACTIONS = new Set<string>(Object.values(DOCS_ACTIONS));
const ADMIN_VIEWS = new Set<string>(Object.values(DOCS_VIEWS));

/** A click on the Home's docs buttons, or one of their forms submitted. */
function isDocsAdmin(body: unknown): boolean {
  const b = body as {
    type?: unknown;
    actions?: { action_id?: unknown }[];
    view?: { callback_id?: unknown };
  };
  if (b?.type === 'block_actions')
    return (
      Array.isArray(b.actions) &&
      b.actions.length > 0 &&
      b.actions.every((a) => ADMIN_ACTIONS.has(String(a?.action_id)))
    );
  return b?.type === 'view_submission' && ADMIN_VIEWS.has(String(b.view?.callback_id));
}

/**
 * `/agent doctor`: it says whether the workspace is connected (and how to connect) without
 * calling the docs API, so it is answered in a workspace with nothing connected too.
 */
function isDoctor(body: unknown): boolean {
  const b = body as { command?: unknown; text?: unknown };
  return b?.command === '/agent' && typeof b.text === 'string' && /^\s*doctor\s*$/i.test(b.text);
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
    if (isDocsAdmin(args.body) || isDoctor(args.body)) return args.next();
    const ws = {
      enterpriseId: args.context.enterpriseId,
      teamId: args.context.teamId,
      isEnterpriseInstall: args.context.isEnterpriseInstall,
    };
    if ((ws.teamId || ws.enterpriseId) && (await deps.connected(ws))) return args.next();
    const who = readRequester(args.body);
    // No person asking, or the Messages tab opened: nothing to say.
    if (!who || (who.surface === 'home' && event?.tab !== 'home')) return;
    const told = await tell(args, who, ws, deps).catch((err: unknown) => {
      log.warn({ err, surface: who.surface, ...ws }, 'docs.not_connected_answer_failed');
      return false;
    });
    log.info({ surface: who.surface, ...ws, told }, 'docs.not_connected');
  });
}

/** The person alone hears how to connect; the Home tab shows it (and, to an admin, how). */
async function tell(
  args: Args,
  who: Requester,
  ws: GateWorkspace,
  deps: DocsGateDeps,
): Promise<boolean> {
  if (who.surface !== 'home') return refuse(args, who, NOT_CONNECTED_TEXT, deps);
  await args.client.views.publish({ user_id: who.userId, view: await deps.home(ws, who.userId) });
  return true;
}
