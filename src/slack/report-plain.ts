import { truncate } from '../mrkdwn.ts';
import { formatRange } from '../reports/range.ts';
import type { Report } from '../reports/service.ts';
import { pagePath } from './page-links.ts';
import { footnotes, formatChange, noMovers, type ReportView } from './report-blocks.ts';

/** Slack shows a message's text whole up to about 4,000 characters. */
const PLAIN_MAX = 3_900;
const n = (v: number) => v.toLocaleString('en-US');

/**
 * The whole report as one message's mrkdwn `text`, for when Slack refuses its blocks: the
 * same figures, top pages and movers, without layout.
 */
export function plainReport(report: Report, title: string, view: ReportView = {}): string {
  const { changes, range, previous } = report;
  const path = (p: string) => pagePath(p, view.docsBaseUrl);
  const lines = [
    `*${title}: ${formatRange(range)}* (days in ${range.timeZone} time)`,
    `Humans ${n(changes.human.current)} ${formatChange(changes.human)} · AI agents ${n(changes.ai.current)} ${formatChange(changes.ai)} · All visitors ${n(changes.total.current)} ${formatChange(changes.total)}, compared with ${formatRange(previous)}.`,
    '*Top pages*',
    ...(report.top.length
      ? report.top.map((r, i) => `${i + 1}. ${path(r.path)}  ${n(r.total)}`)
      : ['No page had visitors.']),
    '*Biggest movers*',
  ];
  const { up, down } = report.movers;
  const movers = [...up, ...down].map((m) => `${path(m.path)}  ${formatChange(m)}`);
  lines.push(...(movers.length ? movers : [noMovers(report)]), ...footnotes(report));
  // Whole lines only: a cut inside a link would break it.
  let text = '';
  for (const line of lines) {
    if (text.length + line.length + 1 > PLAIN_MAX) return `${text}\n…`;
    text = text ? `${text}\n${line}` : truncate(line, PLAIN_MAX);
  }
  return text;
}
