import type { ExpressionBuilder, Selectable } from 'kysely';
import type { Engine } from './engine.ts';
import { type Database, num, toThread, updatedOne } from './schema.ts';
import type { GapExpected, InsightGap, JobThread, Store } from './types.ts';

/** Open gaps no report has listed for this long are forgotten (drafted and dismissed stay). */
export const GAP_KEEP_MS = 180 * 86_400_000;

type GapRow = Selectable<Database['insight_gaps']>;

/**
 * Content gaps of the insights reports (src/insights/gap-book.ts): one row per need and
 * project, with its state. A claim and a dismissal are compare-and-set on the state and the
 * claim token the caller read, so of two clicks at once (two replicas, two people) one wins.
 */
export function gapQueries(
  e: Engine,
): Pick<
  Store,
  | 'gapsOf'
  | 'addGaps'
  | 'sawGaps'
  | 'gapWithThread'
  | 'gapThreads'
  | 'claimGap'
  | 'releaseGap'
  | 'dismissGap'
> {
  const { db } = e;
  return {
    async gapsOf(projectId, limit) {
      // Every column but the evidence (kilobytes each), which a listing does not read.
      const rows = await db
        .selectFrom('insight_gaps')
        .select([
          'id',
          'project_id',
          'gap_key',
          'kind',
          'signatures',
          'title',
          'evidence_to',
          'state',
          'claim_token',
          'claimed_by',
          'claimed_at',
          'before',
          'pr_at',
          'dismissed_by',
          'dismissed_at',
          'created_at',
          'last_seen_at',
        ])
        .where('project_id', '=', projectId)
        .orderBy('last_seen_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .execute();
      return rows.map((r) => {
        const { evidence: _, ...summary } = toGap({ ...r, evidence: null });
        return summary;
      });
    },

    async addGaps(gaps, now) {
      if (gaps.length === 0) return [];
      const projects = [...new Set(gaps.map((g) => g.projectId))];
      await db
        .deleteFrom('insight_gaps')
        .where('project_id', 'in', projects)
        .where('state', '=', 'open')
        .where('last_seen_at', '<', now - GAP_KEEP_MS)
        .execute();
      for (const g of gaps)
        await db
          .insertInto('insight_gaps')
          .values({
            project_id: g.projectId,
            gap_key: g.key,
            kind: g.kind,
            signatures: JSON.stringify(g.signatures),
            title: g.title,
            evidence: g.evidence,
            evidence_to: g.evidenceTo,
            state: 'open',
            created_at: now,
            last_seen_at: now,
          })
          // Another report listing the same need at the same moment made it: one row.
          .onConflict((oc) => oc.columns(['project_id', 'gap_key']).doNothing())
          .execute();
      const out: InsightGap[] = [];
      for (const g of gaps) {
        const row = await db
          .selectFrom('insight_gaps')
          .selectAll()
          .where('project_id', '=', g.projectId)
          .where('gap_key', '=', g.key)
          .executeTakeFirstOrThrow();
        out.push(toGap(row));
      }
      return out;
    },

    async sawGaps(seen, now) {
      for (const s of seen) {
        await db
          .updateTable('insight_gaps')
          .set({ signatures: JSON.stringify(s.signatures), last_seen_at: now })
          .where('id', '=', s.id)
          .execute();
        // The evidence of the latest period listed wins (an old range asked again does not).
        await db
          .updateTable('insight_gaps')
          .set({ evidence: s.evidence, evidence_to: s.evidenceTo, title: s.title })
          .where('id', '=', s.id)
          .where((eb) =>
            eb.or([eb('evidence_to', 'is', null), eb('evidence_to', '<=', s.evidenceTo)]),
          )
          .execute();
      }
    },

    async gapWithThread(id) {
      const row = await db
        .selectFrom('insight_gaps')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirst();
      if (!row) return undefined;
      const thread = await db
        .selectFrom('job_threads')
        .selectAll()
        .where('gap_id', '=', id)
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst();
      return { gap: toGap(row), thread: thread && toThread(thread) };
    },

    async gapThreads(ids) {
      const out = new Map<number, JobThread>();
      if (ids.length === 0) return out;
      const rows = await db
        .selectFrom('job_threads')
        .selectAll()
        .where('gap_id', 'in', [...ids])
        .orderBy('id')
        .execute();
      // The latest thread of each gap: its current job.
      for (const r of rows) out.set(num(r.gap_id!), toThread(r));
      return out;
    },

    async claimGap(id, expected, claim) {
      const r = await db
        .updateTable('insight_gaps')
        .set({
          state: 'drafted',
          claim_token: claim.token,
          claimed_by: claim.userId,
          claimed_at: claim.now,
          before: claim.before,
          pr_at: null,
        })
        .where('id', '=', id)
        .where(expecting(expected))
        .executeTakeFirst();
      return updatedOne(r);
    },

    async releaseGap(id, token) {
      const r = await db
        .updateTable('insight_gaps')
        .set({ state: 'open', claim_token: null, claimed_by: null, claimed_at: null, before: null })
        .where('id', '=', id)
        .where('state', '=', 'drafted')
        .where('claim_token', '=', token)
        .executeTakeFirst();
      return updatedOne(r);
    },

    async dismissGap(id, expected, userId, now) {
      const r = await db
        .updateTable('insight_gaps')
        .set({ state: 'dismissed', dismissed_by: userId, dismissed_at: now })
        .where('id', '=', id)
        .where(expecting(expected))
        .executeTakeFirst();
      return updatedOne(r);
    },
  };
}

/** The compare part of a compare-and-set: the state and claim token the caller read. */
const expecting = (expected: GapExpected) => (eb: ExpressionBuilder<Database, 'insight_gaps'>) =>
  eb.and([
    eb('state', '=', expected.state),
    expected.claimToken === null
      ? eb('claim_token', 'is', null)
      : eb('claim_token', '=', expected.claimToken),
  ]);

function toGap(r: GapRow): InsightGap {
  return {
    id: num(r.id),
    projectId: r.project_id,
    key: r.gap_key,
    kind: r.kind,
    signatures: readSignatures(r.signatures),
    title: r.title,
    evidence: r.evidence ?? '',
    evidenceTo: r.evidence_to ?? '',
    state: r.state,
    claimToken: r.claim_token,
    claimedBy: r.claimed_by,
    claimedAt: r.claimed_at === null ? null : num(r.claimed_at),
    before: r.before,
    prAt: r.pr_at === null ? null : num(r.pr_at),
    dismissedBy: r.dismissed_by,
    dismissedAt: r.dismissed_at === null ? null : num(r.dismissed_at),
    createdAt: num(r.created_at),
    lastSeenAt: num(r.last_seen_at),
  };
}

function readSignatures(json: string): string[] {
  try {
    const v: unknown = JSON.parse(json);
    return Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : [];
  } catch {
    return [];
  }
}
