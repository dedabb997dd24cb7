import type { Logger as BoltLogger, LogLevel as BoltLogLevel } from '@slack/bolt';
import { type DestinationStream, type Logger, pino } from 'pino';

export type { Logger } from 'pino';

/**
 * Token shapes that must never reach a log line, whatever code path produced the text:
 * Slack's tokens (a rotating bot token `xoxe.xoxb-…` and its refresh token `xoxe-1-…`
 * included), Mintlify keys, and an OAuth code in a JSON body (the Web API client's debug
 * lines of oauth.v2.access).
 */
const SECRET_PATTERNS = [
  /xox[abposre]-[A-Za-z0-9-]+/g,
  /xapp-[A-Za-z0-9-]+/g,
  /mint_[A-Za-z0-9_-]+/g,
  // An OpenAI-style key (INSIGHTS_EMBEDDINGS_KEY), whatever endpoint it was meant for.
  /sk-[A-Za-z0-9_-]{20,}/g,
  // Only the shape of Slack's OAuth codes (digits.digits.hex): an error's `code` stays readable.
  /"code":"\d+\.\d+\.[A-Za-z0-9]+"/g,
];
const REDACTED = '[redacted]';

/** `pass` → `[Pp][Aa][Ss][Ss]`: cheaper than a case-insensitive group in a hot regex. */
const anyCase = (word: string) => [...word].map((c) => `[${c.toUpperCase()}${c}]`).join('');

/**
 * A query parameter whose value is a secret: `password`, `sslpassword`, `token`, `api_key`…,
 * and OAuth's one-time `code` and its `state`.
 */
const SECRET_PARAM = `[A-Za-z_.-]*(?:${['pass', 'pwd', 'secret', 'token', 'key', 'auth', 'credential', 'signature', 'code', 'state'].map(anyCase).join('|')})[A-Za-z_.-]*`;

/**
 * The secret-bearing parts of any URL in a text, each after a group that is kept: a
 * secret-named query parameter's value (`?password=…`, `&sslpassword=…`), and the password
 * of `scheme://user:password@host`, up to the last `@` before the host (a password pasted
 * unencoded may hold an `@` itself). Each starts with a fixed character (`?&;`, `:`), which
 * lets the engine skip most positions: the scrubber runs this on every string it logs.
 */
const URL_SECRETS = new RegExp(
  [
    `([?&;]${SECRET_PARAM}=)[^&#\\s"'<>]+`,
    `(://[^\\s:/?#@"'<>]*:)[^\\s/?#"'<>]+(?=@[^\\s@/?#"'<>]*(?:[:/?#\\s"'<>]|$))`,
  ].join('|'),
  'g',
);

/** A URL (or any text) with every secret-bearing part replaced by `mask`. */
export function maskUrlSecrets(text: string, mask = '***'): string {
  if (!text.includes('=') && !text.includes('://')) return text;
  return text.replace(
    URL_SECRETS,
    (_all, query?: string, userinfo?: string) => `${query ?? userinfo}${mask}`,
  );
}

/**
 * The secret values a URL carries (its password, secret-named query parameters), raw and
 * decoded, so that a log line holding one alone is scrubbed too.
 */
export function urlSecrets(url: string): string[] {
  const found = [...url.matchAll(URL_SECRETS)].map((m) => m[0].slice((m[1] ?? m[2] ?? '').length));
  return found.flatMap((raw) => {
    try {
      const decoded = decodeURIComponent(raw);
      return decoded === raw ? [raw] : [raw, decoded];
    } catch {
      return [raw];
    }
  });
}

/**
 * Replaces configured secret values, anything shaped like a Slack or Mintlify token, and the
 * secret parts of any URL (a `?password=` query included).
 */
export function makeScrubber(secrets: readonly (string | undefined)[]): (text: string) => string {
  // Short values would redact ordinary words; real secrets are long. Longest first, so a
  // secret that contains another is replaced whole.
  const exact = secrets
    .filter((s): s is string => typeof s === 'string' && s.length >= 8)
    .sort((a, b) => b.length - a.length)
    .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  // One pass over each string for the tokens: every log line's every field goes through here.
  const any = new RegExp([...exact, ...SECRET_PATTERNS.map((p) => p.source)].join('|'), 'g');
  return (text) => maskUrlSecrets(text.replace(any, REDACTED), REDACTED);
}

function scrubDeep(value: unknown, scrub: (s: string) => string, depth = 0): unknown {
  if (typeof value === 'string') return scrub(value);
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) {
    return {
      type: value.name,
      message: scrub(value.message),
      stack: value.stack && scrub(value.stack),
    };
  }
  if (Array.isArray(value)) return value.map((v) => scrubDeep(v, scrub, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = scrubDeep(v, scrub, depth + 1);
  return out;
}

export interface LogOptions {
  level: string;
  /** Values to redact wherever they appear (tokens, API key, signing secret). */
  secrets: readonly (string | undefined)[];
  destination?: DestinationStream;
}

/** The one pino root. Modules get `log.child({ component })`. */
export function createLogger({ level, secrets, destination }: LogOptions): Logger {
  const scrub = makeScrubber(secrets);
  return pino(
    {
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: [
          'token',
          'apiKey',
          'authorization',
          '*.token',
          '*.authorization',
          'headers.authorization',
        ],
        censor: REDACTED,
      },
      formatters: {
        log: (obj) => scrubDeep(obj, scrub) as Record<string, unknown>,
      },
      hooks: {
        logMethod(args, method) {
          const cleaned = args.map((a) => (typeof a === 'string' ? scrub(a) : a));
          return method.apply(this, cleaned as Parameters<typeof method>);
        },
      },
    },
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

/**
 * Bolt (and the Slack SDK under it) log through this adapter so their lines go through the
 * same redaction and format. Bolt calls `setLevel` with its own level; pino's level wins.
 */
export function boltLogger(log: Logger): BoltLogger {
  let name = 'bolt';
  const write =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (...msg: unknown[]) => {
      // Bolt logs several debug lines per request: build none of them when they are off.
      if (!log.isLevelEnabled(level)) return;
      const errors = msg.filter((m): m is Error => m instanceof Error);
      const text = msg
        .filter((m) => !(m instanceof Error))
        .map((m) => (typeof m === 'string' ? m : JSON.stringify(m)))
        .join(' ');
      const fields = errors[0] ? { lib: name, err: errors[0] } : { lib: name };
      log[level](fields, text || errors[0]?.message || '');
    };
  return {
    debug: write('debug'),
    info: write('info'),
    warn: write('warn'),
    error: write('error'),
    setLevel: () => {},
    getLevel: () =>
      (log.level === 'debug' || log.level === 'trace' ? 'debug' : 'info') as BoltLogLevel,
    setName: (n: string) => {
      name = n;
    },
  };
}
