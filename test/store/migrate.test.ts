import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/store/engine.ts';
import { migrate, SchemaTooNew } from '../../src/store/migrate.ts';
import { migrations, type Step } from '../../src/store/migrations.ts';
import { openPostgresStore } from '../../src/store/postgres.ts';
import type { Store } from '../../src/store/types.ts';
import { PROJECT, SECRETS } from '../helpers/harness.ts';
import { memoryLogger } from '../helpers/log.ts';
import { freePort } from '../helpers/net.ts';
import { createTestDatabase, postgresAvailable } from '../helpers/postgres.ts';
import { spawnBot } from '../helpers/process.ts';
import { engineKinds, freshDatabase, openStore } from '../helpers/store-engines.ts';
import { thread } from './fixtures.ts';

/**
 * Rolling deploys and rollbacks (docs/operating.md): this build is "the older build"; a "newer build" is
 * this build's migrations plus more, applied through the same runner.
 */
interface Place {
  kind: Engine['kind'];
  /** The SQLite file. */
  file?: string;
  /** This build starting on the database. */
  open(): Promise<Store>;
  /** A raw connection, as a newer build's migrator would have. */
  raw(): Kysely<unknown>;
  cleanup(): Promise<void>;
}

const places: [Engine['kind'], () => Promise<Place>][] = engineKinds.map((kind) => [
  kind,
  async () => {
    const db = await freshDatabase(kind);
    return {
      kind,
      ...(kind === 'sqlite' ? { file: db.at } : {}),
      open: () => openStore(db, 2),
      raw: () =>
        new Kysely({
          dialect:
            kind === 'sqlite'
              ? new SqliteDialect({ database: new SqliteDatabase(db.at) })
              : new PostgresDialect({ pool: new pg.Pool({ connectionString: db.at }) }),
        }),
      cleanup: db.drop,
    };
  },
]);

/** A newer build migrates the database: this build's migrations, then `later`. */
async function newerBuild(place: Place, later: Record<string, Step>): Promise<void> {
  const db = place.raw();
  try {
    await migrate(db, place.kind, { ...migrations(place.kind), ...later });
  } finally {
    await db.destroy();
  }
}

describe.each(places)('store: migrations across versions (%s)', (_name, setup) => {
  let place: Place | undefined;
  afterEach(async () => {
    await place?.cleanup();
    place = undefined;
  });

  it('starts and works on a schema a newer build extended additively', async () => {
    place = await setup();
    await newerBuild(place, {
      '0099_newer_additive': {
        async up(db) {
          await db.schema.createTable('newer_things').addColumn('k', 'text').execute();
          await db.schema.alterTable('job_threads').addColumn('newer_col', 'text').execute();
        },
      },
    });
    const store = await place.open();
    try {
      const t = await store.createThread(thread, 5);
      expect((await store.findThread('T1', 'C1', '100.1'))?.id).toBe(t.id);
    } finally {
      await store.close();
    }
    // And again: a restart of the older build is as good as its first start.
    await (await place.open()).close();
  });

  it('refuses, with one readable line, a schema a newer build changed in a breaking way', async () => {
    place = await setup();
    await newerBuild(place, {
      '0098_newer_additive': {
        async up(db) {
          await db.schema.createTable('newer_things').addColumn('k', 'text').execute();
        },
      },
      '0099_drop_model': {
        breaking: 'drops job_threads.model',
        async up(db) {
          await db.schema.alterTable('job_threads').dropColumn('model').execute();
        },
      },
    });
    const refused = await place.open().then(
      () => null,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(SchemaTooNew);
    expect((refused as Error).message).toBe(
      'the database was migrated by a newer version with a breaking change 0099_drop_model ' +
        '(drops job_threads.model): roll forward to that version or later, or restore the ' +
        'backup taken before it',
    );
    // The newer build itself, which knows the step, still starts.
    await newerBuild(place, {
      '0098_newer_additive': { up: async () => {} },
      '0099_drop_model': { breaking: 'drops job_threads.model', up: async () => {} },
    });
  });

  it('applies a migration wholly or not at all', async () => {
    place = await setup();
    const failing = newerBuild(place, {
      '0099_half': {
        async up(db) {
          await db.schema.createTable('half_made').addColumn('k', 'text').execute();
          throw new Error('fails after its first statement');
        },
      },
    });
    await expect(failing).rejects.toThrow(/0099_half failed: fails after its first statement/);
    const db = place.raw();
    try {
      const tables = (await db.introspection.getTables()).map((t) => t.name);
      expect(tables).not.toContain('half_made');
    } finally {
      await db.destroy();
    }
    await (await place.open()).close();
  });
});

const run = promisify(execFile);

describe('store: the process refused by a breaking migration', () => {
  it('exits 1 with one readable line, no stack trace', async () => {
    const place = await places[0]![1]();
    try {
      await newerBuild(place, {
        '0099_drop_model': {
          breaking: 'drops job_threads.model',
          up: async (db) => {
            await db.schema.alterTable('job_threads').dropColumn('model').execute();
          },
        },
      });
      const file = place.file ?? '';
      const bot = spawnBot({
        SLACK_BOT_TOKEN: SECRETS.botToken,
        SLACK_SIGNING_SECRET: SECRETS.signingSecret,
        MINTLIFY_API_KEY: SECRETS.apiKey,
        MINTLIFY_PROJECT_ID: PROJECT,
        DATABASE_URL: `sqlite:${file}`,
        PORT: String(await freePort()),
        LOG_LEVEL: 'silent',
      });
      expect(await bot.exited).toBe(1);
      expect(bot.output().trim()).toBe(
        'startup failed: the database was migrated by a newer version with a breaking change ' +
          '0099_drop_model (drops job_threads.model): roll forward to that version or later, ' +
          'or restore the backup taken before it',
      );
    } finally {
      await place.cleanup();
    }
  }, 30_000);
});

describe('store: processes starting together on a fresh SQLite file', () => {
  it('all start, round after round', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'migrate-race-'));
    try {
      for (let round = 0; round < 5; round++) {
        const file = join(dir, `r${round}`, 'bot.sqlite');
        const outputs = await Promise.all(
          Array.from({ length: 4 }, () =>
            run(process.execPath, ['test/store/open-child.ts', file]).then(
              (r) => r.stdout.trim(),
              (err: { stdout?: string }) => err.stdout?.trim() ?? String(err),
            ),
          ),
        );
        expect(outputs).toEqual(['ok', 'ok', 'ok', 'ok']);
        const db = new SqliteDatabase(file);
        const count = db.prepare('select count(*) as n from job_threads').get() as { n: number };
        db.close();
        expect(count.n).toBe(4);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe.runIf(postgresAvailable)('store: replicas starting together on a fresh PostgreSQL', () => {
  it('all start', async () => {
    for (let round = 0; round < 2; round++) {
      const db = await createTestDatabase();
      try {
        const stores = await Promise.all(
          Array.from({ length: 4 }, () =>
            openPostgresStore(db.url, { log: memoryLogger().log, poolSize: 2 }),
          ),
        );
        await Promise.all(stores.map((s) => s.close()));
      } finally {
        await db.drop();
      }
    }
  });
});
