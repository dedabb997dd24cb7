import { describe, expect, it } from 'vitest';
import { ChatError, NOT_INSTALLED } from '../../src/chat-errors.ts';
import { NotInstalled } from '../../src/slack/installation-store.ts';
import {
  createWorkspaceClients,
  type InstallAuthorize,
  type WorkspaceClientsDeps,
} from '../../src/slack/workspace-clients.ts';
import { memoryLogger } from '../helpers/log.ts';

/**
 * The pool of distributed mode's per-workspace clients, on an injected clock, with an
 * installer's authorize that answers as Bolt's does (a result, or its AuthorizationError
 * wrapping what the installation store threw). Real WebClients, no network.
 */

const HOUR = 3_600_000;
const A = { teamId: 'T0A' };
const B = { teamId: 'T0B' };
const EAST = { teamId: 'T0G1', enterpriseId: 'E0G' };

/** Bolt's installer wraps the store's error. */
function authorizationError(original: Error): Error {
  return Object.assign(new Error(original.message), {
    code: 'slack_oauth_installer_authorization_error',
    original,
  });
}

function setUp(o: Partial<WorkspaceClientsDeps> = {}) {
  let t = 1_000_000;
  const asked: { teamId: string; enterpriseId: string | undefined }[] = [];
  const tokens = new Map<string, { token: string; expiresAt?: number } | 'gone'>();
  const authorize: InstallAuthorize = async (source) => {
    asked.push({ teamId: source.teamId, enterpriseId: source.enterpriseId });
    await new Promise((r) => setTimeout(r, 5));
    const found = tokens.get(source.teamId);
    if (!found || found === 'gone') throw authorizationError(new NotInstalled(source));
    return {
      botToken: found.token,
      botUserId: `U${source.teamId}BOT`,
      ...(found.expiresAt === undefined ? {} : { botTokenExpiresAt: found.expiresAt }),
    };
  };
  const logs = memoryLogger();
  const settled: string[] = [];
  const clients = createWorkspaceClients({
    authorize,
    clientOptions: {},
    log: logs.log,
    now: () => t,
    // As the store settles: what is pending the first time, nothing after.
    gone: async (teamId) => {
      const first = !settled.includes(teamId);
      settled.push(teamId);
      return first ? { announcements: 2, roots: 1 } : { announcements: 0, roots: 0 };
    },
    ...o,
  });
  return {
    clients,
    asked,
    tokens,
    settled,
    logs,
    advance: (ms: number) => {
      t += ms;
    },
    now: () => t,
  };
}

const tokenOf = (c: { token?: string } | undefined) => c?.token;
/** What a lookup was refused with. */
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('not refused');
    },
    (err: unknown) => err as ChatError,
  );

describe('workspace clients (distributed mode)', () => {
  it("hands each workspace a client with its own install's token, asking the installer once a minute", async () => {
    const s = setUp();
    s.tokens.set('T0A', { token: 'xoxb-a' });
    s.tokens.set('T0B', { token: 'xoxb-b' });
    s.tokens.set('T0G1', { token: 'xoxb-globex' });
    const [a, b, east] = await Promise.all([A, B, EAST].map((ws) => s.clients.clientFor(ws)));
    expect([a, b, east].map(tokenOf)).toEqual(['xoxb-a', 'xoxb-b', 'xoxb-globex']);
    // The org's install is found through the org: the lookup names it.
    expect(s.asked).toContainEqual({ teamId: 'T0G1', enterpriseId: 'E0G' });
    // Calls made with a pooled client name its workspace (org-wide tokens need it).
    expect((east as unknown as { teamId?: string }).teamId).toBe('T0G1');
    expect(await s.clients.clientFor(A)).toBe(a);
    expect(await s.clients.botUserFor(B)).toBe('UT0BBOT');
    expect(s.asked).toHaveLength(3);
    s.advance(61_000);
    expect(await s.clients.clientFor(A)).toBe(a); // asked again, the same token: the same client
    expect(s.asked).toHaveLength(4);
  });

  it('asks once for concurrent lookups of one workspace (a refresh token works once)', async () => {
    const s = setUp();
    s.tokens.set('T0A', { token: 'xoxb-a' });
    const clients = await Promise.all(Array.from({ length: 10 }, () => s.clients.clientFor(A)));
    expect(new Set(clients).size).toBe(1);
    expect(s.asked).toHaveLength(1);
  });

  it('never uses a rotating token past the moment the installer refreshes it, and takes the new one', async () => {
    const s = setUp();
    // Expires in 2 h 30 min: the installer refreshes it 2 h before, so it is good for 30 min.
    s.tokens.set('T0A', { token: 'xoxe.xoxb-1', expiresAt: (s.now() + 2.5 * HOUR) / 1000 });
    const first = await s.clients.clientFor(A);
    s.advance(59_000);
    expect(await s.clients.clientFor(A)).toBe(first);
    // Now only 20 min of use are left before the refresh point: kept no longer than that.
    s.tokens.set('T0A', { token: 'xoxe.xoxb-1', expiresAt: (s.now() + 2 * HOUR + 20_000) / 1000 });
    s.advance(2_000);
    await s.clients.clientFor(A);
    s.advance(21_000);
    s.tokens.set('T0A', { token: 'xoxe.xoxb-2', expiresAt: (s.now() + 12 * HOUR) / 1000 });
    const refreshed = await s.clients.clientFor(A);
    expect(tokenOf(refreshed)).toBe('xoxe.xoxb-2');
    expect(refreshed).not.toBe(first);
    expect(s.logs.text()).not.toContain('xoxe.xoxb');
  });

  it('drops a client whose token Slack refused: the next lookup asks the installer', async () => {
    const s = setUp();
    s.tokens.set('T0A', { token: 'xoxb-a1' });
    const old = await s.clients.clientFor(A);
    s.tokens.set('T0A', { token: 'xoxb-a2' });
    s.clients.refused(A, old);
    expect(tokenOf(await s.clients.clientFor(A))).toBe('xoxb-a2');
    expect(s.asked).toHaveLength(2);
  });

  it('settles the work of a workspace with no install once, in one line, and says NOT_INSTALLED', async () => {
    const s = setUp();
    s.tokens.set('T0A', { token: 'xoxb-a' });
    s.tokens.set('T0B', 'gone');
    // Five lookups at once, one of them naming an org: one settle, one line.
    const lookups = [B, B, B, B, { ...B, enterpriseId: 'E0X' }];
    const results = await Promise.allSettled(lookups.map((ws) => s.clients.clientFor(ws)));
    for (const r of results) {
      expect(r.status).toBe('rejected');
      const err = (r as PromiseRejectedResult).reason as ChatError;
      expect([err.code, err.retryable]).toEqual([NOT_INSTALLED, false]);
    }
    // The four lookups of one key shared one ask; the one naming an org asked apart.
    expect(s.settled).toEqual(['T0B', 'T0B']);
    const dropped = s.logs.lines().filter((l) => l.msg === 'slack.workspace_work_dropped');
    expect(dropped).toMatchObject([
      { teamId: 'T0B', announcements: 2, roots: 1, reason: NOT_INSTALLED },
    ]);
    expect(await s.clients.botUserFor(A)).toBe('UT0ABOT');
  });

  it('leaves the work in place when it cannot be settled, and when the install could not be read', async () => {
    const s = setUp({
      gone: async () => {
        throw new Error('database away');
      },
    });
    s.tokens.set('T0B', 'gone');
    const e1 = await refusal(s.clients.clientFor(B));
    expect([e1.code, e1.retryable]).toEqual([NOT_INSTALLED, true]);
    const broken = setUp({
      authorize: async () => {
        throw authorizationError(new Error('Unsupported state or unable to authenticate data'));
      },
    });
    const e2 = await refusal(broken.clients.clientFor(A));
    expect(e2).toBeInstanceOf(ChatError);
    expect([e2.code, e2.retryable]).toEqual(['authorize_failed', true]);
    expect(broken.settled).toEqual([]);
  });
});
