import { readFileSync } from 'node:fs';
import { EmbeddingsClient } from '../api/embeddings.ts';
import { BudgetExhausted } from '../api/errors.ts';
import type { Config } from '../config/config.ts';
import { configSecrets } from '../config/values.ts';
import { createLogger, maskUrlSecrets } from '../log.ts';
import { readManifestScopes } from '../manifest.ts';
import { escapeMrkdwn } from '../mrkdwn.ts';
import {
  allPassed,
  type Check,
  type DoctorPorts,
  describeMode,
  formatChecks,
  runDoctor,
  StaleApiCheck,
} from './checks.ts';
import type { EmbeddingsProbe } from './embeddings.ts';
import { slackDoctorProbe } from './probe.ts';
import { type WorkspaceDoctorPorts, workspaceChecks } from './workspace.ts';

/**
 * The doctor's ports from the configuration, for `npm run doctor` and `/agent doctor` alike;
 * each caller brings its own API check and database check (the running bot has both open).
 */
export function doctorPorts(o: {
  config: Config;
  /** Resolves with what the check cost (`API_COST` when it asked the API). */
  checkApi: () => Promise<string>;
  database: () => Promise<string>;
  nodeVersion?: string;
  /** The project checked (a channel's bound one); the configured one by default. */
  projectId?: string;
  /** Distributed mode: how many workspaces are installed (the store's count). */
  installedWorkspaces?: () => Promise<number>;
  /** Distributed mode: the key check (src/workspaces/key-check.ts describeKeys). */
  keyCheck?: () => Promise<string>;
}): DoctorPorts {
  const slack = slackDoctorProbe(o.config.slack);
  const digestChannel = o.config.digest.channel;
  const d = o.config.distribution;
  return {
    nodeVersion: o.nodeVersion ?? process.version,
    nodeRequired: requiredNode(),
    authTest: slack.authTest,
    openConnection: slack.openConnection,
    manifestScopes: () => readManifestScopes(),
    checkApi: o.checkApi,
    projectId: o.projectId ?? o.config.api.projectId,
    database: o.database,
    databaseLabel: databaseLabel(o.config.databaseUrl),
    digestChannel: digestChannel ? () => slack.channelInfo(digestChannel) : undefined,
    distributed: d && {
      installPath: d.installPath,
      tokenRotation: d.tokenRotation,
      installedWorkspaces: o.installedWorkspaces,
      keyCheck: o.keyCheck,
    },
    embeddings: embeddingsProbe(o.config),
  };
}

/** One text, one attempt, 10 s: the doctor's question to INSIGHTS_EMBEDDINGS_URL. */
function embeddingsProbe(config: Config): EmbeddingsProbe | undefined {
  const endpoint = config.insights.embeddings;
  if (!endpoint) return undefined;
  return {
    model: endpoint.model,
    async probe() {
      const client = new EmbeddingsClient({
        baseUrl: endpoint.url,
        apiKey: endpoint.key,
        model: endpoint.model,
        // Its failure is the check's line; nothing is logged on the side.
        log: createLogger({ level: 'silent', secrets: configSecrets(config) }),
        retry: { retries: 0 },
        timeoutMs: 10_000,
      });
      const [vector] = await client.embed(['How do I rotate an API key?']);
      return vector?.length ?? 0;
    },
  };
}

/** What one API check costs, said on its line. */
export const API_COST =
  'one analytics request of the 100 an hour; no agent use. Checked by reading a day of visitors';

/** The major version package.json's `engines.node` asks for (`>=24` → 24). */
function requiredNode(): number {
  try {
    const pkg = JSON.parse(
      readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
    ) as {
      engines?: { node?: string };
    };
    return Number(/(\d+)/.exec(pkg.engines?.node ?? '')?.[1] ?? 24);
  } catch {
    return 24;
  }
}

/**
 * A database URL fit to show: every secret-bearing part (the password, a `?password=` or
 * `sslpassword=` query value, tokens) shows as `***`.
 */
export function databaseLabel(url: string): string {
  return maskUrlSecrets(url);
}

/** Any secret that still slipped into a line is blanked before it is shown. */
export function redactSecrets(lines: string[], secrets: (string | undefined)[]): string[] {
  const known = secrets.filter((s): s is string => typeof s === 'string' && s.length >= 6);
  return lines.map((l) => known.reduce((acc, s) => acc.split(s).join('[redacted]'), l));
}

/** How often the running bot's doctor may spend an analytics request on its API check. */
export const API_PROBE_EVERY_MS = 10 * 60_000;

type Outcome = { ok: true } | { ok: false; err: unknown };

/**
 * The running bot's API check, at most one request per `everyMs` in this process, whoever
 * asks and however often: `/agent doctor` is open to everyone allowed, and each request
 * spends one of the organisation's 100 analytics requests an hour that the reports share.
 * Runs within the window get the last probe's result, said as such (runs at the same time
 * share the one request in flight); a project other than the one probed is not checked
 * until the window ends. A probe the budget refused spent nothing and is not kept.
 */
export function probeOncePer(o: {
  everyMs: number;
  now: () => number;
  probe: (projectId: string) => Promise<void>;
}): (projectId: string) => Promise<string> {
  let last: { projectId: string; at: number; outcome: Promise<Outcome> } | undefined;
  const minutes = Math.round(o.everyMs / 60_000);
  return async (projectId) => {
    const t = o.now();
    if (!last || t - last.at >= o.everyMs || t < last.at) {
      const entry = {
        projectId,
        at: t,
        outcome: o.probe(projectId).then(
          (): Outcome => ({ ok: true }),
          (err: unknown): Outcome => ({ ok: false, err }),
        ),
      };
      last = entry;
      const r = await entry.outcome;
      if (!r.ok && r.err instanceof BudgetExhausted && last === entry) last = undefined;
      if (r.ok) return API_COST;
      throw r.err;
    }
    const entry = last;
    const nextAt = new Date(entry.at + o.everyMs);
    const age =
      t - entry.at < 60_000
        ? 'under a minute ago'
        : `${Math.floor((t - entry.at) / 60_000)} min ago`;
    if (entry.projectId !== projectId)
      throw new StaleApiCheck(
        undefined,
        `the API was last probed ${age}, for another project (at most once every ${minutes} minutes, to spare the analytics budget)`,
        nextAt,
      );
    const r = await entry.outcome;
    const note = `result of the probe ${age}; the API is probed at most once every ${minutes} minutes`;
    if (r.ok) return note;
    if (r.err instanceof BudgetExhausted) throw r.err;
    throw new StaleApiCheck(r.err, note, nextAt);
  };
}

/** Who asked for the doctor, and where. */
export interface DoctorAsker {
  teamId: string;
  /** The team's Enterprise Grid org, when it has one (distributed mode finds its docs by it). */
  enterpriseId?: string | undefined;
  channelId: string;
  userId: string;
}

/**
 * Distributed mode: the doctor's part for the asking workspace (./workspace.ts), its ports
 * bound to that workspace alone, and whether the asker is one of its Docs Agent admins
 * (whoever installed it, or someone on its admin list).
 */
export type WorkspaceDoctor = (
  who: DoctorAsker,
) => Promise<{ ports: WorkspaceDoctorPorts; isAdmin: boolean }>;

export interface DoctorAnswer {
  text: string;
  /** Whether the asker got the full report (an admin). */
  full: boolean;
  failed: number;
}

export type SlackDoctor = (who: DoctorAsker) => Promise<DoctorAnswer>;

/**
 * `/agent doctor` (and `doctor` in a mention or DM): the running bot's checks, as one mrkdwn
 * answer for the person asking. The API check reads the project of the conversation it was
 * asked in (`/agent project`), through `probeOncePer`. The full report names hosts, paths and
 * the workspace: only people in ADMIN_USERS get it; anyone else gets one health line.
 * In distributed mode (`workspace` given) the asking workspace's own lines come too, and its
 * Docs Agent admins get those (with the deployment's checks counted, not shown).
 */
export function slackDoctor(o: {
  config: Config;
  checkApi: (projectId: string) => Promise<void>;
  projectFor: (teamId: string, channelId: string) => Promise<string>;
  ping: () => Promise<void>;
  now?: () => number;
  /** Distributed mode: the installed workspaces' count and the key check. */
  installedWorkspaces?: () => Promise<number>;
  keyCheck?: () => Promise<string>;
  /** Distributed mode: the asking workspace's docs connection, key and budgets. */
  workspace?: WorkspaceDoctor;
}): SlackDoctor {
  const admins = new Set(o.config.adminUsers);
  const probe = probeOncePer({
    everyMs: API_PROBE_EVERY_MS,
    now: o.now ?? Date.now,
    probe: o.checkApi,
  });
  const database = async () => {
    await o.ping();
    return 'answers; schema migrated to the latest version at start';
  };
  const portsFor = (projectId: string | undefined) =>
    doctorPorts({
      config: o.config,
      checkApi: () => (projectId ? probe(projectId) : Promise.reject(new Error('no project'))),
      database,
      ...(projectId ? { projectId } : {}),
      ...(o.installedWorkspaces ? { installedWorkspaces: o.installedWorkspaces } : {}),
      ...(o.keyCheck ? { keyCheck: o.keyCheck } : {}),
    });
  /** The report's lines, each fit for Slack and with no secret of the configuration. */
  const shown = (checks: Check[]) =>
    redactSecrets(formatChecks(checks), configSecrets(o.config)).map(escapeMrkdwn);
  const verdict = (checks: Check[], where: string) =>
    allPassed(checks)
      ? 'All checks passed.'
      : `Some checks failed: each ✗ line says how to fix it${where}.`;
  const serverNote = ' (`npm run doctor` runs the same checks on the server)';

  async function single(who: DoctorAsker): Promise<DoctorAnswer> {
    const ports = portsFor(await o.projectFor(who.teamId, who.channelId));
    const checks = await runDoctor(ports);
    const failed = checks.filter((c) => !c.ok).length;
    if (!admins.has(who.userId))
      return { text: healthLine(failed, admins.size > 0), full: false, failed };
    const mode = escapeMrkdwn(await describeMode(ports));
    const text = ['*Doctor*', mode, ...shown(checks), verdict(checks, serverNote)].join('\n');
    return { text, full: true, failed };
  }

  /** The deployment's checks and the asking workspace's; each reader sees what is theirs. */
  async function distributed(who: DoctorAsker, workspace: WorkspaceDoctor): Promise<DoctorAnswer> {
    const ports = portsFor(undefined);
    const ws = await workspace(who);
    const [deployment, own] = await Promise.all([runDoctor(ports), workspaceChecks(ws.ports)]);
    const all = [...deployment, ...own];
    const failed = all.filter((c) => !c.ok).length;
    if (admins.has(who.userId)) {
      const mode = escapeMrkdwn(await describeMode(ports));
      const lines = [...shown(deployment), '*This workspace*', ...shown(own)];
      return {
        text: ['*Doctor*', mode, ...lines, verdict(all, serverNote)].join('\n'),
        full: true,
        failed,
      };
    }
    if (!ws.isAdmin) return { text: healthLine(failed, true, 'workspace'), full: false, failed };
    const text = [
      '*Doctor* (this workspace)',
      ...shown(own),
      deploymentLine(deployment),
      verdict(own, ''),
    ].join('\n');
    return { text, full: true, failed };
  }

  return (who) => (o.workspace ? distributed(who, o.workspace) : single(who));
}

/** What a workspace admin is told of the deployment's checks: how many passed, not what. */
function deploymentLine(checks: Check[]): string {
  const bad = checks.filter((c) => !c.ok).length;
  if (bad === 0) return `✓ Docs Agent itself: all ${checks.length} of its checks passed`;
  return `✗ Docs Agent itself: ${bad} of its ${checks.length} checks failed. Fix: not yours to fix here; whoever runs Docs Agent sees which with \`npm run doctor\``;
}

/** What someone not in ADMIN_USERS is told: how many checks failed, and nothing of the setup. */
function healthLine(
  failed: number,
  adminsSet: boolean,
  who: 'deployment' | 'workspace' = 'deployment',
): string {
  if (failed === 0) return '✓ All checks passed.';
  const what = `✗ ${failed} check${failed === 1 ? '' : 's'} failed`;
  if (who === 'workspace')
    return `${what} — ask a Docs Agent admin of this workspace (whoever installed it, or someone on its admin list) to run \`/agent doctor\` for the details.`;
  return adminsSet
    ? `${what} — ask an admin to run \`/agent doctor\` for the details.`
    : `${what} — whoever runs the bot can see which with \`npm run doctor\`.`;
}
