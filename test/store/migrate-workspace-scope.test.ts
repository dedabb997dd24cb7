import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { migrate } from '../../src/store/migrate.ts';
import { migrations } from '../../src/store/migrations.ts';
import { SINGLE_WORKSPACE } from '../../src/store/scope.ts';
import type { Store } from '../../src/store/types.ts';
import {
  engineKinds,
  type FreshDatabase,
  freshDatabase,
  openStore,
} from '../helpers/store-engines.ts';

/**
 * Migrations 0019_workspace_scope and 0020_visitor_points_scope on a database the build
 * before each used: the rows already
 * there become the single workspace's (single-workspace mode reads them as before, no
 * workspace of the distributed mode sees them), and what the build before keeps doing on
 * the migrated schema (its upserts on the keys it knows) still works, and is the single
 * workspace's too. Both engines.
 */
const A = { teamId: 'T0A', enterpriseId: null };
const ONE = SINGLE_WORKSPACE;
const NOW = Date.parse('2026-11-22T12:00:00Z');

/** The older build's connection. */
function raw(db: FreshDatabase): Kysely<unknown> {
  if (db.kind === 'sqlite')
    return new Kysely({ dialect: new SqliteDialect({ database: new SqliteDatabase(db.at) }) });
  const pool = new pg.Pool({ connectionString: db.at });
  // pg's end() resolves before each idle connection's goodbye reaches the server: the
  // database's drop right after may cut one, and the pool's 'error', unheard, fails the run.
  pool.on('error', () => {});
  return new Kysely({ dialect: new PostgresDialect({ pool }) });
}

/** The schema the build before migration `name` left: its migrations only. */
async function buildBefore(
  db: FreshDatabase,
  name = '0019_workspace_scope',
): Promise<Kysely<unknown>> {
  const k = raw(db);
  const all = migrations(db.kind);
  expect(Object.keys(all)).toContain(name);
  const before = Object.fromEntries(Object.entries(all).filter(([n]) => n < name));
  await migrate(k, db.kind, before);
  return k;
}

/** What the build before wrote, with its own statements' shape (no workspace columns). */
async function olderRows(k: Kysely<unknown>): Promise<void> {
  const body = JSON.stringify({
    from: '2026-11-01',
    to: '2026-11-08',
    timeZone: 'UTC',
    totals: { human: 7, ai: 1, total: 8 },
    previousTotals: { human: 1, ai: 0, total: 1 },
    partial: false,
    generatedAt: NOW,
  });
  await sql`insert into report_cache (key, body, expires_at) values ('insights:k', '{"old":1}', ${NOW + 1e9})`.execute(
    k,
  );
  await sql`insert into report_headlines (key, body, updated_at) values ('last', ${body}, ${NOW})`.execute(
    k,
  );
  await sql`insert into text_vectors (model, text_hash, vector, created_at) values ('m', 'h', 'AAAA', ${NOW})`.execute(
    k,
  );
  await sql`insert into digest_runs (channel_id, period_key, owner, claimed_at, heartbeat_at, posted_at)
    values ('C1', '2026-W46', 'old', ${NOW}, ${NOW}, ${NOW})`.execute(k);
  await sql`insert into insight_gaps (project_id, gap_key, kind, signatures, title, state, created_at, last_seen_at)
    values ('proj', 'api key rotat', 'question', '["api key rotat"]', 'rotate', 'dismissed', ${NOW}, ${NOW})`.execute(
    k,
  );
}

describe.each(engineKinds)('store: migration 0019_workspace_scope (%s)', (kind) => {
  let db: FreshDatabase | undefined;
  let store: Store | undefined;
  let k: Kysely<unknown> | undefined;
  afterEach(async () => {
    await store?.close();
    await k?.destroy();
    await db?.drop();
    [db, store, k] = [undefined, undefined, undefined];
  });

  it("keeps the rows already there as the single workspace's, seen by no other", async () => {
    db = await freshDatabase(kind);
    k = await buildBefore(db);
    await olderRows(k);
    store = await openStore(db, 2);
    expect(await store.cachedReport(ONE, 'insights:k', NOW)).toBe('{"old":1}');
    expect(await store.cachedReport(A, 'insights:k', NOW)).toBeUndefined();
    expect((await store.lastReportHeadline(ONE))?.totals.total).toBe(8);
    expect(await store.lastReportHeadline(A)).toBeUndefined();
    expect(await store.textVectors(ONE, 'm', ['h'])).toEqual(new Map([['h', 'AAAA']]));
    expect((await store.textVectors(A, 'm', ['h'])).size).toBe(0);
    expect(await store.claimDigest(ONE, 'C1', '2026-W46', 'new', NOW, 60_000)).toEqual({
      state: 'posted',
    });
    expect(await store.claimDigest(A, 'C1', '2026-W46', 'new', NOW, 60_000)).toEqual({
      state: 'claimed',
    });
    const [gap] = await store.gapsOf(ONE, 'proj', 10);
    expect(gap).toMatchObject({ key: 'api key rotat', state: 'dismissed' });
    expect(await store.gapsOf(A, 'proj', 10)).toEqual([]);
    expect(await store.gapWithThread(A, gap!.id)).toBeUndefined();
    // The same key in a workspace is a gap of its own, beside the single workspace's.
    const [own] = await store.addGaps(A, [{ ...gap!, evidence: '{}', evidenceTo: '' }], NOW);
    expect(own!.id).not.toBe(gap!.id);
    expect(own).toMatchObject({ key: 'api key rotat', state: 'open' });
  });

  it("lets the build before keep upserting on the keys it knows, as the single workspace's", async () => {
    db = await freshDatabase(kind);
    k = await buildBefore(db);
    await olderRows(k);
    store = await openStore(db, 2);
    await store.cacheReport(A, 'insights:k', '{"a":1}', NOW + 1e9, NOW);
    await store.addGaps(
      A,
      [
        {
          projectId: 'proj',
          key: 'sso',
          kind: 'question',
          signatures: [],
          title: 't',
          evidence: '{}',
          evidenceTo: '',
        },
      ],
      NOW,
    );
    // The older build's statements, as it runs them, on the migrated schema.
    await sql`insert into report_cache (key, body, expires_at) values ('insights:k', '{"older":2}', ${NOW + 1e9})
      on conflict (key) do update set body = excluded.body, expires_at = excluded.expires_at`.execute(
      k,
    );
    await sql`insert into report_headlines (key, body, updated_at) values ('last', '{}', ${NOW + 1})
      on conflict (key) do update set body = excluded.body, updated_at = excluded.updated_at`.execute(
      k,
    );
    await sql`insert into text_vectors (model, text_hash, vector, created_at) values ('m', 'h', 'BBBB', ${NOW})
      on conflict (model, text_hash) do update set vector = excluded.vector`.execute(k);
    await sql`insert into insight_gaps (project_id, gap_key, kind, signatures, title, state, created_at, last_seen_at)
      values ('proj', 'sso', 'question', '[]', 'sso', 'open', ${NOW}, ${NOW})
      on conflict (project_id, gap_key) do nothing`.execute(k);
    expect(await store.cachedReport(ONE, 'insights:k', NOW)).toBe('{"older":2}');
    expect(await store.cachedReport(A, 'insights:k', NOW)).toBe('{"a":1}');
    expect(await store.textVectors(ONE, 'm', ['h'])).toEqual(new Map([['h', 'BBBB']]));
    // The older build's gap 'sso' is the single workspace's; A's is its own.
    expect((await store.gapsOf(ONE, 'proj', 10)).map((g) => g.key).sort()).toEqual([
      'api key rotat',
      'sso',
    ]);
    expect((await store.gapsOf(A, 'proj', 10)).map((g) => g.key)).toEqual(['sso']);
  });
});

describe.each(engineKinds)('store: migration 0020_visitor_points_scope (%s)', (kind) => {
  let db: FreshDatabase | undefined;
  let store: Store | undefined;
  let k: Kysely<unknown> | undefined;
  afterEach(async () => {
    await store?.close();
    await k?.destroy();
    await db?.drop();
    [db, store, k] = [undefined, undefined, undefined];
  });

  it("keeps the chart points already there as the single workspace's; the build before keeps upserting them", async () => {
    db = await freshDatabase(kind);
    k = await buildBefore(db, '0020_visitor_points_scope');
    await sql`insert into visitor_points (range_key, human, ai, total, fetched_at)
      values ('proj|2026-11-01|2026-11-02', 5, 1, 6, ${NOW})`.execute(k);
    store = await openStore(db, 2);
    const key = 'proj|2026-11-01|2026-11-02';
    expect(await store.getVisitorPoint(ONE, key)).toEqual({
      human: 5,
      ai: 1,
      total: 6,
      fetchedAt: NOW,
    });
    expect(await store.getVisitorPoint(A, key)).toBeUndefined();
    expect((await store.workspaceRows(A)).visitor_points).toBe(0);
    await store.putVisitorPoint(A, key, { human: 9, ai: 9, total: 9 }, NOW + 1);
    // The older build's upsert, as it runs it, on the migrated schema: the single workspace's.
    await sql`insert into visitor_points (range_key, human, ai, total, fetched_at)
      values (${key}, 7, 1, 8, ${NOW + 2})
      on conflict (range_key) do update set human = excluded.human, ai = excluded.ai,
        total = excluded.total, fetched_at = excluded.fetched_at`.execute(k);
    expect(await store.getVisitorPoint(ONE, key)).toEqual({
      human: 7,
      ai: 1,
      total: 8,
      fetchedAt: NOW + 2,
    });
    expect(await store.getVisitorPoint(A, key)).toEqual({
      human: 9,
      ai: 9,
      total: 9,
      fetchedAt: NOW + 1,
    });
  });
});
