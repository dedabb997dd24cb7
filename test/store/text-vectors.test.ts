import { expect, it } from 'vitest';
import { SINGLE_WORKSPACE as WS } from '../../src/store/scope.ts';
import { describeEachEngine } from '../helpers/store-engines.ts';

const DAY = 86_400_000;
const NOW = Date.parse('2026-11-22T12:00:00Z');

describeEachEngine('store: text vectors', (db) => {
  it('keeps vectors by model and hash, replaces one written again, and answers only what it has', async () => {
    await db.store.putTextVectors(
      WS,
      'm1',
      [
        { hash: 'h1', vector: 'AAAA' },
        { hash: 'h2', vector: 'BBBB' },
      ],
      NOW,
      NOW - 90 * DAY,
    );
    await db.store.putTextVectors(WS, 'm2', [{ hash: 'h1', vector: 'CCCC' }], NOW, NOW - 90 * DAY);
    await db.store.putTextVectors(
      WS,
      'm1',
      [{ hash: 'h2', vector: 'DDDD' }],
      NOW + 1,
      NOW - 90 * DAY,
    );
    expect(await db.store.textVectors(WS, 'm1', ['h1', 'h2', 'h3'])).toEqual(
      new Map([
        ['h1', 'AAAA'],
        ['h2', 'DDDD'],
      ]),
    );
    expect(await db.store.textVectors(WS, 'm2', ['h1', 'h2'])).toEqual(new Map([['h1', 'CCCC']]));
    expect(await db.store.textVectors(WS, 'm1', [])).toEqual(new Map());
  });

  it('reads and writes thousands at once, in chunks under both engines’ limits', async () => {
    const rows = Array.from({ length: 2_345 }, (_, i) => ({ hash: `h${i}`, vector: `v${i}` }));
    await db.store.putTextVectors(WS, 'm', rows, NOW, NOW - 90 * DAY);
    // Past SQLite's 32,766 variables in one statement: a report of that many texts still reads.
    const absent = Array.from({ length: 33_000 }, (_, i) => `absent${i}`);
    const got = await db.store.textVectors(WS, 'm', [...rows.map((r) => r.hash), ...absent]);
    expect(got.size).toBe(2_345);
    expect(got.get('h2344')).toBe('v2344');
  });

  it('prunes vectors written before the cut whenever it writes, whatever their model', async () => {
    await db.store.putTextVectors(WS, 'm1', [{ hash: 'old', vector: 'A' }], NOW - 91 * DAY, 0);
    await db.store.putTextVectors(WS, 'm2', [{ hash: 'recent', vector: 'B' }], NOW - 89 * DAY, 0);
    expect((await db.store.textVectors(WS, 'm1', ['old'])).size).toBe(1);
    await db.store.putTextVectors(WS, 'm1', [{ hash: 'new', vector: 'C' }], NOW, NOW - 90 * DAY);
    expect(await db.store.textVectors(WS, 'm1', ['old', 'new'])).toEqual(new Map([['new', 'C']]));
    expect(await db.store.textVectors(WS, 'm2', ['recent'])).toEqual(new Map([['recent', 'B']]));
  });
});
