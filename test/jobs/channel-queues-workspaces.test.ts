import { describe, expect, it } from 'vitest';
import { URGENT_HEADROOM } from '../../src/jobs/channel-queues.ts';
import { settle } from '../helpers/clock.ts';
import { schedulerSetUp as setUp } from '../helpers/scheduler.ts';

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
