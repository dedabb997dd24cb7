import { createServer } from 'node:net';

/** A port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Polls `check` until it returns a value (not undefined/false) or the time runs out. */
export async function eventually<T>(
  check: () => T | Promise<T>,
  what: string,
  timeoutMs = 5_000,
): Promise<Exclude<T, false | undefined>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v as Exclude<T, false | undefined>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Waits until `count()` has stayed the same for `quietMs` (what a fake records has stopped
 * growing); throws naming `what` if it keeps changing past `timeoutMs`.
 */
export async function quiet(
  count: () => number,
  quietMs: number,
  what: string,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let seen = count();
  for (let since = Date.now(); Date.now() - since < quietMs; ) {
    if (Date.now() > deadline) throw new Error(`${what} did not stop`);
    await sleep(50);
    if (count() !== seen) {
      seen = count();
      since = Date.now();
    }
  }
}

/** Polls `check` every few ms until it holds or the time is up; false on time-out. */
export async function until(
  check: () => boolean,
  timeoutMs: number,
  everyMs = 3,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await sleep(everyMs);
  }
  return true;
}
