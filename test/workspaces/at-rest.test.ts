import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { Keyring } from '../../src/sealed.ts';
import type { Store } from '../../src/store/types.ts';
import { KeyCheckError, verifyKeys } from '../../src/workspaces/key-check.ts';
import { createVault } from '../../src/workspaces/vault.ts';
import { engineKinds, freshDatabaseEachTest, openStore } from '../helpers/store-engines.ts';
import { SECRETS } from './fixtures.ts';

const keyring = new Keyring([{ id: 'k1', key: randomBytes(32) }]);
/** Stored in clear on purpose: proves the reader below sees the rows it searches. */
const CANARY = { installer: 'U0CANARY42', project: 'proj_canary_7' };

/** An org-wide install and a workspace install with every kind of secret, and a docs key. */
async function storeSecrets(store: Store) {
  const vault = createVault(store, keyring, { retentionDays: 30 });
  const bot = { token: SECRETS.botToken, refreshToken: SECRETS.refreshToken, expiresAt: 1 };
  await vault.saveInstallation({
    enterpriseId: null,
    teamId: 'T1',
    isEnterpriseInstall: false,
    installerUserId: CANARY.installer,
    botUserId: 'B1',
    body: { team: { id: 'T1' }, bot, user: { id: 'U1', token: SECRETS.userToken } },
  });
  await vault.saveInstallation({
    enterpriseId: 'E1',
    teamId: null,
    isEnterpriseInstall: true,
    installerUserId: CANARY.installer,
    botUserId: 'B2',
    body: { enterprise: { id: 'E1' }, bot },
  });
  await vault.connectDocs(
    { teamId: 'T1' },
    { projectId: CANARY.project, apiKey: SECRETS.docsKey, connectedBy: 'U1' },
  );
}

/** Every table of the PostgreSQL database, every row as PostgreSQL prints it. */
async function everyRowAsText(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows: tables } = await client.query<{ name: string }>(
      "select table_name as name from information_schema.tables where table_schema = 'public'",
    );
    const texts: string[] = [];
    for (const { name } of tables) {
      const { rows } = await client.query<{ row: string }>(
        `select t::text as row from "${name}" t`,
      );
      texts.push(...rows.map((r) => r.row));
    }
    return texts.join('\n');
  } finally {
    await client.end();
  }
}

/** The raw bytes of every file SQLite keeps (the database, its WAL), as one text. */
const sqliteBytes = (file: string) =>
  readdirSync(dirname(file))
    .map((f) => readFileSync(join(dirname(file), f)).toString('latin1'))
    .join('\n');

const clear = Object.entries(SECRETS);

const freshDatabase = freshDatabaseEachTest();

describe.each(engineKinds)('secrets at rest (%s)', (kind) => {
  it('leaves no token or key in clear anywhere in the database', async () => {
    const db = await freshDatabase(kind);
    const store = await openStore(db, 2);
    await storeSecrets(store);
    const read = async () => (kind === 'sqlite' ? sqliteBytes(db.at) : everyRowAsText(db.at));
    const seen = [await read()];
    await store.close();
    seen.push(await read());
    for (const text of seen) {
      expect(text).toContain(CANARY.installer);
      expect(text).toContain(CANARY.project);
      expect(text).toContain('v1.k1.');
      for (const [name, secret] of clear) {
        expect(text.includes(secret), `${name} in clear`).toBe(false);
        // Nor any long part of one (a token stored cut, or base64 of the whole).
        expect(text.includes(secret.slice(10, 30)), `part of ${name} in clear`).toBe(false);
        expect(text.includes(Buffer.from(secret).toString('base64').slice(0, 24))).toBe(false);
      }
      expect(text).not.toContain(keyring.redactions()[0]);
    }
  });

  it('refuses to start when a key check value was removed from the database', async () => {
    const db = await freshDatabase(kind);
    const store = await openStore(db, 2);
    await storeSecrets(store);
    if (kind === 'sqlite') {
      const raw = new SqliteDatabase(db.at);
      raw.exec('delete from secret_keys');
      raw.close();
    } else {
      const client = new pg.Client({ connectionString: db.at });
      await client.connect();
      await client.query('delete from secret_keys');
      await client.end();
    }
    const err = await verifyKeys(store, keyring).catch((e: unknown) => e);
    await store.close();
    expect(err).toBeInstanceOf(KeyCheckError);
    expect((err as Error).message).toBe(
      "the database holds secrets sealed with key 'k1' but no check value for it (table secret_keys): restore it from a backup",
    );
  });
});
