import { urlSecrets } from '../log.ts';
import type { Config } from './config.ts';

/**
 * What stands in for a configuration value in a line the process prints: docs/configuration.md promises
 * that values are named, never echoed. An error's text (a driver's "getaddrinfo ENOTFOUND
 * db.internal", "role "bot" does not exist", a URL) is passed through the returned function
 * before it is shown: each value becomes the name of the variable it came from, and a secret
 * becomes `[redacted]`.
 */
export function hideConfigValues(config: Config): (text: string) => string {
  const { slack, api } = config;
  const pairs: [string | undefined, string][] = [
    [slack.botToken, '[redacted]'],
    [slack.appToken, '[redacted]'],
    [slack.signingSecret, '[redacted]'],
    [api.key, '[redacted]'],
    ...Object.values(api.projectKeys).map((k): [string, string] => [k, '[redacted]']),
    ...(config.workspaces.encryptionKeys?.redactions() ?? []).map((k): [string, string] => [
      k,
      '[redacted]',
    ]),
    [config.insights.embeddings?.key, '[redacted]'],
    ...(config.insights.embeddings ? urlSecrets(config.insights.embeddings.url) : []).map(
      (s): [string, string] => [s, '[redacted]'],
    ),
    ...databaseParts(config.databaseUrl),
    // distributed mode (distribution.ts): the OAuth secrets, and the client id by its name
    [config.distribution?.clientSecret, '[redacted]'],
    [config.distribution?.stateSecret, '[redacted]'],
    [config.distribution?.clientId, 'SLACK_CLIENT_ID'],
    [slack.apiUrl, 'SLACK_API_URL'],
    [slack.apiUrl.replace(/\/+$/, ''), 'SLACK_API_URL'],
    [api.baseUrl, 'MINTLIFY_API_URL'],
    [config.insights.embeddings?.url, 'INSIGHTS_EMBEDDINGS_URL'],
    [config.visitors.docsBaseUrl, 'DOCS_BASE_URL'],
    [config.digest.channel, 'DIGEST_CHANNEL'],
    ...(config.access.users ?? []).map((u): [string, string] => [u, 'an ALLOWED_USERS id']),
    ...(config.access.channels ?? []).map((c): [string, string] => [c, 'an ALLOWED_CHANNELS id']),
    ...config.adminUsers.map((u): [string, string] => [u, 'an ADMIN_USERS id']),
  ];
  // Longest first, so that a URL is named whole before its host is; whole words only, so that
  // a short value (a host called `db`) does not eat into other words.
  const known = pairs
    .filter((p): p is [string, string] => typeof p[0] === 'string' && p[0].length >= 2)
    .sort((a, b) => b[0].length - a[0].length);
  if (known.length === 0) return (text) => text;
  const names = new Map(known);
  const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const any = new RegExp(
    `(?<![\\w.-])(?:${known.map(([v]) => literal(v)).join('|')})(?![\\w-])`,
    'g',
  );
  return (text) => text.replace(any, (v) => names.get(v) ?? '[redacted]');
}

/** The parts of DATABASE_URL a driver's error may repeat: the path, or host, user and name. */
function databaseParts(url: string): [string | undefined, string][] {
  if (url.startsWith('sqlite:')) return [[url.slice('sqlite:'.length), 'the DATABASE_URL path']];
  try {
    const u = new URL(url);
    const database = decodeURIComponent(u.pathname.replace(/^\//, ''));
    return [
      [url, 'DATABASE_URL'],
      [u.password, '[redacted]'],
      [decodeURIComponent(u.password), '[redacted]'],
      [u.hostname, 'the DATABASE_URL host'],
      [u.host, 'the DATABASE_URL host'],
      [decodeURIComponent(u.username), 'the DATABASE_URL user'],
      [database, 'the DATABASE_URL database'],
    ];
  } catch {
    return [[url, 'DATABASE_URL']];
  }
}

/** Every secret the configuration holds: tokens, keys (ENCRYPTION_KEYS too), and the database URL's secret parts. */
export function configSecrets(
  config: Pick<Config, 'slack' | 'api' | 'databaseUrl'> &
    Partial<Pick<Config, 'workspaces' | 'distribution'>> & {
      insights?: Pick<Config['insights'], 'embeddings'>;
    },
): (string | undefined)[] {
  const embeddings = config.insights?.embeddings;
  return [
    ...(config.workspaces?.encryptionKeys?.redactions() ?? []),
    config.slack.botToken,
    config.slack.appToken,
    config.slack.signingSecret,
    config.api.key,
    ...Object.values(config.api.projectKeys),
    ...urlSecrets(config.databaseUrl),
    // distributed mode (distribution.ts)
    config.distribution?.clientSecret,
    config.distribution?.stateSecret,
    embeddings?.key,
    ...(embeddings ? urlSecrets(embeddings.url) : []),
  ];
}
