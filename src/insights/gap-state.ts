import type { InsightGap, JobThread } from '../store/types.ts';
import type { GapItem } from './gaps.ts';
import type { Impact } from './impact.ts';

/**
 * A gap's state as a report shows it (gap-book.ts): open, dismissed, or drafted and where its
 * job is. Pure.
 */

/** A claim whose job's thread was never recorded (its start failed early) lapses after this. */
export const CLAIM_LAPSES_MS = 10 * 60_000;
const CLOCK_MARGIN_MS = 60_000;
/** Where a drafted gap's job is. */
export type DraftState = 'open' | 'dismissed' | 'starting' | 'running' | 'done' | 'ended';
/** A gap in these states is not drafted again: the person is told where its job is. */
export const BLOCKING: ReadonlySet<DraftState> = new Set(['starting', 'running', 'done']);

export function draftState(
  gap: Pick<InsightGap, 'state' | 'claimedAt'>,
  job: Pick<JobThread, 'status' | 'prLink' | 'createdAt'> | undefined,
  now: number,
): DraftState {
  if (gap.state !== 'drafted') return gap.state;
  // A thread from before this claim is the job of an earlier claim (it ended): not this one's.
  // Replicas' clocks agree within milliseconds (src/clock.ts); a minute's margin is plenty.
  const current =
    job && (gap.claimedAt === null || job.createdAt >= gap.claimedAt - CLOCK_MARGIN_MS)
      ? job
      : undefined;
  if (!current) return (gap.claimedAt ?? 0) + CLAIM_LAPSES_MS > now ? 'starting' : 'ended';
  if (current.prLink) return 'done';
  return current.status === 'starting' || current.status === 'active' ? 'running' : 'ended';
}

export interface ListedGap {
  id: number;
  item: GapItem;
  /** An earlier job for it ended without a pull request. */
  again: boolean;
}

export interface DraftedGap {
  id: number;
  title: string;
  kind: string;
  state: DraftState;
  by: string | null;
  at: number | null;
  job: JobThread | undefined;
  /** This report's item for the gap, if it still lists the need. */
  item: GapItem | undefined;
  impact: Impact | undefined;
}

export interface GapListing {
  content: ListedGap[];
  pages: ListedGap[];
  drafted: DraftedGap[];
  /** Items of this report left out because a person dismissed their gap. */
  dismissed: number;
  /** Open items not listed (past the top `listed`). */
  more: { content: number; pages: number };
}
