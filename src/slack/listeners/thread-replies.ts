import type { AllMiddlewareArgs, App, SlackEventMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod';
import type { Inflight } from '../../inflight.ts';
import type { JobService } from '../../jobs/service.ts';
import type { Logger } from '../../log.ts';
import { decodeSlackText } from '../../mrkdwn.ts';

/**
 * A human reply inside a thread: a plain message, one with files, or one also sent to the
 * channel. Edits, deletes, joins, bot messages (any other subtype, or a bot id) are not.
 */
const ThreadReply = z.object({
  type: z.literal('message'),
  subtype: z.enum(['file_share', 'thread_broadcast']).optional(),
  bot_id: z.never().optional(),
  user: z.string().min(1),
  text: z.string().default(''),
  ts: z.string().min(1),
  thread_ts: z.string().min(1),
  channel: z.string().min(1),
});

const EventEnvelope = z.object({ event_id: z.string().optional(), team_id: z.string().optional() });

/** Replies in a job thread become follow-up messages, each handled once. */
export function registerThreadReplies(
  app: App,
  deps: { jobs: JobService; log: Logger; inflight: Inflight },
): void {
  const log = deps.log.child({ component: 'thread-replies' });
  async function onMessage({
    event,
    body,
    context,
  }: SlackEventMiddlewareArgs<'message'> & AllMiddlewareArgs): Promise<void> {
    const reply = ThreadReply.safeParse(event);
    if (!reply.success || reply.data.thread_ts === reply.data.ts) return;
    const m = reply.data;
    const envelope = EventEnvelope.safeParse(body);
    const teamId = (envelope.success && envelope.data.team_id) || context.teamId;
    if (!teamId) {
      log.warn({ channelId: m.channel, ts: m.ts }, 'event.no_team');
      return;
    }
    // Slack redelivers events it thinks we missed (X-Slack-Retry-Num) and may deliver the
    // same message under two event ids: the reply is recorded once, durably, before acting.
    const eventId = envelope.success ? envelope.data.event_id : undefined;
    await deps.jobs.receiveReply(
      {
        teamId,
        channelId: m.channel,
        threadTs: m.thread_ts,
        ts: m.ts,
        userId: m.user,
        text: decodeSlackText(m.text),
      },
      eventId ? [`event:${eventId}`] : [],
    );
  }
  app.event('message', (args) => deps.inflight.track(onMessage(args)));
}
