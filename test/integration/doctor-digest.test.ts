import { execFile } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { readManifestScopes } from '../../src/manifest.ts';
import { Harness, USER } from '../helpers/harness.ts';

/**
 * The doctor's DIGEST_CHANNEL check, through `/agent doctor` on the real bot and `npm run
 * doctor` as a process, against the fake Slack's conversations.info (which answers as Slack
 * does: a public channel the bot is not in is described with is_member false; a deleted one,
 * or a private one without the bot, is channel_not_found).
 */

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const scopes = await readManifestScopes();
const DIGEST = 'C0DIGEST7';

async function start(): Promise<Harness> {
  // ADMIN_USERS: the full report is the admins' (issue 19, item 2).
  h = await Harness.create({ mode: 'http', env: { DIGEST_CHANNEL: DIGEST, ADMIN_USERS: USER } });
  await h.start();
  h.slack.grantScopes(scopes);
  h.slack.nameChannel(DIGEST, 'docs-traffic');
  return h;
}

/** `/agent doctor`'s digest line (undefined when there is none). */
async function digestLine(harness: Harness): Promise<string | undefined> {
  expect((await harness.command('doctor')).status).toBe(200);
  const answer = await harness.slack.waitForResponse(undefined, 10_000);
  const text = String((answer.body as { text: string }).text);
  return text.split('\n').find((l) => /^[✓✗] Digest channel/.test(l));
}

describe('doctor: DIGEST_CHANNEL', () => {
  it('passes when the channel exists and the bot is in it, naming it without its id', async () => {
    const harness = await start();
    const line = await digestLine(harness);
    expect(line).toBe('✓ Digest channel: DIGEST_CHANNEL is #docs-traffic; the bot is a member');
    expect(harness.slack.callsTo('conversations.info').map((c) => c.args.channel)).toEqual([
      DIGEST,
    ]);
  });

  it('fails with the /invite fix when the bot is not a member', async () => {
    const harness = await start();
    harness.slack.removeBot(DIGEST);
    expect(await digestLine(harness)).toMatch(
      /^✗ Digest channel: DIGEST_CHANNEL is #docs-traffic, but the bot is not a member.*Fix: invite the bot: `\/invite @Docs Agent`/,
    );
  });

  it('fails with where to find the id when no such channel exists', async () => {
    const harness = await start();
    harness.slack.deleteChannel(DIGEST);
    expect(await digestLine(harness)).toMatch(
      /^✗ Digest channel: DIGEST_CHANNEL names no channel the bot can see \(channel_not_found\)\. Fix: set DIGEST_CHANNEL to the channel id/,
    );
  });

  it('names the scope a token granted before it was added lacks', async () => {
    const harness = await start();
    harness.slack.grantScopes(scopes.filter((s) => s !== 'channels:read'));
    expect(await digestLine(harness)).toMatch(
      /^✗ Digest channel: not checked: reading a channel needs the channels:read scope/,
    );
  });

  it('is not checked when no digest is set', async () => {
    h = await Harness.create({ mode: 'http', env: { ADMIN_USERS: USER } });
    await h.start();
    expect(await digestLine(h)).toBeUndefined();
    expect(h.slack.callsTo('conversations.info')).toHaveLength(0);
  });

  it('npm run doctor exits 1 on a channel the bot is not in, and never prints the id', async () => {
    h = await Harness.create({ mode: 'http', env: { DIGEST_CHANNEL: DIGEST } });
    h.slack.grantScopes(scopes);
    h.slack.removeBot(DIGEST);
    h.slack.nameChannel(DIGEST, 'docs-traffic');
    const r = await new Promise<{ code: number; out: string }>((resolve) => {
      execFile(
        'npm',
        ['run', '--silent', 'doctor'],
        {
          env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...h!.env },
          timeout: 30_000,
        },
        (err, stdout, stderr) =>
          resolve({
            code: err ? Number((err as { code?: unknown }).code ?? 1) : 0,
            out: stdout + stderr,
          }),
      );
    });
    expect(r.code).toBe(1);
    expect(r.out).toMatch(
      /^✗ Digest channel: DIGEST_CHANNEL is #docs-traffic, but the bot is not a member/m,
    );
    expect(r.out).not.toMatch(/c0digest7/i);
  });
});
