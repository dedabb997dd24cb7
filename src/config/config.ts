import { Cron } from 'croner';
import { z } from 'zod';
import { CORE_REQUESTS, DEFAULT_MAX_REQUESTS } from '../reports/limits.ts';
import type { Keyring } from '../sealed.ts';
import {
  DISTRIBUTION_ENV,
  type Distribution,
  distributionOf,
  modeProblems,
} from './distribution.ts';
import { encryptionKeys } from './keys.ts';
import {
  commaList,
  fraction,
  httpUrl,
  optionalHttpUrl,
  optionalString,
  PROJECT_ID,
  positiveInt,
  projectKeys,
  SLACK_USER_ID,
  slackIdList,
  synonymGroups,
  wholeNumber,
} from './rules.ts';

export { PROJECT_ID };

/**
 * The runtime contract (docs/configuration.md's table): every environment variable the bot reads, with its
 * default, parsed in one place. Nothing else in `src/` reads `process.env`.
 */

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * The values `.env.example` holds as placeholders: copied into `.env` unchanged they pass every
 * shape check, so they are refused by name (test/config.test.ts reads .env.example to keep
 * this list whole).
 */
export const PLACEHOLDERS: Readonly<Record<string, string>> = {
  SLACK_BOT_TOKEN: 'xoxb-your-bot-token',
  MINTLIFY_API_KEY: 'mint_your_admin_key',
  MINTLIFY_PROJECT_ID: 'your-project-id',
  DATABASE_URL: 'postgres://bot:password@db.internal:5432/docs_agent_bot',
};

/** A conversation the digest can post in: a public (C…) or private (G…) channel id. */
const CHANNEL_ID = /^[CG][A-Z0-9]{2,}$/;

// SLACK_BOT_TOKEN, MINTLIFY_API_KEY and MINTLIFY_PROJECT_ID are required in single-workspace
// mode only: distribution.ts's modeProblems says so.
export const EnvSchema = z.object({
  SLACK_BOT_TOKEN: optionalString.pipe(
    z.string().startsWith('xoxb-', { error: 'must be a bot token starting with xoxb-' }).optional(),
  ),
  SLACK_APP_TOKEN: optionalString.pipe(
    z
      .string()
      .startsWith('xapp-', { error: 'must be an app-level token starting with xapp-' })
      .optional(),
  ),
  SLACK_SIGNING_SECRET: optionalString,
  SLACK_API_URL: httpUrl('https://slack.com/api/'),
  PORT: z.preprocess(
    (v) => (typeof v === 'string' && v.trim() === '' ? undefined : v),
    z.coerce
      .number({ error: 'must be a port number' })
      .int({ error: 'must be a port number' })
      .min(0, { error: 'must be between 0 and 65535' })
      .max(65535, { error: 'must be between 0 and 65535' })
      .default(3000),
  ),
  MINTLIFY_API_KEY: optionalString,
  MINTLIFY_PROJECT_ID: optionalString,
  MINTLIFY_API_URL: httpUrl('https://api.mintlify.com'),
  MINTLIFY_PROJECT_KEYS: projectKeys,
  ADMIN_USERS: z.preprocess(
    commaList,
    z
      .array(
        z.string().regex(SLACK_USER_ID, {
          error: 'must be a comma-separated list of Slack user ids (U0123ABCD)',
        }),
      )
      .default([]),
  ),
  DATABASE_URL: optionalString.pipe(
    z
      .string()
      .default('sqlite:./data/bot.sqlite')
      .refine((v) => /^sqlite:.+/.test(v) || /^postgres(ql)?:\/\//.test(v), {
        error: 'must be sqlite:PATH or postgres://…',
      }),
  ),
  DATABASE_TIMEOUT_MS: positiveInt(10_000, {
    ms: 500,
    why: 'a healthy database answers well within it, even under load',
  }),
  POLL_INTERVAL_MS: positiveInt(5000),
  POLL_MAX_INTERVAL_MS: positiveInt(60_000),
  POLL_CONCURRENCY_MAX: wholeNumber(128, 1, 1_000),
  LEASE_MS: positiveInt(30_000, { ms: 1_000, why: 'a poll must fit inside its lease' }),
  SLACK_TIMEOUT_MS: positiveInt(15_000, { ms: 500, why: 'a Slack call takes a few hundred ms' }),
  DIGEST_CHANNEL: optionalString.pipe(
    z
      .string()
      .regex(CHANNEL_ID, {
        error:
          'must be a channel id such as C0123ABCD, not a name (in Slack: the channel\u2019s details, at the bottom of About)',
      })
      .optional(),
  ),
  DIGEST_CRON: optionalString.pipe(
    z
      .string()
      .default('0 9 * * 1')
      .refine(isCron, { error: 'must be a cron expression such as "0 9 * * 1" (Mondays 09:00)' }),
  ),
  DIGEST_TIMEZONE: optionalString.pipe(
    z
      .string()
      .default('UTC')
      .refine(isTimeZone, { error: 'must be an IANA time zone such as Europe/Paris' }),
  ),
  VISITORS_MAX_REQUESTS: z.preprocess(
    (v) => (typeof v === 'string' && v.trim() === '' ? undefined : v),
    z.coerce
      .number({ error: 'must be a whole number' })
      .int({ error: 'must be a whole number' })
      .min(CORE_REQUESTS, {
        error: `must be at least ${CORE_REQUESTS} (a report's totals and chart need that many)`,
      })
      .max(100, { error: 'must be at most 100 (the hourly analytics budget)' })
      .default(DEFAULT_MAX_REQUESTS),
  ),
  DOCS_BASE_URL: optionalHttpUrl,
  INSIGHTS_SYNONYMS: synonymGroups,
  // The default is src/insights/topics.ts's DEFAULT_SIMILARITY (config imports nothing above it).
  INSIGHTS_SIMILARITY: fraction(0.3),
  INSIGHTS_EMBEDDINGS_URL: optionalHttpUrl,
  INSIGHTS_EMBEDDINGS_KEY: optionalString,
  INSIGHTS_EMBEDDINGS_MODEL: optionalString.pipe(z.string().default('text-embedding-3-small')),
  SHUTDOWN_TIMEOUT_MS: positiveInt(10_000),
  START_CONCURRENCY: wholeNumber(32, 1, 1_000),
  ALLOWED_CHANNELS: slackIdList('channel', /^[CGD][A-Z0-9]{2,}$/, 'C0123ABCD'),
  ALLOWED_USERS: slackIdList('user', /^[UW][A-Z0-9]{2,}$/, 'U0123ABCD'),
  ENCRYPTION_KEYS: encryptionKeys,
  UNINSTALL_RETENTION_DAYS: wholeNumber(30, 0, 3650),
  LOG_LEVEL: optionalString.pipe(
    z.enum(logLevels, { error: `must be one of ${logLevels.join(', ')}` }).default('info'),
  ),
  // ---- distributed mode (OAuth installs): distribution.ts ----
  ...DISTRIBUTION_ENV,
});

function isCron(pattern: string): boolean {
  try {
    new Cron(pattern, { paused: true });
    return true;
  } catch {
    return false;
  }
}

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

export type Env = z.infer<typeof EnvSchema>;

/** Every variable the bot reads: docs/configuration.md's table and .env.example list exactly these. */
export const ENV_VARIABLES = Object.keys(EnvSchema.shape);

export interface Config {
  slack: {
    /** Single-workspace mode's bot token; undefined in distributed mode (see envWorkspace). */
    botToken: string | undefined;
    appToken: string | undefined;
    signingSecret: string | undefined;
    apiUrl: string;
    mode: 'socket' | 'http';
    /** How long one Slack Web API call may take before it is cut off. */
    timeoutMs: number;
  };
  port: number;
  api: {
    /** Single-workspace mode's key and project; undefined in distributed mode. */
    key: string | undefined;
    projectId: string | undefined;
    baseUrl: string;
    /** Keys of single projects, by project id; others use `key`. */
    projectKeys: Record<string, string>;
  };
  /** Who may bind a channel to another project (`/agent project <id>`). */
  adminUsers: string[];
  databaseUrl: string;
  /**
   * How long PostgreSQL may take to run a statement, to connect, or to hand out a free
   * connection; background loops give up on a store call after twice this.
   */
  databaseTimeoutMs: number;
  /** `concurrencyMax`: the most polls in flight (the pool adapts below it). */
  poll: { intervalMs: number; maxIntervalMs: number; concurrencyMax: number };
  /** How long a replica's claim on shared work lasts before another may take it over. */
  leaseMs: number;
  digest: { channel: string | undefined; cron: string; timeZone: string };
  visitors: { maxRequests: number; docsBaseUrl: string | undefined };
  /** How `/insights` groups questions into topics (docs/grouping.md). */
  insights: {
    synonyms: string[][];
    similarity: number;
    /** A team's OpenAI-compatible embeddings endpoint (base URL); undefined: words alone. */
    embeddings: { url: string; key: string | undefined; model: string } | undefined;
  };
  /**
   * How long the whole shutdown may take (src/app/teardown.ts); three quarters of it go to the
   * commands and events already being handled.
   */
  shutdownTimeoutMs: number;
  /** Job starts in flight at once (each mostly waits on Slack and the API). */
  startConcurrency: number;
  /** Who may use the bot, and where (src/access.ts); undefined lists leave nobody out. */
  access: { users: string[] | undefined; channels: string[] | undefined };
  /**
   * Secrets at rest (src/sealed.ts): the keys that seal stored tokens and docs keys, the
   * first sealing; and how many days an uninstalled workspace's other data is kept.
   */
  workspaces: { encryptionKeys: Keyring | undefined; uninstallRetentionDays: number };
  logLevel: (typeof logLevels)[number];
  // ---- distributed mode (OAuth installs): distribution.ts ----
  /** Set in distributed mode (SLACK_CLIENT_ID…); undefined: one workspace, from the environment. */
  distribution: Distribution | undefined;
}

export type ConfigResult = { ok: true; config: Config } | { ok: false; problems: string[] };

/**
 * Parses the environment. Problems come back as one readable line each, naming the
 * variable and never echoing its value (it may be a secret).
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): ConfigResult {
  const parsed = EnvSchema.safeParse(env);
  const problems = problemsOf(env, parsed);
  if (!parsed.success || problems.length > 0) return { ok: false, problems };
  return { ok: true, config: shaped(parsed.data) };
}

type Parsed = ReturnType<typeof EnvSchema.safeParse>;

/**
 * Every problem of the environment, one line each, naming variables and never their values:
 * placeholders, shape errors, and cross-field rules (checked even when other variables are
 * wrong, so that one run lists everything).
 */
function problemsOf(env: Record<string, string | undefined>, parsed: Parsed): string[] {
  const placeholders = Object.entries(PLACEHOLDERS).filter(([name, v]) => env[name]?.trim() === v);
  const copied = new Set(placeholders.map(([name]) => name));
  // A placeholder's own line says what is wrong; its shape errors would only add noise.
  const problems = [
    ...placeholders.map(([name]) => `${name} still holds the placeholder from .env.example`),
    ...(parsed.success ? [] : parsed.error.issues)
      .filter((issue) => !copied.has(String(issue.path[0])))
      .map(
        // A list's item index says nothing to the reader: the variable's name does.
        (issue) => `${String(issue.path[0] ?? 'environment')} ${issue.message}`,
      ),
  ];
  // Which variables are required, and which refused, depends on the mode.
  problems.push(...modeProblems(env));
  const e = parsed.data;
  if (e && e.POLL_MAX_INTERVAL_MS < e.POLL_INTERVAL_MS) {
    problems.push(`POLL_MAX_INTERVAL_MS must be at least POLL_INTERVAL_MS (${e.POLL_INTERVAL_MS})`);
  }
  // A leased post makes at most two Slack calls in turn (the thread check, then the post):
  // both must end, or be cut off, before the lease does, or another replica could take the
  // post over while it is still in flight and post it twice.
  if (env.INSIGHTS_EMBEDDINGS_KEY?.trim() && !env.INSIGHTS_EMBEDDINGS_URL?.trim()) {
    problems.push(
      'INSIGHTS_EMBEDDINGS_KEY is set but INSIGHTS_EMBEDDINGS_URL is not: set the URL to group questions by meaning, or unset the key',
    );
  }
  if (e && e.LEASE_MS < 2 * e.SLACK_TIMEOUT_MS) {
    problems.push(
      `LEASE_MS must be at least twice SLACK_TIMEOUT_MS (${2 * e.SLACK_TIMEOUT_MS}): a post's lease must outlast the thread check and the post`,
    );
  }
  return [...new Set(problems)];
}

/** The configuration the bot runs on, from a valid environment. */
function shaped(e: z.infer<typeof EnvSchema>): Config {
  return {
    slack: {
      botToken: e.SLACK_BOT_TOKEN,
      appToken: e.SLACK_APP_TOKEN,
      signingSecret: e.SLACK_SIGNING_SECRET,
      apiUrl: e.SLACK_API_URL.endsWith('/') ? e.SLACK_API_URL : `${e.SLACK_API_URL}/`,
      mode: e.SLACK_APP_TOKEN ? 'socket' : 'http',
      timeoutMs: e.SLACK_TIMEOUT_MS,
    },
    port: e.PORT,
    api: {
      key: e.MINTLIFY_API_KEY,
      projectId: e.MINTLIFY_PROJECT_ID,
      baseUrl: e.MINTLIFY_API_URL.replace(/\/+$/, ''),
      projectKeys: e.MINTLIFY_PROJECT_KEYS,
    },
    adminUsers: e.ADMIN_USERS,
    databaseUrl: e.DATABASE_URL,
    databaseTimeoutMs: e.DATABASE_TIMEOUT_MS,
    poll: {
      intervalMs: e.POLL_INTERVAL_MS,
      maxIntervalMs: e.POLL_MAX_INTERVAL_MS,
      concurrencyMax: e.POLL_CONCURRENCY_MAX,
    },
    leaseMs: e.LEASE_MS,
    digest: { channel: e.DIGEST_CHANNEL, cron: e.DIGEST_CRON, timeZone: e.DIGEST_TIMEZONE },
    visitors: {
      maxRequests: e.VISITORS_MAX_REQUESTS,
      docsBaseUrl: e.DOCS_BASE_URL?.replace(/\/+$/, ''),
    },
    insights: {
      synonyms: e.INSIGHTS_SYNONYMS,
      similarity: e.INSIGHTS_SIMILARITY,
      embeddings: e.INSIGHTS_EMBEDDINGS_URL
        ? {
            url: e.INSIGHTS_EMBEDDINGS_URL.replace(/\/+$/, ''),
            key: e.INSIGHTS_EMBEDDINGS_KEY,
            model: e.INSIGHTS_EMBEDDINGS_MODEL,
          }
        : undefined,
    },
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    startConcurrency: e.START_CONCURRENCY,
    access: { users: e.ALLOWED_USERS, channels: e.ALLOWED_CHANNELS },
    workspaces: {
      encryptionKeys: e.ENCRYPTION_KEYS,
      uninstallRetentionDays: e.UNINSTALL_RETENTION_DAYS,
    },
    logLevel: e.LOG_LEVEL,
    distribution: distributionOf(e),
  };
}
