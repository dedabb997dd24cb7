import type {
  AllMiddlewareArgs,
  SlackActionMiddlewareArgs,
  SlackViewMiddlewareArgs,
} from '@slack/bolt';
import { z } from 'zod';
import type { Logger } from '../../log.ts';
import {
  type DocsReader,
  type DocsState,
  isAdmin,
  type WorkspaceRef,
} from '../../workspaces/docs-admin.ts';
import { refusalModal } from '../access-middleware.ts';
import { readFormWorkspace } from '../connect-form.ts';

/**
 * Who may use the App Home's docs buttons and forms (./docs-admin.ts): a workspace admin of
 * the workspace the request was authorized for (Bolt's context: the installation that
 * answered for the request's team), as the stored installation and settings say, never as
 * the payload claims. Whatever the payload says of a workspace besides (the view's team, a
 * form's metadata) must be that same workspace. A refusal is one `docs.admin_refused` line
 * of ids, and an answer: a refused form turns into a note, a refused click is acknowledged
 * (and a person who is no admin is shown their Home as it is).
 */

export type ActionArgs = SlackActionMiddlewareArgs & AllMiddlewareArgs;
export type ViewArgs = SlackViewMiddlewareArgs & AllMiddlewareArgs;
type Args = ActionArgs | ViewArgs;
export type Surface = 'action' | 'view';

/** What the listeners read of a request, beside the workspace Slack's signature vouches for. */
const Claims = z.looseObject({
  user: z.looseObject({ id: z.string().min(1) }),
  trigger_id: z.string().optional(),
  view: z
    .looseObject({
      team_id: z.string().nullish(),
      private_metadata: z.string().optional(),
      state: z.looseObject({ values: z.unknown() }).optional(),
    })
    .nullish(),
});

export interface Admitted {
  ws: WorkspaceRef;
  userId: string;
  state: DocsState;
  claims: z.infer<typeof Claims>;
}

type Refusal = 'other_workspace' | 'not_installed' | 'not_admin' | 'malformed';

const REFUSED: Record<Refusal, string> = {
  not_admin:
    'Only a Docs Agent admin of this workspace (whoever installed it, or someone on its admin list) can change its docs connection and settings. Nothing was changed.',
  other_workspace: 'This form belongs to another workspace. Nothing was changed.',
  not_installed: 'Docs Agent is not installed in this workspace. Nothing was changed.',
  malformed: 'This form could not be read. Nothing was changed; open it again from the Home tab.',
};

export interface AdmitDeps {
  docs: Pick<DocsReader, 'state'>;
  /** Shows a refused person their Home as it is now (never throws). */
  home(ws: WorkspaceRef, userId: string, args: ActionArgs): Promise<void>;
  log: Logger;
}

/** The request's workspace, person and docs state if they may; else refused and undefined. */
export async function admit(
  args: Args,
  surface: Surface,
  name: string,
  deps: AdmitDeps,
): Promise<Admitted | undefined> {
  const ctx = args.context;
  const ws = {
    enterpriseId: ctx.enterpriseId,
    teamId: ctx.teamId,
    isEnterpriseInstall: ctx.isEnterpriseInstall,
  };
  const parsed = Claims.safeParse(args.body);
  const claims = parsed.data;
  const claimed = claims && claimedWorkspace(claims, surface);
  let refusal: Refusal | undefined;
  let state: DocsState | undefined;
  if (!claims || !claimed || (surface === 'view' && !claimed.form)) refusal = 'malformed';
  else if (!sameWorkspace(ws, claimed)) refusal = 'other_workspace';
  else {
    state = await deps.docs.state(ws);
    if (!state.installed) refusal = 'not_installed';
    else if (!isAdmin(state, claims.user.id)) refusal = 'not_admin';
  }
  if (!refusal && state && claims) return { ws, userId: claims.user.id, state, claims };
  const reason = refusal ?? 'malformed';
  deps.log.warn(
    {
      reason,
      surface,
      name,
      userId: claims?.user.id,
      teamId: ws.teamId,
      enterpriseId: ws.enterpriseId,
      claimedTeamId: claimed?.form?.teamId ?? claimed?.viewTeamId,
      claimedEnterpriseId: claimed?.form?.enterpriseId,
    },
    'docs.admin_refused',
  );
  await refuse(args, surface, reason, ws, claims?.user.id, deps);
  return undefined;
}

async function refuse(
  args: Args,
  surface: Surface,
  refusal: Refusal,
  ws: WorkspaceRef,
  userId: string | undefined,
  deps: AdmitDeps,
): Promise<void> {
  if (surface === 'view') {
    const view = refusalModal(REFUSED[refusal]);
    await (args as ViewArgs).ack({ response_action: 'update', view });
    return;
  }
  await (args as ActionArgs).ack();
  // Their Home may be out of date (no longer an admin): show them the one they have now.
  if (refusal === 'not_admin' && userId) await deps.home(ws, userId, args as ActionArgs);
}

/** The workspace a request's view says it is of: the view's team, and a form's metadata. */
function claimedWorkspace(c: z.infer<typeof Claims>, surface: Surface) {
  const form = surface === 'view' ? readFormWorkspace(c.view?.private_metadata) : undefined;
  return { form, viewTeamId: c.view?.team_id ?? undefined };
}

/** Every claim present names the workspace the request was authorized for. */
function sameWorkspace(ws: WorkspaceRef, claimed: ReturnType<typeof claimedWorkspace>): boolean {
  const team = ws.teamId || null;
  const enterprise = ws.enterpriseId || null;
  if (claimed.viewTeamId !== undefined && claimed.viewTeamId !== team) return false;
  if (!claimed.form) return true;
  return claimed.form.teamId === team && claimed.form.enterpriseId === enterprise;
}
