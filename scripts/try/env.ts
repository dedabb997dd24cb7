/**
 * What `scripts/local-fakes.ts` runs with: its command-line options, the fakes' credentials,
 * and the environment a bot needs to run on the fakes.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

/** The fakes' credentials: made up, known to both the fakes and the bot. */
export const DEV = {
  botToken: 'xoxb-local-dev-token',
  signingSecret: 'local-dev-signing-secret',
  apiKey: 'mint_local_dev_key',
  projectId: 'proj_local',
} as const;
export const DEFAULT_CHANNEL = 'C0001';
export const DEFAULT_USER = 'U0001';

export interface Options {
  botPort: number;
  controlPort: number;
  /** Whether each port was asked for (a flag): a default that is taken gives way to a free one. */
  chosen: { botPort: boolean; controlPort: boolean };
  /** Where POST /dump writes calls.json. */
  out: string;
  /** Start the bot too (`npm run try`). */
  bot: boolean;
  /** 2: the distributed mode with two workspaces to install (scripts/try/workspaces.ts). */
  workspaces: 1 | 2;
}

const USAGE =
  'usage: node scripts/local-fakes.ts [--bot] [--workspaces 1|2] [--bot-port 3000] [--control-port 3999] [--out slack-view-out]';

/** The options from argv; bad ones print the usage and exit 2, `--help` exits 0. */
export function options(args: string[] = process.argv.slice(2)): Options {
  let values: {
    'bot-port'?: string;
    'control-port'?: string;
    out?: string;
    help?: boolean;
    bot?: boolean;
    workspaces?: string;
  };
  try {
    ({ values } = parseArgs({
      args,
      options: {
        'bot-port': { type: 'string' },
        'control-port': { type: 'string' },
        out: { type: 'string', default: 'slack-view-out' },
        help: { type: 'boolean', short: 'h' },
        bot: { type: 'boolean', default: false },
        workspaces: { type: 'string', default: '1' },
      },
    }));
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n${USAGE}\n`);
    process.exit(2);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const botPort = port('bot-port', values['bot-port'] ?? '3000');
  const controlPort = port('control-port', values['control-port'] ?? '3999');
  if (values.workspaces !== '1' && values.workspaces !== '2') {
    process.stderr.write(`--workspaces must be 1 or 2, got ${values.workspaces}\n${USAGE}\n`);
    process.exit(2);
  }
  if (botPort === controlPort) {
    process.stderr.write('--bot-port and --control-port must differ\n');
    process.exit(2);
  }
  return {
    botPort,
    controlPort,
    chosen: {
      botPort: values['bot-port'] !== undefined,
      controlPort: values['control-port'] !== undefined,
    },
    out: resolve(values.out || 'slack-view-out'),
    bot: values.bot === true,
    workspaces: values.workspaces === '2' ? 2 : 1,
  };
}

function port(name: string, v: string | undefined): number {
  const n = Number(v);
  if (!/^\d+$/.test(v ?? '') || n < 1 || n > 65535) {
    process.stderr.write(`--${name} must be a port number (1-65535), got ${v}\n${USAGE}\n`);
    process.exit(2);
  }
  return n;
}

/** The bot's environment on these fakes, in the order it is printed. */
export function botEnv(o: {
  slackUrl: string;
  apiUrl: string;
  botPort: number;
}): [string, string][] {
  return [
    ['SLACK_BOT_TOKEN', DEV.botToken],
    ['SLACK_SIGNING_SECRET', DEV.signingSecret],
    ['SLACK_API_URL', o.slackUrl],
    ['MINTLIFY_API_KEY', DEV.apiKey],
    ['MINTLIFY_PROJECT_ID', DEV.projectId],
    ['MINTLIFY_API_URL', o.apiUrl],
    ['PORT', String(o.botPort)],
    // The person you play by default is an admin: `/agent doctor` shows its full report.
    ['ADMIN_USERS', DEFAULT_USER],
    ['DATABASE_URL', 'sqlite:./data/local.sqlite'],
    ['POLL_INTERVAL_MS', '1000'],
    ['POLL_MAX_INTERVAL_MS', '5000'],
  ];
}
