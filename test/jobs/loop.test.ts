import { afterEach, it } from 'vitest';
import { type Loop, startLoop } from '../../src/jobs/loop.ts';
import { memoryLogger } from '../helpers/log.ts';
import { eventually } from '../helpers/net.ts';

const HOUR = 3_600_000;
let loop: Loop | undefined;
afterEach(async () => {
  await loop?.stop();
  loop = undefined;
});

/** A loop that would sleep an hour between passes unless told otherwise. */
function counting(delays: (number | null)[] = [], onPass: (n: number) => void = () => {}) {
  let passes = 0;
  loop = startLoop({
    name: 'test',
    log: memoryLogger().log,
    idleMs: HOUR,
    pass: async () => {
      onPass(++passes);
      return delays.shift() ?? null;
    },
  });
  return { loop, passes: () => passes };
}

it('kickAt wakes a sleeping loop by the time asked, not at its idle time', async () => {
  const c = counting();
  await eventually(() => c.passes() === 1 || undefined, 'first pass');
  c.loop.kickAt(Date.now() + 20);
  await eventually(() => c.passes() === 2 || undefined, 'second pass');
});

it('kickAt never puts off a pass already due sooner', async () => {
  const c = counting([30]);
  await eventually(() => c.passes() === 1 || undefined, 'first pass');
  c.loop.kickAt(Date.now() + HOUR / 2);
  await eventually(() => c.passes() === 2 || undefined, 'the pass it had planned');
});

it('kickAt during a pass is kept for the sleep after it', async () => {
  let loopRef: Loop | undefined;
  const c = counting([], (n) => {
    if (n === 2) loopRef?.kickAt(Date.now() + 20);
  });
  loopRef = c.loop;
  await eventually(() => c.passes() === 1 || undefined, 'first pass');
  c.loop.kick();
  await eventually(() => c.passes() === 3 || undefined, 'the pass asked for mid-pass');
});
