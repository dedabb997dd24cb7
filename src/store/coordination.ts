import { type Kysely, sql } from 'kysely';
import type { Engine } from './engine.ts';
import { TAKE_BUDGET_SLOT } from './migration-budget-take.ts';
import { type Database, num, updatedOne } from './schema.ts';
import { scopeColumns, scopedKey } from './scope.ts';
import type { Counts, DigestClaim, Store, WorkspaceRef } from './types.ts';

/**
 * What replicas agree on through the database: Slack events already handled, the hourly
 * budgets, cached report points, and who posts each digest (each workspace's points and
 * claims apart: ./scope.ts).
 */
export function coordinationQueries(
  e: Engine,
): Pick<
  Store,
  | 'claimEvent'
  | 'eventSeen'
  | 'pruneEvents'
  | 'takeBudgetSlot'
  | 'releaseBudgetSlot'
  | 'budgetUsed'
  | 'oldestBudgetUse'
  | 'getVisitorPoint'
  | 'putVisitorPoint'
  | 'claimDigest'
  | 'heartbeatDigest'
  | 'markDigestPosted'
> {
  const { db } = e;
  const digestRow = (ws: WorkspaceRef, channelId: string, periodKey: string) =>
    db
      .updateTable('digest_runs')
      .where('team_id', '=', ws.teamId)
      .where('channel_id', '=', channelId)
      .where('period_key', '=', scopedKey(ws, periodKey));
  return {
    async claimEvent(keys: string[], now: number) {
      if (keys.length === 0) return true;
      // The primary key decides: of two replicas inserting the same key, one inserts it.
      const r = await db
        .insertInto('slack_events')
        .values(keys.map((key) => ({ key, received_at: now })))
        .onConflict((oc) => oc.column('key').doNothing())
        .executeTakeFirst();
      return Number(r.numInsertedOrUpdatedRows ?? 0) === keys.length;
    },

    async eventSeen(key: string) {
      const row = await db
        .selectFrom('slack_events')
        .select('key')
        .where('key', '=', key)
        .executeTakeFirst();
      return row !== undefined;
    },

    async pruneEvents(before: number) {
      await db.deleteFrom('slack_events').where('received_at', '<', before).execute();
      await db
        .deleteFrom('follow_ups')
        .where('state', 'in', ['sent', 'refused', 'uncertain'])
        .where('updated_at', '<', before)
        .execute();
      await db.deleteFrom('budget_uses').where('used_at', '<', before).execute();
    },

    takeBudgetSlot(key: string, nowMs: number, windowMs: number, limit: number) {
      // A budget of nothing has no slot (an OFFSET of -1 below would read as no limit at all).
      if (limit < 1) return Promise.resolve({ ok: false as const, retryAtMs: nowMs + windowMs });
      // Counting and using a slot happen under one lock on the bucket: two replicas racing
      // for the last slot cannot both take it.
      const since = nowMs - windowMs;
      if (e.kind === 'postgres') return takeInOneCall(db, key, nowMs, since, limit, windowMs);
      return e.writeTx(async (tx) => {
        await tx
          .deleteFrom('budget_uses')
          .where('bucket', '=', key)
          .where('used_at', '<=', since)
          .execute();
        // The limit-th newest use in the window, if there is one: the window is full, and
        // frees a slot when that use becomes an hour old.
        const full = await tx
          .selectFrom('budget_uses')
          .select('used_at')
          .where('bucket', '=', key)
          .orderBy('used_at', 'desc')
          .limit(1)
          .offset(limit - 1)
          .executeTakeFirst();
        if (full) return { ok: false as const, retryAtMs: num(full.used_at) + windowMs };
        const row = await tx
          .insertInto('budget_uses')
          .values({ bucket: key, used_at: nowMs })
          .returning('id')
          .executeTakeFirstOrThrow();
        return { ok: true as const, slotId: num(row.id) };
      }, `budget:${key}`);
    },

    async releaseBudgetSlot(slotId: number) {
      await db.deleteFrom('budget_uses').where('id', '=', slotId).execute();
    },

    async budgetUsed(key: string, since: number) {
      const r = await db
        .selectFrom('budget_uses')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('bucket', '=', key)
        .where('used_at', '>', since)
        .executeTakeFirstOrThrow();
      return num(r.n);
    },

    async oldestBudgetUse(key: string, since: number) {
      const r = await db
        .selectFrom('budget_uses')
        .select((eb) => eb.fn.min('used_at').as('at'))
        .where('bucket', '=', key)
        .where('used_at', '>', since)
        .executeTakeFirst();
      return r?.at === null || r?.at === undefined ? null : num(r.at);
    },

    async getVisitorPoint(ws, rangeKey) {
      const r = await db
        .selectFrom('visitor_points')
        .select(['human', 'ai', 'total', 'fetched_at'])
        .where('team_id', '=', ws.teamId)
        .where('range_key', '=', scopedKey(ws, rangeKey))
        .executeTakeFirst();
      return (
        r && {
          human: num(r.human),
          ai: num(r.ai),
          total: num(r.total),
          fetchedAt: num(r.fetched_at),
        }
      );
    },

    async putVisitorPoint(ws, rangeKey, c: Counts, now) {
      const counts = { human: c.human, ai: c.ai, total: c.total, fetched_at: now };
      await db
        .insertInto('visitor_points')
        .values({ range_key: scopedKey(ws, rangeKey), ...counts, ...scopeColumns(ws) })
        .onConflict((oc) => oc.column('range_key').doUpdateSet(counts))
        .execute();
    },

    claimDigest(ws, channelId, period, owner, now, staleMs) {
      const periodKey = scopedKey(ws, period);
      return e.writeTx(async (tx): Promise<DigestClaim> => {
        const row = await tx
          .selectFrom('digest_runs')
          .selectAll()
          .where('team_id', '=', ws.teamId)
          .where('channel_id', '=', channelId)
          .where('period_key', '=', periodKey)
          .executeTakeFirst();
        if (!row) {
          await tx
            .insertInto('digest_runs')
            .values({
              ...scopeColumns(ws),
              channel_id: channelId,
              period_key: periodKey,
              owner,
              claimed_at: now,
              heartbeat_at: now,
              posted_at: null,
            })
            .execute();
          return { state: 'claimed' };
        }
        if (row.posted_at !== null) return { state: 'posted' };
        const alive = Math.max(num(row.claimed_at), num(row.heartbeat_at ?? 0));
        if (now - alive < staleMs) return { state: 'busy', owner: row.owner };
        await tx
          .updateTable('digest_runs')
          .set({ owner, claimed_at: now, heartbeat_at: now })
          .where('team_id', '=', ws.teamId)
          .where('channel_id', '=', channelId)
          .where('period_key', '=', periodKey)
          .execute();
        return { state: 'stale', owner: row.owner };
      }, `digest:${channelId}:${periodKey}`);
    },

    async heartbeatDigest(ws, channelId, periodKey, owner, now) {
      const r = await digestRow(ws, channelId, periodKey)
        .set({ heartbeat_at: now })
        .where('owner', '=', owner)
        .where('posted_at', 'is', null)
        .executeTakeFirst();
      return updatedOne(r);
    },

    async markDigestPosted(ws, channelId, periodKey, owner, now) {
      const r = await digestRow(ws, channelId, periodKey)
        .set({ posted_at: now })
        .where('owner', '=', owner)
        .where('posted_at', 'is', null)
        .executeTakeFirst();
      return updatedOne(r);
    },
  };
}

/**
 * PostgreSQL: a budget slot in one call of the function migration 0022 adds
 * (./migration-budget-take.ts): the bucket's lock, the count and the insert in one round
 * trip, outside any transaction of ours.
 */
async function takeInOneCall(
  db: Kysely<Database>,
  key: string,
  nowMs: number,
  since: number,
  limit: number,
  windowMs: number,
): Promise<{ ok: true; slotId: number } | { ok: false; retryAtMs: number }> {
  const { rows } = await sql<{ slot_id: number | string | null; full_at: number | string | null }>`
    select slot_id, full_at from ${sql.raw(TAKE_BUDGET_SLOT)}(
      ${key}, ${nowMs}::bigint, ${since}::bigint, ${limit}::integer
    )`.execute(db);
  const row = rows[0];
  if (row?.slot_id != null) return { ok: true, slotId: num(row.slot_id) };
  if (row?.full_at != null) return { ok: false, retryAtMs: num(row.full_at) + windowMs };
  throw new Error('a budget slot was neither taken nor refused');
}
