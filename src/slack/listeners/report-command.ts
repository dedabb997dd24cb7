import { ChatError, NOT_IN_CHANNEL_CODES } from '../../chat-errors.ts';
import { conversationKind, kindFromChannelName, notInChannelText } from '../../invite-hint.ts';
import type { Logger } from '../../log.ts';
import { describeReportFailure } from '../../reports/failures.ts';

/** Past this, the requester gets a short "working on it" note. */
const SLOW_MS = 2_500;

/**
 * What `/visitors` and `/insights` do after their ack: build and post a report (`run`), with
 * a "working on it" note to the requester when it takes a while, and a plain answer, only to
 * them, when it fails: the invite hint where the bot is not in the channel, Slack's refusal,
 * or what the API said. `event` names the log lines (`visitors.failed`, …).
 */
export async function runReportCommand(o: {
  event: 'visitors' | 'insights';
  /** "Working on your traffic report…" */
  slowNote: string;
  channel: { id: string; name: string | undefined };
  tell: (text: string) => Promise<unknown>;
  log: Logger;
  botName?: (() => string | undefined) | undefined;
  run: () => Promise<void>;
}): Promise<void> {
  const { event, log, tell } = o;
  const channelId = o.channel.id;
  const slow = setTimeout(() => {
    tell(o.slowNote).catch((err: unknown) => log.warn({ err }, `${event}.note_failed`));
  }, SLOW_MS);
  try {
    await o.run();
  } catch (err) {
    if (err instanceof ChatError) {
      log.warn({ err, channelId }, `${event}.post_failed`);
      const kind = conversationKind(channelId, kindFromChannelName(o.channel.name));
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
