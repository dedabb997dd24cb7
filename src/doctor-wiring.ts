import { readFileSync } from 'node:fs';
import type { Config } from './config.ts';
import { allPassed, type DoctorPorts, formatChecks, runDoctor } from './doctor.ts';
import { readManifestScopes } from './manifest.ts';
import { escapeMrkdwn } from './mrkdwn.ts';
import { slackDoctorProbe } from './slack/doctor-probe.ts';

/**
 * The doctor's ports from the configuration, for `npm run doctor` and `/agent doctor` alike;
 * each caller brings its own API check and database check (the running bot has both open).
 */
export function doctorPorts(o: {
  config: Config;
  checkApi: () => Promise<void>;
  database: () => Promise<string>;
  nodeVersion?: string;
  /** The project checked (a channel's bound one); the configured one by default. */
  projectId?: string;
}): DoctorPorts {
  const slack = slackDoctorProbe(o.config.slack);
  const digestChannel = o.config.digest.channel;
  return {
    nodeVersion: o.nodeVersion ?? process.version,
    nodeRequired: requiredNode(),
    authTest: slack.authTest,
    openConnection: slack.openConnection,
    manifestScopes: () => readManifestScopes(),
    checkApi: o.checkApi,
    apiCost:
      'one analytics request of the 100 an hour; no agent use. Checked by reading a day of visitors',
    projectId: o.projectId ?? o.config.api.projectId,
    database: o.database,
    databaseLabel: databaseLabel(o.config.databaseUrl),
    digestChannel: digestChannel ? () => slack.channelInfo(digestChannel) : undefined,
  };
}

/** The major version package.json's `engines.node` asks for (`>=24` → 24). */
function requiredNode(): number {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      engines?: { node?: string };
    };
    return Number(/(\d+)/.exec(pkg.engines?.node ?? '')?.[1] ?? 24);
  } catch {
    return 24;
  }
}

/** A database URL fit to show: a postgres:// password is hidden. */
export function databaseLabel(url: string): string {
  if (!/^postgres(ql)?:/.test(url)) return url;
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://… (unparseable URL)';
  }
}

/** Any secret that still slipped into a line is blanked before it is shown. */
export function redactSecrets(lines: string[], secrets: (string | undefined)[]): string[] {
  const known = secrets.filter((s): s is string => typeof s === 'string' && s.length >= 6);
  return lines.map((l) => known.reduce((acc, s) => acc.split(s).join('[redacted]'), l));
}

export function configSecrets(config: Config): (string | undefined)[] {
  let password: string | undefined;
  try {
    password = /^postgres/.test(config.databaseUrl)
      ? decodeURIComponent(new URL(config.databaseUrl).password) || undefined
      : undefined;
  } catch {
    password = undefined;
  }
  return [
    config.slack.botToken,
    config.slack.appToken,
    config.slack.signingSecret,
    config.api.key,
    ...Object.values(config.api.projectKeys),
    password,
  ];
}

/**
 * `/agent doctor`: the running bot's checks, as one mrkdwn answer for the person asking. The
 * API check reads the project of the channel it was asked in (`/agent project`).
 */
export function slackDoctor(o: {
  config: Config;
  checkApi: (projectId: string) => Promise<void>;
  projectFor: (teamId: string, channelId: string) => Promise<string>;
  ping: () => Promise<void>;
}): (teamId: string, channelId: string) => Promise<string> {
  return async (teamId, channelId) => {
    const database = async () => {
      await o.ping();
      return 'answers; schema migrated to the latest version at start';
    };
    const projectId = await o.projectFor(teamId, channelId);
    const checkApi = () => o.checkApi(projectId);
    const checks = await runDoctor(
      doctorPorts({ config: o.config, checkApi, database, projectId }),
    );
    const lines = redactSecrets(formatChecks(checks), configSecrets(o.config)).map(escapeMrkdwn);
    const verdict = allPassed(checks)
      ? 'All checks passed.'
      : 'Some checks failed: each ✗ line says how to fix it (`npm run doctor` runs the same checks on the server).';
    return ['*Doctor*', ...lines, verdict].join('\n');
  };
}
