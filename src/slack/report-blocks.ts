import type { KnownBlock } from '@slack/types';
import { truncate } from '../mrkdwn.ts';
import type { Change } from '../reports/aggregate.ts';
import { DEFAULT_MOVERS } from '../reports/aggregate.ts';
import { formatRange } from '../reports/range.ts';
import type { Report } from '../reports/service.ts';
import type { Message } from './blocks.ts';
import { pagePath } from './page-links.ts';

/**
 * The traffic report for Slack: a short headline (totals with change) for the channel, and
 * its details for the thread (top pages, movers, and footnotes that say what the numbers are,
 * deduplicated, and how much was scanned) as Block Kit. Pure.
 */

/** Slack's limit on a section's text. */
export const SECTION_MAX = 3_000;
const n = (v: number) => v.toLocaleString('en-US');

export interface ReportView {
  /** Where the docs are published (no trailing slash): paths link to their pages. */
  docsBaseUrl?: string | undefined;
}

export function formatChange(c: Change): string {
  if (c.pct === null) return c.current === 0 ? 'no change' : `:new: +${n(c.current)} (new)`;
  const sign = c.abs > 0 ? '+' : c.abs < 0 ? '−' : '±';
  const arrow = c.abs > 0 ? ':arrow_up_small:' : c.abs < 0 ? ':arrow_down_small:' : '';
  const pct = Math.abs(c.pct) >= 10 ? Math.round(Math.abs(c.pct)) : Math.abs(c.pct).toFixed(1);
  return `${arrow} ${sign}${n(Math.abs(c.abs))} (${sign}${pct}%)`.trim();
}

/**
 * A titled list as section blocks within Slack's 3,000 characters each: lines are packed
 * in order, and a line that cannot fit even alone is cut.
 */
export function listSections(title: string, lines: readonly string[]): KnownBlock[] {
  const texts: string[] = [];
  let current = title;
  for (const raw of lines) {
    const line = truncate(raw, SECTION_MAX);
    if (current.length + 1 + line.length <= SECTION_MAX) current += `\n${line}`;
    else {
      texts.push(current);
      current = line;
    }
  }
  texts.push(current);
  return texts.map((text) => ({ type: 'section', text: { type: 'mrkdwn', text } }));
}

/**
 * The report's one message in the channel: its title, the three totals with their change,
 * one a line (three on one line wrap mid-figure on a phone), and where the rest is. mrkdwn
 * text: it goes out as the chart's comment, which carries no blocks.
 */
export function reportHeadline(report: Report, title: string): string {
  const { changes, range, previous } = report;
  const figure = (name: string, c: Change) => `${name} *${n(c.current)}* ${formatChange(c)}`;
  return [
    `*${title}: ${formatRange(range)}* (${range.timeZone})`,
    figure('Humans', changes.human),
    figure('AI agents', changes.ai),
    figure('All visitors', changes.total),
    `Unique visitors, compared with ${formatRange(previous)}. Top pages, biggest movers and a CSV of every page are in the thread.`,
  ].join('\n');
}

/** The report's first reply in its thread: top pages, movers, and what the numbers are. */
export function reportDetails(report: Report, title: string, view: ReportView = {}): Message {
  const path = (p: string) => pagePath(p, view.docsBaseUrl);
  const blocks: KnownBlock[] = [];
  const top = report.top.map(
    (r, i) => `${i + 1}. ${path(r.path)}  *${n(r.total)}*  (${n(r.human)} human · ${n(r.ai)} AI)`,
  );
  blocks.push(...listSections('*Top pages*', top.length ? top : ['No page had visitors.']));

  const moverLine = (m: Report['movers']['up'][number]) => `${path(m.path)}  ${formatChange(m)}`;
  const { up, down } = report.movers;
  const movers = [...up.map(moverLine), ...down.map(moverLine)];
  blocks.push(...listSections('*Biggest movers*', movers.length ? movers : [noMovers(report)]));

  blocks.push({
    type: 'context',
    elements: footnotes(report).map((text) => ({ type: 'mrkdwn', text })),
  });
  return { text: `Top pages and biggest movers: ${reportText(report, title)}`, blocks };
}

/** Why the movers list is empty, plainly. */
export function noMovers(report: Report): string {
  const { current, previous } = report.scan;
  const rule = `by ${DEFAULT_MOVERS.minAbs}+ visitors (with ${DEFAULT_MOVERS.floor}+ in either period)`;
  if (current.complete && previous.complete) return `No page moved ${rule}.`;
  return `No page moved ${rule} among the pages scanned in both periods: the site has more pages than this report could scan (see below).`;
}

/** The message's plain `text`: what notifications and screen readers get. */
export function reportText(report: Report, title: string): string {
  const { changes } = report;
  return `${title}: ${formatRange(report.range)} (${report.range.timeZone}): ${n(changes.total.current)} unique visitors (${n(changes.human.current)} human, ${n(changes.ai.current)} AI).`;
}

export function footnotes(report: Report): string[] {
  const notes: string[] = [];
  const { current, previous, stoppedBy } = report.scan;
  const why =
    stoppedBy === 'budget'
      ? 'the hourly analytics budget ran out'
      : 'the per-report request cap was reached';
  if (!current.complete) {
    notes.push(
      `:warning: Top pages among ${n(current.paths)} paths scanned; the site has more (${why}).`,
    );
  }
  if (!previous.complete) {
    notes.push(
      `:warning: Movers compare only pages scanned in both periods: ${n(current.paths)} paths now and ${n(previous.paths)} in the previous period (${why}).`,
    );
  }
  notes.push(
    `Each visitor counts once per period: human + AI can exceed *All visitors*, and page counts do not add up to the site total. Days run from midnight to midnight, ${report.range.timeZone} time. Every page scanned is in the CSV below.`,
  );
  return notes;
}
