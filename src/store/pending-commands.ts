import type { Selectable } from 'kysely';
import type { Engine } from './engine.ts';
import { type Database, num } from './schema.ts';
import type { PendingCommand, Store } from './types.ts';

type Row = Selectable<Database['pending_commands']>;

/**
 * Acked `/agent` commands waiting for their start: recorded off the ack's turn, held by the
 * process whose queue they wait in (a lease it renews), taken when the start begins. One
 * whose process died is claimed by another's recovery pass, like the leased work on threads.
 */
export function pendingCommandQueries(
  e: Engine,
): Pick<
  Store,
  | 'recordPendingCommands'
  | 'takePendingCommand'
  | 'releasePendingCommand'
  | 'commandStarted'
  | 'renewPendingCommands'
  | 'claimPendingCommands'
> {
  const { db } = e;
  return {
    async recordPendingCommands(cs, lease, now) {
      if (cs.length === 0) return [];
      const rows = await db
        .insertInto('pending_commands')
        .values(
          cs.map((c) => ({
            team_id: c.teamId,
            enterprise_id: c.enterpriseId || null,
            channel_id: c.channelId,
            user_id: c.userId,
            text: c.text,
            response_url: c.responseUrl,
            conversation: c.conversation ?? null,
            received_at: now,
            owner: lease.owner,
            lease_until: lease.until,
          })),
        )
        .returning('id')
        .execute();
      // One statement numbers its rows in the order of its values, on both engines; the
      // order RETURNING lists them in is not promised.
      return rows.map((r) => num(r.id)).sort((a, b) => a - b);
    },

    async takePendingCommand(id, owner) {
      const r = await db
        .deleteFrom('pending_commands')
        .where('id', '=', id)
        .where('owner', '=', owner)
        .executeTakeFirst();
      return Number(r.numDeletedRows) === 1;
    },

    async releasePendingCommand(responseUrl, owner) {
      await db
        .deleteFrom('pending_commands')
        .where('response_url', '=', responseUrl)
        .where('owner', '=', owner)
        .execute();
    },

    async commandStarted(responseUrl) {
      const row = await db
        .selectFrom('job_threads')
        .select('id')
        .where('command_url', '=', responseUrl)
        .executeTakeFirst();
      return row !== undefined;
    },

    async renewPendingCommands(ids, owner, until) {
      if (ids.length === 0) return [];
      const rows = await db
        .updateTable('pending_commands')
        .set({ lease_until: until })
        .where('id', 'in', [...ids])
        .where('owner', '=', owner)
        .returning('id')
        .execute();
      return rows.map((r) => num(r.id));
    },

    // PostgreSQL: rows another replica is claiming are skipped, and the lease test is
    // repeated outside the subquery (see claimThreads in ./leases.ts).
    async claimPendingCommands(now, limit, lease) {
      const due = e.skipLocked(
        db
          .selectFrom('pending_commands')
          .select('id')
          .where('lease_until', '<=', now)
          .orderBy('received_at')
          .orderBy('id')
          .limit(limit),
      );
      const rows = await db
        .updateTable('pending_commands')
        .set({ owner: lease.owner, lease_until: lease.until })
        .where('id', 'in', due)
        .where('lease_until', '<=', now)
        .returningAll()
        .execute();
      return rows.map(toCommand).sort((a, b) => a.receivedAt - b.receivedAt || a.id - b.id);
    },
  };
}

function toCommand(r: Row): PendingCommand {
  return {
    id: num(r.id),
    teamId: r.team_id,
    ...(r.enterprise_id == null ? {} : { enterpriseId: r.enterprise_id }),
    channelId: r.channel_id,
    userId: r.user_id,
    text: r.text,
    responseUrl: r.response_url,
    conversation: r.conversation,
    receivedAt: num(r.received_at),
    owner: r.owner,
    leaseUntil: num(r.lease_until),
  };
}
