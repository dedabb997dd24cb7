import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/config.ts';
import { loadStorageConfig } from '../src/config/storage.ts';
import { configSecrets, hideConfigValues } from '../src/config/values.ts';

const valid = {
  SLACK_BOT_TOKEN: 'xoxb-1-secret-bot',
  SLACK_SIGNING_SECRET: 'signing-secret-value',
  MINTLIFY_API_KEY: 'mint_supersecret',
  MINTLIFY_PROJECT_ID: 'proj_1',
};
const b64 = (n = 32) => randomBytes(n).toString('base64');

const problems = (env: Record<string, string>) => {
  const r = loadConfig({ ...valid, ...env });
  return r.ok ? [] : r.problems;
};

describe('ENCRYPTION_KEYS and UNINSTALL_RETENTION_DAYS', () => {
  it('are optional: unset or blank, no keys and 30 days, and the rest of the config as before', () => {
    for (const env of [{}, { ENCRYPTION_KEYS: '  ', UNINSTALL_RETENTION_DAYS: '' }]) {
      const r = loadConfig({ ...valid, ...env });
      if (!r.ok) throw new Error(r.problems.join('\n'));
      expect(r.config.workspaces.encryptionKeys).toBeUndefined();
      expect(r.config.workspaces.uninstallRetentionDays).toBe(30);
    }
  });

  it('reads id:base64 pairs, the first sealing, base64url and spaces accepted', () => {
    const one = randomBytes(32);
    const r = loadConfig({
      ...valid,
      ENCRYPTION_KEYS: ` k2:${one.toString('base64')} , k_1-old:${randomBytes(32).toString('base64url')}`,
      UNINSTALL_RETENTION_DAYS: '7',
    });
    if (!r.ok) throw new Error(r.problems.join('\n'));
    const ring = r.config.workspaces.encryptionKeys!;
    expect(ring.ids).toEqual(['k2', 'k_1-old']);
    expect(ring.sealingKeyId).toBe('k2');
    expect(r.config.workspaces.uninstallRetentionDays).toBe(7);
    // The key is the one given: another ring with those bytes opens what it sealed.
    const sealed = ring.seal('x', 'c');
    const again = loadConfig({ ...valid, ENCRYPTION_KEYS: `k2:${one.toString('base64')}` });
    expect(again.ok && again.config.workspaces.encryptionKeys!.open(sealed, 'c')).toBe('x');
  });

  it('refuses bad entries one line each, by place and id, never echoing a key', () => {
    const short = b64(16);
    const notBase64 = 'this is not base64!!';
    const bare = b64();
    const env = {
      ENCRYPTION_KEYS: [
        `k1:${b64()}`,
        `k2:${short}`,
        `k3:${notBase64}`,
        bare,
        `K4:${b64()}`,
        `k1:${b64()}`,
        `toolongkeyid_1234:${b64()}`,
      ].join(','),
    };
    const lines = problems(env);
    expect(lines).toEqual([
      "ENCRYPTION_KEYS key 'k2' (entry 2 of 7) must be 32 bytes in base64; it decodes to 16",
      "ENCRYPTION_KEYS key 'k3' (entry 3 of 7) must be 32 bytes in base64; it is not base64",
      'ENCRYPTION_KEYS must be a comma-separated list of id:key pairs, ids of 1-16 characters a-z 0-9 _ - (such as k1:…); entry 4 of 7 is not',
      'ENCRYPTION_KEYS must be a comma-separated list of id:key pairs, ids of 1-16 characters a-z 0-9 _ - (such as k1:…); entry 5 of 7 is not',
      "ENCRYPTION_KEYS names key id 'k1' more than once",
      'ENCRYPTION_KEYS must be a comma-separated list of id:key pairs, ids of 1-16 characters a-z 0-9 _ - (such as k1:…); entry 7 of 7 is not',
    ]);
    const text = lines.join('\n');
    for (const secret of [short, notBase64, bare, ...env.ENCRYPTION_KEYS.split(',')])
      expect(text).not.toContain(secret.split(':').at(-1));
  });

  it('refuses a retention outside 0-3650 days', () => {
    expect(problems({ UNINSTALL_RETENTION_DAYS: '-1' })).toEqual([
      'UNINSTALL_RETENTION_DAYS must be at least 0',
    ]);
    expect(problems({ UNINSTALL_RETENTION_DAYS: '4000' })).toEqual([
      'UNINSTALL_RETENTION_DAYS must be at most 3650',
    ]);
    const zero = loadConfig({ ...valid, UNINSTALL_RETENTION_DAYS: '0' });
    expect(zero.ok && zero.config.workspaces.uninstallRetentionDays).toBe(0);
  });

  it('hides the keys from log lines and failed starts', () => {
    const key = randomBytes(32);
    const r = loadConfig({ ...valid, ENCRYPTION_KEYS: `k1:${key.toString('base64')}` });
    if (!r.ok) throw new Error(r.problems.join('\n'));
    expect(configSecrets(r.config)).toContain(key.toString('base64'));
    const hide = hideConfigValues(r.config);
    expect(hide(`boom ${key.toString('base64')} boom`)).toBe('boom [redacted] boom');
    expect(hide(`boom ${key.toString('base64url')}.`)).toBe('boom [redacted].');
  });
});

describe('loadStorageConfig (npm run rotate-keys)', () => {
  it('needs only DATABASE_URL and ENCRYPTION_KEYS', () => {
    const r = loadStorageConfig({
      DATABASE_URL: 'sqlite:/tmp/x.sqlite',
      ENCRYPTION_KEYS: `k2:${b64()},k1:${b64()}`,
    });
    if (!r.ok) throw new Error(r.problems.join('\n'));
    expect(r.config.databaseUrl).toBe('sqlite:/tmp/x.sqlite');
    expect(r.config.databaseTimeoutMs).toBe(10_000);
    expect(r.config.encryptionKeys?.ids).toEqual(['k2', 'k1']);
    expect(loadStorageConfig({}).ok).toBe(true);
  });

  it('says what is wrong with them in the same words as a start', () => {
    expect(
      loadStorageConfig({ DATABASE_URL: 'mysql://x', ENCRYPTION_KEYS: `k1:${b64(8)}` }),
    ).toEqual({
      ok: false,
      problems: [
        'DATABASE_URL must be sqlite:PATH or postgres://…',
        "ENCRYPTION_KEYS key 'k1' (entry 1 of 1) must be 32 bytes in base64; it decodes to 8",
      ],
    });
    expect(
      loadStorageConfig({
        DATABASE_URL: 'postgres://bot:password@db.internal:5432/docs_agent_bot',
      }),
    ).toEqual({
      ok: false,
      problems: ['DATABASE_URL still holds the placeholder from .env.example'],
    });
  });
});
