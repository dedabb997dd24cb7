import type { ExpressionBuilder, Selectable } from 'kysely';
import type { Engine } from './engine.ts';
import { type Database, num, toThread, updatedOne } from './schema.ts';
import { scopeColumns, scopedKey, unscopedKey } from './scope.ts';
import type { GapExpected, InsightGap, JobThread, Store } from './types.ts';

/** Open gaps no report has listed for this long are forgotten (drafted and dismissed stay). */
export const GAP_KEEP_MS = 180 * 86_400_000;

type GapRow = Selectable<Database['insight_gaps']>;

/**
 * Content gaps of the insights reports (src/insights/gap-book.ts): one row per need, project
 * and workspace (./scope.ts), with its state. Every query names the workspace: a gap id of
 * another workspace is no gap here. A claim and a dismissal are compare-and-set on the state and the
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
    async gapsOf(ws, projectId, limit) {
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
          'team_id',
        ])
        .where('team_id', '=', ws.teamId)
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

    async addGaps(ws, gaps, now) {
      if (gaps.length === 0) return [];
      const projects = [...new Set(gaps.map((g) => g.projectId))];
      await db
        .deleteFrom('insight_gaps')
        .where('team_id', '=', ws.teamId)
        .where('project_id', 'in', projects)
        .where('state', '=', 'open')
        .where('last_seen_at', '<', now - GAP_KEEP_MS)
        .execute();
      for (const g of gaps)
        await db
          .insertInto('insight_gaps')
          .values({
            project_id: g.projectId,
            gap_key: scopedKey(ws, g.key),
            ...scopeColumns(ws),
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
          .where('team_id', '=', ws.teamId)
          .where('project_id', '=', g.projectId)
          .where('gap_key', '=', scopedKey(ws, g.key))
          .executeTakeFirstOrThrow();
        out.push(toGap(row));
      }
      return out;
    },

    async sawGaps(ws, seen, now) {
      for (const s of seen) {
        await db
          .updateTable('insight_gaps')
          .set({ signatures: JSON.stringify(s.signatures), last_seen_at: now })
          .where('id', '=', s.id)
          .where('team_id', '=', ws.teamId)
          .execute();
        // The evidence of the latest period listed wins (an old range asked again does not).
        await db
          .updateTable('insight_gaps')
          .set({ evidence: s.evidence, evidence_to: s.evidenceTo, title: s.title })
          .where('id', '=', s.id)
          .where('team_id', '=', ws.teamId)
          .where((eb) =>
            eb.or([eb('evidence_to', 'is', null), eb('evidence_to', '<=', s.evidenceTo)]),
          )
          .execute();
      }
    },

    async gapWithThread(ws, id) {
      const row = await db
        .selectFrom('insight_gaps')
        .selectAll()
        .where('id', '=', id)
        .where('team_id', '=', ws.teamId)
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

    async gapThreads(ws, ids) {
      const out = new Map<number, JobThread>();
      if (ids.length === 0) return out;
      // The gaps are the workspace's (a thread's own team is the payload's, not the scope).
      const gaps = db
        .selectFrom('insight_gaps')
        .select('id')
        .where('team_id', '=', ws.teamId)
        .where('id', 'in', [...ids]);
      const rows = await db
        .selectFrom('job_threads')
        .selectAll()
        .where('gap_id', 'in', gaps)
        .orderBy('id')
        .execute();
      // The latest thread of each gap: its current job.
      for (const r of rows) out.set(num(r.gap_id!), toThread(r));
      return out;
    },

    async claimGap(ws, id, expected, claim) {
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
        .where('team_id', '=', ws.teamId)
        .where(expecting(expected))
        .executeTakeFirst();
      return updatedOne(r);
    },

    async releaseGap(ws, id, token) {
      const r = await db
        .updateTable('insight_gaps')
        .set({ state: 'open', claim_token: null, claimed_by: null, claimed_at: null, before: null })
        .where('id', '=', id)
        .where('team_id', '=', ws.teamId)
        .where('state', '=', 'drafted')
        .where('claim_token', '=', token)
        .executeTakeFirst();
      return updatedOne(r);
    },

    async dismissGap(ws, id, expected, userId, now) {
      const r = await db
        .updateTable('insight_gaps')
        .set({ state: 'dismissed', dismissed_by: userId, dismissed_at: now })
        .where('id', '=', id)
        .where('team_id', '=', ws.teamId)
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

function toGap(r: Omit<GapRow, 'enterprise_id'>): InsightGap {
  return {
    id: num(r.id),
    projectId: r.project_id,
    key: unscopedKey({ teamId: r.team_id }, r.gap_key),
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
