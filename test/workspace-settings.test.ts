import { describe, expect, it } from 'vitest';
import { readSettings, WorkspaceSettingsSchema } from '../src/workspace-settings.ts';

describe("a workspace's settings", () => {
  it('accept what an admin may set, and refuse unknown fields', () => {
    const all = {
      digestChannel: 'C0123ABCD',
      digestCron: '0 9 * * 1',
      timeZone: 'Europe/Paris',
      allowedChannels: ['C0123ABCD', 'D0456EFGH'],
      allowedUsers: ['U0123ABCD'],
      adminUsers: ['U0123ABCD', 'W0456EFGH'],
      docsBaseUrl: 'https://docs.acme.com',
    };
    expect(WorkspaceSettingsSchema.parse(all)).toEqual(all);
    expect(WorkspaceSettingsSchema.safeParse({ ...all, extra: 1 }).success).toBe(false);
    // The docs are linked from Slack: https only.
    expect(WorkspaceSettingsSchema.safeParse({ docsBaseUrl: 'http://docs.acme.com' }).success).toBe(
      false,
    );
    expect(WorkspaceSettingsSchema.safeParse({ adminUsers: ['bob'] }).success).toBe(false);
  });

  it('read back a stored field this build refuses as unset, and unreadable JSON as none', () => {
    const stored = JSON.stringify({
      digestChannel: '#general',
      timeZone: 'Europe/Paris',
      allowedUsers: ['bob'],
      adminUsers: ['U0123ABCD'],
      fromANewerBuild: true,
    });
    expect(readSettings(stored)).toEqual({ timeZone: 'Europe/Paris', adminUsers: ['U0123ABCD'] });
    expect(readSettings('not json')).toEqual({});
    expect(readSettings('[1,2]')).toEqual({});
  });
});
