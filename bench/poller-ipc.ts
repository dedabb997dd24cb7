/**
 * What the poller benchmark's processes share: the orchestrator (bench/poller.ts), the bot's
 * side (bench/poller-bot.ts) and the outside world (bench/poller-fakes.ts) talk over IPC,
 * one request and one answer at a time per call.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const API_KEY = 'mint_bench_key_000000';
export const PROJECT = 'bench-project';
export const SLACK_TOKEN = 'xoxb-bench-token-000000';
export const NAIVE_INTERVAL_MS = 5_000;

/**
 * A GET, by the first letter of its job id (its cohort: y young, c young and completed in the
 * window, o old, n the naive poller's), and when it arrived.
 */
export interface GetSeen {
  cohort: string;
  at: number;
  /** GETs the emulator held, unanswered, when this one arrived (itself included). */
  inFlight: number;
}

export interface Completion {
  id: string;
  completedAt: number;
  /** The first GET that reached the emulator after the job completed. */
  detectedAt: number | null;
  /** The announcement reached Slack. */
  postedAt: number | null;
}

export interface Slice {
  rssMb: number;
  heapMb: number;
  loopP99Ms: number;
  loopMaxMs: number;
  lagP99Ms: number;
  /** The longest garbage collection pause. */
  gcMaxMs: number;
  /** How many polls the poller's pool kept in flight at the end of the slice. */
  width: number;
  /** The mean GET latency the pool saw (the API's, plus the bot's own queueing). */
  getMs: number;
}

export interface BotReport {
  /** Delays the poller scheduled for old jobs. */
  oldDelays: number[];
  lags: number[];
  stopMs: number;
  polls: number;
  /** Heap in use right after a full collection, at the end of the window. */
  liveHeapMb: number;
}

export interface Child {
  call<T>(cmd: string, args?: unknown): Promise<T>;
  close(): Promise<void>;
}

/** Forks `file` (a sibling of this one) and calls the handlers it serves. */
export function forkChild(file: string, flags: string[] = []): Child {
  const child = fork(fileURLToPath(new URL(file, import.meta.url)), {
    execArgv: [...process.execArgv.filter((a) => a !== '--expose-gc'), ...flags],
  });
  let seq = 0;
  const waiting = new Map<number, { resolve: (v: never) => void; reject: (e: Error) => void }>();
  child.on('message', (m: { id: number; result?: unknown; error?: string }) => {
    const w = waiting.get(m.id);
    waiting.delete(m.id);
    if (m.error !== undefined) w?.reject(new Error(m.error));
    else w?.resolve(m.result as never);
  });
  child.on('exit', (code) => {
    for (const w of waiting.values()) w.reject(new Error(`${file} exited (${code})`));
    waiting.clear();
  });
  return {
    call<T>(cmd: string, args: unknown = {}) {
      const id = ++seq;
      return new Promise<T>((resolve, reject) => {
        waiting.set(id, { resolve: resolve as (v: never) => void, reject });
        child.send({ id, cmd, args });
      });
    },
    async close() {
      if (child.exitCode !== null) return;
      const gone = new Promise((r) => child.once('exit', r));
      child.disconnect();
      await gone;
    },
  };
}

/** The child's side: answers each call with its handler's result (or its error). */
export function serve(handlers: Record<string, (args: never) => unknown>): void {
  process.on('message', (m: { id: number; cmd: string; args: unknown }) => {
    Promise.resolve()
      .then(() => {
        const handler = handlers[m.cmd];
        if (!handler) throw new Error(`unknown command ${m.cmd}`);
        return handler(m.args as never);
      })
      .then(
        (result) => process.send?.({ id: m.id, result }),
        (err: unknown) => process.send?.({ id: m.id, error: String((err as Error)?.stack ?? err) }),
      );
  });
  process.on('disconnect', () => process.exit(0));
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));
