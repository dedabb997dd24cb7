import type { SlackCommandMiddlewareArgs } from '@slack/bolt';
import { ChatError, NOT_IN_CHANNEL_CODES } from '../../chat-errors.ts';
import {
  type BotRef,
  conversationKind,
  kindFromChannelName,
  notInChannelText,
} from '../../invite-hint.ts';
import type { Logger } from '../../log.ts';
import type { Projects } from '../../projects.ts';
import { describeReportFailure } from '../../reports/failures.ts';
import { type DateRange, parseVisitorsArgs } from '../../reports/range.ts';
import type { WorkspaceRef } from '../../store/types.ts';
import type { WorkQueue } from '../../work-queue.ts';
import { readCommand } from './command-payload.ts';

/** Past this, the requester gets a short "working on it" note. */
const SLOW_MS = 2_500;

/** What a user is told when the reports lane has more waiting than it takes. */
export const REPORTS_BUSY_TEXT =
  "I'm building a lot of reports right now and couldn't take this one. Please try again in a minute.";

export interface ReportCommandOptions {
  event: 'visitors' | 'insights';
  /** "Working on your traffic report…" */
  slowNote: string;
  timeZone: string;
  log: Logger;
  /** The reports lane: building is CPU-bound, so it runs from there, off the ack's turn. */
  work: WorkQueue;
  projects: Pick<Projects, 'binding'>;
  /** Who the bot is in the workspace, for the "invite me" hint. */
  bot?: ((ws: WorkspaceRef) => Promise<BotRef | undefined>) | undefined;
  /** Posts in the channel of workspace `ws`, with that workspace's client. */
  post: (r: {
    range: DateRange;
    projectId: string | undefined;
    channelId: string;
    ws: WorkspaceRef;
  }) => Promise<void>;
}

/**
 * `/visitors` and `/insights`: a range (`7d | 30d | Nd | FROM TO`); bad arguments are answered
 * in the ack with the accepted forms and nothing is fetched. Otherwise ack at once, then `post`
 * the report for the channel's project from the reports lane (busy: said in the ack), with a
 * "working on it" note to the requester when it takes a while, and a plain answer, only to
 * them, when it fails: the invite hint where the bot is not in the channel, Slack's refusal,
 * or what the API said. `event` names the log lines (`visitors.failed`, …).
 */
export async function handleReportCommand(
  { command, ack, respond }: Pick<SlackCommandMiddlewareArgs, 'command' | 'ack' | 'respond'>,
  o: ReportCommandOptions,
): Promise<void> {
  const { event, log } = o;
  const payload = await readCommand(command, ack, log);
  if (!payload) return;
  const { text, team_id, channel_id: channelId, user_id, channel_name } = payload;
  const ws = { teamId: team_id, enterpriseId: payload.enterprise_id };
  const args = parseVisitorsArgs(text, new Date(), o.timeZone);
  if (!args.ok) {
    log.info({ channelId, userId: user_id }, `${event}.bad_arguments`);
    const error = args.error.replace(/\/visitors/g, `/${event}`);
    await ack({ response_type: 'ephemeral', text: error });
    return;
  }
  if (!o.work.hasRoom()) {
    await ack({ response_type: 'ephemeral', text: REPORTS_BUSY_TEXT });
    log.warn({ channelId, userId: user_id }, `${event}.busy`);
    return;
  }
  await ack();
  const tell = (reply: string) =>
    respond({ response_type: 'ephemeral', replace_original: false, text: reply });
  const slow = setTimeout(() => {
    tell(o.slowNote).catch((err: unknown) => log.warn({ err }, `${event}.note_failed`));
  }, SLOW_MS);
  const where = { ws, channelId, channelName: channel_name };
  o.work.offer(event, () => build(where, args.range, o, tell).finally(() => clearTimeout(slow)));
}

/** Builds and posts the report; a failure is told to the requester alone. */
async function build(
  where: { ws: WorkspaceRef; channelId: string; channelName: string | undefined },
  range: DateRange,
  o: ReportCommandOptions,
  tell: (reply: string) => Promise<unknown>,
): Promise<void> {
  const { event, log } = o;
  const { channelId } = where;
  try {
    const bound = await o.projects.binding(where.ws.teamId, channelId);
    await o.post({ range, projectId: bound?.projectId, channelId, ws: where.ws });
    log.info({ channelId, from: range.from, to: range.to }, `${event}.posted`);
  } catch (err) {
    if (err instanceof ChatError) {
      log.warn({ err, channelId }, `${event}.post_failed`);
      const kind = conversationKind(channelId, kindFromChannelName(where.channelName));
      await tell(
        NOT_IN_CHANNEL_CODES.has(err.code)
          ? notInChannelText(
              'post the report',
              kind,
              await o.bot?.(where.ws).catch(() => undefined),
            )
          : `I couldn't post the report here (${err.code}). Please try again.`,
      );
    } else {
      log.warn({ err, channelId }, `${event}.failed`);
      await tell(describeReportFailure(err));
    }
  }
}
