import { Writable } from 'node:stream';
import { expect, it } from 'vitest';
import { configSecrets } from '../src/config/values.ts';
import { createLogger, makeScrubber, maskUrlSecrets } from '../src/log.ts';

it('redacts configured secrets, regex characters and all, and token-shaped text', () => {
  const scrub = makeScrubber(['s3cr3t.value+(1)', 'prefix-s3cr3t.value+(1)-longer', 'short']);
  expect(scrub('a s3cr3t.value+(1) b prefix-s3cr3t.value+(1)-longer c s3cr3tXvalue+(1)')).toBe(
    'a [redacted] b [redacted] c s3cr3tXvalue+(1)',
  );
  expect(scrub('xoxb-123-abc and xapp-1-A0 and mint_key_9 and short')).toBe(
    '[redacted] and [redacted] and [redacted] and short',
  );
  // OAuth: a rotating token and its refresh token, a code in a JSON body, code and state in a URL.
  expect(scrub('xoxe.xoxb-1-abc xoxe-1-def {"code":"123.456.f00","client_id":"1.2"}')).toBe(
    'xoxe.[redacted] [redacted] {[redacted],"client_id":"1.2"}',
  );
  // An error's code is what a person reads to know what went wrong: it stays.
  expect(scrub('{"err":{"code":"slack_webapi_platform_error"}}')).toBe(
    '{"err":{"code":"slack_webapi_platform_error"}}',
  );
  expect(scrub('https://x/cb?state=eyJ.a.b&code=99.1.ab&team=T1')).toBe(
    'https://x/cb?state=[redacted]&code=[redacted]&team=T1',
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

it('masks every secret part of a URL, the query string included, with or without config', () => {
  const url =
    'postgres://bot:p%40ss-word-1@db.internal:5432/docs?sslmode=require&sslpassword=key-pass-1&password=query-pass-1';
  const lines: string[] = [];
  const log = createLogger({
    level: 'info',
    secrets: configSecrets({
      slack: { botToken: 'xoxb-1', appToken: undefined, signingSecret: 'signing-secret-1' },
      api: { key: 'mint_1', projectKeys: {} },
      databaseUrl: url,
    } as unknown as Parameters<typeof configSecrets>[0]),
    destination: new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    }),
  });
  log.warn({ err: new Error(`could not connect to ${url}`) }, 'store.open_failed');
  // The value alone, as a driver might quote it.
  log.warn({ detail: 'password "query-pass-1" rejected; p@ss-word-1 too' }, 'store.auth');
  const out = lines.join('');
  for (const secret of ['p%40ss-word-1', 'p@ss-word-1', 'key-pass-1', 'query-pass-1'])
    expect(out).not.toContain(secret);
  expect(out).toContain('sslmode=require&sslpassword=[redacted]&password=[redacted]');
  expect(out).toContain('postgres://bot:[redacted]@db.internal:5432/docs');
  // Any URL, configured or not.
  expect(makeScrubber([])('GET https://x.test/a?Token=abc123&page=2 from redis://:pw@h')).toBe(
    'GET https://x.test/a?Token=[redacted]&page=2 from redis://:[redacted]@h',
  );
  expect(maskUrlSecrets('postgres://u@h/d?password=s3cret&application_name=bot')).toBe(
    'postgres://u@h/d?password=***&application_name=bot',
  );
});

it('masks the embeddings key (any shape) and an OpenAI-style key wherever a log line holds one', () => {
  const lines: string[] = [];
  const config = {
    slack: { botToken: 'xoxb-1', appToken: undefined, signingSecret: 'signing-secret-1' },
    api: { key: 'mint_1', projectKeys: {} },
    databaseUrl: 'sqlite:./data/bot.sqlite',
    insights: {
      embeddings: {
        url: 'https://embed.internal/v1?api-key=url-secret-4242',
        key: 'team-embeddings-key-0123456789',
        model: 'text-embedding-3-small',
      },
    },
  } as unknown as Parameters<typeof configSecrets>[0];
  const log = createLogger({
    level: 'info',
    secrets: configSecrets(config),
    destination: new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    }),
  });
  log.warn(
    { detail: 'Bearer team-embeddings-key-0123456789 refused; url-secret-4242 too' },
    'embeddings.x',
  );
  log.warn({ detail: 'pasted sk-proj-Abc123Def456Ghi789Jkl012' }, 'embeddings.y');
  const out = lines.join('');
  for (const secret of ['team-embeddings-key-0123456789', 'url-secret-4242', 'sk-proj-Abc123'])
    expect(out).not.toContain(secret);
});
