/**
 * Date ranges for the docs-traffic report (`/visitors` and the weekly digest).
 *
 * Calendar arithmetic is done on plain `YYYY-MM-DD` strings (via UTC milliseconds, where every day
 * is 24 h), and the time zone only enters when a day is turned into an instant for the API. That
 * keeps DST out of everything except `localMidnightUtc`. `now` is always passed in, never read.
 */
import { escapeMrkdwn, truncate } from '../mrkdwn.ts';

/** A calendar day, `YYYY-MM-DD`. */
export type LocalDate = string;

export interface DateRange {
  /** First day, inclusive. */
  from: LocalDate;
  /** Day after the last one: exclusive, like the API's `dateTo`. */
  to: LocalDate;
  days: number;
  /** IANA zone in which `from` and `to` start. */
  timeZone: string;
}

export interface ChartBucket {
  label: string;
  from: LocalDate;
  to: LocalDate;
}

export type VisitorsArgs = { ok: true; range: DateRange } | { ok: false; error: string };

const DAY_MS = 86_400_000;
const MAX_DAYS = 90;
const MAX_POINTS = 14;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Slack mrkdwn, appended to every parse error so the user sees what would have worked. */
export const VISITORS_USAGE = [
  '*Usage:*',
  '• `/visitors` – the last 7 complete days',
  '• `/visitors 7d`, `/visitors 30d` – the last N complete days (1 to 90)',
  '• `/visitors 2026-11-01 2026-11-14` – from the first day to the second, both included (up to 90 days)',
].join('\n');

// Date.UTC maps years 0–99 to 19xx, so build the instant with setUTCFullYear instead.
function toMs(d: LocalDate): number {
  const m = DATE_RE.exec(d);
  if (!m) throw new RangeError(`Not a YYYY-MM-DD date: ${d}`);
  return new Date(0).setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
}

function fromMs(ms: number): LocalDate {
  const t = new Date(ms);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(t.getUTCFullYear(), 4)}-${pad(t.getUTCMonth() + 1)}-${pad(t.getUTCDate())}`;
}

export function isValidLocalDate(s: string): boolean {
  // Round-tripping rejects 2026-02-30 and 2026-13-01, which Date would silently roll over.
  return DATE_RE.test(s) && fromMs(toMs(s)) === s;
}

export function addDays(d: LocalDate, n: number): LocalDate {
  return fromMs(toMs(d) + n * DAY_MS);
}

function daysBetween(from: LocalDate, to: LocalDate): number {
  return Math.round((toMs(to) - toMs(from)) / DAY_MS);
}

function makeRange(from: LocalDate, to: LocalDate, timeZone: string): DateRange {
  return { from, to, days: daysBetween(from, to), timeZone };
}

// Formatters are costly to build; one per zone. Throws RangeError for an unknown zone
// (config validates DIGEST_TIMEZONE, so that is a programming error here).
const formatters = new Map<string, Intl.DateTimeFormat>();
function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    const n = 'numeric';
    // Gregorian, Latin digits and h23 (never "24:00"), whatever the host's defaults.
    const base = {
      timeZone,
      calendar: 'gregory',
      numberingSystem: 'latn',
      hourCycle: 'h23',
    } as const;
    const fields = { year: n, month: n, day: n, hour: n, minute: n, second: n } as const;
    f = new Intl.DateTimeFormat('en-US', { ...base, ...fields });
    formatters.set(timeZone, f);
  }
  return f;
}

/** The local wall-clock time at `ms`, expressed as if it were a UTC timestamp. */
function wallMs(ms: number, timeZone: string): number {
  const p: Record<string, number> = {};
  for (const part of formatterFor(timeZone).formatToParts(ms)) p[part.type] = Number(part.value);
  const wall = new Date(0).setUTCFullYear(p.year!, p.month! - 1, p.day!);
  return wall + ((p.hour! * 60 + p.minute!) * 60 + p.second!) * 1000;
}

function offsetMs(ms: number, timeZone: string): number {
  const whole = Math.floor(ms / 1000) * 1000; // the formatter has second precision
  return wallMs(whole, timeZone) - whole;
}

export function todayIn(now: Date, timeZone: string): LocalDate {
  return fromMs(Math.floor(wallMs(now.getTime(), timeZone) / DAY_MS) * DAY_MS);
}

/**
 * The instant at which local day `d` begins, as ISO 8601 UTC. Midnight is tried with the offsets
 * in force a day before and a day after (at most one transition lies between). When midnight occurs
 * twice (Havana falls back 01:00 → 00:00) the earlier one wins; when it does not exist (Havana,
 * Santiago, Beirut spring forward 00:00 → 01:00) the day starts at the transition itself.
 */
export function localMidnightUtc(d: LocalDate, timeZone: string): string {
  const wall = toMs(d);
  const offsets = [offsetMs(wall - DAY_MS, timeZone), offsetMs(wall + DAY_MS, timeZone)];
  for (const o of [...offsets].sort((a, b) => b - a)) {
    if (wallMs(wall - o, timeZone) === wall) return new Date(wall - o).toISOString();
  }
  // Skipped midnight: the clock reaches 00:00 on the old (smaller) offset and jumps ahead.
  return new Date(wall - Math.min(...offsets)).toISOString();
}

export function apiParams(range: DateRange): { dateFrom: string; dateTo: string } {
  return {
    dateFrom: localMidnightUtc(range.from, range.timeZone),
    dateTo: localMidnightUtc(range.to, range.timeZone),
  };
}

export function previousRange(range: DateRange): DateRange {
  return makeRange(addDays(range.from, -range.days), range.from, range.timeZone);
}

function problem(sentence: string): VisitorsArgs {
  return { ok: false, error: `${sentence}\n${VISITORS_USAGE}` };
}

// User text is echoed inside a code span: escaped so it cannot ping or link, short, no backticks.
function echo(word: string): string {
  return `\`${escapeMrkdwn(truncate(word.replace(/`/g, "'"), 30))}\``;
}

const looksLikeDate = (s: string) => /^\d{4}-\d{1,2}-\d{1,2}$/.test(s);

export function parseVisitorsArgs(text: string, now: Date, timeZone: string): VisitorsArgs {
  const words = text.trim().split(/\s+/).filter(Boolean);
  const today = todayIn(now, timeZone);
  // Default and "Nd" end before today: a partial day would make the last point look like a drop.
  if (words.length === 0)
    return { ok: true, range: makeRange(addDays(today, -7), today, timeZone) };
  if (words.length > 2) return problem(`I expected at most two dates, not ${words.length} words.`);

  const [first, second] = words as [string, string | undefined];
  const nDays = /^(\d+)d$/i.exec(first);
  if (nDays && second === undefined) {
    const n = Number(nDays[1]);
    if (n < 1 || n > MAX_DAYS) return problem(`${echo(first)} is out of range: use 1d to 90d.`);
    return { ok: true, range: makeRange(addDays(today, -n), today, timeZone) };
  }
  for (const w of words) {
    if (!looksLikeDate(w)) return problem(`I don't understand ${echo(w)}.`);
    if (!isValidLocalDate(w)) return problem(`${echo(w)} is not a real date (use YYYY-MM-DD).`);
  }
  if (second === undefined) return problem('Only one date given: add the last day too.');
  if (second < first) return problem(`The dates are reversed: ${second} comes before ${first}.`);
  if (second > today) {
    return problem(`The range ends in the future: today is ${today} (${timeZone}).`);
  }
  const range = makeRange(first, addDays(second, 1), timeZone);
  if (range.days > MAX_DAYS) return problem(`That is ${range.days} days; the limit is 90.`);
  return { ok: true, range };
}

function dayLabel(d: LocalDate): string {
  const [, , m, day] = DATE_RE.exec(d)!;
  return `${MONTHS[Number(m) - 1]} ${Number(day)}`;
}

/** 'Nov 15', 'Nov 3–9', 'Oct 27–Nov 2' for the days [from, to). */
function bucketLabel(from: LocalDate, to: LocalDate): string {
  const last = addDays(to, -1);
  if (last === from) return dayLabel(from);
  const sameMonth = from.slice(0, 7) === last.slice(0, 7);
  return `${dayLabel(from)}–${sameMonth ? Number(last.slice(8)) : dayLabel(last)}`;
}

/**
 * Daily up to 14 days, else 7-day buckets (14-day ones past 98 days, ...) so ≤ 14 points.
 * Buckets are counted back from the end, so the latest weeks are whole and only the first
 * may be shorter; its label says how many days it covers, since unique visitors over fewer
 * days would otherwise read as a drop.
 */
export function chartBuckets(range: DateRange): ChartBucket[] {
  const step = range.days <= MAX_POINTS ? 1 : 7 * Math.ceil(range.days / (7 * MAX_POINTS));
  const buckets: ChartBucket[] = [];
  for (let to = range.to; to > range.from; ) {
    const back = addDays(to, -step);
    const from = back > range.from ? back : range.from;
    const days = daysBetween(from, to);
    const label = bucketLabel(from, to) + (days < step ? ` (${days}d)` : '');
    buckets.unshift({ label, from, to });
    to = from;
  }
  return buckets;
}

/** 'Nov 15 – Nov 21, 2026'; 'Dec 28, 2026 – Jan 3, 2027'; 'Nov 15, 2026' for one day. */
export function formatRange(range: DateRange): string {
  const last = addDays(range.to, -1);
  const year = (d: LocalDate) => Number(d.slice(0, 4));
  if (last === range.from) return `${dayLabel(last)}, ${year(last)}`;
  const head = year(range.from) === year(last) ? '' : `, ${year(range.from)}`;
  return `${dayLabel(range.from)}${head} – ${dayLabel(last)}, ${year(last)}`;
}

/**
 * The last complete ISO week (Mon–Sun) before the local day of `scheduledAt`. On a Sunday the
 * current week is still running, so it is the week before. The key names the ISO week (the year of
 * its Thursday), so a retried run can tell it already posted that digest.
 */
export function digestPeriod(
  scheduledAt: Date,
  timeZone: string,
): { range: DateRange; key: string } {
  const today = todayIn(scheduledAt, timeZone);
  const isoWeekday = ((new Date(toMs(today)).getUTCDay() + 6) % 7) + 1; // Mon = 1 … Sun = 7
  const thisMonday = addDays(today, 1 - isoWeekday);
  const range = makeRange(addDays(thisMonday, -7), thisMonday, timeZone);
  const thursday = addDays(range.from, 3);
  const dayOfYear = daysBetween(`${thursday.slice(0, 4)}-01-01`, thursday) + 1;
  const week = Math.floor((dayOfYear - 1) / 7) + 1;
  return { range, key: `${thursday.slice(0, 4)}-W${String(week).padStart(2, '0')}` };
}
