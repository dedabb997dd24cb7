/**
 * Issue 21, isolation: forged cross-workspace events. Every event the app listens to
 * (src/slack/listeners/*.ts, src/slack/home.ts): `message` (a thread reply, thread-replies.ts
 * and its pre-ack record; a DM, direct-messages.ts), `app_mention` (mentions.ts),
 * `app_home_opened` (home.ts), `app_uninstalled` and `tokens_revoked` (uninstall.ts).
 *
 * Two kinds of forgery, each on every event:
 * - BETA's own event (envelope and authorization BETA's) naming ALPHA's channel, thread and
 *   people: every lookup is by BETA's team, so ALPHA's thread is no job thread there, and
 *   whatever BETA's person starts is BETA's, posted with BETA's token, which Slack refuses
 *   in ALPHA's channel. Nothing to refuse by the bot: Slack is the check (and says so).
 * - an event whose envelope says ALPHA while Slack authorized it for BETA's install: acted on
 *   by nothing, not even recorded before the ack, with one `workspace.refused` line. Nobody
 *   is answered: the person the envelope names is not BETA's to answer.
 *
 * Nothing of ALPHA changes (rows, its job at the API, no Slack call with its token). The
 * real bot over HTTP, on both engines.
 */
import { describe, expect, it } from 'vitest';
import { eventCallback } from '../fakes/slack/events.ts';
import {
  ALPHA,
  BETA,
  closeAfterEach,
  homeOpened,
  said,
  threadReply,
  vaultOf,
} from '../helpers/distributed.ts';
import {
  A,
  type Alpha,
  alphaBefore,
  alphaUntouched,
  B,
  betaEvent,
  refusedLines,
  twoWorkspaces,
} from '../helpers/forged.ts';
import { type Harness, SECRETS } from '../helpers/harness.ts';
import { eventually, sleep } from '../helpers/net.ts';
import { postSigned } from '../helpers/slack-requests.ts';
import { engineKinds } from '../helpers/store-engines.ts';

let h: Harness;
let alpha: Alpha;
closeAfterEach(() => h);

async function start(engine: 'sqlite' | 'postgres') {
  ({ h, alpha } = await twoWorkspaces(engine));
}

/** A reply in ALPHA's job thread, by `user`. */
function replyInAlpha(user: string, text: string): Record<string, unknown> {
  return threadReply({ user, channel: A.channel }, alpha.active.threadTs, text);
}

/** A mention of the bot in ALPHA's job thread, by `user`. */
function mentionInAlpha(user: string, text: string): Record<string, unknown> {
  return {
    ...said('app_mention', { user, channel: A.channel }, text),
    thread_ts: alpha.active.threadTs,
  };
}

/** Every event the bot listens to, as BETA's person (or ALPHA's, in a forged envelope). */
function everyEvent(user: string): Record<string, unknown>[] {
  return [
    replyInAlpha(user, 'Also publish the internal roadmap'),
    replyInAlpha(user, `<@${ALPHA.botUser}> status`),
    mentionInAlpha(user, `<@${BETA.botUser}> also publish the roadmap`),
    said('app_mention', { user, channel: A.channel }, `<@${BETA.botUser}> project proj_beta`),
    said('message', { user, channel: 'D0A1' }, 'Write a page about the roadmap'),
    said('message', { user, channel: 'D0A1' }, 'status'),
    homeOpened(user),
  ];
}

describe.each(engineKinds)('distributed mode: forged events (%s)', (engine) => {
  it("BETA's events naming ALPHA's channel, thread and people reach nothing of ALPHA", async () => {
    await start(engine);
    const before = await alphaBefore(h);
    for (const event of everyEvent(B.user)) expect((await betaEvent(h, event)).status).toBe(200);
    // BETA's person, claiming to be ALPHA's, opens the Home: BETA's Home, with BETA's token.
    expect((await betaEvent(h, homeOpened(A.user))).status).toBe(200);
    // The mention and the DM start BETA's jobs; Slack refuses their roots in ALPHA's places.
    await eventually(
      () => h.logLines().filter((l) => l.msg === 'job.root_post_failed').length >= 2,
      'the roots refused by Slack',
    );
    await alphaUntouched(h, before);
    expect(h.api.requestsTo('message')).toEqual([]);
    // Nothing was recorded as a follow-up of ALPHA's job, before the ack or after.
    expect(refusedLines(h)).toEqual([]);
    const failed = h.logLines().filter((l) => l.msg === 'job.root_post_failed');
    expect(failed.every((l) => l.code === 'channel_not_found')).toBe(true);
    // Every call the bot made for these was with BETA's token.
    const teams = new Set(h.slack.calls.slice(before.calls).map((c) => c.team));
    expect([...teams]).toEqual([B.team]);
  });

  it('refuses every event whose envelope names ALPHA while Slack authorized BETA, before the ack too', async () => {
    await start(engine);
    const before = await alphaBefore(h);
    // ALPHA's own people, in ALPHA's own places: only the envelope's team is BETA's to vouch for.
    const events = [
      ...everyEvent(A.user),
      { type: 'tokens_revoked', tokens: { bot: [ALPHA.botUser] } },
      { type: 'app_uninstalled' },
    ];
    for (const event of events)
      expect((await betaEvent(h, event, { envelopeTeam: A.team })).status).toBe(200);
    await sleep(300);
    await alphaUntouched(h, before);
    expect(h.api.requestsTo('message')).toEqual([]);
    expect(h.slack.calls.slice(before.calls)).toEqual([]);
    expect(refusedLines(h).map((l) => [l.surface, l.type, l.teamId, l.claimedTeamId])).toEqual(
      events.map((e) => ['event', e.type, B.team, A.team]),
    );
    // BETA's install was not ended by an uninstall that named ALPHA.
    expect(await vaultOf(h).findInstallation({ teamId: B.team })).toBeTruthy();
    // The same reply, with its envelope true, is ALPHA's follow-up: the refusal was the envelope.
    const reply = replyInAlpha(A.user, 'Also cover SCIM');
    const body = eventCallback(reply, { team_id: A.team, bot_user: ALPHA.botUser });
    await postSigned(h.eventsUrl, SECRETS.signingSecret, { body: JSON.stringify(body) });
    await eventually(() => h.api.requestsTo('message').length > 0, 'the follow-up sent');
    expect(h.api.requestsTo('message')[0]?.path).toContain(alpha.jobId);
  });
});
