import type { KnownBlock } from '@slack/types';
import type { WorkspaceSettings } from '../workspace-settings.ts';
import { DOCS_VIEWS, SETTINGS_EFFECT } from './connect-blocks.ts';

/**
 * The two forms a workspace admin opens from the App Home: the docs project and its admin
 * API key (the key field never has a value: a key is typed, checked, sealed, and never
 * shown again), and the workspace's settings. Each carries the workspace it was opened for
 * in its private_metadata, which the submission must match. Pure.
 */

/** The workspace a form was opened for, as its private_metadata says it. */
export interface FormWorkspace {
  teamId: string | null;
  enterpriseId: string | null;
}

/** Block ids of the connect form; every input's action id is `value`. */
export const CONNECT_BLOCKS = { projectId: 'docs_project', apiKey: 'docs_key' } as const;

/** Block ids of the settings form, by the setting each sets. */
export const SETTINGS_BLOCKS = {
  digestChannel: 'set_digest_channel',
  digestCron: 'set_digest_cron',
  timeZone: 'set_time_zone',
  allowedChannels: 'set_allowed_channels',
  allowedUsers: 'set_allowed_users',
  adminUsers: 'set_admin_users',
  docsBaseUrl: 'set_docs_url',
} as const satisfies Record<keyof WorkspaceSettings, string>;

export const INPUT_ACTION = 'value';

const plain = (text: string) => ({ type: 'plain_text' as const, text });
const mrkdwn = (text: string) => ({ type: 'mrkdwn' as const, text });

function input(
  blockId: string,
  label: string,
  element: Record<string, unknown>,
  o: { hint?: string; optional?: boolean } = {},
): KnownBlock {
  return {
    type: 'input',
    block_id: blockId,
    label: plain(label),
    element: { ...element, action_id: INPUT_ACTION },
    ...(o.hint ? { hint: plain(o.hint) } : {}),
    ...(o.optional ? { optional: true } : {}),
  } as KnownBlock;
}

const text = (o: { initial?: string | undefined; placeholder: string; max: number }) => ({
  type: 'plain_text_input',
  max_length: o.max,
  placeholder: plain(o.placeholder),
  ...(o.initial ? { initial_value: o.initial } : {}),
});

/**
 * Connect a docs project, or (with `current`) replace its key: the project id is shown
 * again, the key never.
 */
export function connectModal(ws: FormWorkspace, current?: { projectId: string }) {
  const replacing = current !== undefined;
  return {
    type: 'modal' as const,
    callback_id: DOCS_VIEWS.connect,
    private_metadata: JSON.stringify(ws),
    title: plain(replacing ? 'Replace the key' : 'Connect docs'),
    submit: plain(replacing ? 'Replace' : 'Connect'),
    close: plain('Cancel'),
    blocks: [
      {
        type: 'section',
        text: mrkdwn(
          'From the Mintlify dashboard\u2019s *API keys* page: your project id, and an *admin* API key (`mint_…`; an assistant key, `mint_dsc_…`, cannot start agent jobs). The key is checked with one read of the project, then stored encrypted.',
        ),
      },
      input(
        CONNECT_BLOCKS.projectId,
        'Project id',
        text({ initial: current?.projectId, placeholder: 'your-project-id', max: 100 }),
      ),
      input(CONNECT_BLOCKS.apiKey, 'Admin API key', text({ placeholder: 'mint_…', max: 256 }), {
        hint: replacing
          ? 'Type the new key: the one in use is never shown.'
          : 'Never shown again, here or anywhere: it can only be replaced or disconnected.',
      }),
    ] as KnownBlock[],
  };
}

/** The workspace's settings, filled in with what is saved. */
export function settingsModal(ws: FormWorkspace, s: WorkspaceSettings, installer: string | null) {
  const admins = installer
    ? `Besides <@${installer}>, who installed Docs Agent: who may connect the docs and change these settings.`
    : 'Besides whoever installed Docs Agent: who may connect the docs and change these settings.';
  return {
    type: 'modal' as const,
    callback_id: DOCS_VIEWS.settings,
    private_metadata: JSON.stringify(ws),
    title: plain('Docs Agent settings'),
    submit: plain('Save'),
    close: plain('Cancel'),
    blocks: [
      input(SETTINGS_BLOCKS.adminUsers, 'Admins', users(s.adminUsers), { optional: true }),
      { type: 'context', elements: [mrkdwn(admins)] },
      ...digestInputs(s),
      ...accessInputs(s),
      input(
        SETTINGS_BLOCKS.docsBaseUrl,
        'Docs site',
        text({ initial: s.docsBaseUrl, placeholder: 'https://docs.example.com', max: 2000 }),
        { optional: true, hint: 'Where page paths in reports link to (https).' },
      ),
      { type: 'context', elements: [mrkdwn(SETTINGS_EFFECT)] },
    ] as KnownBlock[],
  };
}

const users = (initial: string[] | undefined) => ({
  type: 'multi_users_select',
  ...(initial ? { initial_users: initial } : {}),
});

/**
 * The digest's channel, schedule and time zone. The channel is a multi-select of at most one:
 * a single conversations_select cannot be emptied once a channel is chosen (Slack's menu has
 * no "none"), while a chosen item of a multi-select can be removed, which clears the setting.
 */
function digestInputs(s: WorkspaceSettings): KnownBlock[] {
  const channel = {
    type: 'multi_conversations_select',
    max_selected_items: 1,
    filter: { include: ['public', 'private'], exclude_bot_users: true },
    ...(s.digestChannel ? { initial_conversations: [s.digestChannel] } : {}),
  };
  return [
    input(SETTINGS_BLOCKS.digestChannel, 'Digest channel', channel, {
      optional: true,
      hint: 'The weekly traffic report goes here; invite Docs Agent to it. Remove the channel for no digest here.',
    }),
    input(
      SETTINGS_BLOCKS.digestCron,
      'Digest schedule (cron)',
      text({ initial: s.digestCron, placeholder: '0 9 * * 1', max: 100 }),
      { optional: true, hint: 'Minute, hour, day, month, weekday: 0 9 * * 1 is Mondays at 09:00.' },
    ),
    input(
      SETTINGS_BLOCKS.timeZone,
      'Time zone',
      text({ initial: s.timeZone, placeholder: 'Europe/Berlin', max: 100 }),
      { optional: true, hint: 'An IANA time zone name, for the schedule and report dates.' },
    ),
  ];
}

/** Who may use Docs Agent, and where. */
function accessInputs(s: WorkspaceSettings): KnownBlock[] {
  const channels = {
    type: 'multi_conversations_select',
    ...(s.allowedChannels ? { initial_conversations: s.allowedChannels } : {}),
  };
  return [
    input(SETTINGS_BLOCKS.allowedChannels, 'Allowed channels', channels, {
      optional: true,
      hint: 'None chosen: every conversation.',
    }),
    input(SETTINGS_BLOCKS.allowedUsers, 'Allowed people', users(s.allowedUsers), {
      optional: true,
      hint: 'None chosen: everyone in the workspace.',
    }),
  ];
}
