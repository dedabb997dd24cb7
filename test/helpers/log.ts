import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/log.ts';

/** A real pino logger writing into memory, so tests can read the structured lines. */
export function memoryLogger(
  secrets: string[] = [],
  level = 'debug',
): { log: Logger; lines: () => Record<string, unknown>[]; text: () => string } {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      chunks.push(String(chunk));
      cb();
    },
  });
  const log = createLogger({ level, secrets, destination });
  const text = () => chunks.join('');
  const lines = () =>
    text()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { log, lines, text };
}

/** A child process's JSON log lines (its stdout as text) named `msg`. */
export function logEvents(text: string, msg: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.msg === msg);
}
