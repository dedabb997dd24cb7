import { describe, expect, it } from 'vitest';
import { createScheduler } from '../../src/jobs/channel-queues.ts';
import { tokenBucket } from '../../src/jobs/rate-limits.ts';
import { inBackground, runInBackground } from '../../src/store/pool-gate.ts';
import { manualClock, settle } from '../helpers/clock.ts';
import { memoryLogger } from '../helpers/log.ts';
import { schedulerSetUp as setUp } from '../helpers/scheduler.ts';

describe('per-channel queues', () => {
  it("serves a channel's first post at once however long another channel's backlog", async () => {
    const { task, names, time } = setUp();
    for (let i = 1; i <= 5; i++) task(`A${i}`, 'CA');
    task('B1', 'CB');
    await settle();
    expect(names()).toEqual(['A1', 'B1']);
    await time.advance(1_000);
    expect(names()).toEqual(['A1', 'B1', 'A2']);
  });

  it('keeps one post a second per channel, one in flight, from the start of each', async () => {
    const { task, started, time } = setUp();
    const slow = task('A1', 'CA', { hold: true });
    for (let i = 2; i <= 4; i++) task(`A${i}`, 'CA');
    await time.advance(1_500);
    expect(started.map((s) => s.name)).toEqual(['A1']); // A1 has not answered yet
    slow.end();
    await settle();
    await time.advance(2_000);
    expect(started).toEqual([
      { name: 'A1', at: 0 },
      { name: 'A2', at: 1_500 },
      { name: 'A3', at: 2_500 },
      { name: 'A4', at: 3_500 },
    ]);
  });

  it('lets a slow call in one channel hold no other channel', async () => {
    const { task, names, time } = setUp({ maxInFlight: 2 });
    task('A1', 'CA', { hold: true });
    task('A2', 'CA');
    for (let i = 1; i <= 3; i++) task(`B${i}`, 'CB');
    await time.advance(2_000);
    expect(names()).toEqual(['A1', 'B1', 'B2', 'B3']);
  });

  it('gives the slot back when a task made no call (another replica had the item)', async () => {
    const { task, started } = setUp();
    task('A1', 'CA', { called: false });
    task('A2', 'CA');
    await settle();
    expect(started).toEqual([
      { name: 'A1', at: 0 },
      { name: 'A2', at: 0 },
    ]);
  });

  it('puts an urgent post first in its channel', async () => {
    const { task, names, time } = setUp();
    for (let i = 1; i <= 3; i++) task(`A${i}`, 'CA');
    await settle();
    task('answer', 'CA', { urgent: true });
    await time.advance(1_000);
    expect(names()).toEqual(['A1', 'answer']);
    await time.advance(2_000);
    expect(names()).toEqual(['A1', 'answer', 'A2', 'A3']);
  });
});

describe('updates and pauses', () => {
  it('holds updates to the workspace budget: a burst, then its rate', async () => {
    const { task, started, time } = setUp({ updates: { perMinute: 60, burst: 5 } });
    for (let i = 1; i <= 12; i++) task(`U${i}`, `C${i}`, { method: 'chat.update' });
    await settle();
    // Ordinary updates leave one token to urgent work: four of the five go at once.
    expect(started).toHaveLength(4);
    await time.advance(999);
    expect(started).toHaveLength(4);
    await time.advance(1);
    expect(started).toHaveLength(5);
    await time.advance(5_000);
    expect(started.map((s) => s.at)).toEqual([
      0, 0, 0, 0, 1_000, 2_000, 3_000, 4_000, 5_000, 6_000,
    ]);
  });

  it('sends an urgent update (a refused /agent) before the queued ones, without waiting', async () => {
    const { task, names, time } = setUp({ updates: { perMinute: 60, burst: 5 } });
    for (let i = 1; i <= 8; i++) task(`U${i}`, 'CA', { method: 'chat.update' });
    await settle();
    task('refused', 'CB', { method: 'chat.update', urgent: true });
    await settle();
    expect(names()).toEqual(['U1', 'U2', 'U3', 'U4', 'refused']);
    // A second answer right after waits for a token, still before the queued ones.
    task('refused2', 'CC', { method: 'chat.update', urgent: true });
    await time.advance(1_000);
    expect(names().slice(5)).toEqual(['refused2']);
  });

  it('pauses the method a 429 names and nothing else', async () => {
    const { task, names, time, scheduler } = setUp();
    scheduler.pause('chat.update', 30_000, 'T');
    task('U1', 'CA', { method: 'chat.update' });
    task('P1', 'CA');
    task('P2', 'CB');
    await time.advance(1_000);
    task('P3', 'CA');
    await time.advance(1_000);
    expect(names()).toEqual(['P1', 'P2', 'P3']);
    await time.advance(28_000);
    expect(names()).toEqual(['P1', 'P2', 'P3', 'U1']);

    scheduler.pause('chat.postMessage', 5_000, 'T');
    task('P4', 'CD');
    task('U2', 'CD', { method: 'chat.update' });
    await time.advance(4_999);
    expect(names().slice(4)).toEqual(['U2']);
    await time.advance(1);
    expect(names().slice(4)).toEqual(['U2', 'P4']);
  });

  it("pauses a post's channel for a 429 and no other, and says how long a post there waits", async () => {
    const { task, names, time, scheduler } = setUp();
    scheduler.pauseChannel('CA', 3_000);
    expect(scheduler.waitFor('CA', 'T')).toBe(3_000);
    expect(scheduler.waitFor('CB', 'T')).toBe(0);
    task('A1', 'CA');
    task('A2', 'CA');
    task('B1', 'CB');
    await settle();
    expect(names()).toEqual(['B1']);
    // A post added now goes after the two queued there, a gap apart.
    expect(scheduler.waitFor('CA', 'T')).toBe(5_000);
    await time.advance(3_000);
    expect(names()).toEqual(['B1', 'A1']);
    await time.advance(1_000);
    expect(names()).toEqual(['B1', 'A1', 'A2']);
  });

  it('tells queued work it was dropped when the scheduler stops', async () => {
    const { scheduler, time } = setUp();
    const dropped: string[] = [];
    const add = (name: string) =>
      scheduler.add({
        method: 'chat.postMessage',
        channelId: 'CA',
        teamId: 'T',
        urgent: true,
        run: async () => true,
        dropped: () => dropped.push(name),
      });
    scheduler.pauseChannel('CA', 10_000);
    add('A1');
    await scheduler.stop();
    add('A2');
    await time.advance(20_000);
    expect(dropped).toEqual(['A1', 'A2']);
  });

  it('waits on stop for the calls in flight, and starts nothing more', async () => {
    const { task, names, time, scheduler } = setUp();
    const inFlight = task('A1', 'CA', { hold: true });
    task('A2', 'CA');
    await settle();
    let stopped = false;
    const stopping = scheduler.stop().then(() => {
      stopped = true;
    });
    await settle();
    expect(stopped).toBe(false);
    inFlight.end();
    await stopping;
    await time.advance(5_000);
    task('A3', 'CA');
    await settle();
    expect(names()).toEqual(['A1']);
  });
});

describe('token bucket', () => {
  it('refills at its rate up to its burst, keeps a reserve, and takes a refund', () => {
    let t = 0;
    const b = tokenBucket({ perMinute: 60, burst: 3 }, () => t);
    expect([b.take(1), b.take(1), b.take(1)]).toEqual([true, true, false]);
    expect(b.readyAt(1)).toBe(1_000);
    expect(b.take(0)).toBe(true);
    expect(b.readyAt()).toBe(1_000);
    b.refund();
    expect(b.take()).toBe(true);
    t = 60_000;
    expect([b.take(), b.take(), b.take(), b.take()]).toEqual([true, true, true, false]);
  });
});

describe('whose work a task is', () => {
  it('runs each task in the context of whoever added it, whichever call starts it', async () => {
    const time = manualClock();
    const scheduler = createScheduler({
      clock: time.clock,
      postGapMs: 0,
      updates: { perMinute: 60, burst: 5 },
      maxInFlight: 1,
      log: memoryLogger().log,
    });
    const lanes: Record<string, boolean> = {};
    let end = () => {};
    const task = (name: string, hold = false) => ({
      method: 'chat.update' as const,
      channelId: 'C1',
      teamId: 'T',
      urgent: false,
      run: async () => {
        lanes[name] = inBackground();
        if (hold) await new Promise<void>((r) => (end = r));
        return true;
      },
    });
    scheduler.add(task('person', true)); // holds the one slot
    await settle();
    runInBackground(() => scheduler.add(task('announcement')));
    scheduler.add(task('answer'));
    end(); // the person's task ends: its finish starts the next ones
    await settle();
    expect(lanes).toEqual({ person: false, announcement: true, answer: false });
  });
});
