import type { KnownBlock } from '@slack/types';
import { escapeAndTruncate, link } from '../mrkdwn.ts';
import type { WorkspaceSettings } from '../workspace-settings.ts';
import { adminsOf, type DocsState, isAdmin } from '../workspaces/docs-admin.ts';

/**
 * What the App Home of a distributed workspace shows of its docs connection, and what is
 * answered before one is connected. A workspace admin (whoever installed Docs Agent, or a
 * user on the workspace's admin list) sees the buttons: Connect a docs project, then
 * Replace key and Disconnect, and Settings; anyone else sees who can. Nothing here ever
 * holds the API key: there is none to show. Pure.
 */

/** The Home's buttons (block_actions) and the forms they open (view_submission). */
export const DOCS_ACTIONS = {
  connect: 'docs_connect',
  replaceKey: 'docs_replace_key',
  disconnect: 'docs_disconnect',
  settings: 'docs_settings',
} as const;
export const DOCS_VIEWS = { connect: 'docs_connect_form', settings: 'docs_settings_form' } as const;

/** The answer to anything asked before a docs project is connected. */
export const NOT_CONNECTED_TEXT =
  'Docs Agent is installed in this workspace, but no docs project is connected yet, so it cannot do that. An admin connects a docs project from the Docs Agent Home tab (Docs Agent in the sidebar, then Home): the project id and an admin API key from the Mintlify dashboard.';

/** Which settings act now, and which are kept for later: said wherever they are shown. */
export const SETTINGS_EFFECT =
  'The admin list takes effect at once, and so do the allowlists (an unset one leaves the deployment\u2019s own) and the docs site (report links). The digest takes effect within a minute: it posts in its channel on its schedule and in its time zone (the deployment\u2019s where they are empty).';

const mrkdwn = (text: string) => ({ type: 'mrkdwn' as const, text });
const section = (text: string): KnownBlock => ({ type: 'section', text: mrkdwn(text) });
const header = (text: string): KnownBlock => ({
  type: 'header',
  text: { type: 'plain_text', text },
});
const small = (text: string): KnownBlock => ({ type: 'context', elements: [mrkdwn(text)] });
const button = (text: string, actionId: string, extra: Record<string, unknown> = {}) => ({
  type: 'button' as const,
  text: { type: 'plain_text' as const, text },
  action_id: actionId,
  ...extra,
});

/** `<!date^…>` with a plain fallback for clients that cannot format it. */
function slackDate(ms: number): string {
  const sec = Math.floor(ms / 1000);
  const fallback = `${new Date(sec * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  return `<!date^${sec}^{date_short_pretty} at {time}|${fallback}>`;
}

const people = (ids: readonly string[]) => ids.map((u) => `<@${u}>`).join(', ');
const channels = (ids: readonly string[]) => ids.map((c) => `<#${c}>`).join(', ');

/** Who may act, as anyone else is told: `what` they may do. */
function whoCan(s: DocsState, what: string): string {
  const admins = adminsOf(s).map((u) =>
    u === s.installerUserId ? `${people([u])} (who installed Docs Agent)` : people([u]),
  );
  if (admins.length === 0)
    return `Only whoever installed Docs Agent in this workspace, or an admin they name, can ${what}.`;
  return `Only a Docs Agent admin of this workspace can ${what}: ${admins.join(', ')}.`;
}

/** The Home tab until a docs project is connected. */
export function notConnectedHome(
  s: DocsState,
  viewer: string,
): { type: 'home'; blocks: KnownBlock[] } {
  const blocks: KnownBlock[] = [
    header('Docs Agent'),
    section(
      'Docs Agent is installed in this workspace, but no docs project is connected yet: until one is, it starts no jobs, reads no traffic, and every command answers with how to connect.',
    ),
    { type: 'divider' },
    header('Connect a docs project'),
    section(
      'Connecting takes the *project id* and an *admin API key* (`mint_…`) from the Mintlify dashboard\u2019s API keys page. The key is checked with one read of the project, stored encrypted, and never shown again: it can only be replaced or disconnected.',
    ),
  ];
  if (!isAdmin(s, viewer))
    return { type: 'home', blocks: [...blocks, small(whoCan(s, 'connect one'))] };
  const connect = button('Connect a docs project', DOCS_ACTIONS.connect, { style: 'primary' });
  blocks.push({ type: 'actions', block_id: 'docs_admin', elements: [connect] });
  return { type: 'home', blocks: [...blocks, ...settingsBlocks(s)] };
}

/** The docs project's part of a connected workspace's Home (after the jobs and traffic). */
export function connectedBlocks(s: DocsState, viewer: string): KnownBlock[] {
  const c = s.connection;
  if (!c) return [];
  const project = `\`${escapeAndTruncate(c.projectId, 100)}\``;
  const blocks: KnownBlock[] = [
    { type: 'divider' },
    header('Docs project'),
    section(
      `*Connected:* ${project} · by ${people([c.connectedBy])} · ${slackDate(c.connectedAt)}\nIts admin API key is stored encrypted and never shown again.`,
    ),
  ];
  if (!isAdmin(s, viewer))
    return [...blocks, small(whoCan(s, 'replace its key, disconnect it or change the settings'))];
  const disconnect = button('Disconnect', DOCS_ACTIONS.disconnect, {
    style: 'danger',
    confirm: {
      title: { type: 'plain_text', text: 'Disconnect the docs?' },
      text: mrkdwn(
        `Docs Agent forgets project ${project} and its key at once, and answers every command here with how to connect until an admin connects a project again. The settings are kept.`,
      ),
      confirm: { type: 'plain_text', text: 'Disconnect' },
      deny: { type: 'plain_text', text: 'Keep it' },
      style: 'danger',
    },
  });
  blocks.push({
    type: 'actions',
    block_id: 'docs_admin',
    elements: [button('Replace key', DOCS_ACTIONS.replaceKey), disconnect],
  });
  return [...blocks, ...settingsBlocks(s)];
}

/** What an admin sees of the workspace's settings (and edits), and which of them act now. */
function settingsBlocks(s: DocsState): KnownBlock[] {
  return [
    {
      type: 'section',
      block_id: 'docs_settings',
      text: mrkdwn('*Settings of this workspace*'),
      fields: settingsFields(s.settings, adminsOf(s)).map(mrkdwn),
      accessory: button('Edit settings', DOCS_ACTIONS.settings),
    },
    small(SETTINGS_EFFECT),
  ];
}

/** One field per setting: its name, then its value (or what applies without one). */
export function settingsFields(st: WorkspaceSettings, admins: readonly string[]): string[] {
  const schedule = st.digestCron
    ? `\`${escapeAndTruncate(st.digestCron, 100)}\``
    : 'the deployment\u2019s schedule';
  const zone = st.timeZone
    ? escapeAndTruncate(st.timeZone, 100)
    : 'the deployment\u2019s time zone';
  const digest = st.digestChannel
    ? `${channels([st.digestChannel])}, ${schedule}, ${zone}`
    : 'no channel';
  return [
    `*Digest*\n${digest}`,
    `*Admins*\n${admins.length > 0 ? people(admins) : 'none'}`,
    `*Allowed channels*\n${listed(st.allowedChannels, channels, 'every channel')}`,
    `*Allowed people*\n${listed(st.allowedUsers, people, 'everyone')}`,
    `*Docs site*\n${st.docsBaseUrl ? site(st.docsBaseUrl) : 'not set'}`,
  ];
}

/** A link to the docs site, within a field's 2,000 characters (a URL may take 2,000). */
function site(url: string): string {
  const label = escapeAndTruncate(url, 80);
  return url.length > 1_800 ? label : link(url, label);
}

/** At most a screenful of ids, then how many more. */
const SHOWN = 20;
function listed(
  ids: readonly string[] | undefined,
  show: (ids: readonly string[]) => string,
  none: string,
): string {
  if (!ids || ids.length === 0) return none;
  const more = ids.length > SHOWN ? ` and ${ids.length - SHOWN} more` : '';
  return `${show(ids.slice(0, SHOWN))}${more}`;
}
