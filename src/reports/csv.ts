import type { PageRow } from '../api/schemas.ts';
import { drain, eachStep, type Steps } from './turns.ts';

/**
 * Every page row scanned, as CSV (RFC 4180). A cell that a spreadsheet would run as a
 * formula (starting with = + - @ or a control character) gets a leading apostrophe: page
 * paths come from the public web.
 */
export function pagesCsv(
  rows: readonly PageRow[],
  previous: ReadonlyMap<string, PageRow>,
  previousComplete: boolean,
): string {
  return drain(pagesCsvSteps(rows, previous, previousComplete));
}

/** `pagesCsv` in steps (src/reports/turns.ts). */
export function* pagesCsvSteps(
  rows: readonly PageRow[],
  previous: ReadonlyMap<string, PageRow>,
  previousComplete: boolean,
): Steps<string> {
  const lines = ['path,human,ai,total,previous_total'];
  yield* eachStep(rows, (r) => {
    const prev = previous.get(r.path)?.total ?? (previousComplete ? 0 : '');
    lines.push([cell(r.path), r.human, r.ai, r.total, prev].join(','));
  });
  return `${lines.join('\r\n')}\r\n`;
}

function cell(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}
