import { describe, expect, it } from 'vitest';
import type { SearchRow } from '../../src/api/insights-schemas.ts';
import {
  ctrAsFraction,
  foldTypingPrefixes,
  isTypingPrefix,
  mergeSameQueries,
} from '../../src/insights/search-rows.ts';

const T = Date.parse('2026-11-20T12:00:00Z');
const at = (minutes: number) => new Date(T + minutes * 60_000).toISOString();

function row(searchQuery: string, hits: number, o: Partial<SearchRow> = {}): SearchRow {
  return { searchQuery, hits, ctr: 0, topClickedPage: null, lastSearchedAt: at(0), ...o };
}
const queries = (rows: SearchRow[]) => rows.map((r) => [r.searchQuery, r.hits]);

describe('ctr in either unit', () => {
  it('reads a period with any CTR over 1 as percent, every row of it', () => {
    const { rows, unit } = ctrAsFraction([
      row('quickstart', 20, { ctr: 80 }),
      row('okta', 6, { ctr: 0.5 }),
      row('rotate api key', 6, { ctr: 0 }),
    ]);
    expect(unit).toBe('percent');
    expect(rows.map((r) => r.ctr)).toEqual([0.8, 0.005, 0]);
  });

  it('reads a period whose CTRs are all 1 or less as fractions', () => {
    const { rows, unit } = ctrAsFraction([
      row('quickstart', 20, { ctr: 0.8 }),
      row('x', 1, { ctr: 1 }),
    ]);
    expect(unit).toBe('fraction');
    expect(rows.map((r) => r.ctr)).toEqual([0.8, 1]);
  });

  it('cuts a CTR over 100% to 1', () => {
    expect(ctrAsFraction([row('odd', 3, { ctr: 250 })]).rows[0]?.ctr).toBe(1);
  });
});

describe('rows that read the same', () => {
  it('are one row: hits and clicks added, the most searched wording', () => {
    const merged = mergeSameQueries([
      row('[email]', 6, { lastSearchedAt: at(-5) }),
      row('quickstart', 20, { ctr: 0.8 }),
      row('Okta', 2, { ctr: 0.5, topClickedPage: '/sso' }),
      row('[email]', 2, { ctr: 0.5, lastSearchedAt: at(3) }),
      row(' okta ', 6, { ctr: 0 }),
    ]);
    expect(merged).toEqual([
      row('[email]', 8, { ctr: 1 / 8, lastSearchedAt: at(3) }),
      row('quickstart', 20, { ctr: 0.8 }),
      row(' okta ', 8, { ctr: 1 / 8, topClickedPage: '/sso' }),
    ]);
  });
});

describe('typing prefixes', () => {
  it.each([
    ['abse', 'absence', true],
    ['absen', 'absence policy', true],
    ['rate lim', 'rate limits', true],
    ['api', 'api keys', false],
    ['rate', 'rate limits', false],
    ['absence', 'absence', false],
    ['', 'absence', false],
    ['abs-', 'abs-x', false],
  ])('%j of %j: %s', (p, q, yes) => {
    expect(isTypingPrefix(p, q)).toBe(yes);
  });

  it('folds the prefixes typed on the way into the query, counts added', () => {
    const rows = [
      row('absence', 10, { ctr: 0.5, topClickedPage: '/absence', lastSearchedAt: at(0) }),
      row('abse', 6, { lastSearchedAt: at(-1) }),
      row('absen', 8, { lastSearchedAt: at(0) }),
      row('Absenc', 4, { lastSearchedAt: at(2) }),
      row('quickstart', 30, { ctr: 0.8 }),
    ];
    const folded = foldTypingPrefixes(rows);
    expect(queries(folded)).toEqual([
      ['absence', 28],
      ['quickstart', 30],
    ]);
    // Its own CTR (typing was no chance to click), the later last search, its clicked page.
    expect(folded[0]).toMatchObject({
      ctr: 0.5,
      topClickedPage: '/absence',
      lastSearchedAt: at(2),
    });
  });

  it('adds the clicks of a prefix that was clicked, with its searches', () => {
    const rows = [
      row('absence', 10, { ctr: 0.5 }),
      row('absen', 10, { ctr: 0.1, topClickedPage: '/absence' }),
      row('abse', 10),
    ];
    expect(foldTypingPrefixes(rows)[0]).toMatchObject({ hits: 30, ctr: 6 / 20 });
  });

  it('keeps whole-word queries, and prefixes searched more than what they would grow into', () => {
    const rows = [
      row('api keys', 12),
      row('api', 40),
      row('authentication', 12),
      row('auth', 25),
      row('rate', 3),
      row('rate limits', 9),
    ];
    expect(queries(foldTypingPrefixes(rows))).toEqual(queries(rows));
  });

  it('keeps a prefix last searched well after everything it would grow into', () => {
    const rows = [
      row('webhook signature', 9, { lastSearchedAt: at(0) }),
      row('webh', 2, { lastSearchedAt: at(60) }),
    ];
    expect(queries(foldTypingPrefixes(rows))).toEqual(queries(rows));
    const soon = [rows[0]!, { ...rows[1]!, lastSearchedAt: at(9) }];
    expect(queries(foldTypingPrefixes(soon))).toEqual([['webhook signature', 11]]);
  });

  it('folds a prefix of two queries into the more searched one, by their hits together', () => {
    const rows = [row('absence', 10), row('absent', 5), row('abse', 12)];
    expect(queries(foldTypingPrefixes(rows))).toEqual([
      ['absence', 22],
      ['absent', 5],
    ]);
  });

  it('keeps a row whose time cannot be read', () => {
    const rows = [row('absence', 10), row('abse', 2, { lastSearchedAt: 'yesterday' })];
    expect(queries(foldTypingPrefixes(rows))).toEqual(queries(rows));
  });
});
