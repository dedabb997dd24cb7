import type { KnownBlock } from '@slack/types';
import type { SearchRow } from '../api/insights-schemas.ts';
import type { PeriodCounts } from '../insights/analyse.ts';
import type { GapListing, ListedGap } from '../insights/gap-book.ts';
import { coverageNotes } from '../insights/notes.ts';
import type { InsightsReport } from '../insights/service.ts';
import { escapeAndTruncate, truncate } from '../mrkdwn.ts';
import { formatRange } from '../reports/range.ts';
import type { Message } from './blocks.ts';
import {
  contentBlocks,
  draftedBlocks,
  EXAMPLE_MAX,
  type GapView,
  pageBlocks,
} from './gap-blocks.ts';
import { pagePath } from './page-links.ts';
import { formatChange, listSections, SECTION_MAX } from './report-blocks.ts';

export { COMMENT_MAX, EXAMPLE_MAX } from './gap-blocks.ts';

/**
 * The insights report as Block Kit: counts with change, content gaps (one item per need:
 * unanswered questions, searches nobody followed and comments joined, src/insights/gaps.ts),
 * gaps drafted with the agent, pages readers disliked, top searches, and notes on what could
 * not be read. Every user text (questions, search terms, comments, paths) is escaped and
 * cut. Each open gap carries one actions menu (gap-blocks.ts). Pure.
 */

export interface InsightsView {
  /** Where the docs are published (no trailing slash): paths link to their pages. */
  docsBaseUrl?: string | undefined;
  /** Offer the actions menu (Draft it, evidence, Dismiss) on each open gap. */
  drafts?: boolean;
}

/** The report's gaps as the team left them (src/insights/gap-book.ts), and thread links. */
export interface GapsShown {
  listing: GapListing;
  threadLinks?: ReadonlyMap<number, string>;
}

const n = (v: number) => v.toLocaleString('en-US');
const pct = (fraction: number) => `${Math.round(fraction * 1000) / 10}%`;

/** How much of the report a message holds: the digest's section leaves out top searches. */
export interface InsightsShape {
  /** "Docs insights" for `/insights`; the digest's section says "Weekly docs insights". */
  title?: string;
  /** Top searches are listed (`/insights`); the digest's section keeps to gaps and pages. */
  topSearches?: boolean;
}

export function insightsMessage(
  report: InsightsReport,
  view: InsightsView = {},
  shape: InsightsShape = {},
  gaps: GapsShown = { listing: plainListing(report) },
): Message {
  const path = (p: string) => pagePath(p, view.docsBaseUrl);
  const name = shape.title ?? 'Docs insights';
  const title = `${name}: ${formatRange(report.range)}`;
  const v: GapView = {
    actions: view.drafts === true,
    path,
    ...(gaps.threadLinks ? { threadLinks: gaps.threadLinks } : {}),
  };
  const blocks: KnownBlock[] = [
    { type: 'header', text: { type: 'plain_text', text: truncate(title, 150) } },
    { type: 'section', fields: countFields(report) },
    {
      type: 'context',
      elements: [
        {
          type: 'mrkdwn',
          text: `Compared with ${formatRange(report.previous)}. Days run from midnight to midnight, ${report.range.timeZone} time.`,
        },
      ],
    },
    { type: 'divider' },
    ...contentBlocks(gaps.listing, v),
    ...draftedBlocks(gaps.listing, v),
    { type: 'divider' },
    ...pageBlocks(gaps.listing, v),
    ...(shape.topSearches === false
      ? []
      : [
          { type: 'divider' } as const,
          ...listSections('*Top searches*', topSearchLines(report.topSearches, path)),
        ]),
    { type: 'context', elements: footnotes(report).map((text) => ({ type: 'mrkdwn', text })) },
  ];
  return { text: insightsText(report, name, gaps.listing), blocks };
}

/**
 * The report's gaps without their stored state (no actions, nothing drafted): what a report
 * shows where gap state is not kept.
 */
export function plainListing(report: InsightsReport, listed = 5): GapListing {
  const items = report.gaps ?? [];
  const open = (kind: 'content' | 'page') =>
    items
      .filter((i) => (i.kind === 'page') === (kind === 'page'))
      .map((item): ListedGap => ({ id: -1, item, again: false }));
  const [content, pages] = [open('content'), open('page')];
  return {
    content: content.slice(0, listed),
    pages: pages.slice(0, listed),
    drafted: [],
    dismissed: 0,
    more: {
      content: Math.max(0, content.length - listed) + (report.gapsDropped ?? 0),
      pages: Math.max(0, pages.length - listed),
    },
  };
}

/** The message's plain `text`: what notifications and screen readers get. */
export function insightsText(
  report: InsightsReport,
  name = 'Docs insights',
  listing: GapListing = plainListing(report),
): string {
  const gaps = listing.content.length;
  return `${name}: ${formatRange(report.range)} (${report.range.timeZone}): ${n(gaps)} content gaps, ${n(listing.pages.length)} pages readers disliked, ${n(report.counts.searches)} searches.`;
}

const COUNT_NAMES: Record<keyof PeriodCounts, string> = {
  searches: 'Searches',
  questions: 'Assistant questions',
  unanswered: 'Unanswered questions',
  thumbsDown: 'Thumbs down',
};

function countFields(report: InsightsReport) {
  return (Object.keys(COUNT_NAMES) as (keyof PeriodCounts)[]).map((k) => {
    const value = report.counts[k];
    const c = report.changes[k];
    const shown =
      value === null
        ? 'not read in full'
        : `${n(value)}  ${c ? formatChange(c) : '(no comparison)'}`;
    return { type: 'mrkdwn' as const, text: `*${COUNT_NAMES[k]}*\n${shown}` };
  });
}

function topSearchLines(rows: SearchRow[], path: (p: string) => string): string[] {
  if (rows.length === 0) return ['No searches in this period.'];
  return rows.map((r, i) => {
    const clicked = r.topClickedPage ? ` · most clicked: ${path(r.topClickedPage)}` : '';
    return `${i + 1}. “${escapeAndTruncate(r.searchQuery, EXAMPLE_MAX)}”  *${n(r.hits)}* searches · CTR ${pct(r.ctr)}${clicked}`;
  });
}

/** Coverage notes (plain, no user text) and how gaps are found; at most 10 context elements. */
export function footnotes(report: InsightsReport): string[] {
  const notes = coverageNotes(report).map((s) => `:warning: ${s}`);
  notes.push(
    'Questions and search terms are grouped into topics by the words they share (stems and synonyms, weighted by rarity) and the assistant’s category. A search is a gap with 5+ searches and a CTR of 5% or less.',
  );
  notes.push(
    'A search or a reader comment on the same need as a question joins its gap: one gap, one menu (⋯) to draft it, see its evidence or dismiss it.',
  );
  return notes.slice(0, 10).map((s) => truncate(s, SECTION_MAX));
}
