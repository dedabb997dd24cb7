import { ApiError, NotConnected } from './api/errors.ts';
import { PROJECT_ID } from './config/config.ts';
import type { Logger } from './log.ts';
import { escapeMrkdwn } from './mrkdwn.ts';
import type { ChannelProject, Store } from './store/types.ts';

/**
 * Which docs project a channel works on: the configured one (MINTLIFY_PROJECT_ID), or the
 * one `/agent project <id>` bound it to (in distributed mode, the one its workspace
 * connected, and no binding). Jobs, budgets and `/visitors` in the channel follow
 * it. A project with a key in MINTLIFY_PROJECT_KEYS is called with that key, any other with
 * the organisation's admin key. A binding is made only to a project the agent API knows
 * (one cheap read first). Knows nothing of Slack beyond the ids it is given.
 */
export interface ProjectsDeps {
  store: Pick<Store, 'channelProject' | 'bindChannelProject' | 'unbindChannelProject'>;
  defaultProjectId: string;
  /** Projects that have a key of their own (the keys stay with the API client). */
  keyedProjects: readonly string[];
  /** Who may change a binding (ADMIN_USERS). */
  adminUsers: readonly string[];
  /** Reads the project from the agent API (with its key): rejects with `NotFound` when unknown. */
  checkProject: (projectId: string) => Promise<void>;
  /**
   * Distributed mode: the project a workspace connected from the App Home. Every channel of
   * the workspace uses it, and `/agent project <id>` changes nothing: the workspace's key was
   * checked against that project alone, and only an admin of the workspace replaces it.
   */
  connected?: ((teamId: string) => Promise<ConnectedProject | undefined>) | undefined;
  log: Logger;
  now?: () => number;
}

/** A workspace's connected docs project (distributed mode), as the vault keeps it. */
export interface ConnectedProject {
  projectId: string;
  connectedBy: string;
  connectedAt: number;
}

/** Why `/agent project <id>` changed nothing. */
export type ProjectRefusal =
  | 'not_admin'
  | 'malformed'
  | 'unknown_project'
  | 'check_failed'
  | 'connected_project';

/** `/agent project default` (or `reset`) goes back to the configured project. */
const BACK_TO_DEFAULT = /^(default|reset|none)$/i;

export function createProjects(deps: ProjectsDeps) {
  const now = deps.now ?? Date.now;
  const log = deps.log.child({ component: 'projects' });
  const keyed = new Set(deps.keyedProjects);
  const admins = new Set(deps.adminUsers);
  const keyNote = (id: string) =>
    keyed.has(id) ? 'with its own API key' : "with the organisation's admin key";

  /**
   * The channel's binding, if it has one (the configured project otherwise); in distributed
   * mode the workspace's connected project, as set by whoever connected it.
   */
  async function binding(teamId: string, channelId: string): Promise<ChannelProject | undefined> {
    if (!deps.connected) return deps.store.channelProject(teamId, channelId);
    const c = await deps.connected(teamId);
    return (
      c && { teamId, channelId, projectId: c.projectId, setBy: c.connectedBy, setAt: c.connectedAt }
    );
  }

  /** The project the channel's jobs and budget use. */
  async function forChannel(teamId: string, channelId: string): Promise<string> {
    const b = await binding(teamId, channelId);
    if (deps.connected && !b) throw new NotConnected('project.read');
    return b?.projectId ?? deps.defaultProjectId;
  }

  /** `/agent project`: what the channel uses, and who set it. */
  async function describe(teamId: string, channelId: string): Promise<string> {
    const b = await binding(teamId, channelId);
    if (deps.connected) return connectedText(b);
    if (!b)
      return `This channel uses the default project \`${escapeMrkdwn(deps.defaultProjectId)}\` (${keyNote(deps.defaultProjectId)}).`;
    const at = Math.floor(b.setAt / 1000);
    const date = new Date(b.setAt).toISOString().slice(0, 10);
    return `This channel uses project \`${escapeMrkdwn(b.projectId)}\` (${keyNote(b.projectId)}), set by <@${b.setBy}> on <!date^${at}^{date_short}|${date}>. Jobs, the agent budget and \`/visitors\` here use it.`;
  }

  /**
   * `/agent project <id>`: binds the channel (admins only); `default` unbinds it. Returns
   * the answer for the person, and whether anything changed.
   */
  async function change(
    req: { teamId: string; channelId: string; userId: string },
    arg: string,
  ): Promise<{ changed: boolean; text: string; refused?: ProjectRefusal }> {
    if (deps.connected)
      return {
        changed: false,
        refused: 'connected_project',
        text: "Every channel of this workspace uses the docs project connected in Docs Agent's App Home: a workspace admin replaces it there (Replace key).",
      };
    if (!admins.has(req.userId))
      return {
        changed: false,
        refused: 'not_admin',
        text:
          admins.size === 0
            ? "Only admins can change the project, and none are configured: set `ADMIN_USERS` (Slack user ids) in the bot's environment."
            : 'Only the admins listed in `ADMIN_USERS` can change the project of a channel.',
      };
    if (BACK_TO_DEFAULT.test(arg)) {
      const was = await deps.store.unbindChannelProject(req.teamId, req.channelId);
      return {
        changed: was,
        text: was
          ? `This channel is back on the default project \`${escapeMrkdwn(deps.defaultProjectId)}\`.`
          : `This channel already uses the default project \`${escapeMrkdwn(deps.defaultProjectId)}\`.`,
      };
    }
    if (!PROJECT_ID.test(arg))
      return {
        changed: false,
        refused: 'malformed',
        text: `\`${escapeMrkdwn(arg.slice(0, 100))}\` is not a project id: use the id from the Mintlify dashboard's API keys page (letters, digits, \`_\` and \`-\`), or \`default\`.`,
      };
    const unknown = await check(req, arg);
    if (unknown) return { changed: false, ...unknown };
    await deps.store.bindChannelProject({
      ...req,
      projectId: arg,
      setBy: req.userId,
      setAt: now(),
    });
    return {
      changed: true,
      text: `This channel now uses project \`${escapeMrkdwn(arg)}\` (${keyNote(arg)}). New jobs, the agent budget and \`/visitors\` here use it; jobs already running stay on their project.`,
    };
  }

  /**
   * The project read before a binding: nothing when the API knows it, else what to tell the
   * admin. An unknown project (404) is said as such; any other failure is said as a failed
   * check (the project may well exist), with what the API did.
   */
  async function check(
    req: { teamId: string; channelId: string },
    projectId: string,
  ): Promise<{ refused: ProjectRefusal; text: string } | undefined> {
    const started = performance.now();
    try {
      await deps.checkProject(projectId);
      log.info(
        { projectId, durationMs: Math.round(performance.now() - started) },
        'project.checked',
      );
      return undefined;
    } catch (err) {
      const current = `\`${escapeMrkdwn(await forChannel(req.teamId, req.channelId))}\``;
      const id = `\`${escapeMrkdwn(projectId)}\``;
      if (err instanceof ApiError && err.kind === 'not_found') {
        log.info({ projectId }, 'project.unknown');
        return {
          refused: 'unknown_project',
          text: `The agent API does not know project ${id} (it answered 404 Not Found), so this channel stays on ${current}. Check the id on the Mintlify dashboard's API keys page.`,
        };
      }
      const what = err instanceof ApiError ? escapeMrkdwn(err.message) : 'an unexpected error';
      log.warn({ err, projectId }, 'project.check_failed');
      return {
        refused: 'check_failed',
        text: `I couldn't check project ${id} with the agent API (${what}), so this channel stays on ${current}. Nothing was changed; try again in a minute.`,
      };
    }
  }

  return { binding, forChannel, describe, change };
}

/** `/agent project` in distributed mode: the workspace's connected project. */
function connectedText(b: ChannelProject | undefined): string {
  if (!b)
    return "This workspace has no docs project connected: a workspace admin connects one from Docs Agent's App Home.";
  const at = Math.floor(b.setAt / 1000);
  const date = new Date(b.setAt).toISOString().slice(0, 10);
  return `This workspace uses project \`${escapeMrkdwn(b.projectId)}\`, connected by <@${b.setBy}> on <!date^${at}^{date_short}|${date}> from Docs Agent's App Home. Jobs, the agent budget and \`/visitors\` in every channel use it.`;
}

export type Projects = ReturnType<typeof createProjects>;
