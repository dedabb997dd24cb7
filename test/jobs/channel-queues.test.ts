import { describe, expect, it } from 'vitest';
import {
  createScheduler,
  type NotifierMethod,
  URGENT_HEADROOM,
} from '../../src/jobs/channel-queues.ts';
import { tokenBucket } from '../../src/jobs/rate-limits.ts';
import { inBackground, runInBackground } from '../../src/store/pool-gate.ts';
import { manualClock, settle } from '../helpers/clock.ts';
import { memoryLogger } from '../helpers/log.ts';

/** A scheduler on a hand-driven clock, and tasks that record when they started. */
function setUp(
  o: {
    updates?: { perMinute: number; burst: number };
    maxInFlight?: number;
    workspaceShare?: number;
  } = {},
) {
  const time = manualClock();
  const started: { name: string; at: number }[] = [];
  const scheduler = createScheduler({
    clock: time.clock,
    postGapMs: 1_000,
    updates: o.updates ?? { perMinute: 60, burst: 5 },
    maxInFlight: o.maxInFlight ?? 16,
    ...(o.workspaceShare ? { perWorkspace: { workspaceShare: o.workspaceShare } } : {}),
    log: memoryLogger().log,
  });
  /** A task that ends when `end` is called (at once by default); resolves `called`. */
  const task = (
    name: string,
    channelId: string,
    o: {
      method?: NotifierMethod;
      urgent?: boolean;
      hold?: boolean;
      called?: boolean;
      teamId?: string;
    } = {},
  ) => {
    let end = () => {};
    const ended = new Promise<void>((r) => {
      end = r;
    });
    if (!o.hold) end();
    scheduler.add({
      method: o.method ?? 'chat.postMessage',
      channelId,
      teamId: o.teamId ?? 'T',
      urgent: o.urgent ?? false,
      run: async () => {
        started.push({ name, at: time.now() - 1_000_000 });
        await ended;
        return o.called ?? true;
      },
    });
    return { end };
  };
  const names = () => started.map((s) => s.name);
  return { time, scheduler, task, started, names };
}

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

describe('workspaces (distributed mode: a token each)', () => {
  it("starts a quiet workspace's post in the next free slot, not after a busy one's channels", async () => {
    const { task, names } = setUp({ workspaceShare: 12, maxInFlight: 4 });
    const held = [];
    for (let c = 1; c <= 40; c++) held.push(task(`A${c}`, `CA${c}`, { teamId: 'TA', hold: true }));
    task('B1', 'CB', { teamId: 'TB', hold: true });
    await settle();
    // Workspaces in turn: B's one post goes with the first slots, not after A's 40 channels.
    expect(names()).toContain('B1');
    expect(names()).toHaveLength(4);
  });

  it("starts a quiet workspace's urgent post (a job's root) at once with every slot an announcement's; its ordinary post waits its turn", async () => {
    const { task, names } = setUp({ workspaceShare: 2, maxInFlight: 2 });
    for (const ws of ['TA', 'TB', 'TC', 'TD'])
      for (let c = 1; c <= 3; c++) task(`${ws}${c}`, `C${ws}${c}`, { teamId: ws, hold: true });
    await settle();
    expect(names()).toHaveLength(2); // every slot taken; the other workspaces wait in turn
    task('announce', 'CQ1', { teamId: 'TQ', hold: true });
    task('root', 'CQ2', { teamId: 'TQ', urgent: true, hold: true });
    await settle();
    // The root went past the cap; the announcement beside it did not.
    expect(names()).toEqual(['TA1', 'TB1', 'root']);
  });

  it('starts urgent work past a workspace share, and past the cap up to URGENT_HEADROOM calls', async () => {
    const { task, names } = setUp({ workspaceShare: 2, maxInFlight: 4 });
    for (let c = 1; c <= 3; c++) task(`A${c}`, `CA${c}`, { teamId: 'TA', hold: true });
    task('B1', 'CB1', { teamId: 'TB', hold: true });
    await settle();
    expect(names()).toEqual(['A1', 'B1', 'A2']); // A at its share, one slot left
    task('rootA', 'CA9', { teamId: 'TA', urgent: true, hold: true });
    await settle();
    // A is at its share: its urgent post goes past it (A3, an announcement, does not).
    expect(names()).toEqual(['A1', 'B1', 'A2', 'rootA']);
    for (let c = 1; c <= URGENT_HEADROOM + 2; c++)
      task(`root${c}`, `CR${c}`, { teamId: `TR${c}`, urgent: true, hold: true });
    await settle();
    expect(names()).toHaveLength(4 + URGENT_HEADROOM);
    expect(names().filter((n) => n.startsWith('A'))).toHaveLength(2);
  });

  it('holds a workspace to its share of the calls in flight, leaving the rest to others', async () => {
    const { task, names } = setUp({ workspaceShare: 12 });
    for (let c = 1; c <= 20; c++) task(`A${c}`, `CA${c}`, { teamId: 'TA', hold: true });
    await settle();
    expect(names()).toHaveLength(12);
    for (let c = 1; c <= 6; c++) task(`B${c}`, `CB${c}`, { teamId: 'TB', hold: true });
    await settle();
    expect(names().filter((n) => n.startsWith('B'))).toHaveLength(4);
  });

  it('pauses only the workspace a 429 came to, and gives each workspace its own Tier 3 budget', async () => {
    const { task, names, time, scheduler } = setUp({
      workspaceShare: 12,
      updates: { perMinute: 60, burst: 3 },
    });
    scheduler.pause('chat.update', 30_000, 'TA');
    task('UA', 'CA', { method: 'chat.update', teamId: 'TA' });
    task('UB', 'CB', { method: 'chat.update', teamId: 'TB' });
    await settle();
    expect(names()).toEqual(['UB']);
    // C spends its burst (one token kept for answers); D's budget is its own.
    for (let i = 1; i <= 4; i++) task(`UC${i}`, `CC${i}`, { method: 'chat.update', teamId: 'TC' });
    task('UD', 'CD', { method: 'chat.update', teamId: 'TD' });
    await settle();
    expect(names().sort()).toEqual(['UB', 'UC1', 'UC2', 'UD']);
    await time.advance(30_000);
    expect(names()).toContain('UA');
  });

  it('keeps one set of limits for every team with one token (single-workspace mode)', async () => {
    const { task, names, time, scheduler } = setUp();
    scheduler.pause('chat.update', 30_000, 'TA');
    task('UB', 'CB', { method: 'chat.update', teamId: 'TB' });
    await time.advance(29_999);
    expect(names()).toEqual([]);
    await time.advance(1);
    expect(names()).toEqual(['UB']);
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
