import type { KnownBlock, SectionBlock } from '@slack/types';
import type { SearchRow } from '../api/insights-schemas.ts';
import type { DislikedPage, PeriodCounts, SearchGap } from '../insights/analyse.ts';
import { coverageNotes } from '../insights/notes.ts';
import type { InsightsReport } from '../insights/service.ts';
import type { Topic } from '../insights/topics.ts';
import { escapeAndTruncate, truncate } from '../mrkdwn.ts';
import { formatRange } from '../reports/range.ts';
import type { Message } from './blocks.ts';
import { type DraftSeed, draftButton } from './insight-drafts.ts';
import { pagePath } from './page-links.ts';
import { formatChange, listSections, SECTION_MAX } from './report-blocks.ts';

/**
 * The insights report as Block Kit: counts with change, content gaps (unanswered questions
 * and searches nobody followed, grouped into topics), pages readers disliked, top searches,
 * and notes on what could not be read. Every user text (questions, search terms, comments,
 * paths) is escaped and cut. Each gap and disliked page carries a "Draft it" button. Pure.
 */

export interface InsightsView {
  /** Where the docs are published (no trailing slash): paths link to their pages. */
  docsBaseUrl?: string | undefined;
  /** Offer a "Draft it" button on each gap and disliked page. */
  drafts?: boolean;
}

/** Longest question or search term quoted, in escaped characters. */
export const EXAMPLE_MAX = 300;
/** Longest comment quoted. */
export const COMMENT_MAX = 200;

const n = (v: number) => v.toLocaleString('en-US');
const pct = (fraction: number) => `${Math.round(fraction * 1000) / 10}%`;
const times = (v: number) => (v === 1 ? 'once' : `${n(v)} times`);

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
): Message {
  const path = (p: string) => pagePath(p, view.docsBaseUrl);
  const name = shape.title ?? 'Docs insights';
  const title = `${name}: ${formatRange(report.range)}`;
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
    ...gapBlocks(report, view.drafts === true),
    { type: 'divider' },
    ...dislikedBlocks(report.disliked, path, view.drafts === true),
    ...(shape.topSearches === false
      ? []
      : [
          { type: 'divider' } as const,
          ...listSections('*Top searches*', topSearchLines(report.topSearches, path)),
        ]),
    { type: 'context', elements: footnotes(report).map((text) => ({ type: 'mrkdwn', text })) },
  ];
  return { text: insightsText(report, name), blocks };
}

/** The message's plain `text`: what notifications and screen readers get. */
export function insightsText(report: InsightsReport, name = 'Docs insights'): string {
  const gaps = report.questionGaps.length + report.searchGaps.length;
  return `${name}: ${formatRange(report.range)} (${report.range.timeZone}): ${n(gaps)} content gaps, ${n(report.disliked.length)} pages readers disliked, ${n(report.counts.searches)} searches.`;
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

function section(text: string, seed?: DraftSeed): SectionBlock {
  const block: SectionBlock = {
    type: 'section',
    text: { type: 'mrkdwn', text: truncate(text, SECTION_MAX) },
  };
  if (seed) block.accessory = draftButton(seed);
  return block;
}

function gapBlocks(report: InsightsReport, drafts: boolean): KnownBlock[] {
  const out: KnownBlock[] = [section('*Content gaps*')];
  out.push(
    ...report.questionGaps.map((t, i) =>
      section(questionLine(t), drafts ? questionSeed(t, i) : undefined),
    ),
    ...report.searchGaps.map((g, i) =>
      section(searchGapLine(g), drafts ? searchSeed(g, i) : undefined),
    ),
  );
  if (out.length === 1)
    out.push(section('No unanswered questions and no searches left without clicks.'));
  const more = moreGapsLine(report.moreGaps);
  if (more) out.push({ type: 'context', elements: [{ type: 'mrkdwn', text: more }] });
  return out;
}

/** How many gap topics the top N left out, or nothing when none were. */
function moreGapsLine(more: InsightsReport['moreGaps'] | undefined): string | undefined {
  if (!more || more.questions + more.searches === 0) return undefined;
  const topics = (count: number, what: string) =>
    count === 0 ? '' : `${n(count)} more ${what} topic${count === 1 ? '' : 's'}`;
  const parts = [topics(more.questions, 'unanswered question'), topics(more.searches, 'search')];
  const listed = parts.filter(Boolean);
  return `…and ${listed.join(' and ')}, each asked or searched less often, not listed.`;
}

function questionLine(t: Topic): string {
  const ways = t.variants.length > 1 ? ` (${n(t.variants.length)} ways of asking)` : '';
  return `:question: Asked *${times(t.count)}* and the assistant could not answer${ways}\n_e.g._ “${escapeAndTruncate(t.example, EXAMPLE_MAX)}”`;
}

function searchGapLine(g: SearchGap): string {
  const clicks = g.noClicks ? 'no clicks' : `CTR ${pct(g.ctr)}`;
  const others =
    g.topic.variants.length > 1 ? ` (and ${n(g.topic.variants.length - 1)} similar terms)` : '';
  return `:mag: Searched *${times(g.hits)}*, ${clicks}: “${escapeAndTruncate(g.topic.example, EXAMPLE_MAX)}”${others}`;
}

function dislikedBlocks(
  pages: DislikedPage[],
  path: (p: string) => string,
  drafts: boolean,
): KnownBlock[] {
  const out: KnownBlock[] = [section('*Pages readers disliked*')];
  out.push(
    ...pages.map((p, i) => section(dislikedLine(p, path), drafts ? pageSeed(p, i) : undefined)),
  );
  if (pages.length === 0) out.push(section('No page had enough thumbs down to list.'));
  return out;
}

function dislikedLine(p: DislikedPage, path: (p: string) => string): string {
  const head = `:thumbsdown: ${path(p.path)}  *${n(p.thumbsDown)}* thumbs down (${pct(p.downShare)} of votes)`;
  const comments = p.comments.map(
    (c) =>
      `> ${escapeAndTruncate(oneLine(c.text), COMMENT_MAX)}${c.count > 1 ? ` _(${n(c.count)} readers)_` : ''}`,
  );
  return [head, ...comments].join('\n');
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
    'Questions and search terms are grouped into topics when they share at least 60% of their words with the topic’s most asked form. A search is a gap with 5+ searches and a CTR of 5% or less.',
  );
  return notes.slice(0, 10).map((s) => truncate(s, SECTION_MAX));
}

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

function questionSeed(t: Topic, index: number): DraftSeed {
  return { kind: 'question', index, count: t.count, example: t.example };
}
function searchSeed(g: SearchGap, index: number): DraftSeed {
  return { kind: 'search', index, count: g.hits, example: g.topic.example, ctr: g.ctr };
}
function pageSeed(p: DislikedPage, index: number): DraftSeed {
  return {
    kind: 'page',
    index,
    count: p.thumbsDown,
    example: p.path,
    comments: p.comments.map((c) => c.text),
  };
}
