import type { SlackCommandMiddlewareArgs } from '@slack/bolt';
import { ChatError, NOT_IN_CHANNEL_CODES } from '../../chat-errors.ts';
import { conversationKind, kindFromChannelName, notInChannelText } from '../../invite-hint.ts';
import type { Logger } from '../../log.ts';
import type { Projects } from '../../projects.ts';
import { describeReportFailure } from '../../reports/failures.ts';
import { type DateRange, parseVisitorsArgs } from '../../reports/range.ts';
import { readCommand } from './command-payload.ts';

/** Past this, the requester gets a short "working on it" note. */
const SLOW_MS = 2_500;

/**
 * `/visitors` and `/insights`: a range (`7d | 30d | Nd | FROM TO`); bad arguments are answered
 * in the ack with the accepted forms and nothing is fetched. Otherwise ack at once, then `post`
 * the report for the channel's project, with a "working on it" note to the requester when it
 * takes a while, and a plain answer, only to them, when it fails: the invite hint where the
 * bot is not in the channel, Slack's refusal, or what the API said. `event` names the log
 * lines (`visitors.failed`, …).
 */
export async function handleReportCommand(
  { command, ack, respond }: Pick<SlackCommandMiddlewareArgs, 'command' | 'ack' | 'respond'>,
  o: {
    event: 'visitors' | 'insights';
    /** "Working on your traffic report…" */
    slowNote: string;
    timeZone: string;
    log: Logger;
    projects: Pick<Projects, 'binding'>;
    botName?: (() => string | undefined) | undefined;
    post: (r: {
      range: DateRange;
      projectId: string | undefined;
      channelId: string;
    }) => Promise<void>;
  },
): Promise<void> {
  const { event, log } = o;
  const payload = await readCommand(command, ack, log);
  if (!payload) return;
  const { text, team_id, channel_id: channelId, user_id, channel_name } = payload;
  const args = parseVisitorsArgs(text, new Date(), o.timeZone);
  if (!args.ok) {
    log.info({ channelId, userId: user_id }, `${event}.bad_arguments`);
    const error = args.error.replace(/\/visitors/g, `/${event}`);
    await ack({ response_type: 'ephemeral', text: error });
    return;
  }
  await ack();
  const tell = (reply: string) =>
    respond({ response_type: 'ephemeral', replace_original: false, text: reply });
  const slow = setTimeout(() => {
    tell(o.slowNote).catch((err: unknown) => log.warn({ err }, `${event}.note_failed`));
  }, SLOW_MS);
  try {
    const bound = await o.projects.binding(team_id, channelId);
    await o.post({ range: args.range, projectId: bound?.projectId, channelId });
    log.info({ channelId, from: args.range.from, to: args.range.to }, `${event}.posted`);
  } catch (err) {
    if (err instanceof ChatError) {
      log.warn({ err, channelId }, `${event}.post_failed`);
      const kind = conversationKind(channelId, kindFromChannelName(channel_name));
      await tell(
        NOT_IN_CHANNEL_CODES.has(err.code)
          ? notInChannelText('post the report', kind, o.botName?.())
          : `I couldn't post the report here (${err.code}). Please try again.`,
      );
    } else {
      log.warn({ err, channelId }, `${event}.failed`);
      await tell(describeReportFailure(err));
    }
  } finally {
    clearTimeout(slow);
  }
}
