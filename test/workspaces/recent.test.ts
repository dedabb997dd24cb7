import { expect, it } from 'vitest';
import { createRecent } from '../../src/workspaces/recent.ts';

/** A read that counts how often it ran and answers `value`. */
function reader(value: string) {
  const r = {
    n: 0,
    read: async () => {
      r.n++;
      return value;
    },
  };
  return r;
}
const always = () => Number.POSITIVE_INFINITY;

it('keeps a read for its TTL, and clear() drops everything kept, a read under way included', async () => {
  let t = 0;
  const recent = createRecent<string>({ now: () => t, ttlMs: 1_000 });
  const a = reader('a');
  const b = reader('b');
  await recent.get({ teamId: 'T1' }, a.read, always);
  await recent.get({ teamId: 'T2', enterpriseId: 'E1' }, b.read, always);
  await recent.get({ teamId: 'T1' }, a.read, always);
  expect([a.n, b.n]).toEqual([1, 1]);

  recent.clear();
  await recent.get({ teamId: 'T1' }, a.read, always);
  await recent.get({ teamId: 'T2', enterpriseId: 'E1' }, b.read, always);
  expect([a.n, b.n]).toEqual([2, 2]);

  // A read begun before the clear answers its caller but keeps nothing.
  let release = () => {};
  const slow = { n: 0, read: () => new Promise<string>((r) => (release = () => r('old'))) };
  t = 5_000; // past the TTL: T1 is read again
  const pending = recent.get({ teamId: 'T1' }, slow.read, always);
  recent.clear();
  release();
  expect(await pending).toBe('old');
  expect(await recent.get({ teamId: 'T1' }, a.read, always)).toBe('a');
  expect(a.n).toBe(3);
});
