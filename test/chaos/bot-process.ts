import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export type LogLine = Record<string, unknown> & { msg?: string; time?: number };

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLOCK_OFFSET = fileURLToPath(new URL('./clock-offset.ts', import.meta.url));
/** Log lines kept per process for failure messages. */
const TAIL = 60;
/** Lines that repeat every second and would push the interesting ones out of the tail. */
const QUIET = ['"digest.already_posted"', '"poll.unchanged"'];

/**
 * One bot as its own process, started the way the README says (`node src/main.ts`), with
 * its JSON log lines parsed as they come so that a chaos step can wait for one (a trigger).
 */
export class BotProcess {
  readonly name: string;
  readonly port: number;
  readonly child: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly tail: string[] = [];
  /** Named events seen, by `msg` (counts), for the summary and for busy-loop checks. */
  readonly events = new Map<string, number>();
  #exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  #buffer = '';
  #waiters = new Set<(line: LogLine) => boolean>();

  constructor(o: { name: string; env: Record<string, string>; clockOffsetMs?: number }) {
    this.name = o.name;
    this.port = Number(o.env.PORT);
    const args = o.clockOffsetMs ? ['--import', CLOCK_OFFSET, 'src/main.ts'] : ['src/main.ts'];
    this.child = spawn(process.execPath, args, {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        ...o.env,
        ...(o.clockOffsetMs ? { CHAOS_CLOCK_OFFSET_MS: String(o.clockOffsetMs) } : {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout?.on('data', (c) => this.#data(String(c)));
    this.child.stderr?.on('data', (c) => this.#keep(`[stderr] ${String(c).trim()}`));
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.#exit = { code, signal };
        resolve({ code, signal });
      });
    });
  }

  get alive(): boolean {
    return this.#exit === undefined;
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Waits for /healthz; throws with the log tail when the process dies or hangs. */
  async healthy(timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!this.alive) throw new Error(`bot ${this.name} exited at start:\n${this.tailText()}`);
      try {
        const res = await fetch(`${this.url}/healthz`, { signal: AbortSignal.timeout(1_000) });
        if (res.ok) return;
      } catch {}
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`bot ${this.name} not healthy within ${timeoutMs} ms:\n${this.tailText()}`);
  }

  /** Resolves with the first log line (from now on) named `msg` that `match` accepts. */
  waitForLog(
    msg: string,
    match: (l: LogLine) => boolean = () => true,
    timeoutMs = 5_000,
  ): Promise<LogLine | undefined> {
    return new Promise((resolve) => {
      const check = (l: LogLine) => {
        if (l.msg !== msg || !match(l)) return false;
        clearTimeout(timer);
        resolve(l);
        return true;
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        resolve(undefined);
      }, timeoutMs);
      this.#waiters.add(check);
    });
  }

  async kill9(): Promise<void> {
    if (this.alive) this.child.kill('SIGKILL');
    await this.exited;
  }

  /** SIGTERM; resolves with the exit code and how long the stop took. */
  async terminate(): Promise<{ code: number | null; ms: number }> {
    const t0 = Date.now();
    if (this.alive) this.child.kill('SIGTERM');
    const { code } = await this.exited;
    return { code, ms: Date.now() - t0 };
  }

  /** CPU time (user + system) the process used so far, in ms; null where /proc is absent. */
  cpuMs(): number | null {
    try {
      const stat = readFileSync(`/proc/${this.pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // utime and stime are fields 14 and 15 of stat, in clock ticks (100 per second here).
      return (Number(fields[11]) + Number(fields[12])) * 10;
    } catch {
      return null;
    }
  }

  tailText(): string {
    return this.tail.map((l) => `  [${this.name}] ${l}`).join('\n');
  }

  #data(chunk: string): void {
    this.#buffer += chunk;
    let nl = this.#buffer.indexOf('\n');
    while (nl !== -1) {
      const raw = this.#buffer.slice(0, nl);
      this.#buffer = this.#buffer.slice(nl + 1);
      nl = this.#buffer.indexOf('\n');
      if (!raw.trim()) continue;
      // CHAOS_LOG_DIR keeps every line of every bot, for looking into a violation.
      if (process.env.CHAOS_LOG_DIR)
        appendFileSync(join(process.env.CHAOS_LOG_DIR, `${this.name}-${this.pid}.log`), `${raw}\n`);
      this.#keep(raw);
      let line: LogLine;
      try {
        line = JSON.parse(raw) as LogLine;
      } catch {
        continue;
      }
      if (typeof line.msg === 'string')
        this.events.set(line.msg, (this.events.get(line.msg) ?? 0) + 1);
      for (const w of [...this.#waiters]) if (w(line)) this.#waiters.delete(w);
    }
  }

  #keep(line: string): void {
    if (QUIET.some((q) => line.includes(q))) return;
    this.tail.push(line.length > 400 ? `${line.slice(0, 400)}…` : line);
    if (this.tail.length > TAIL) this.tail.shift();
  }
}
