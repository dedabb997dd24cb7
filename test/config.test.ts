import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/config.ts';
import { envWorkspace } from '../src/config/distribution.ts';
import { configSecrets, hideConfigValues } from '../src/config/values.ts';
import { DEFAULT_SIMILARITY } from '../src/insights/topics.ts';

/** Every `NAME=value` line of .env.example, commented-out ones included, blank values left out. */
const exampleValues = (): [string, string][] =>
  [
    ...readFileSync(new URL('../.env.example', import.meta.url), 'utf8').matchAll(
      /^#? ?([A-Z][A-Z_]+)=(.*)$/gm,
    ),
  ]
    .map((m): [string, string] => [m[1]!, m[2]!.trim()])
    .filter(([, v]) => v !== '');

const valid = {
  SLACK_BOT_TOKEN: 'xoxb-1-secret-bot',
  SLACK_SIGNING_SECRET: 'signing-secret-value',
  MINTLIFY_API_KEY: 'mint_supersecret',
  MINTLIFY_PROJECT_ID: 'proj_1',
};

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const r = loadConfig(valid);
    if (!r.ok) throw new Error(r.problems.join('\n'));
    expect(r.config.slack.mode).toBe('http');
    expect(r.config.slack.apiUrl).toBe('https://slack.com/api/');
    expect(r.config.port).toBe(3000);
    expect(r.config.api.baseUrl).toBe('https://api.mintlify.com');
    expect(r.config.databaseUrl).toBe('sqlite:./data/bot.sqlite');
    expect(r.config.poll).toEqual({
      intervalMs: 5000,
      maxIntervalMs: 60000,
      concurrencyMax: 128,
    });
    expect(r.config.digest).toEqual({ channel: undefined, cron: '0 9 * * 1', timeZone: 'UTC' });
    expect(r.config.logLevel).toBe('info');
    expect(r.config.visitors).toEqual({ maxRequests: 20 });
    expect(r.config.shutdownTimeoutMs).toBe(10_000);
  });

  it('reads DOCS_BASE_URL as an http(s) URL without its trailing slash, blank meaning unset', () => {
    const set = loadConfig({ ...valid, DOCS_BASE_URL: 'https://docs.acme.com/' });
    expect(set.ok && set.config.visitors.docsBaseUrl).toBe('https://docs.acme.com');
    const prefixed = loadConfig({ ...valid, DOCS_BASE_URL: 'http://acme.com/docs//' });
    expect(prefixed.ok && prefixed.config.visitors.docsBaseUrl).toBe('http://acme.com/docs');
    const blank = loadConfig({ ...valid, DOCS_BASE_URL: '  ' });
    expect(blank.ok && blank.config.visitors.docsBaseUrl).toBeUndefined();
    for (const value of ['docs.acme.com', 'javascript:alert(1)', 'ftp://docs.acme.com']) {
      const r = loadConfig({ ...valid, DOCS_BASE_URL: value });
      expect(r.ok ? [] : r.problems).toEqual(['DOCS_BASE_URL must be an http(s) URL']);
    }
  });

  it('reads SHUTDOWN_TIMEOUT_MS as whole milliseconds, blank meaning the default', () => {
    const set = loadConfig({ ...valid, SHUTDOWN_TIMEOUT_MS: '2500' });
    expect(set.ok && set.config.shutdownTimeoutMs).toBe(2500);
    const blank = loadConfig({ ...valid, SHUTDOWN_TIMEOUT_MS: ' ' });
    expect(blank.ok && blank.config.shutdownTimeoutMs).toBe(10_000);
    for (const [value, problem] of [
      ['0', 'SHUTDOWN_TIMEOUT_MS must be greater than 0'],
      ['-5', 'SHUTDOWN_TIMEOUT_MS must be greater than 0'],
      ['1.5', 'SHUTDOWN_TIMEOUT_MS must be a whole number of milliseconds'],
      ['10s', 'SHUTDOWN_TIMEOUT_MS must be a whole number of milliseconds'],
    ]) {
      const r = loadConfig({ ...valid, SHUTDOWN_TIMEOUT_MS: value });
      expect(r.ok ? [] : r.problems).toEqual([problem]);
    }
  });

  it('turns semantic grouping on only with INSIGHTS_EMBEDDINGS_URL, the key optional, and refuses a key alone', () => {
    const off = loadConfig(valid);
    expect(off.ok && off.config.insights.embeddings).toBeUndefined();
    const local = loadConfig({ ...valid, INSIGHTS_EMBEDDINGS_URL: 'http://127.0.0.1:8089/v1/' });
    expect(local.ok && local.config.insights.embeddings).toEqual({
      url: 'http://127.0.0.1:8089/v1',
      key: undefined,
      model: 'text-embedding-3-small',
    });
    const key = 'sk-team-embeddings-0123456789abcdef';
    const openai = loadConfig({
      ...valid,
      INSIGHTS_EMBEDDINGS_URL: 'https://api.openai.com/v1',
      INSIGHTS_EMBEDDINGS_KEY: key,
      INSIGHTS_EMBEDDINGS_MODEL: 'text-embedding-3-large',
    });
    expect(openai.ok && openai.config.insights.embeddings).toEqual({
      url: 'https://api.openai.com/v1',
      key,
      model: 'text-embedding-3-large',
    });
    const alone = loadConfig({ ...valid, INSIGHTS_EMBEDDINGS_KEY: key });
    expect(alone.ok ? [] : alone.problems).toEqual([
      'INSIGHTS_EMBEDDINGS_KEY is set but INSIGHTS_EMBEDDINGS_URL is not: set the URL to group questions by meaning, or unset the key',
    ]);
    const bad = loadConfig({ ...valid, INSIGHTS_EMBEDDINGS_URL: `ftp://${key}` });
    expect(bad.ok ? [] : bad.problems).toEqual(['INSIGHTS_EMBEDDINGS_URL must be an http(s) URL']);
  });

  it('reads INSIGHTS_SYNONYMS as ;-separated groups of =-joined terms, never echoing one', () => {
    const set = loadConfig({
      ...valid,
      INSIGHTS_SYNONYMS: ' sso = Entra  ID=saml ; 429=rate limit; ',
    });
    expect(set.ok && set.config.insights.synonyms).toEqual([
      ['sso', 'Entra ID', 'saml'],
      ['429', 'rate limit'],
    ]);
    const blank = loadConfig({ ...valid, INSIGHTS_SYNONYMS: ' ' });
    expect(blank.ok && blank.config.insights).toEqual({
      synonyms: [],
      similarity: 0.3,
      embeddings: undefined,
    });
    expect(DEFAULT_SIMILARITY).toBe(0.3); // the grouping's own default: the same
    const secret = 'xoxb-pasted-by-mistake';
    for (const [value, why] of [
      [secret, 'group 1 has fewer than two terms, or an empty one'],
      ['sso=saml;okta sso', 'group 2 has fewer than two terms, or an empty one'],
      ['sso==saml', 'group 1 has fewer than two terms, or an empty one'],
      ['sso=!!!', 'group 1 has fewer than two terms, or an empty one'],
      [`a=${'b'.repeat(61)}`, 'group 1 has a term longer than 60 characters'],
    ] as const) {
      const r = loadConfig({ ...valid, INSIGHTS_SYNONYMS: value });
      expect(r.ok ? [] : r.problems).toEqual([
        `INSIGHTS_SYNONYMS must be groups of two or more terms joined by =, separated by ; (such as sso=single sign-on=saml;429=rate limit): ${why}`,
      ]);
    }
    const many = loadConfig({ ...valid, INSIGHTS_SYNONYMS: 'a=b;'.repeat(201) });
    expect(many.ok ? [] : many.problems[0]).toContain('holds more than 200 groups');
  });

  it('reads INSIGHTS_SIMILARITY as a number above 0 and at most 1, 0.3 by default', () => {
    const set = loadConfig({ ...valid, INSIGHTS_SIMILARITY: '0.45' });
    expect(set.ok && set.config.insights.similarity).toBe(0.45);
    for (const value of ['0', '1.5', '-0.2', 'high']) {
      const r = loadConfig({ ...valid, INSIGHTS_SIMILARITY: value });
      expect(r.ok ? [] : r.problems).toEqual([
        'INSIGHTS_SIMILARITY must be a number above 0 and at most 1, such as 0.3',
      ]);
    }
  });

  it('reads START_CONCURRENCY as a whole number from 1 to 1000, 32 by default', () => {
    const set = loadConfig({ ...valid, START_CONCURRENCY: '64' });
    expect(set.ok && set.config.startConcurrency).toBe(64);
    const blank = loadConfig({ ...valid, START_CONCURRENCY: '' });
    expect(blank.ok && blank.config.startConcurrency).toBe(32);
    for (const [value, problem] of [
      ['0', 'START_CONCURRENCY must be at least 1'],
      ['1001', 'START_CONCURRENCY must be at most 1000'],
      ['2.5', 'START_CONCURRENCY must be a whole number'],
    ]) {
      const r = loadConfig({ ...valid, START_CONCURRENCY: value });
      expect(r.ok ? [] : r.problems).toEqual([problem]);
    }
  });

  it('rejects a bad cron expression and a request cap too small for a report', () => {
    const r = loadConfig({ ...valid, DIGEST_CRON: 'every monday', VISITORS_MAX_REQUESTS: '5' });
    expect(r.ok ? [] : r.problems).toEqual([
      'DIGEST_CRON must be a cron expression such as "0 9 * * 1" (Mondays 09:00)',
      "VISITORS_MAX_REQUESTS must be at least 16 (a report's totals and chart need that many)",
    ]);
  });

  it('switches to Socket Mode when an app token is set, without needing a signing secret', () => {
    const r = loadConfig({
      ...valid,
      SLACK_SIGNING_SECRET: undefined,
      SLACK_APP_TOKEN: 'xapp-1-x',
    });
    expect(r.ok && r.config.slack.mode).toBe('socket');
  });

  it('treats blank values as unset', () => {
    const r = loadConfig({ ...valid, PORT: '', LOG_LEVEL: ' ', DIGEST_CHANNEL: '' });
    expect(r.ok && [r.config.port, r.config.logLevel, r.config.digest.channel]).toEqual([
      3000,
      'info',
      undefined,
    ]);
  });

  it('reports one readable line per problem and never echoes a value', () => {
    const r = loadConfig({
      SLACK_BOT_TOKEN: 'xapp-wrong-kind-of-token',
      MINTLIFY_API_KEY: '',
      PORT: 'eighty',
      POLL_INTERVAL_MS: '-5',
      DIGEST_TIMEZONE: 'Mars/Olympus',
      DATABASE_URL: 'mysql://x',
      LOG_LEVEL: 'loud',
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const text = r.problems.join('\n');
    for (const name of [
      'SLACK_BOT_TOKEN',
      'SLACK_SIGNING_SECRET',
      'MINTLIFY_API_KEY',
      'MINTLIFY_PROJECT_ID',
      'PORT',
      'POLL_INTERVAL_MS',
      'DIGEST_TIMEZONE',
      'DATABASE_URL',
      'LOG_LEVEL',
    ]) {
      expect(r.problems.filter((p) => p.startsWith(`${name} `))).toHaveLength(1);
    }
    expect(text).not.toContain('xapp-wrong-kind-of-token');
    expect(text).not.toContain('mysql://x');
  });

  it('reads LEASE_MS with a 30 s default and refuses leases too short for a poll', () => {
    const r = loadConfig(valid);
    expect(r.ok && r.config.leaseMs).toBe(30_000);
    const short = loadConfig({ ...valid, LEASE_MS: '200' });
    expect(short.ok ? [] : short.problems).toEqual([
      'LEASE_MS must be at least 1000 (a poll must fit inside its lease)',
    ]);
    const pg = loadConfig({ ...valid, DATABASE_URL: 'postgres://bot:pw@db:5432/bot' });
    expect(pg.ok && pg.config.databaseUrl).toBe('postgres://bot:pw@db:5432/bot');
  });

  it('refuses a lease shorter than a leased post can take (two Slack calls)', () => {
    const r = loadConfig(valid);
    expect(r.ok && r.config.slack.timeoutMs).toBe(15_000);
    const short = loadConfig({ ...valid, LEASE_MS: '20000' });
    expect(short.ok ? [] : short.problems).toEqual([
      "LEASE_MS must be at least twice SLACK_TIMEOUT_MS (30000): a post's lease must outlast the thread check and the post",
    ]);
    const quick = loadConfig({ ...valid, LEASE_MS: '20000', SLACK_TIMEOUT_MS: '10000' });
    expect(quick.ok && [quick.config.leaseMs, quick.config.slack.timeoutMs]).toEqual([
      20_000, 10_000,
    ]);
  });

  it('reads DATABASE_TIMEOUT_MS with a 10 s default and refuses one too short to be safe', () => {
    const r = loadConfig(valid);
    expect(r.ok && r.config.databaseTimeoutMs).toBe(10_000);
    const set = loadConfig({ ...valid, DATABASE_TIMEOUT_MS: '2500' });
    expect(set.ok && set.config.databaseTimeoutMs).toBe(2_500);
    const short = loadConfig({ ...valid, DATABASE_TIMEOUT_MS: '100' });
    expect(short.ok ? [] : short.problems).toEqual([
      'DATABASE_TIMEOUT_MS must be at least 500 (a healthy database answers well within it, even under load)',
    ]);
  });

  it('reads POLL_CONCURRENCY_MAX with a default of 128 and refuses nonsense', () => {
    const r = loadConfig(valid);
    expect(r.ok && r.config.poll.concurrencyMax).toBe(128);
    const set = loadConfig({ ...valid, POLL_CONCURRENCY_MAX: '32' });
    expect(set.ok && set.config.poll.concurrencyMax).toBe(32);
    const zero = loadConfig({ ...valid, POLL_CONCURRENCY_MAX: '0' });
    expect(zero.ok ? [] : zero.problems).toEqual(['POLL_CONCURRENCY_MAX must be at least 1']);
  });

  it('reads per-project keys and admins as comma-separated lists, never echoing a key', () => {
    const r = loadConfig({
      ...valid,
      MINTLIFY_PROJECT_KEYS: ' proj_a=mint_aaa , proj-b=mint_b=b ',
      ADMIN_USERS: 'U0ADMIN1, W0ADMIN2',
    });
    expect(r.ok && r.config.api.projectKeys).toEqual({ proj_a: 'mint_aaa', 'proj-b': 'mint_b=b' });
    expect(r.ok && r.config.adminUsers).toEqual(['U0ADMIN1', 'W0ADMIN2']);
    const none = loadConfig({ ...valid, MINTLIFY_PROJECT_KEYS: '', ADMIN_USERS: ' ' });
    expect(none.ok && [none.config.api.projectKeys, none.config.adminUsers]).toEqual([{}, []]);
    const bad = loadConfig({
      ...valid,
      MINTLIFY_PROJECT_KEYS: 'mint_secret_without_project',
      ADMIN_USERS: 'alice',
    });
    expect(bad.ok ? [] : bad.problems).toEqual([
      'MINTLIFY_PROJECT_KEYS must be a comma-separated list of projectId=key pairs',
      'ADMIN_USERS must be a comma-separated list of Slack user ids (U0123ABCD)',
    ]);
    expect(JSON.stringify(bad)).not.toContain('mint_secret');
  });

  it('rejects a back-off ceiling below the first poll delay', () => {
    const r = loadConfig({ ...valid, POLL_INTERVAL_MS: '9000', POLL_MAX_INTERVAL_MS: '1000' });
    expect(r.ok ? [] : r.problems).toEqual([
      'POLL_MAX_INTERVAL_MS must be at least POLL_INTERVAL_MS (9000)',
    ]);
  });

  it('refuses every placeholder .env.example holds, by name; its other values are the defaults', () => {
    const defaults = loadConfig(valid);
    if (!defaults.ok) throw new Error(defaults.problems.join('\n'));
    const refused: string[] = [];
    // Read from .env.example itself: a placeholder added there and not refused fails here.
    for (const [name, value] of exampleValues()) {
      const r = loadConfig({ ...valid, [name]: value });
      if (r.ok) {
        expect(r.config, `${name}=${value} is neither the default nor refused`).toEqual(
          defaults.config,
        );
      } else {
        expect(r.problems).toEqual([`${name} still holds the placeholder from .env.example`]);
        refused.push(name);
      }
    }
    expect(refused).toEqual(
      expect.arrayContaining(['SLACK_BOT_TOKEN', 'MINTLIFY_API_KEY', 'MINTLIFY_PROJECT_ID']),
    );
    // Surrounding blanks (an editor's trailing space) do not let one through.
    const padded = loadConfig({ ...valid, SLACK_BOT_TOKEN: ' xoxb-your-bot-token ' });
    expect(padded.ok ? [] : padded.problems).toEqual([
      'SLACK_BOT_TOKEN still holds the placeholder from .env.example',
    ]);
  });

  it('reads .env.example copied unchanged as one line per placeholder, and nothing else', () => {
    const copied = Object.fromEntries(
      readFileSync(new URL('../.env.example', import.meta.url), 'utf8')
        .split('\n')
        .flatMap((l) => {
          const m = /^([A-Z][A-Z_]+)=(.*)$/.exec(l);
          return m ? [[m[1], m[2]]] : [];
        }),
    );
    const r = loadConfig(copied);
    expect(r.ok ? [] : r.problems).toEqual([
      'SLACK_BOT_TOKEN still holds the placeholder from .env.example',
      'MINTLIFY_API_KEY still holds the placeholder from .env.example',
      'MINTLIFY_PROJECT_ID still holds the placeholder from .env.example',
      'SLACK_SIGNING_SECRET is required in HTTP mode (set SLACK_APP_TOKEN to use Socket Mode instead)',
    ]);
  });

  it('reads DIGEST_CHANNEL as a channel id (C… or G…) and refuses a name without echoing it', () => {
    for (const id of ['C0123ABCD', 'G0456EFGH']) {
      const r = loadConfig({ ...valid, DIGEST_CHANNEL: ` ${id} ` });
      expect(r.ok && r.config.digest.channel).toBe(id);
    }
    for (const value of ['#docs-traffic', 'docs-traffic', 'U0123ABCD', 'D0123ABCD', 'c0123abcd']) {
      const r = loadConfig({ ...valid, DIGEST_CHANNEL: value });
      expect(r.ok ? [] : r.problems).toEqual([
        'DIGEST_CHANNEL must be a channel id such as C0123ABCD, not a name (in Slack: the channel\u2019s details, at the bottom of About)',
      ]);
    }
  });
});

describe('the workspace mode (distributed with SLACK_CLIENT_ID, SLACK_CLIENT_SECRET, SLACK_STATE_SECRET)', () => {
  const oauth = {
    SLACK_CLIENT_ID: '1234567890.9876543210',
    SLACK_CLIENT_SECRET: 'client-secret-0123456789abcdef0123',
    SLACK_STATE_SECRET: 'state-secret-0123456789abcdef0123456789',
    SLACK_SIGNING_SECRET: 'signing-secret-value',
    ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 7).toString('base64')}`,
  };
  const secrets = [
    oauth.SLACK_CLIENT_SECRET,
    oauth.SLACK_STATE_SECRET,
    'xoxb-1-secret-bot',
    Buffer.alloc(32, 7).toString('base64'),
  ];
  const problems = (env: Record<string, string | undefined>) => {
    const r = loadConfig(env);
    for (const s of secrets) expect(JSON.stringify(r.ok ? [] : r.problems)).not.toContain(s);
    return r.ok ? [] : r.problems;
  };

  it('is single-workspace without them, exactly as before: no distribution', () => {
    const r = loadConfig(valid);
    expect(r.ok && r.config.distribution).toBeUndefined();
    expect(r.ok && envWorkspace(r.config)).toEqual({
      botToken: 'xoxb-1-secret-bot',
      apiKey: 'mint_supersecret',
      projectId: 'proj_1',
    });
    expect(problems({ ...valid, SLACK_TOKEN_ROTATION: 'false' })).toEqual([]);
    expect(problems({ ...valid, SLACK_TOKEN_ROTATION: 'true' })).toEqual([
      'SLACK_TOKEN_ROTATION applies to distributed mode only (a bot token in SLACK_BOT_TOKEN cannot be refreshed): unset it, or set SLACK_CLIENT_ID, SLACK_CLIENT_SECRET and SLACK_STATE_SECRET',
    ]);
    // The bot token, key and project stay required there, one line each.
    expect(problems({ SLACK_SIGNING_SECRET: 's' })).toEqual([
      'SLACK_BOT_TOKEN is required (the xoxb-… bot token)',
      'MINTLIFY_API_KEY is required (an admin API key, mint_…)',
      'MINTLIFY_PROJECT_ID is required (copy it from the API keys page)',
    ]);
  });

  it('is distributed with all three, needing no bot token, docs key or project', () => {
    const r = loadConfig(oauth);
    if (!r.ok) throw new Error(r.problems.join('\n'));
    expect(r.config.distribution).toEqual({
      clientId: oauth.SLACK_CLIENT_ID,
      clientSecret: oauth.SLACK_CLIENT_SECRET,
      stateSecret: oauth.SLACK_STATE_SECRET,
      installPath: '/slack/install',
      redirectPath: '/slack/oauth_redirect',
      tokenRotation: false,
    });
    expect(r.config.slack).toMatchObject({ botToken: undefined, mode: 'http' });
    expect([r.config.api.key, r.config.api.projectId]).toEqual([undefined, undefined]);
    // No workspace comes from the environment: each install brings its own.
    expect(envWorkspace(r.config)).toBeUndefined();
    const rotating = loadConfig({ ...oauth, SLACK_TOKEN_ROTATION: ' true ' });
    expect(rotating.ok && rotating.config.distribution?.tokenRotation).toBe(true);
    expect(problems({ ...oauth, SLACK_TOKEN_ROTATION: 'yes' })).toEqual([
      'SLACK_TOKEN_ROTATION must be true or false',
    ]);
  });

  it('wants all three or none, naming the missing ones and no value', () => {
    expect(problems({ ...valid, SLACK_CLIENT_SECRET: oauth.SLACK_CLIENT_SECRET })).toEqual([
      'SLACK_CLIENT_ID, SLACK_CLIENT_SECRET and SLACK_STATE_SECRET go together (distributed mode, installed with OAuth): SLACK_CLIENT_ID and SLACK_STATE_SECRET are missing; set all three, or none for single-workspace mode',
      'SLACK_BOT_TOKEN cannot be set in distributed mode (SLACK_CLIENT_ID…): each workspace\u2019s bot token comes from its install. Choose one mode: unset SLACK_BOT_TOKEN, or unset SLACK_CLIENT_ID, SLACK_CLIENT_SECRET and SLACK_STATE_SECRET',
      'ENCRYPTION_KEYS is required in distributed mode (each workspace\u2019s tokens and docs key are stored encrypted with it); see docs/configuration.md for how to make one',
      'MINTLIFY_API_KEY is not used in distributed mode (each workspace connects its own docs project after installing): unset it',
      'MINTLIFY_PROJECT_ID is not used in distributed mode (each workspace connects its own docs project after installing): unset it',
    ]);
    const { SLACK_STATE_SECRET: _, ...twoOfThree } = oauth;
    expect(problems({ ...twoOfThree, SLACK_STATE_SECRET: '  ' })).toEqual([
      'SLACK_CLIENT_ID, SLACK_CLIENT_SECRET and SLACK_STATE_SECRET go together (distributed mode, installed with OAuth): SLACK_STATE_SECRET is missing; set all three, or none for single-workspace mode',
    ]);
  });

  it('runs on HTTP only and refuses what each workspace brings itself', () => {
    expect(
      problems({
        ...oauth,
        SLACK_SIGNING_SECRET: '',
        SLACK_APP_TOKEN: 'xapp-1-secret-app',
        MINTLIFY_PROJECT_KEYS: 'proj_a=mint_a',
        DIGEST_CHANNEL: 'C0123ABCD',
      }),
    ).toEqual([
      'SLACK_APP_TOKEN cannot be used in distributed mode: OAuth installs need the HTTP server (/slack/install, /slack/oauth_redirect); unset it and set SLACK_SIGNING_SECRET',
      'SLACK_SIGNING_SECRET is required in distributed mode (Slack signs its requests to /slack/events and the installs with it)',
      'MINTLIFY_PROJECT_KEYS is not used in distributed mode (each workspace connects its own docs project after installing): unset it',
      'DIGEST_CHANNEL is not used in distributed mode (a channel id names a channel of one workspace; each picks its own): unset it',
    ]);
  });

  it('needs ENCRYPTION_KEYS, since every workspace\u2019s tokens and docs key are stored sealed', () => {
    const { ENCRYPTION_KEYS: _, ...keyless } = oauth;
    expect(problems(keyless)).toEqual([
      'ENCRYPTION_KEYS is required in distributed mode (each workspace\u2019s tokens and docs key are stored encrypted with it); see docs/configuration.md for how to make one',
    ]);
  });

  it('checks the shapes of the client id and the state secret without echoing them', () => {
    expect(
      problems({ ...oauth, SLACK_CLIENT_ID: 'A0123ABCD', SLACK_STATE_SECRET: 'short-secret' }),
    ).toEqual([
      'SLACK_CLIENT_ID must be the app\u2019s Client ID (Basic Information → App Credentials), digits.digits',
      'SLACK_STATE_SECRET must be at least 32 characters (a random string: openssl rand -hex 32)',
    ]);
    expect(JSON.stringify(loadConfig({ ...oauth, SLACK_CLIENT_ID: 'A0123ABCD' }))).not.toContain(
      'A0123ABCD',
    );
  });

  it('hides the OAuth secrets from every line and log, naming the client id', () => {
    const r = loadConfig(oauth);
    if (!r.ok) throw new Error(r.problems.join('\n'));
    expect(configSecrets(r.config)).toEqual(
      expect.arrayContaining([oauth.SLACK_CLIENT_SECRET, oauth.SLACK_STATE_SECRET]),
    );
    const hide = hideConfigValues(r.config);
    expect(
      hide(
        `oauth failed for ${oauth.SLACK_CLIENT_ID} with ${oauth.SLACK_CLIENT_SECRET} and ${oauth.SLACK_STATE_SECRET}`,
      ),
    ).toBe('oauth failed for SLACK_CLIENT_ID with [redacted] and [redacted]');
  });
});
