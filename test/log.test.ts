import { Writable } from 'node:stream';
import { expect, it } from 'vitest';
import { createLogger, makeScrubber } from '../src/log.ts';

it('redacts configured secrets, regex characters and all, and token-shaped text', () => {
  const scrub = makeScrubber(['s3cr3t.value+(1)', 'prefix-s3cr3t.value+(1)-longer', 'short']);
  expect(scrub('a s3cr3t.value+(1) b prefix-s3cr3t.value+(1)-longer c s3cr3tXvalue+(1)')).toBe(
    'a [redacted] b [redacted] c s3cr3tXvalue+(1)',
  );
  expect(scrub('xoxb-123-abc and xapp-1-A0 and mint_key_9 and short')).toBe(
    '[redacted] and [redacted] and [redacted] and short',
  );
});

it('keeps secrets out of every field of a log line, errors included', () => {
  const lines: string[] = [];
  const log = createLogger({
    level: 'info',
    secrets: ['signing-secret-0123456789'],
    destination: new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    }),
  });
  log.info(
    { nested: { deep: ['x signing-secret-0123456789 y'] }, err: new Error('bad xoxb-1-2') },
    'token mint_abc',
  );
  expect(lines.join('')).not.toMatch(/signing-secret-0123456789|xoxb-1-2|mint_abc/);
  expect(lines.join('')).toContain('[redacted]');
});
