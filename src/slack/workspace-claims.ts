import type { App } from '@slack/bolt';
import type { Logger } from '../log.ts';
import type { Args } from './access-middleware.ts';

/**
 * Distributed mode serves many workspaces from one app: a request acts for the workspace
 * Slack authorized it for, and for nothing of another. What a payload says of a workspace
 * beside that (an event envelope's team, a form's metadata, a stored row a button names) is
 * a claim: it must be the authorized workspace's, or the request is refused.
 *
 * This file holds the payload-level rules (the stored rows' are the services': a thread, a
 * gap, a docs connection each know their workspace):
 * - an event whose envelope names another team (or org) than the install it was delivered
 *   for (`authorizations[0]`, which Bolt authorizes) is acted on by no listener, and by no
 *   pre-ack record either: Slack vouches for the authorization, not for the envelope's team;
 * - an interaction's workspace is the one Bolt authorizes it by (`payloadTeam`).
 */

/** The workspace an event envelope names, and the install it was delivered for. */
interface EventClaims {
  envelope: { teamId: string | undefined; enterpriseId: string | undefined };
  authorized: { teamId: string | undefined; enterpriseId: string | undefined; orgWide: boolean };
}

function eventClaims(body: unknown): EventClaims | undefined {
  const b = body as {
    type?: unknown;
    team_id?: unknown;
    enterprise_id?: unknown;
    authorizations?: {
      team_id?: unknown;
      enterprise_id?: unknown;
      is_enterprise_install?: unknown;
    }[];
  } | null;
  if (b?.type !== 'event_callback') return undefined;
  const auth = Array.isArray(b.authorizations) ? b.authorizations[0] : undefined;
  if (!auth) return undefined;
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  return {
    envelope: { teamId: str(b.team_id), enterpriseId: str(b.enterprise_id) },
    authorized: {
      teamId: str(auth.team_id),
      enterpriseId: str(auth.enterprise_id),
      orgWide: auth.is_enterprise_install === true,
    },
  };
}

/** The authorized workspace, and the one the envelope claims (ids only, for the log). */
export interface Mismatch {
  teamId: string | undefined;
  enterpriseId: string | undefined;
  claimedTeamId: string | undefined;
  claimedEnterpriseId: string | undefined;
}

/**
 * Why an event's envelope is not the authorized workspace's, or undefined when it is (or
 * the body is no event, or names no install). A workspace install must be the envelope's
 * team; an org-wide install (no team of its own) must be the envelope's org.
 */
export function envelopeMismatch(body: unknown): Mismatch | undefined {
  const c = eventClaims(body);
  if (!c) return undefined;
  const { envelope, authorized } = c;
  const teamDiffers =
    authorized.teamId !== undefined &&
    envelope.teamId !== undefined &&
    envelope.teamId !== authorized.teamId;
  const orgDiffers =
    (authorized.orgWide || envelope.enterpriseId !== undefined) &&
    envelope.enterpriseId !== authorized.enterpriseId;
  if (!teamDiffers && !orgDiffers) return undefined;
  return {
    teamId: authorized.teamId,
    enterpriseId: authorized.enterpriseId,
    claimedTeamId: envelope.teamId,
    claimedEnterpriseId: envelope.enterpriseId,
  };
}

/**
 * The team an interaction (a click, a form) is authorized by, read as Bolt reads it: a
 * form opened across a Slack Connect channel names the installing team; otherwise the
 * payload's team, else the person's.
 */
export function payloadTeam(body: unknown): string | undefined {
  const b = body as {
    team?: { id?: unknown } | null;
    user?: { team_id?: unknown } | null;
    view?: { app_installed_team_id?: unknown } | null;
  } | null;
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  return str(b?.view?.app_installed_team_id) ?? str(b?.team?.id) ?? str(b?.user?.team_id);
}

/**
 * Distributed mode, before every other middleware: an event whose envelope names another
 * workspace than its authorization reaches nothing. Nobody is answered (the person, if
 * any, is not known to the workspace the bot could answer in); one `workspace.refused` line
 * of ids says so.
 */
export function registerWorkspaceClaims(app: App, log: Logger): void {
  const child = log.child({ component: 'workspace-claims' });
  app.use(async (args: Args) => {
    const mismatch = envelopeMismatch(args.body);
    if (!mismatch) return args.next();
    const event = (args.body as { event?: { type?: unknown } }).event;
    child.warn(
      {
        surface: 'event',
        type: typeof event?.type === 'string' ? event.type : undefined,
        reason: 'other_workspace',
        ...mismatch,
      },
      'workspace.refused',
    );
  });
}
