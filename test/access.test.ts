import { describe, expect, it } from 'vitest';
import { createAccess, OPEN_ACCESS } from '../src/access.ts';
import { loadConfig } from '../src/config/config.ts';

const valid = {
  SLACK_BOT_TOKEN: 'xoxb-1-secret-bot',
  SLACK_SIGNING_SECRET: 'signing-secret-value',
  MINTLIFY_API_KEY: 'mint_supersecret',
  MINTLIFY_PROJECT_ID: 'proj_1',
};

describe('createAccess', () => {
  it('leaves nobody out when both lists are unset', () => {
    expect(OPEN_ACCESS.restricted).toBe(false);
    expect(OPEN_ACCESS.isAllowed('U1', 'C1')).toBe(true);
    expect(OPEN_ACCESS.isAllowed('U1', 'D1')).toBe(true);
  });

  it('checks people first, then conversations', () => {
    const a = createAccess({ users: ['U1'], channels: ['C1'] });
    expect(a.check('U2', 'C1')).toEqual({ ok: false, reason: 'user' });
    expect(a.check('U1', 'C2')).toEqual({ ok: false, reason: 'channel' });
    expect(a.check('U1', 'C1')).toEqual({ ok: true });
    // No conversation (the Home tab): the people list alone.
    expect(a.isAllowed('U1', undefined)).toBe(true);
    expect(a.isAllowed('U2', undefined)).toBe(false);
  });

  it('lets listed people DM the bot when ALLOWED_USERS is set, and refuses DMs under ALLOWED_CHANNELS alone', () => {
    expect(createAccess({ users: ['U1'], channels: ['C1'] }).isAllowed('U1', 'D9')).toBe(true);
    const channelsOnly = createAccess({ users: undefined, channels: ['C1', 'D5'] });
    expect(channelsOnly.isAllowed('U1', 'D9')).toBe(false);
    expect(channelsOnly.isAllowed('U1', 'D5')).toBe(true);
    expect(channelsOnly.isAllowed('U7', 'C1')).toBe(true);
    expect(createAccess({ users: ['U1'], channels: undefined }).isAllowed('U1', 'G7')).toBe(true);
  });
});

describe('ALLOWED_CHANNELS / ALLOWED_USERS', () => {
  it('reads comma-separated ids, blank meaning everyone', () => {
    const r = loadConfig({ ...valid, ALLOWED_CHANNELS: ' C0123, G0456 ,', ALLOWED_USERS: '' });
    if (!r.ok) throw new Error(r.problems.join('\n'));
    expect(r.config.access).toEqual({ channels: ['C0123', 'G0456'], users: undefined });
    const unset = loadConfig(valid);
    expect(unset.ok && unset.config.access).toEqual({ channels: undefined, users: undefined });
  });

  it('says which entries do not look like Slack ids by their place, never by their text', () => {
    const r = loadConfig({
      ...valid,
      ALLOWED_CHANNELS: 'C0777,#generalxyz',
      ALLOWED_USERS: '@annxyz, U0OK1, bobxyz.smith',
    });
    expect(r.ok ? [] : r.problems).toEqual([
      'ALLOWED_CHANNELS must be comma-separated Slack channel ids such as C0123ABCD; entry 2 of 2 is not',
      'ALLOWED_USERS must be comma-separated Slack user ids such as U0123ABCD; entries 1, 3 of 3 are not',
    ]);
    const text = r.ok ? '' : r.problems.join('\n');
    for (const value of ['generalxyz', 'annxyz', 'bobxyz', 'U0OK1', 'C0777'])
      expect(text).not.toContain(value);
  });
});
