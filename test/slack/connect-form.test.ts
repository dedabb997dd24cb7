import { describe, expect, it } from 'vitest';
import { connectedBlocks, notConnectedHome } from '../../src/slack/connect-blocks.ts';
import {
  checkErrors,
  readConnectForm,
  readFormWorkspace,
  readSettingsForm,
  settingErrors,
} from '../../src/slack/connect-form.ts';
import { connectModal, settingsModal } from '../../src/slack/connect-modals.ts';
import type { DocsState } from '../../src/workspaces/docs-admin.ts';

const KEY = 'mint_formKEY_5a4b3c2d1e0f';
const text = (value: string | null) => ({ value: { type: 'plain_text_input', value } });
const state = (over: Partial<DocsState> = {}): DocsState => ({
  ws: { teamId: 'T1', enterpriseId: null },
  connection: null,
  settings: {},
  installerUserId: 'U0INSTALL',
  installed: true,
  ...over,
});

describe('the connect form', () => {
  it('reads a project id and an admin key, trimmed; says what is wrong without repeating it', () => {
    expect(
      readConnectForm({ docs_project: text(' proj_docs '), docs_key: text(` ${KEY}\n`) }),
    ).toEqual({ ok: true, value: { projectId: 'proj_docs', apiKey: KEY } });
    const cases: [string | null, string | null, string[]][] = [
      [null, null, ['docs_project', 'docs_key']],
      ['proj docs', KEY, ['docs_project']],
      ['proj_docs', 'mint_dsc_assistantPublic01', ['docs_key']],
      ['proj_docs', 'sk-live-0123456789abcdef', ['docs_key']],
      ['proj_docs', `${KEY} ${KEY}`, ['docs_key']],
    ];
    for (const [project, key, fields] of cases) {
      const r = readConnectForm({ docs_project: text(project), docs_key: text(key) });
      expect(r.ok).toBe(false);
      const errors = r.ok ? {} : r.errors;
      expect(Object.keys(errors)).toEqual(fields);
      if (key) expect(JSON.stringify(errors)).not.toContain(key.trim().slice(0, 12));
    }
  });

  it('puts a failed check under the field to fix, and "try again" when the API could not say', () => {
    const outcome = (problem: 'key_refused' | 'project_not_found' | 'not_checked') => ({
      ok: false as const,
      problem,
      detail: 'The Mintlify API answered 503',
    });
    expect(Object.keys(checkErrors(outcome('key_refused'), 'p'))).toEqual(['docs_key']);
    expect(Object.keys(checkErrors(outcome('project_not_found'), 'p'))).toEqual(['docs_project']);
    expect(checkErrors(outcome('not_checked'), 'p').docs_key).toBe(
      'The key could not be checked (the Mintlify API answered 503). Nothing was saved; try again in a minute.',
    );
  });

  it('carries the workspace it was opened for, and never a key', () => {
    const modal = connectModal({ teamId: 'T1', enterpriseId: 'E1' }, { projectId: 'proj_docs' });
    expect(readFormWorkspace(modal.private_metadata)).toEqual({ teamId: 'T1', enterpriseId: 'E1' });
    expect(readFormWorkspace('{"teamId":"T1"}')).toBeUndefined();
    expect(readFormWorkspace('not json')).toBeUndefined();
    const key = modal.blocks.find((b) => b.block_id === 'docs_key') as unknown as {
      element: object;
    };
    expect(key.element).not.toHaveProperty('initial_value');
  });
});

describe('the settings form', () => {
  it('leaves empty fields out, and names the refused ones under their fields', () => {
    expect(
      readSettingsForm({
        set_digest_channel: {
          value: { type: 'multi_conversations_select', selected_conversations: [] },
        },
        set_allowed_users: { value: { type: 'multi_users_select', selected_users: [] } },
        set_admin_users: { value: { type: 'multi_users_select', selected_users: ['U2'] } },
        set_digest_cron: text('  0   9 * * 1 '),
        set_docs_url: text('https://docs.acme.com//'),
        set_time_zone: text(''),
      }),
    ).toEqual({
      adminUsers: ['U2'],
      digestCron: '0 9 * * 1',
      docsBaseUrl: 'https://docs.acme.com',
    });
    expect(Object.keys(settingErrors(['timeZone', 'docsBaseUrl']))).toEqual([
      'set_time_zone',
      'set_docs_url',
    ]);
    // Something the form does not show is still said, not lost.
    expect(Object.keys(settingErrors(['settings']))).toEqual(['set_admin_users']);
  });

  it('reads the digest channel of a form opened before it became a multi-select of one', () => {
    const old = {
      set_digest_channel: { value: { type: 'conversations_select', selected_conversation: 'C9' } },
    };
    expect(readSettingsForm(old)).toEqual({ digestChannel: 'C9' });
  });

  it('opens filled in with what is saved', () => {
    const m = settingsModal(
      { teamId: 'T1', enterpriseId: null },
      { digestChannel: 'C1', allowedUsers: ['U1'], docsBaseUrl: 'https://d.example' },
      'U0INSTALL',
    );
    const el = (id: string) =>
      (m.blocks.find((b) => b.block_id === id) as unknown as { element: Record<string, unknown> })
        .element;
    // A multi-select of one: its chosen channel can be removed, which clears the setting.
    expect(el('set_digest_channel')).toMatchObject({
      type: 'multi_conversations_select',
      max_selected_items: 1,
      initial_conversations: ['C1'],
    });
    expect(el('set_allowed_users').initial_users).toEqual(['U1']);
    expect(el('set_docs_url').initial_value).toBe('https://d.example');
    expect(el('set_time_zone')).not.toHaveProperty('initial_value');
  });
});

describe('the Home of a workspace', () => {
  it('gives an admin the buttons, and anyone else who can', () => {
    const s = state({ settings: { adminUsers: ['U0ADMIN'] } });
    const buttons = (blocks: unknown[]) =>
      JSON.stringify(blocks).match(/"action_id":"docs_[a-z_]+"/g) ?? [];
    expect(buttons(notConnectedHome(s, 'U0INSTALL').blocks)).toHaveLength(2);
    expect(buttons(notConnectedHome(s, 'U0ADMIN').blocks)).toHaveLength(2);
    const member = JSON.stringify(notConnectedHome(s, 'U0MEMBER').blocks);
    expect(buttons(JSON.parse(member))).toHaveLength(0);
    expect(member).toContain(
      'can connect one: <@U0INSTALL> (who installed Docs Agent), <@U0ADMIN>.',
    );
    const connected = state({
      connection: {
        projectId: 'proj_docs',
        connectedBy: 'U0ADMIN',
        connectedAt: 1_767_000_000_000,
      },
    });
    expect(buttons(connectedBlocks(connected, 'U0INSTALL'))).toEqual([
      '"action_id":"docs_replace_key"',
      '"action_id":"docs_disconnect"',
      '"action_id":"docs_settings"',
    ]);
    expect(buttons(connectedBlocks(connected, 'U0MEMBER'))).toEqual([]);
    expect(connectedBlocks(state(), 'U0INSTALL')).toEqual([]);
  });
});
