import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { eventually } from './net.ts';

export interface BotProcess {
  child: ChildProcess;
  /** Everything it wrote, stdout and stderr. */
  output(): string;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
}

/** The bot as its own process, started the way the README says (`node src/main.ts`). */
export function spawnBot(env: Record<string, string>): BotProcess {
  const chunks: string[] = [];
  const child = spawn(process.execPath, ['src/main.ts'], {
    cwd: process.cwd(),
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (c) => chunks.push(String(c)));
  child.stderr?.on('data', (c) => chunks.push(String(c)));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return { child, output: () => chunks.join(''), exited };
}

/**
 * An operator's script (`scripts/….ts`) as `npm run` runs it: its own process, with `env` and
 * PATH only. Answers its exit code and everything it wrote (stdout, then stderr).
 */
export async function runScript(
  script: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; output: string }> {
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [script, ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
    });
    return { code: 0, output: stdout };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, output: e.stdout + e.stderr };
  }
}

/** Waits until a GET on `url` answers 2xx (the bot is up, or ready). */
export async function answers(url: string, timeoutMs = 15_000): Promise<void> {
  await eventually(
    async () => {
      try {
        return (await fetch(url)).ok;
      } catch {
        return false;
      }
    },
    `${url} to answer`,
    timeoutMs,
  );
}

/**
 * `npm start` exactly as a person types it (npm from PATH, the package's prestart and start
 * scripts), in the repository. npm's own update check is off: it has no network here.
 */
export function spawnNpmStart(env: Record<string, string>): BotProcess {
  const chunks: string[] = [];
  const child = spawn('npm', ['start'], {
    cwd: process.cwd(),
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      npm_config_update_notifier: 'false',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (c) => chunks.push(String(c)));
  child.stderr?.on('data', (c) => chunks.push(String(c)));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return { child, output: () => chunks.join(''), exited };
}

/** The pids under `pid` (children, theirs, …), read from /proc (Linux). */
export function descendants(pid: number): number[] {
  const out: number[] = [];
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out; // gone
  }
  for (const tid of tasks) {
    let children = '';
    try {
      children = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8');
    } catch {}
    for (const c of children.split(' ').filter(Boolean).map(Number)) out.push(c, ...descendants(c));
  }
  return out;
}

/** The command line of `pid`, or undefined once it is gone. */
export function commandLine(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return undefined;
  }
}

/** Whether `pid` still runs (a zombie, exited but not yet reaped, does not). */
export function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}
