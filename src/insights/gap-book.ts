import type { Logger } from '../log.ts';
import { type ScopeOf, singleScope } from '../store/scope.ts';
import type {
  GapSeen,
  GapSummary,
  InsightGap,
  JobThread,
  NewGap,
  Store,
  WorkspaceRef,
} from '../store/types.ts';
import { beforeOf, evidenceOf, GapBefore, GapEvidence, readStored } from './evidence.ts';
import { matchGaps, mergeSignatures } from './gap-match.ts';
import {
  BLOCKING,
  type DraftedGap,
  type DraftState,
  draftState,
  type GapListing,
} from './gap-state.ts';
import type { GapItem } from './gaps.ts';
import { impactOf } from './impact.ts';
import type { InsightsReport } from './report.ts';

/**
 * The gaps a report lists, as the team left them: each item of a report (gaps.ts) is matched
 * to the project's stored gap for the same need (gap-match.ts) or recorded as a new one, and
 * listed by its state:
 * - open: listed with its actions (the top `listed` of the content gaps and of the pages);
 * - drafted while its job runs, or once the job opened a pull request: not offered again,
 *   shown with its job and pull request and, with a pull request, "did it work?" (impact.ts);
 *   a job that ended without a pull request (failed, lost, archived, completed without one)
 *   leaves the gap open again, and a claim whose job was never recorded lapses after
 *   `CLAIM_LAPSES_MS`;
 * - dismissed by a person: not listed again; the report says how many it left out.
 * Gaps are scoped by workspace and project: every report, digest and week of a project in a
 * workspace sees the same ones, and no other workspace sees them (`ws`, the request's or the
 * digest's workspace, as `scope` maps it: src/store/scope.ts). A gap id from another
 * workspace's report is no gap here ('missing').
 */

/** Stored gaps a report is matched against: the most recently listed. */
const KNOWN_MAX = 2_000;
/** Drafted gaps a report shows, and for how long after its pull request an unlisted one. */
export const DRAFTED_SHOWN = 5;
export const DRAFTED_FOR_MS = 8 * 7 * 86_400_000;

export {
  BLOCKING,
  CLAIM_LAPSES_MS,
  type DraftedGap,
  type DraftState,
  draftState,
  type GapListing,
  type ListedGap,
} from './gap-state.ts';

export type GapStore = Pick<
  Store,
  | 'gapsOf'
  | 'addGaps'
  | 'sawGaps'
  | 'gapThreads'
  | 'gapWithThread'
  | 'claimGap'
  | 'releaseGap'
  | 'dismissGap'
>;

export interface GapBookDeps {
  store: GapStore;
  /** The project of a report built without one (the digest's): the configured one. */
  defaultProjectId: string;
  log: Logger;
  /** Open gaps listed per section (content gaps, pages). */
  listed?: number;
  now?: () => number;
  /** Whose gaps a request's workspace reads and changes; the single workspace's by default. */
  scope?: ScopeOf;
}

export type ClaimOutcome =
  | { outcome: 'new' }
  | { outcome: 'duplicate' }
  | { outcome: 'taken'; gap: InsightGap; job: JobThread | undefined; state: DraftState }
  | { outcome: 'missing' };

export type DismissOutcome =
  | { outcome: 'dismissed' }
  | { outcome: 'already'; gap: InsightGap }
  | { outcome: 'drafted'; gap: InsightGap; job: JobThread | undefined; state: DraftState }
  | { outcome: 'missing' };

export function createGapBook(deps: GapBookDeps) {
  const { store } = deps;
  const now = deps.now ?? Date.now;
  const listed = deps.listed ?? 5;
  const log = deps.log.child({ component: 'gap-book' });
  const scopeOf = deps.scope ?? singleScope;

  /** The report's gaps, matched, recorded and sorted by state (rules above). */
  async function resolve(
    from: WorkspaceRef,
    report: InsightsReport,
    projectId?: string,
  ): Promise<GapListing> {
    const ws = scopeOf(from);
    const project = projectId ?? deps.defaultProjectId;
    const at = now();
    const known = await store.gapsOf(ws, project, KNOWN_MAX);
    const items = report.gaps ?? [];
    const match = matchGaps(items, known);
    const jobs = await store.gapThreads(
      ws,
      known.filter((g) => g.state === 'drafted').map((g) => g.id),
    );
    const sorted = sortByState(items, match, known, jobs, report, at);
    const { open, shown } = sorted;
    const content = open.filter((o) => o.item.kind !== 'page');
    const pages = open.filter((o) => o.item.kind === 'page');
    const [listedContent, listedPages] = [content.slice(0, listed), pages.slice(0, listed)];
    // Known gaps listed again learn this listing first (so none is forgotten as it is listed).
    const listedKnown = [...listedContent, ...listedPages].flatMap((o) =>
      o.gap ? [seenOf(o.gap, o.item, report)] : [],
    );
    await store.sawGaps(ws, [...sorted.seen, ...listedKnown], at);
    const listedItems = [...listedContent, ...listedPages];
    const ids = await record(ws, listedItems, known, project, report, at);
    const matched = new Set(match.values());
    for (const g of known) {
      if (g.state !== 'drafted' || matched.has(g.id)) continue;
      const state = draftState(g, jobs.get(g.id), at);
      const recent = state !== 'done' || (g.prAt ?? at) + DRAFTED_FOR_MS > at;
      if (BLOCKING.has(state) && recent)
        shown.push(draftedOf(g, state, jobs.get(g.id), undefined, report));
    }
    const listedOf = (o: (typeof open)[number]) => ({
      id: ids.get(o.item)!,
      item: o.item,
      again: o.again,
    });
    const listing: GapListing = {
      content: listedContent.map(listedOf),
      pages: listedPages.map(listedOf),
      drafted: shown.slice(0, DRAFTED_SHOWN),
      dismissed: sorted.dismissed,
      more: {
        content: content.length - listedContent.length + (report.gapsDropped ?? 0),
        pages: pages.length - listedPages.length,
      },
    };
    log.info(
      {
        project,
        items: items.length,
        known: known.length,
        matched: match.size,
        listed: ids.size,
        drafted: shown.length,
        dismissed: sorted.dismissed,
      },
      'gaps.resolved',
    );
    return listing;
  }

  /** The listed items' gap ids: matched ones as they are, the others recorded now. */
  async function record(
    ws: WorkspaceRef,
    listedItems: { item: GapItem; gap: GapSummary | undefined }[],
    known: readonly GapSummary[],
    project: string,
    report: InsightsReport,
    at: number,
  ): Promise<Map<GapItem, number>> {
    const ids = new Map<GapItem, number>();
    const fresh: { item: GapItem; gap: NewGap }[] = [];
    const keys = new Set(known.map((g) => g.key));
    for (const { item, gap } of listedItems) {
      if (gap) ids.set(item, gap.id);
      else fresh.push({ item, gap: newGapOf(item, project, report, keys) });
    }
    const added = await store.addGaps(
      ws,
      fresh.map((f) => f.gap),
      at,
    );
    for (const [i, f] of fresh.entries()) ids.set(f.item, added[i]!.id);
    return ids;
  }

  /**
   * What a click on the gap needs: the gap, its job, its state, its evidence. Undefined for a
   * gap that is not (or no longer) one of the workspace's.
   */
  async function get(from: WorkspaceRef, id: number) {
    const found = await store.gapWithThread(scopeOf(from), id);
    if (!found) return undefined;
    const state = draftState(found.gap, found.thread, now());
    return { ...found, state, evidence: readStored(GapEvidence, found.gap.evidence) };
  }

  /**
   * Claims the gap for the form `token` (one job per gap while it runs or once it has a pull
   * request): compare-and-set on what was read, read again when another claim won.
   */
  async function claim(
    from: WorkspaceRef,
    id: number,
    token: string,
    userId: string,
  ): Promise<ClaimOutcome> {
    const ws = scopeOf(from);
    for (let attempt = 0; attempt < 3; attempt++) {
      const found = await get(ws, id);
      if (!found) return { outcome: 'missing' };
      const { gap, thread, state } = found;
      if (gap.claimToken === token && gap.state === 'drafted') return { outcome: 'duplicate' };
      if (BLOCKING.has(state)) return { outcome: 'taken', gap, job: thread, state };
      const before = JSON.stringify(found.evidence ? beforeOf(found.evidence) : {});
      const expected = { state: gap.state, claimToken: gap.claimToken };
      if (await store.claimGap(ws, id, expected, { token, userId, before, now: now() }))
        return { outcome: 'new' };
    }
    const last = await get(ws, id);
    return last
      ? { outcome: 'taken', gap: last.gap, job: last.thread, state: last.state }
      : { outcome: 'missing' };
  }

  async function dismiss(from: WorkspaceRef, id: number, userId: string): Promise<DismissOutcome> {
    const ws = scopeOf(from);
    for (let attempt = 0; attempt < 3; attempt++) {
      const found = await get(ws, id);
      if (!found) return { outcome: 'missing' };
      const { gap, thread, state } = found;
      if (state === 'dismissed') return { outcome: 'already', gap };
      if (BLOCKING.has(state)) return { outcome: 'drafted', gap, job: thread, state };
      const expected = { state: gap.state, claimToken: gap.claimToken };
      if (await store.dismissGap(ws, id, expected, userId, now())) return { outcome: 'dismissed' };
    }
    return { outcome: 'missing' };
  }

  return {
    resolve,
    get,
    claim,
    dismiss,
    release: (from: WorkspaceRef, id: number, token: string) =>
      store.releaseGap(scopeOf(from), id, token),
  };
}

export type GapBook = ReturnType<typeof createGapBook>;

interface OpenItem {
  item: GapItem;
  gap: GapSummary | undefined;
  again: boolean;
}

/**
 * Each item of the report by its gap's state: open (new, or its job ended without a pull
 * request), drafted (shown with its job), or dismissed (counted); with what each matched
 * gap learns from this listing.
 */
function sortByState(
  items: readonly GapItem[],
  match: ReadonlyMap<number, number>,
  known: readonly GapSummary[],
  jobs: ReadonlyMap<number, JobThread>,
  report: InsightsReport,
  at: number,
): { open: OpenItem[]; shown: DraftedGap[]; seen: GapSeen[]; dismissed: number } {
  const byId = new Map(known.map((g) => [g.id, g]));
  const out = { open: [] as OpenItem[], shown: [] as DraftedGap[], seen: [] as GapSeen[] };
  let dismissed = 0;
  for (const [i, item] of items.entries()) {
    const gap = byId.get(match.get(i) ?? -1);
    if (!gap) {
      out.open.push({ item, gap: undefined, again: false });
      continue;
    }
    const state = draftState(gap, jobs.get(gap.id), at);
    if (state === 'open' || state === 'ended') {
      out.open.push({ item, gap, again: state === 'ended' });
      continue;
    }
    // Drafted and dismissed gaps keep following their need's wordings while unlisted.
    out.seen.push(seenOf(gap, item, report));
    if (state === 'dismissed') dismissed += 1;
    else out.shown.push(draftedOf(gap, state, jobs.get(gap.id), item, report));
  }
  return { ...out, dismissed };
}

function seenOf(gap: GapSummary, item: GapItem, report: InsightsReport): GapSeen {
  return {
    id: gap.id,
    signatures: mergeSignatures(gap.signatures, item.signatures),
    title: item.title,
    evidence: JSON.stringify(evidenceOf(item, report.range)),
    evidenceTo: report.range.to,
  };
}

function newGapOf(
  item: GapItem,
  projectId: string,
  report: InsightsReport,
  keys: Set<string>,
): NewGap {
  // A known gap already holds the key (it is another item's this time): one of its own.
  let key = item.key;
  for (let n = 2; keys.has(key); n++) key = `${item.key}#${n}`;
  keys.add(key);
  return {
    projectId,
    key,
    kind: item.kind,
    signatures: item.signatures,
    title: item.title,
    evidence: JSON.stringify(evidenceOf(item, report.range)),
    evidenceTo: report.range.to,
  };
}

function draftedOf(
  gap: GapSummary,
  state: DraftState,
  job: JobThread | undefined,
  item: GapItem | undefined,
  report: InsightsReport,
): DraftedGap {
  const prAt = gap.prAt ?? (job?.prLink ? (job.changedAt ?? job.updatedAt) : null);
  const before = readStored(GapBefore, gap.before);
  return {
    id: gap.id,
    title: item?.title ?? gap.title,
    kind: gap.kind,
    state,
    by: gap.claimedBy,
    at: gap.claimedAt,
    job,
    item,
    impact: prAt === null ? undefined : impactOf(prAt, before, item, report.range),
  };
}
