import type { Selectable } from 'kysely';
import { enqueue } from './announcements.ts';
import type { Engine } from './engine.ts';
import { type Database, num, updatedOne } from './schema.ts';
import type { Announcement, FollowUp, FollowUpState, NewFollowUp, Store } from './types.ts';

type Row = Selectable<Database['follow_ups']>;

const toFollowUp = (r: Row): FollowUp => ({
  id: num(r.id),
  threadId: num(r.thread_id),
  replyKey: r.reply_key,
  replyTs: r.reply_ts,
  userId: r.user_id,
  text: r.text,
  state: r.state,
  createdAt: num(r.created_at),
  updatedAt: num(r.updated_at),
});

/** Thread replies on their way to the agent: intent recorded first, outcome after. */
export function followUpQueries(
  e: Engine,
): Pick<
  Store,
  'recordFollowUp' | 'findFollowUp' | 'moveFollowUp' | 'staleFollowUps' | 'followUpUncertain'
> {
  const { db } = e;
  return {
    recordFollowUp(r: NewFollowUp, eventKeys: string[], now: number) {
      return e.writeTx(async (tx) => {
        if (eventKeys.length > 0) {
          const claimed = await tx
            .insertInto('slack_events')
            .values(eventKeys.map((key) => ({ key, received_at: now })))
            .onConflict((oc) => oc.column('key').doNothing())
            .executeTakeFirst();
          if (Number(claimed.numInsertedOrUpdatedRows ?? 0) !== eventKeys.length) return undefined;
        }
        // The reply's own key decides too: Slack may deliver one message under two events.
        const row = await tx
          .insertInto('follow_ups')
          .values({
            thread_id: r.threadId,
            reply_key: r.replyKey,
            reply_ts: r.replyTs,
            user_id: r.userId,
            text: r.text,
            state: 'received',
            created_at: now,
            updated_at: now,
          })
          .onConflict((oc) => oc.column('reply_key').doNothing())
          .returningAll()
          .executeTakeFirst();
        return row && toFollowUp(row);
      });
    },

    async findFollowUp(replyKey: string) {
      const row = await db
        .selectFrom('follow_ups')
        .selectAll()
        .where('reply_key', '=', replyKey)
        .executeTakeFirst();
      return row && toFollowUp(row);
    },

    async moveFollowUp(id: number, from: FollowUpState[], to: FollowUpState, now: number) {
      const r = await db
        .updateTable('follow_ups')
        .set({ state: to, updated_at: now })
        .where('id', '=', id)
        .where('state', 'in', from)
        .executeTakeFirst();
      return updatedOne(r);
    },

    async staleFollowUps(state: FollowUpState, before: number, limit: number) {
      const rows = await db
        .selectFrom('follow_ups')
        .selectAll()
        .where('state', '=', state)
        .where('updated_at', '<', before)
        .orderBy('updated_at')
        .limit(limit)
        .execute();
      return rows.map(toFollowUp);
    },

    followUpUncertain(f: FollowUp, notice: Announcement, now: number) {
      return e.writeTx(async (tx) => {
        const moved = await tx
          .updateTable('follow_ups')
          .set({ state: 'uncertain', updated_at: now })
          .where('id', '=', f.id)
          .where('state', '=', 'sending')
          .executeTakeFirst();
        if (!updatedOne(moved)) return false;
        await enqueue(tx, f.threadId, notice, now);
        return true;
      });
    },
  };
}
