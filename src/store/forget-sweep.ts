import { type RawBuilder, sql, type Transaction } from 'kysely';
import type { Engine } from './engine.ts';
import type { Database } from './schema.ts';
import type { WorkspaceStore } from './workspace-port.ts';
import {
  type ForgetLease,
  type ForgetStep,
  type WorkspaceForget,
  type WorkspaceKey,
  workspaceColumns,
} from './workspace-records.ts';

/**
 * The retention sweep's part of the store: what an uninstalled workspace's forget deletes,
 * table by table, in bounded batches, each in one transaction that first renews the sweep's
 * lease on the forget. The lease is the forget's own `forget_at`, moved forward while a
 * replica works on it: no other replica finds it due until the lease runs out.
 */

/** A workspace as the rows hold it: '' for none. An org's own rows have team ''. */
type Key = { enterprise_id: string; team_id: string };

/** One table whose rows the forget deletes: which columns name a row, which rows are the workspace's. */
interface Forgettable {
  table: keyof Database;
  key: readonly string[];
  of: (k: Key) => RawBuilder<unknown>;
}

const none = sql`1 = 0`;
/** Rows of the team (an org's forget has no team: none of these rows are the org's own). */
const team =
  (column = 'team_id') =>
  (k: Key) =>
    k.team_id === '' ? none : sql`${sql.ref(column)} = ${k.team_id}`;
/** Rows of the team's job threads. */
const threads = (k: Key) =>
  k.team_id === ''
    ? none
    : sql`thread_id in (select id from job_threads where team_id = ${k.team_id})`;
/** Rows keyed by enterprise and team: the team's whatever its org, or the org's own. */
const workspace = (k: Key) =>
  k.team_id === ''
    ? sql`enterprise_id = ${k.enterprise_id} and team_id = ''`
    : sql`team_id = ${k.team_id}`;

/**
 * Everything of a workspace the forget deletes, children before their parents (a row a
 * foreign key points at goes after the rows pointing at it). A table that gains a workspace
 * column is one more line here. The installations and the docs key went at the uninstall.
 */
export const FORGOTTEN: readonly Forgettable[] = [
  { table: 'outbox', key: ['id'], of: threads },
  { table: 'follow_ups', key: ['id'], of: threads },
  { table: 'job_threads', key: ['id'], of: team() },
  { table: 'pending_commands', key: ['id'], of: team() },
  { table: 'channel_projects', key: ['team_id', 'channel_id'], of: team() },
  { table: 'docs_connections', key: ['enterprise_id', 'team_id'], of: workspace },
  // The bot's own state of the workspace (migration 0019, ./scope.ts).
  { table: 'report_cache', key: ['key'], of: team() },
  { table: 'report_headlines', key: ['key'], of: team() },
  { table: 'text_vectors', key: ['model', 'text_hash'], of: team() },
  { table: 'insight_gaps', key: ['id'], of: team() },
  { table: 'digest_runs', key: ['channel_id', 'period_key'], of: team() },
  // Its chart points (migration 0020).
  { table: 'visitor_points', key: ['range_key'], of: team() },
];

/** The tables a forget deletes from, in the order it does. */
export const FORGOTTEN_TABLES: readonly string[] = FORGOTTEN.map((t) => t.table);

/** Up to `limit` of the workspace's rows of one table, deleted; answers how many. */
async function deleteSome(tx: Transaction<Database>, t: Forgettable, k: Key, limit: number) {
  const cols = sql.join(t.key.map((c) => sql.ref(c)));
  const target = t.key.length === 1 ? cols : sql`(${cols})`;
  const r = await sql`delete from ${sql.table(t.table)} where ${target} in (
    select ${cols} from ${sql.table(t.table)} where ${t.of(k)} limit ${limit})`.execute(tx);
  return Number(r.numAffectedRows ?? 0);
}

export function forgetSweepQueries(
  e: Engine,
): Pick<
  WorkspaceStore,
  'claimForget' | 'forgetBatch' | 'spreadOrgForget' | 'workspaceRows' | 'expediteForget'
> {
  const { db } = e;
  /** Sets a workspace's forget_at to `to` where it is now `op` `than`; false if it was not. */
  const moveForget = async (
    tx: Transaction<Database> | typeof db,
    ws: WorkspaceKey,
    to: number,
    op: '=' | '>',
    than: number,
  ) => {
    const k = workspaceColumns(ws);
    const r = await tx
      .updateTable('workspace_forgets')
      .set({ forget_at: to })
      .where('enterprise_id', '=', k.enterprise_id)
      .where('team_id', '=', k.team_id)
      .where('forget_at', op, than)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  };
  /** Moves the forget's lease from `held` to `until`; false if it is not held any more. */
  const renew = (tx: Transaction<Database> | typeof db, f: ForgetLease, until: number) =>
    moveForget(tx, f, until, '=', f.held);
  return {
    claimForget: (f: WorkspaceForget, until) => renew(db, { ...f, held: f.forgetAt }, until),

    forgetBatch: (f, until, limit) =>
      e.writeTx(async (tx): Promise<ForgetStep> => {
        // In PostgreSQL the update locks the forget's row: a re-install's clear waits for
        // this batch, and the next batch finds the forget gone.
        if (!(await renew(tx, f, until))) return { state: 'lost' };
        const k = workspaceColumns(f);
        for (const t of FORGOTTEN) {
          const rows = await deleteSome(tx, t, k, limit);
          if (rows > 0) return { state: 'deleted', table: t.table, rows };
        }
        await tx
          .deleteFrom('workspace_forgets')
          .where('enterprise_id', '=', k.enterprise_id)
          .where('team_id', '=', k.team_id)
          .execute();
        return { state: 'done' };
      }),

    async spreadOrgForget(enterpriseId, uninstalledAt, forgetAt) {
      // The teams whose rows name the org and that have no install of their own: the
      // org-wide install served them. Each gets a forget of its own, due with the org's.
      const own = db.selectFrom('installations').select('team_id').where('team_id', '!=', '');
      const teams = db
        .selectFrom('job_threads')
        .select('team_id')
        .where('enterprise_id', '=', enterpriseId)
        .union(
          db
            .selectFrom('pending_commands')
            .select('team_id')
            .where('enterprise_id', '=', enterpriseId),
        );
      const found = await db
        .selectFrom(teams.as('t'))
        .select('t.team_id')
        .where('t.team_id', 'not in', own)
        .execute();
      if (found.length === 0) return 0;
      const r = await db
        .insertInto('workspace_forgets')
        .values(
          found.map((t) => ({
            enterprise_id: enterpriseId,
            team_id: t.team_id,
            uninstalled_at: uninstalledAt,
            forget_at: forgetAt,
          })),
        )
        .onConflict((oc) => oc.columns(['enterprise_id', 'team_id']).doNothing())
        .executeTakeFirst();
      return Number(r.numInsertedOrUpdatedRows ?? 0);
    },

    async workspaceRows(ws) {
      const k = workspaceColumns(ws);
      const counts: Record<string, number> = {};
      for (const t of FORGOTTEN) {
        const r = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(
          t.table,
        )} where ${t.of(k)}`.execute(db);
        counts[t.table] = Number(r.rows[0]?.n ?? 0);
      }
      return counts;
    },

    expediteForget: (ws, now) => moveForget(db, ws, now, '>', now),
  };
}
