import { afterEach, beforeEach, expect, it } from 'vitest';
import { ROOT_EVENT } from '../../src/slack/blocks.ts';
import { SLACK_IDS } from '../fakes/slack.ts';
import { CHANNEL, Harness, USER } from '../helpers/harness.ts';
import { eventually } from '../helpers/net.ts';
import { appMentionEvent, messageEvent } from '../helpers/slack-requests.ts';

let h: Harness;
beforeEach(async () => {
  h = await Harness.create({ mode: 'socket' });
  await h.start();
});
afterEach(async () => {
  await h.close();
});

it('starts one job from a mention Slack delivers twice over Socket Mode', async () => {
  const text = `<@${SLACK_IDS.botUser}> document the webhooks API`;
  const { ts } = h.slack.addUserMessage({ channel: CHANNEL, user: USER, text });
  const fields = { text, channel: CHANNEL, user: USER, ts };
  await h.deliverEvent(messageEvent(fields));
  await h.deliverEvent(appMentionEvent(fields));
  await h.deliverEvent(appMentionEvent(fields)); // another envelope, another event id
  expect(h.socket?.acks).toHaveLength(3);
  await eventually(
    () => h.logLines().some((l) => l.msg === 'event.duplicate'),
    'the repeat seen as one',
  );
  const root = await eventually(
    () =>
      h.slack
        .thread(CHANNEL, ts)
        .find((m) => m.user === SLACK_IDS.botUser && m.metadata?.event_type === ROOT_EVENT),
    'the root in the mention thread',
  );
  expect(root.thread_ts).toBe(ts);
  await eventually(() => h.api.createdJobs()[0], 'the job');
  expect(h.api.requestsTo('create')).toHaveLength(1);
  expect(h.api.requestsTo('create')[0]?.body).toEqual({ prompt: 'document the webhooks API' });
});
