import { PAGE_SIZE, type Source } from './plan.ts';
import type { Coverage } from './read.ts';
import type { InsightsReport } from './service.ts';

const WHAT: Record<Source, string> = {
  searches: 'search terms',
  assistant: 'assistant questions',
  byPage: 'feedback per page',
  feedback: 'feedback comments',
  previousSearches: "the previous period's searches",
  previousByPage: "the previous period's feedback",
  previousAssistant: "the previous period's questions",
};

/**
 * Plain sentences (no user text, nothing to escape) saying what a report could not read and
 * why, for the Slack side to show under the report. Empty when it read everything it wanted.
 */
export function coverageNotes(report: InsightsReport): string[] {
  const notes: string[] = [];
  const sources = Object.entries(report.coverage) as [Source, InsightsReport['coverage'][Source]][];
  const unfinished = sources.filter(([s, c]) => !c.complete && report.plan.wanted[s] > 0);
  // Read as far as any report reads it (its ceiling): the period simply has more.
  const atCeiling = unfinished.filter(([s, c]) => !c.failed && c.pages >= report.plan.wanted[s]);
  const short = unfinished
    .filter(([s, c]) => c.pages < report.plan.wanted[s])
    .map(([s, c]) =>
      c.pages === 0 ? `${WHAT[s]} (not read)` : `${WHAT[s]} (${pages(c.pages)} read, more left)`,
    );
  if (report.stoppedBy === 'failed') {
    notes.push(failureNote(sources, short));
  } else if (short.length > 0) {
    const why =
      report.stoppedBy === 'budget'
        ? `the analytics budget (100 requests an hour, shared with /visitors) ran low: ${report.plan.budgetLeft ?? 0} left when planned`
        : `this report may send at most ${report.plan.cap} requests`;
    notes.push(`Stopped early because ${why}. Partly read: ${short.join(', ')}.`);
  }
  if (atCeiling.length > 0) {
    const read = atCeiling.map(([s, c]) => `the first ${n(c.pages * PAGE_SIZE[s])} ${WHAT[s]}`);
    notes.push(
      `Read ${read.join(', ')} the API returned, the most a report reads; there are more.`,
    );
  }
  if (report.feedbackPagesCut) {
    notes.push('Feedback per page counts the 100 pages the API returns first; it returns no more.');
  }
  if (report.counts.questions === null) {
    notes.push('Question counts are not compared: not every question of the period was read.');
  }
  if (report.semantic?.failed) notes.push(semanticNote(report.semantic.failed));
  return notes;
}

const EMBEDDINGS_CAUSE: Partial<Record<NonNullable<Coverage['failed']>['kind'], string>> = {
  rate_limited: 'was rate limiting (429)',
  timeout: 'did not answer in time',
  malformed: 'sent an answer that could not be read',
  not_found: 'did not find the model or the URL (404)',
  invalid_request: 'rejected the request (400)',
  unauthorized: 'rejected the key (401)',
  forbidden: 'refused the request (403)',
};

/** The questions were grouped by their words because the embeddings endpoint failed: why. */
function semanticNote(f: NonNullable<NonNullable<InsightsReport['semantic']>['failed']>): string {
  const cause =
    f.kind === 'unavailable'
      ? f.status
        ? `answered ${f.status}`
        : 'could not be reached'
      : f.kind === 'unexpected'
        ? 'failed'
        : (EMBEDDINGS_CAUSE[f.kind] ?? `failed (${f.kind})`);
  return `Questions are grouped by their words only: the embeddings endpoint ${cause}.`;
}

/**
 * What an optional page's failure left out, and why: "Could not read feedback comments: the
 * Mintlify API answered 503. Missing: feedback comments (not read), search terms (1 page
 * read, more left). The rest is what was read."
 */
function failureNote(sources: [Source, Coverage][], short: string[]): string {
  const failed = sources.filter(([, c]) => c.failed);
  const why = failed.map(([s, c]) => `${WHAT[s]}: ${failureCause(c.failed!)}`).join('; ');
  const missing = short.length > 0 ? ` Missing: ${short.join(', ')}.` : '';
  return `Could not read ${why}.${missing} The report shows what was read.`;
}

const CAUSE: Partial<Record<NonNullable<Coverage['failed']>['kind'], string>> = {
  rate_limited: 'the Mintlify API was rate limiting (429)',
  timeout: 'the Mintlify API did not answer in time',
  malformed: 'the Mintlify API sent an answer that could not be read',
  not_found: 'the Mintlify API did not find it (404)',
  invalid_request: 'the Mintlify API rejected the request (400)',
  unauthorized: 'the Mintlify API rejected the key (401)',
  forbidden: 'the Mintlify API refused it (403)',
};

function failureCause(f: NonNullable<Coverage['failed']>): string {
  if (f.kind === 'unavailable') {
    return f.status
      ? `the Mintlify API answered ${f.status}`
      : 'the Mintlify API could not be reached';
  }
  return CAUSE[f.kind] ?? `the request failed (${f.kind})`;
}

const n = (v: number) => v.toLocaleString('en-US');
const pages = (n: number) => (n === 1 ? '1 page' : `${n} pages`);
