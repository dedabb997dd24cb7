import { createScheduler, type NotifierMethod } from '../../src/jobs/channel-queues.ts';
import { manualClock } from './clock.ts';
import { memoryLogger } from './log.ts';

/** A scheduler on a hand-driven clock, and tasks that record when they started. */
export function schedulerSetUp(
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
