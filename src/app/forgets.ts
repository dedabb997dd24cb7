import type { Config } from '../config/config.ts';
import { startLoop } from '../jobs/loop.ts';
import type { Logger } from '../log.ts';
import { createForgetSweep } from '../workspaces/forget.ts';
import type { Liveness } from './liveness.ts';
import type { BotOptions } from './options.ts';
import type { Teardown } from './teardown.ts';

/** How often the retention sweep looks for uninstalled workspaces whose data is due. */
export const FORGET_SWEEP_MS = 10 * 60_000;

/**
 * Distributed mode: the retention sweep (src/workspaces/forget.ts) at start and every
 * FORGET_SWEEP_MS, on a store of its own (src/app/liveness.ts). Every replica runs it; a
 * lease on each forget keeps two from working on one workspace.
 */
export function startForgetSweep(deps: {
  config: Config;
  opts: BotOptions;
  log: Logger;
  teardown: Teardown;
  liveness: Liveness;
  now: () => number;
}): void {
  const everyMs = deps.opts.forgetSweepMs ?? FORGET_SWEEP_MS;
  let running = true;
  const sweep = createForgetSweep(
    { store: deps.liveness.loopStore('forgets', everyMs), log: deps.log, now: deps.now },
    { leaseMs: deps.config.leaseMs, running: () => running },
  );
  const loop = startLoop({
    name: 'forgets',
    log: deps.log,
    idleMs: everyMs,
    // Some settled: more may be due (an org's teams, a full pass), so at once again.
    pass: async () => ((await sweep.pass()) > 0 ? 0 : null),
  });
  deps.teardown.add('forgets', () => {
    running = false;
    return loop.stop();
  });
}
