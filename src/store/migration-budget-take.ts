import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { Engine } from './engine.ts';

/** The PostgreSQL function that takes a budget slot (src/store/coordination.ts calls it). */
export const TAKE_BUDGET_SLOT = 'take_budget_slot';

/**
 * Migration 0022_budget_take (PostgreSQL; nothing on SQLite, whose writes are serial):
 * a budget slot taken in one call. The function takes the bucket's lock first, under the
 * same key as a transaction of an older replica would (`budget:<bucket>`, so that the two
 * exclude each other during a rolling deploy), then each of its statements reads what is
 * committed as it runs: the window's uses are counted after the lock, and a use is inserted
 * only if the window is not full. One round trip, the lock held for microseconds, where the
 * transaction (SQLite's still) took six round trips and held the lock for four of them; the
 * commands of one project take turns on it. Additive: a rollback leaves a function nobody calls.
 */
export function budgetTakeMigration(kind: Engine['kind']): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (kind !== 'postgres') return;
      await sql`
        create or replace function ${sql.raw(TAKE_BUDGET_SLOT)}(
          p_bucket text, p_now bigint, p_since bigint, p_limit integer
        ) returns table (slot_id integer, full_at bigint)
        language plpgsql volatile as $$
        begin
          perform pg_advisory_xact_lock(hashtextextended('budget:' || p_bucket, 0));
          delete from budget_uses where bucket = p_bucket and used_at <= p_since;
          -- The limit-th newest use in the window: the window is full until it leaves it.
          select u.used_at into full_at from budget_uses u
            where u.bucket = p_bucket order by u.used_at desc limit 1 offset p_limit - 1;
          if found then
            slot_id := null;
            return next;
            return;
          end if;
          insert into budget_uses (bucket, used_at) values (p_bucket, p_now)
            returning id into slot_id;
          full_at := null;
          return next;
        end
        $$`.execute(db);
    },
  };
}
