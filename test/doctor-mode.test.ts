import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/config.ts';
import { type DoctorPorts, describeMode, formatChecks, runDoctor } from '../src/doctor/checks.ts';
import { doctorPorts } from '../src/doctor/wiring.ts';

/** Ports whose every Slack and API question fails loudly: the mode decides what is asked. */
function ports(
  distributed: DoctorPorts['distributed'],
  projectId?: string,
): DoctorPorts & { asked: string[] } {
  const asked: string[] = [];
  const ask = (what: string) => async (): Promise<never> => {
    asked.push(what);
    throw new Error(`${what} was asked`);
  };
  return {
    asked,
    nodeVersion: 'v24.1.0',
    nodeRequired: 24,
    authTest: ask('auth.test'),
    openConnection: undefined,
    manifestScopes: ask('manifest'),
    checkApi: ask('api'),
    projectId,
    database: async () => 'answers',
    databaseLabel: 'sqlite:x',
    distributed,
  };
}

describe("the doctor's mode", () => {
  it('says single workspace, and checks the bot token, scopes and API key from the environment', async () => {
    const p = ports(undefined, 'proj_a');
    expect(await describeMode(p)).toBe('Mode: single workspace (bot token from the environment)');
    const names = (await runDoctor(p)).map((c) => c.name);
    expect(names).toEqual([
      'Node',
      'Slack bot token',
      'Bot scopes',
      'Slack app token',
      'Mintlify API key and project proj_a',
      'Database sqlite:x',
      'Embeddings endpoint',
    ]);
    expect(p.asked).toEqual(['auth.test', 'manifest', 'api']);
  });

  it('in distributed mode asks nothing of a token or key the environment does not hold', async () => {
    const p = ports({ installPath: '/slack/install', tokenRotation: true });
    expect(await describeMode(p)).toBe(
      'Mode: distributed (OAuth install at /slack/install, token rotation on)',
    );
    const checks = await runDoctor(p);
    expect(formatChecks(checks)).toEqual([
      '✓ Node: v24.1.0 (needs 24 or newer)',
      '✓ Slack app token: not set: HTTP mode (Slack sends requests to POST /slack/events, signed with SLACK_SIGNING_SECRET)',
      '✓ Database sqlite:x: answers',
    ]);
    expect(p.asked).toEqual([]);
  });

  it('counts the installed workspaces when it can, and says so when it cannot', async () => {
    const counted = { installPath: '/slack/install', tokenRotation: false };
    expect(
      await describeMode({ distributed: { ...counted, installedWorkspaces: async () => 3 } }),
    ).toBe(
      'Mode: distributed (OAuth install at /slack/install, 3 workspaces installed, token rotation off)',
    );
    expect(
      await describeMode({ distributed: { ...counted, installedWorkspaces: async () => 1 } }),
    ).toContain(', 1 workspace installed,');
    const failing = async (): Promise<number> => {
      throw new Error('database unreachable');
    };
    expect(await describeMode({ distributed: { ...counted, installedWorkspaces: failing } })).toBe(
      'Mode: distributed (OAuth install at /slack/install, installed workspaces not counted (database unreachable), token rotation off)',
    );
  });

  it('takes the mode from the configuration, with no secret in its line', async () => {
    const r = loadConfig({
      SLACK_CLIENT_ID: '1234567890.9876543210',
      SLACK_CLIENT_SECRET: 'client-secret-0123456789abcdef0123',
      SLACK_STATE_SECRET: 'state-secret-0123456789abcdef0123456789',
      SLACK_SIGNING_SECRET: 'signing-secret-value',
      ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 7).toString('base64')}`,
    });
    if (!r.ok) throw new Error(r.problems.join('\n'));
    const p = doctorPorts({
      config: r.config,
      checkApi: async () => 'unused',
      database: async () => 'answers',
      installedWorkspaces: async () => 2,
    });
    const line = await describeMode(p);
    expect(line).toBe(
      'Mode: distributed (OAuth install at /slack/install, 2 workspaces installed, token rotation off)',
    );
    expect(line).not.toMatch(/client-secret|state-secret|1234567890/);
  });
});
