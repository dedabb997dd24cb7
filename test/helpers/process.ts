import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
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
