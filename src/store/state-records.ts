/**
 * The records of the bot's own state of reports and insights, each workspace's apart
 * (./scope.ts): traffic counts and chart points, digest claims, the last report's headline,
 * content gaps. Part of the `Store` interface in ./port.ts. Times are epoch milliseconds.
 */

export interface Counts {
  human: number;
  ai: number;
  total: number;
}

/** A chart point kept of a settled day (or week), and when its counts were fetched. */
export type VisitorPoint = Counts & { fetchedAt: number };

/** The outcome of trying to claim a digest period for a channel. */
export type DigestClaim =
  | { state: 'claimed' } // ours to post
  | { state: 'posted' } // done already
  | { state: 'busy'; owner: string } // someone else holds a fresh claim
  | { state: 'stale'; owner: string }; // claimed long ago and never marked posted: check, then post

/** The headline figures of the last traffic report built (the App Home shows them). */
export interface ReportHeadline {
  /** The report's range, `from` inclusive and `to` exclusive (YYYY-MM-DD), in `timeZone`. */
  from: string;
  to: string;
  timeZone: string;
  totals: Counts;
  previousTotals: Counts;
  /** Whether page scanning stopped early (the figures above are complete either way). */
  partial: boolean;
  generatedAt: number;
}

/**
 * A content gap's state: 'open' (listed with its actions), 'drafted' (a person started a job
 * from it: its latest thread, `gap_id`), 'dismissed' (a person said it needs nothing).
 */
export type GapState = 'open' | 'drafted' | 'dismissed';

/** A content gap as first listed (src/insights/gap-book.ts). */
export interface NewGap {
  projectId: string;
  /** Its identity within the project at creation (a word set, or `page:<path>`): unique. */
  key: string;
  kind: string;
  /** The word sets it is known by; later listings may add more. */
  signatures: string[];
  title: string;
  /** Opaque JSON, and the end of the period it is from (YYYY-MM-DD). */
  evidence: string;
  evidenceTo: string;
}

/** A content gap and its state; opaque JSON fields are read by the insights side. */
export interface InsightGap extends NewGap {
  id: number;
  state: GapState;
  /** Who drafted it, when, and the form that did (a resubmitted form is recognised). */
  claimToken: string | null;
  claimedBy: string | null;
  claimedAt: number | null;
  /** Opaque JSON: its counts when it was drafted, for "did it work?". */
  before: string | null;
  /** When its job's pull request was first seen. */
  prAt: number | null;
  dismissedBy: string | null;
  dismissedAt: number | null;
  createdAt: number;
  lastSeenAt: number;
}

/** A gap without its evidence: what a report matches and lists gaps by. */
export type GapSummary = Omit<InsightGap, 'evidence'>;

/** What a listing learned of a known gap: when seen, under which words, its latest evidence. */
export interface GapSeen {
  id: number;
  signatures: string[];
  title: string;
  evidence: string;
  evidenceTo: string;
}

/** The state a claim or dismissal expects the gap in (compare-and-set). */
export interface GapExpected {
  state: GapState;
  claimToken: string | null;
}
