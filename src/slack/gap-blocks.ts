import type { KnownBlock, Overflow, SectionBlock } from '@slack/types';
import type { DraftedGap, GapListing, ListedGap } from '../insights/gap-book.ts';
import type { GapItem } from '../insights/gaps.ts';
import type { Impact } from '../insights/impact.ts';
import { escapeAndTruncate, link, truncate } from '../mrkdwn.ts';
import { prName } from './blocks.ts';
import { SECTION_MAX } from './report-blocks.ts';

/**
 * A report's gaps as Block Kit, compact enough for a phone: one section per gap, two or
 * three short lines, and one overflow menu (⋯) holding its actions (Draft it, the evidence,
 * Dismiss) instead of a row of buttons; drafted gaps with their job, pull request and "did
 * it work?"; a line for what was left out. Every user text is escaped and cut. Pure.
 */

/** The overflow's action id (one per section block: Slack wants them unique per block). */
export const GAP_ACTION = 'insight_gap';
export type GapChoice = 'draft' | 'evidence' | 'dismiss';
/** An option's value: what, and which gap (`draft:12`). */
export const choiceValue = (what: GapChoice, id: number) => `${what}:${id}`;
export function readChoice(value: string): { what: GapChoice; id: number } | undefined {
  const m = /^(draft|evidence|dismiss):(\d{1,15})$/.exec(value);
  return m ? { what: m[1] as GapChoice, id: Number(m[2]) } : undefined;
}

/** Longest wording or search term quoted, and comment, in escaped characters. */
export const EXAMPLE_MAX = 300;
export const COMMENT_MAX = 200;

const n = (v: number) => v.toLocaleString('en-US');
const times = (v: number) => `${n(v)}×`;
const pct = (f: number) => `${Math.round(f * 1000) / 10}%`;
const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();
const quoted = (s: string) => `“${escapeAndTruncate(oneLine(s), EXAMPLE_MAX)}”`;

export interface GapView {
  /** Offer the actions menu on each open gap. */
  actions: boolean;
  /** Page paths as mrkdwn (links when the docs' address is known). */
  path: (p: string) => string;
  /** Permalinks of drafted gaps' job threads, by thread id. */
  threadLinks?: ReadonlyMap<number, string>;
}

function menu(id: number): Overflow {
  const option = (text: string, what: GapChoice) => ({
    text: { type: 'plain_text' as const, text },
    value: choiceValue(what, id),
  });
  return {
    type: 'overflow',
    action_id: GAP_ACTION,
    options: [
      option('Draft it with the agent', 'draft'),
      option('Show the evidence', 'evidence'),
      option('Dismiss: needs nothing', 'dismiss'),
    ],
  };
}

function gapSection(text: string, gap: ListedGap | undefined, actions: boolean): SectionBlock {
  const block: SectionBlock = {
    type: 'section',
    text: { type: 'mrkdwn', text: truncate(text, SECTION_MAX) },
  };
  if (gap && gap.id >= 0) block.block_id = `gap_${gap.id}`;
  if (gap && actions && gap.id >= 0) block.accessory = menu(gap.id);
  return block;
}

/** What readers did, on one line: "14× unanswered · 40× searched, no clicks · 2 comments". */
export function metLine(i: GapItem): string {
  const parts: string[] = [];
  if (i.asked > 0) parts.push(`*${times(i.asked)}* unanswered`);
  if (i.searched > 0)
    parts.push(`*${times(i.searched)}* searched, ${i.ctr ? `CTR ${pct(i.ctr)}` : 'no clicks'}`);
  const comments = i.comments.reduce((c, x) => c + x.count, 0);
  if (comments > 0) parts.push(`${n(comments)} comment${comments === 1 ? '' : 's'}`);
  return parts.join(' · ');
}

/** One open content gap: its most asked wording or term, then what readers did. */
export function contentLine(g: ListedGap): string {
  const i = g.item;
  const icon = i.kind === 'search' ? ':mag:' : ':question:';
  const others =
    i.kind === 'search' ? i.distinct.searches - 1 : Math.max(0, i.distinct.wordings - 1);
  const more =
    others > 0
      ? ` · ${n(others)} other ${i.kind === 'search' ? 'term' : 'wording'}${others === 1 ? '' : 's'}`
      : '';
  const again = g.again ? '\n_An earlier job for it ended without a pull request._' : '';
  return `${icon} ${quoted(i.title)}\n${metLine(i)}${more}${again}`;
}

export function pageLine(g: ListedGap, path: (p: string) => string): string {
  const p = g.item.page;
  if (!p) return contentLine(g);
  const head = `:thumbsdown: ${path(p.path)}  *${n(p.thumbsDown)}* thumbs down (${pct(p.downShare)} of votes)`;
  const comments = g.item.comments
    .slice(0, 3)
    .map(
      (c) =>
        `> ${escapeAndTruncate(oneLine(c.text), COMMENT_MAX)}${c.count > 1 ? ` _(${n(c.count)} readers)_` : ''}`,
    );
  const again = g.again ? ['_An earlier job for it ended without a pull request._'] : [];
  return [head, ...comments, ...again].join('\n');
}

export function contentBlocks(listing: GapListing, v: GapView): KnownBlock[] {
  const out: KnownBlock[] = [gapSection('*Content gaps*', undefined, false)];
  for (const g of listing.content) out.push(gapSection(contentLine(g), g, v.actions));
  if (listing.content.length === 0)
    out.push(
      gapSection('No unanswered questions and no searches left without clicks.', undefined, false),
    );
  const notes = leftOut(listing.more.content, listing.dismissed);
  if (notes) out.push({ type: 'context', elements: [{ type: 'mrkdwn', text: notes }] });
  return out;
}

export function pageBlocks(listing: GapListing, v: GapView): KnownBlock[] {
  const out: KnownBlock[] = [gapSection('*Pages readers disliked*', undefined, false)];
  for (const g of listing.pages) out.push(gapSection(pageLine(g, v.path), g, v.actions));
  if (listing.pages.length === 0)
    out.push(gapSection('No page had enough thumbs down to list.', undefined, false));
  if (listing.more.pages > 0) {
    const text = `…and ${n(listing.more.pages)} more page${listing.more.pages === 1 ? '' : 's'} with fewer or as many thumbs down, not listed.`;
    out.push({ type: 'context', elements: [{ type: 'mrkdwn', text }] });
  }
  return out;
}

/** What the list left out, said truly: past the top, and dismissed by a person. */
function leftOut(more: number, dismissed: number): string | undefined {
  const parts: string[] = [];
  if (more > 0)
    parts.push(
      `…and ${n(more)} more gap${more === 1 ? '' : 's'}, none met by more readers than those listed, not listed.`,
    );
  if (dismissed > 0)
    parts.push(
      `${n(dismissed)} gap${dismissed === 1 ? '' : 's'} someone dismissed ${dismissed === 1 ? 'is' : 'are'} left out.`,
    );
  return parts.length > 0 ? parts.join(' ') : undefined;
}

/** Gaps drafted into agent jobs: their job and pull request, and "did it work?". */
export function draftedBlocks(listing: GapListing, v: GapView): KnownBlock[] {
  if (listing.drafted.length === 0) return [];
  return [
    { type: 'divider' },
    gapSection('*Drafted with the agent*', undefined, false),
    ...listing.drafted.map((d) => gapSection(draftedLine(d, v), undefined, false)),
  ];
}

export function draftedLine(d: DraftedGap, v: GapView): string {
  const who = d.by ? ` by <@${d.by}>` : '';
  const thread = d.job && v.threadLinks?.get(d.job.id);
  const where = thread ? ` · ${link(thread, 'job thread')}` : '';
  const what =
    d.state === 'done' && d.job?.prLink
      ? ` · ${link(d.job.prLink, `pull request ${prName(d.job.prLink)}`)}`
      : d.state === 'starting'
        ? ' · starting'
        : ' · job running';
  const head = `:hammer_and_wrench: ${quoted(d.title)}\nDrafted${who}${where}${what}`;
  const impact = d.impact ? `\n${impactLine(d.impact)}` : '';
  return `${head}${impact}`;
}

const day = (ms: number) =>
  new Date(ms).toLocaleDateString('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });
const inDays = (d: number) =>
  d < 1 ? 'in less than a day' : `in ${n(d)} day${d === 1 ? '' : 's'}`;

/** "Since the PR (Nov 18): asked 3× in 4 days, searched 0× without a click. Before: …" */
export function impactLine(i: Impact): string {
  const before = i.before
    ? ` Before: asked ${times(i.before.asked)}, searched ${times(i.before.searched)} without a click ${inDays(i.before.days)}.`
    : '';
  if (!i.since)
    return `:hourglass: Pull request opened ${day(i.prAt)}, after this period: the next report says how it went.${before}`;
  const s = i.since;
  const asked = `${s.askedAtLeast ? 'at least ' : ''}${times(s.asked)}`;
  const searched =
    s.searched === null
      ? 'searches not split at the pull request'
      : `searched ${times(s.searched)} without a click`;
  return `:chart_with_downwards_trend: Since the pull request (${day(i.prAt)}): asked ${asked} unanswered, ${searched}, ${inDays(s.days)}.${before}`;
}
