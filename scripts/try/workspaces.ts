/**
 * `npm run try -- --workspaces 2`: the distributed mode on the fakes. Two workspaces in the
 * fake Slack (its default one, Acme, and Globex), installed by you through the fake's Allow
 * page in a browser (or with curl); two docs projects in the API emulator, each with its own
 * admin key, to connect one per workspace from its App Home; and the bot started with OAuth
 * settings and encryption keys made up for this session.
 */
import { randomBytes } from 'node:crypto';
import type { ApiEmulator } from '../../test/fakes/api-emulator.ts';
import { type FakeSlack, SLACK_APP, SLACK_IDS } from '../../test/fakes/slack.ts';
import { DEV } from './env.ts';

/** One workspace of the session: who to be, where, and the docs project to connect. */
export interface TryWorkspace {
  n: number;
  team: string;
  name: string;
  user: string;
  channel: string;
  projectId: string;
  apiKey: string;
}

export const TRY_WORKSPACES: readonly TryWorkspace[] = [
  {
    n: 1,
    team: SLACK_IDS.team,
    name: SLACK_IDS.teamName,
    user: 'U0001',
    channel: 'C0001',
    projectId: 'proj_acme',
    apiKey: 'mint_acme_local_key_0001',
  },
  {
    n: 2,
    team: 'T0002',
    name: 'Globex',
    user: 'U0002',
    channel: 'C0002',
    projectId: 'proj_globex',
    apiKey: 'mint_globex_local_key_0002',
  },
];

/** The fakes set up for it: the second workspace, the Allow page, the redirect URL, the projects. */
export function setUpWorkspaces(slack: FakeSlack, api: ApiEmulator, botPort: number): void {
  const [, globex] = TRY_WORKSPACES as [TryWorkspace, TryWorkspace];
  slack.addWorkspace({
    team: globex.team,
    name: globex.name,
    botUser: 'UBOT2',
    channels: [globex.channel, `D${globex.user.slice(1)}`],
    users: [globex.user],
  });
  slack.configureApp({ redirectUrls: [`http://127.0.0.1:${botPort}/slack/oauth_redirect`] });
  slack.showAllowPage();
  for (const w of TRY_WORKSPACES) api.addProject(w.projectId, w.apiKey);
}

/** The distributed bot's environment: no bot token or API key, each workspace brings its own. */
export function distributedEnv(o: {
  slackUrl: string;
  apiUrl: string;
  botPort: number;
}): [string, string][] {
  return [
    ['SLACK_CLIENT_ID', SLACK_APP.clientId],
    ['SLACK_CLIENT_SECRET', SLACK_APP.clientSecret],
    ['SLACK_STATE_SECRET', randomBytes(32).toString('hex')],
    ['ENCRYPTION_KEYS', `k1:${randomBytes(32).toString('base64')}`],
    ['SLACK_SIGNING_SECRET', DEV.signingSecret],
    ['SLACK_API_URL', o.slackUrl],
    ['MINTLIFY_API_URL', o.apiUrl],
    ['PORT', String(o.botPort)],
    ['DATABASE_URL', 'sqlite:./data/local.sqlite'],
    ['POLL_INTERVAL_MS', '1000'],
    ['POLL_MAX_INTERVAL_MS', '5000'],
  ];
}

/** What to do next, printed once the bot is up. */
export function workspaceSteps(botUrl: string, control: string): string {
  const lines = [
    '# Two workspaces, one bot (distributed mode). In your browser:',
    ...TRY_WORKSPACES.map(
      (w) =>
        `#   ${w.n}. open ${botUrl}/slack/install, pick ${w.name} on the fake Slack's page, click Allow`,
    ),
    '# Then, in another shell:',
    `C=${control}`,
  ];
  for (const w of TRY_WORKSPACES) {
    const as = `"user":"${w.user}"`;
    lines.push(
      `#   ${w.name} (${w.team}, you are ${w.user}, channel ${w.channel}):`,
      `curl -s $C/home -d '{${as}}'                       # its Home: "Connect a docs project"`,
      `curl -s $C/click -d '{"home":true,"action_id":"docs_connect",${as}}'`,
      `curl -s $C/submit -d '{"values":["${w.projectId}","${w.apiKey}"],${as}}'`,
      `curl -s $C/agent -d '{"text":"status",${as},"channel":"${w.channel}"}'`,
    );
  }
  lines.push(
    '# Each workspace sees only its own: another project, another Home, its own token (GET /views, /answers).',
  );
  return `${lines.join('\n')}\n`;
}
