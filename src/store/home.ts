import { z } from 'zod';
import type { Engine } from './engine.ts';
import { num, toThread } from './schema.ts';
import { scopeColumns, scopedKey } from './scope.ts';
import type { ReportHeadline, Store } from './types.ts';

const Counts = z.object({ human: z.number(), ai: z.number(), total: z.number() });
const Headline = z.object({
  from: z.string(),
  to: z.string(),
  timeZone: z.string(),
  totals: Counts,
  previousTotals: Counts,
  partial: z.boolean(),
  generatedAt: z.number(),
});

/**
 * What the App Home reads: a person's recent jobs, and the last report's headline (its
 * workspace's, ./scope.ts).
 */
export function homeQueries(
  e: Engine,
): Pick<Store, 'recentThreadsOf' | 'putReportHeadline' | 'lastReportHeadline'> {
  const { db } = e;
  return {
    async recentThreadsOf(teamId: string, userId: string, limit: number) {
      const rows = await db
        .selectFrom('job_threads')
        .selectAll()
        .where('team_id', '=', teamId)
        .where('user_id', '=', userId)
        // A start whose root is not posted yet holds a placeholder ts (jobs/service.ts):
        // there is no message to link to.
        .where('thread_ts', 'not like', 'pending:%')
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .execute();
      return rows.map(toThread);
    },

    async putReportHeadline(ws, h: ReportHeadline) {
      const body = JSON.stringify(Headline.parse(h));
      await db
        .insertInto('report_headlines')
        .values({
          key: scopedKey(ws, 'last'),
          body,
          updated_at: h.generatedAt,
          ...scopeColumns(ws),
        })
        .onConflict((oc) => oc.column('key').doUpdateSet({ body, updated_at: h.generatedAt }))
        .execute();
    },

    async lastReportHeadline(ws) {
      const row = await db
        .selectFrom('report_headlines')
        .select(['body', 'updated_at'])
        .where('team_id', '=', ws.teamId)
        .where('key', '=', scopedKey(ws, 'last'))
        .executeTakeFirst();
      if (!row) return undefined;
      // A row written by another version that this one cannot read is no headline.
      try {
        const parsed = Headline.safeParse(JSON.parse(row.body));
        return parsed.success
          ? { ...parsed.data, generatedAt: num(parsed.data.generatedAt) }
          : undefined;
      } catch {
        return undefined;
      }
    },
  };
}
