import { describe, expect, it } from 'vitest';
import {
  addDays,
  apiParams,
  chartBuckets,
  type DateRange,
  digestPeriod,
  formatRange,
  isValidLocalDate,
  localMidnightUtc,
  parseVisitorsArgs,
  previousRange,
  todayIn,
  VISITORS_USAGE,
} from '../../src/reports/range.ts';

const LA = 'America/Los_Angeles';
// Sunday 22 Nov 2026, 10:30 UTC: 02:30 in Los Angeles, 23:30 in Tonga, already Monday on Kiritimati.
const NOW = new Date('2026-11-22T10:30:00Z');

function range(from: string, to: string, timeZone = 'UTC'): DateRange {
  const days = Math.round((Date.parse(to) - Date.parse(from)) / 86_400_000);
  return { from, to, days, timeZone };
}

function parsed(text: string, now = NOW, timeZone = 'UTC'): DateRange {
  const r = parseVisitorsArgs(text, now, timeZone);
  if (!r.ok) throw new Error(r.error);
  return r.range;
}

function parseError(text: string, now = NOW, timeZone = 'UTC'): string {
  const r = parseVisitorsArgs(text, now, timeZone);
  if (r.ok) throw new Error(`expected an error for ${JSON.stringify(text)}`);
  return r.error;
}

describe('calendar helpers', () => {
  it('validates strict YYYY-MM-DD dates', () => {
    for (const good of ['2026-02-28', '2028-02-29', '2026-12-31', '2027-01-01']) {
      expect(isValidLocalDate(good)).toBe(true);
    }
    for (const bad of ['2026-02-30', '2026-02-29', '2026-13-01', '2026-00-10', '2026-11-00']) {
      expect(isValidLocalDate(bad)).toBe(false);
    }
    for (const bad of ['2026-1-05', '2026-01-5', '26-01-05', '2026/01/05', ' 2026-01-05', '']) {
      expect(isValidLocalDate(bad)).toBe(false);
    }
  });

  it('adds days across months, years and leap days', () => {
    expect(addDays('2026-12-31', 1)).toBe('2027-01-01');
    expect(addDays('2028-03-01', -1)).toBe('2028-02-29');
    expect(addDays('2026-11-22', -7)).toBe('2026-11-15');
    expect(addDays('2026-03-08', 1)).toBe('2026-03-09'); // a 23-hour day in the US is still one day
  });

  it('reads today in the zone, not in UTC', () => {
    expect(todayIn(NOW, 'UTC')).toBe('2026-11-22');
    expect(todayIn(NOW, LA)).toBe('2026-11-22');
    expect(todayIn(new Date('2026-11-22T07:59:59Z'), LA)).toBe('2026-11-21');
    expect(todayIn(NOW, 'Pacific/Tongatapu')).toBe('2026-11-22');
    expect(todayIn(NOW, 'Pacific/Kiritimati')).toBe('2026-11-23');
    expect(todayIn(new Date('2026-11-22T10:59:59Z'), 'Pacific/Tongatapu')).toBe('2026-11-22');
    expect(todayIn(new Date('2026-11-22T11:00:00Z'), 'Pacific/Tongatapu')).toBe('2026-11-23');
  });
});

describe('localMidnightUtc and apiParams', () => {
  it('uses the offset of each end around the autumn DST change in Los Angeles', () => {
    // Mon 26 Oct (PDT, −7) to Mon 2 Nov (PST, −8); DST ends Sun 1 Nov 2026 at 02:00.
    expect(apiParams(range('2026-10-26', '2026-11-02', LA))).toEqual({
      dateFrom: '2026-10-26T07:00:00.000Z',
      dateTo: '2026-11-02T08:00:00.000Z',
    });
    expect(localMidnightUtc('2026-11-01', LA)).toBe('2026-11-01T07:00:00.000Z');
  });

  it('uses the offset of each end around the spring DST change in Los Angeles', () => {
    // Mon 2 Mar (PST, −8) to Mon 9 Mar (PDT, −7); DST starts Sun 8 Mar 2026 at 02:00.
    expect(apiParams(range('2026-03-02', '2026-03-09', LA))).toEqual({
      dateFrom: '2026-03-02T08:00:00.000Z',
      dateTo: '2026-03-09T07:00:00.000Z',
    });
    expect(localMidnightUtc('2026-03-08', LA)).toBe('2026-03-08T08:00:00.000Z');
  });

  it('starts a day whose midnight is skipped at the transition (01:00 local)', () => {
    expect(localMidnightUtc('2026-03-08', 'America/Havana')).toBe('2026-03-08T05:00:00.000Z');
    expect(localMidnightUtc('2026-09-06', 'America/Santiago')).toBe('2026-09-06T04:00:00.000Z');
    expect(localMidnightUtc('2026-03-29', 'Asia/Beirut')).toBe('2026-03-28T22:00:00.000Z');
  });

  it('takes the first of two midnights when the clock falls back to 00:00', () => {
    expect(localMidnightUtc('2026-11-01', 'America/Havana')).toBe('2026-11-01T04:00:00.000Z');
  });

  it('handles UTC and far-east zones where the local day starts on the previous UTC date', () => {
    expect(localMidnightUtc('2026-11-15', 'UTC')).toBe('2026-11-15T00:00:00.000Z');
    expect(localMidnightUtc('2026-11-15', 'Pacific/Tongatapu')).toBe('2026-11-14T11:00:00.000Z');
    expect(localMidnightUtc('2026-11-15', 'Pacific/Kiritimati')).toBe('2026-11-14T10:00:00.000Z');
    expect(localMidnightUtc('2026-11-15', 'Asia/Kolkata')).toBe('2026-11-14T18:30:00.000Z');
  });
});

describe('parseVisitorsArgs', () => {
  it('defaults to the last 7 complete days', () => {
    expect(parsed('')).toEqual(range('2026-11-15', '2026-11-22'));
    expect(parsed('   \t ')).toEqual(range('2026-11-15', '2026-11-22'));
  });

  it('accepts Nd for 1 to 90 days, case-insensitively', () => {
    expect(parsed('7d')).toEqual(range('2026-11-15', '2026-11-22'));
    expect(parsed(' 30D ')).toEqual(range('2026-10-23', '2026-11-22'));
    expect(parsed('1d')).toEqual(range('2026-11-21', '2026-11-22'));
    expect(parsed('90d').days).toBe(90);
  });

  it('accepts FROM TO with both days included, tolerating extra whitespace', () => {
    expect(parsed('2026-11-01 2026-11-14')).toEqual(range('2026-11-01', '2026-11-15'));
    expect(parsed('  2026-11-01 \n  2026-11-14 ')).toEqual(range('2026-11-01', '2026-11-15'));
    expect(parsed('2026-11-14 2026-11-14')).toEqual(range('2026-11-14', '2026-11-15'));
    expect(parsed('2026-08-25 2026-11-22').days).toBe(90);
  });

  it('allows a range ending today', () => {
    expect(parsed('2026-11-20 2026-11-22')).toEqual(range('2026-11-20', '2026-11-23'));
  });

  it('computes the default in the zone: Tonga (UTC+13)', () => {
    const tz = 'Pacific/Tongatapu';
    const r = parsed('', NOW, tz);
    expect(r).toEqual(range('2026-11-15', '2026-11-22', tz));
    expect(apiParams(r)).toEqual({
      dateFrom: '2026-11-14T11:00:00.000Z',
      dateTo: '2026-11-21T11:00:00.000Z',
    });
  });

  it('computes the default in the zone: Kiritimati (UTC+14)', () => {
    const tz = 'Pacific/Kiritimati';
    // At 09:30Z it is 23:30 on 22 Nov there, as in Tonga at NOW.
    const r = parsed('', new Date('2026-11-22T09:30:00Z'), tz);
    expect(r).toEqual(range('2026-11-15', '2026-11-22', tz));
    expect(apiParams(r)).toEqual({
      dateFrom: '2026-11-14T10:00:00.000Z',
      dateTo: '2026-11-21T10:00:00.000Z',
    });
    // At NOW it is already 23 Nov there.
    expect(parsed('', NOW, tz).from).toBe('2026-11-16');
  });

  it('computes the default in the zone: Los Angeles, still Saturday evening', () => {
    const r = parsed('', new Date('2026-11-22T05:00:00Z'), LA);
    expect(r).toEqual(range('2026-11-14', '2026-11-21', LA));
    expect(apiParams(r)).toEqual({
      dateFrom: '2026-11-14T08:00:00.000Z',
      dateTo: '2026-11-21T08:00:00.000Z',
    });
  });

  it.each([
    ['yesterday', /don't understand `yesterday`/],
    ['7 days', /don't understand `7`/],
    ['2026-11-01 soon', /don't understand `soon`/],
    ['0d', /`0d` is out of range/],
    ['91d', /`91d` is out of range/],
    ['2026-11-01', /Only one date/],
    ['2026-02-30 2026-03-02', /`2026-02-30` is not a real date/],
    ['2026-11-01 2026-13-01', /`2026-13-01` is not a real date/],
    ['2026-11-14 2026-11-01', /reversed/],
    ['2026-08-23 2026-11-21', /91 days; the limit is 90/],
    ['2026-11-20 2026-11-23', /ends in the future: today is 2026-11-22 \(UTC\)/],
    ['2026-12-01 2026-12-02', /future/],
    ['2026-11-01 2026-11-14 2026-11-20', /at most two dates, not 3 words/],
  ])('rejects %j with a message naming the problem and the usage', (text, problem) => {
    const error = parseError(text);
    expect(error).toMatch(problem);
    expect(error).toContain(VISITORS_USAGE);
  });

  it('judges "future" by the zone: 23 Nov is today on Kiritimati but not in UTC', () => {
    expect(parseError('2026-11-20 2026-11-23')).toMatch(/future/);
    expect(parsed('2026-11-20 2026-11-23', NOW, 'Pacific/Kiritimati').days).toBe(4);
  });

  it('escapes and shortens echoed words so they cannot ping or break the code span', () => {
    const error = parseError('<!channel>');
    expect(error).toContain('`&lt;!channel&gt;`');
    expect(error).not.toContain('<!channel>');
    expect(parseError('a`b')).toContain("`a'b`");
    expect(parseError('x'.repeat(200)).length).toBeLessThan(VISITORS_USAGE.length + 80);
  });

  it('has a usage text listing every accepted form, with no raw angle brackets', () => {
    for (const form of [
      '/visitors`',
      '/visitors 7d',
      '/visitors 30d',
      '/visitors 2026-11-01 2026-11-14',
    ]) {
      expect(VISITORS_USAGE).toContain(form);
    }
    expect(VISITORS_USAGE).not.toMatch(/[<>]/);
  });
});

describe('previousRange', () => {
  it('is the same length and ends where the range starts', () => {
    expect(previousRange(range('2026-11-15', '2026-11-22', LA))).toEqual(
      range('2026-11-08', '2026-11-15', LA),
    );
    expect(previousRange(range('2026-01-01', '2026-03-01'))).toEqual(
      range('2025-11-03', '2026-01-01'),
    );
  });
});

describe('chartBuckets', () => {
  function check(r: DateRange) {
    const buckets = chartBuckets(r);
    expect(buckets.length).toBeLessThanOrEqual(14);
    expect(buckets[0]?.from).toBe(r.from);
    expect(buckets.at(-1)?.to).toBe(r.to);
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]?.from).toBe(buckets[i - 1]?.to);
    return buckets;
  }

  it('gives one point per day up to 14 days', () => {
    const week = check(range('2026-11-15', '2026-11-22'));
    expect(week.map((b) => b.label)).toEqual([
      'Nov 15',
      'Nov 16',
      'Nov 17',
      'Nov 18',
      'Nov 19',
      'Nov 20',
      'Nov 21',
    ]);
    const fortnight = check(range('2026-10-25', '2026-11-08'));
    expect(fortnight).toHaveLength(14);
    expect(fortnight[6]).toEqual({ label: 'Oct 31', from: '2026-10-31', to: '2026-11-01' });
  });

  it('switches to weekly buckets past 14 days, whole weeks at the end; the first says its length', () => {
    const b = check(range('2026-11-03', '2026-11-18'));
    expect(b).toEqual([
      { label: 'Nov 3 (1d)', from: '2026-11-03', to: '2026-11-04' },
      { label: 'Nov 4–10', from: '2026-11-04', to: '2026-11-11' },
      { label: 'Nov 11–17', from: '2026-11-11', to: '2026-11-18' },
    ]);
  });

  it('labels buckets across months and years', () => {
    const b = check(range('2026-10-23', '2026-11-22'));
    expect(b.map((x) => x.label)).toEqual([
      'Oct 23–24 (2d)',
      'Oct 25–31',
      'Nov 1–7',
      'Nov 8–14',
      'Nov 15–21',
    ]);
    expect(check(range('2026-12-28', '2027-01-18'))[0]?.label).toBe('Dec 28–Jan 3');
  });

  it('keeps 90 and 98 days within 14 points, and longer ranges too', () => {
    expect(check(range('2026-08-24', '2026-11-22'))).toHaveLength(13);
    expect(check(range('2026-08-16', '2026-11-22'))).toHaveLength(14);
    const year = check(range('2026-01-01', '2027-01-01'));
    expect(year.at(-1)?.label).toBe('Dec 4–31');
    expect(year[0]?.label).toBe('Jan 1 (1d)');
  });
});

describe('formatRange', () => {
  it('shows the last day inclusive, with the year once or on both sides', () => {
    expect(formatRange(range('2026-11-15', '2026-11-22'))).toBe('Nov 15 – Nov 21, 2026');
    expect(formatRange(range('2026-12-28', '2027-01-04'))).toBe('Dec 28, 2026 – Jan 3, 2027');
    expect(formatRange(range('2026-12-25', '2027-01-01'))).toBe('Dec 25 – Dec 31, 2026');
    expect(formatRange(range('2026-11-15', '2026-11-16'))).toBe('Nov 15, 2026');
  });
});

describe('digestPeriod', () => {
  it('on Monday 09:00 local, covers the week that just ended', () => {
    // Mon 23 Nov 2026, 09:00 PST.
    const p = digestPeriod(new Date('2026-11-23T17:00:00Z'), LA);
    expect(p).toEqual({ range: range('2026-11-16', '2026-11-23', LA), key: '2026-W47' });
  });

  it('uses the local date: Monday 09:00 in Tonga is still Sunday in UTC', () => {
    const p = digestPeriod(new Date('2026-11-22T20:00:00Z'), 'Pacific/Tongatapu');
    expect(p.key).toBe('2026-W47');
    expect(apiParams(p.range).dateFrom).toBe('2026-11-15T11:00:00.000Z');
  });

  it('on Sunday, skips the still-running week', () => {
    const p = digestPeriod(new Date('2026-11-22T20:00:00Z'), LA);
    expect(p).toEqual({ range: range('2026-11-09', '2026-11-16', LA), key: '2026-W46' });
  });

  it('spans the DST change in the DST week', () => {
    const p = digestPeriod(new Date('2026-11-02T17:00:00Z'), LA);
    expect(p.key).toBe('2026-W44');
    expect(apiParams(p.range)).toEqual({
      dateFrom: '2026-10-26T07:00:00.000Z',
      dateTo: '2026-11-02T08:00:00.000Z',
    });
  });

  it('numbers ISO weeks across New Year (2026 has 53 weeks)', () => {
    const w53 = digestPeriod(new Date('2027-01-04T09:00:00Z'), 'UTC');
    expect(w53).toEqual({ range: range('2026-12-28', '2027-01-04'), key: '2026-W53' });
    expect(digestPeriod(new Date('2027-01-11T09:00:00Z'), 'UTC').key).toBe('2027-W01');
    // Week 1 of 2026 starts on Mon 29 Dec 2025 (1 Jan 2026 is a Thursday).
    const w01 = digestPeriod(new Date('2026-01-05T09:00:00Z'), 'UTC');
    expect(w01).toEqual({ range: range('2025-12-29', '2026-01-05'), key: '2026-W01' });
    // 1 Jan 2021 was a Friday, so Mon 28 Dec 2020 – Sun 3 Jan 2021 is 2020-W53.
    expect(digestPeriod(new Date('2021-01-04T09:00:00Z'), 'UTC').key).toBe('2020-W53');
  });
});
