import { PAGE_SIZE, type Source } from './plan.ts';
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
  const atCeiling = unfinished.filter(([s, c]) => c.pages >= report.plan.wanted[s]);
  const short = unfinished
    .filter(([s, c]) => c.pages < report.plan.wanted[s])
    .map(([s, c]) =>
      c.pages === 0 ? `${WHAT[s]} (not read)` : `${WHAT[s]} (${pages(c.pages)} read, more left)`,
    );
  if (short.length > 0) {
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
  return notes;
}

const n = (v: number) => v.toLocaleString('en-US');
const pages = (n: number) => (n === 1 ? '1 page' : `${n} pages`);
