import { describe, expect, it } from 'vitest';
import { change, dedupeAndSort, movers } from '../../src/reports/aggregate.ts';
import { pagesCsv } from '../../src/reports/csv.ts';

const row = (path: string, total: number, human = total, ai = 0) => ({ path, total, human, ai });

describe('rows', () => {
  it('sorts by total, then human, then path, and keeps the first sighting of a path', () => {
    const rows = dedupeAndSort([
      row('/b', 5, 1),
      row('/a', 5, 1),
      row('/c', 5, 3),
      row('/d', 9),
      row('/a', 99),
    ]);
    expect(rows.map((r) => r.path)).toEqual(['/d', '/c', '/a', '/b']);
    expect(rows.find((r) => r.path === '/a')?.total).toBe(5);
  });
});

describe('change', () => {
  it('gives absolute and percent change, and null percent when the previous was 0', () => {
    expect(change(150, 100)).toEqual({ current: 150, previous: 100, abs: 50, pct: 50 });
    expect(change(0, 40)).toMatchObject({ abs: -40, pct: -100 });
    expect(change(7, 0)).toMatchObject({ abs: 7, pct: null });
  });
});

describe('movers', () => {
  const prev = new Map(
    [row('/gone', 50), row('/steady', 100), row('/small', 3), row('/down', 80)].map((r) => [
      r.path,
      r,
    ]),
  );
  const cur = [row('/new', 60), row('/steady', 102), row('/small', 9), row('/down', 30)];
  const full = { floor: 20, minAbs: 5, limit: 5, currentComplete: true, previousComplete: true };

  it('ranks risers and fallers by absolute change above the noise floor', () => {
    const m = movers(cur, prev, full);
    expect(m.up.map((x) => [x.path, x.abs])).toEqual([['/new', 60]]);
    expect(m.down.map((x) => [x.path, x.abs])).toEqual(
      [
        ['/gone', -50],
        ['/down', -50],
      ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    );
  });

  it('does not invent jumps for pages a partial scan did not see', () => {
    const m = movers(cur, prev, { ...full, currentComplete: false, previousComplete: false });
    expect(m.up.map((x) => x.path)).toEqual([]);
    expect(m.down.map((x) => x.path)).toEqual(['/down']);
  });
});

describe('csv', () => {
  it('writes every row with the previous total and defuses formulas and quotes', () => {
    const prev = new Map([['/a', row('/a', 4)]]);
    const csv = pagesCsv(
      [row('/a', 5, 3, 2), row('=HYPERLINK("x")', 1), row('/b,c', 2)],
      prev,
      true,
    );
    expect(csv.split('\r\n')).toEqual([
      'path,human,ai,total,previous_total',
      '/a,3,2,5,4',
      `"'=HYPERLINK(""x"")",1,0,1,0`,
      '"/b,c",2,0,2,0',
      '',
    ]);
    expect(pagesCsv([row('/z', 1)], new Map(), false)).toContain('/z,1,0,1,\r\n');
  });
});
