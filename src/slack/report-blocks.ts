import type { KnownBlock } from '@slack/types';
import { escapeMrkdwn, truncate } from '../mrkdwn.ts';
import type { Change } from '../reports/aggregate.ts';
import { formatRange } from '../reports/range.ts';
import type { Report } from '../reports/service.ts';
import type { Message } from './blocks.ts';

/**
 * The traffic report as Block Kit: totals with change, top pages, movers, and footnotes
 * that say what the numbers are (deduplicated) and how much was scanned. Pure.
 */

const PATH_MAX = 70;
const n = (v: number) => v.toLocaleString('en-US');

export function formatChange(c: Change): string {
  if (c.pct === null) return c.current === 0 ? 'no change' : 'new';
  const sign = c.abs > 0 ? '+' : c.abs < 0 ? '−' : '±';
  const arrow = c.abs > 0 ? ':arrow_up_small:' : c.abs < 0 ? ':arrow_down_small:' : '';
  const pct = Math.abs(c.pct) >= 10 ? Math.round(Math.abs(c.pct)) : Math.abs(c.pct).toFixed(1);
  return `${arrow} ${sign}${n(Math.abs(c.abs))} (${sign}${pct}%)`.trim();
}

const path = (p: string) => `\`${escapeMrkdwn(truncate(p, PATH_MAX)).replace(/`/g, "'")}\``;

export function reportMessage(report: Report, title: string): Message {
  const { changes, range, previous } = report;
  const period = formatRange(range);
  const blocks: KnownBlock[] = [
    { type: 'header', text: { type: 'plain_text', text: truncate(`${title}: ${period}`, 150) } },
    {
      type: 'section',
      fields: [
        {
          type: 'mrkdwn',
          text: `*Humans*\n${n(changes.human.current)}  ${formatChange(changes.human)}`,
        },
        {
          type: 'mrkdwn',
          text: `*AI agents*\n${n(changes.ai.current)}  ${formatChange(changes.ai)}`,
        },
        {
          type: 'mrkdwn',
          text: `*All visitors*\n${n(changes.total.current)}  ${formatChange(changes.total)}`,
        },
      ],
    },
    {
      type: 'context',
      elements: [
        { type: 'mrkdwn', text: `Unique visitors, compared with ${formatRange(previous)}.` },
      ],
    },
  ];

  const top = report.top.map(
    (r, i) => `${i + 1}. ${path(r.path)}  *${n(r.total)}*  (${n(r.human)} human · ${n(r.ai)} AI)`,
  );
  blocks.push({
    type: 'section',
    text: {
      type: 'mrkdwn',
      text: top.length ? `*Top pages*\n${top.join('\n')}` : '*Top pages*\nNo page had visitors.',
    },
  });

  const moverLine = (m: Report['movers']['up'][number]) => `${path(m.path)}  ${formatChange(m)}`;
  const { up, down } = report.movers;
  if (up.length || down.length) {
    const lines = [...up.map(moverLine), ...down.map(moverLine)];
    blocks.push({
      type: 'section',
      text: { type: 'mrkdwn', text: `*Biggest movers*\n${lines.join('\n')}` },
    });
  }

  blocks.push({
    type: 'context',
    elements: footnotes(report).map((text) => ({ type: 'mrkdwn', text })),
  });
  const text = `${title}: ${period}: ${n(changes.total.current)} unique visitors (${n(changes.human.current)} human, ${n(changes.ai.current)} AI).`;
  return { text, blocks };
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
  } else if (!previous.complete) {
    notes.push(
      `:warning: Movers compare only the ${n(previous.paths)} paths scanned in the previous period (${why}).`,
    );
  }
  notes.push(
    'Each visitor counts once per period: human + AI can exceed *All visitors*, and page counts do not add up to the site total. Chart and every page scanned (CSV) attached.',
  );
  return notes;
}
