import { ChatError, NOT_IN_CHANNEL_CODES } from '../chat-errors.ts';
import {
  type BotRef,
  type ConversationKind,
  conversationKind,
  notInChannelText,
} from '../invite-hint.ts';
import type { Logger } from '../log.ts';
import {
  type CommandRef,
  CommandTakenOver,
  type JobOrigin,
  type JobThread,
  type Store,
  type WorkspaceRef,
} from '../store/types.ts';

export interface StartRequest extends WorkspaceRef {
  teamId: string;
  /**
   * The team's Enterprise Grid org (undefined: none): a job's later posts find the install
   * by it. Named by every start, so that none forgets it.
   */
  enterpriseId: string | undefined;
  channelId: string;
  userId: string;
  prompt: string;
  /**
   * An existing thread to start the job in (a mention): the root is posted as a reply there
   * and the job thread is keyed by this ts, so the thread's replies become follow-ups.
   * Without it the root is a new top-level message whose own ts is the thread (`/agent`, DMs).
   */
  threadTs?: string;
  /** Earlier messages of that thread, sent to the agent with the prompt; the root says how many. */
  context?: { text: string; messages: number };
  /** Where the request came from, when the channel id alone cannot tell (a group DM). */
  conversation?: ConversationKind;
  /** The message it was asked from (an insight's Draft it): the root links back to it. */
  origin?: JobOrigin;
  /** The insight gap it is drafted from: the thread is recorded as that gap's job. */
  gapId?: number;
  /**
   * The acked `/agent` this start is for (src/jobs/pending-commands.ts): its record goes
   * with the thread's, or when the start ends without a thread (`commandEnded`).
   */
  command?: CommandRef;
}

/** What a root message stands for before its ts is known: a placeholder and a marker. */
export const PENDING_TS_PREFIX = 'pending:';

/** Told at once to someone whose root waits for its channel's turn. */
export function queuedText(waitMs: number): string {
  const s = Math.round(waitMs / 1000);
  // "In about 1 s" reads oddly for a wait just past the note's threshold.
  const when = s <= 2 ? 'in a few seconds' : `in about ${s} s`;
  return `Slack takes about one message a second in a channel, and others are ahead of yours here: your job's message will appear ${when}.`;
}

/**
 * A start's steps around its root message (src/jobs/service.ts): recording the thread, and
 * answering a root that could not be posted.
 */
export function rootSteps(deps: {
  store: Store;
  log: Logger;
  now: () => number;
  /** Who the bot is in a workspace, for the "invite me" hint. */
  bot?: ((ws: WorkspaceRef) => Promise<BotRef | undefined>) | undefined;
}) {
  const { store, log, now } = deps;
  /** The thread, recorded under a placeholder ts; undefined (the requester told) if not. */
  async function recordThread(
    req: StartRequest,
    projectId: string,
    marker: string,
    reply: (text: string) => Promise<void>,
  ): Promise<JobThread | undefined> {
    const pending = `${PENDING_TS_PREFIX}${marker}`;
    const { teamId, channelId, userId, prompt, threadTs: inThread } = req;
    const thread = await store
      .createThread(
        {
          teamId,
          enterpriseId: req.enterpriseId,
          channelId,
          userId,
          prompt,
          projectId,
          // In an existing thread the key is known now; the root's ts is what is pending.
          ...(inThread ? { threadTs: inThread, rootTs: pending } : { threadTs: pending }),
          ...(req.context ? { contextMessages: req.context.messages } : {}),
          ...(req.origin ? { origin: req.origin } : {}),
          ...(req.gapId === undefined ? {} : { gapId: req.gapId }),
          ...(req.command ? { command: req.command } : {}),
        },
        now(),
      )
      .catch((err: unknown) => {
        // Another process holds the command now, and starts it: nothing to say here.
        if (err instanceof CommandTakenOver) return null;
        log.error({ err, channelId }, 'job.record_failed');
        return undefined;
      });
    if (thread) return thread;
    if (thread === null) {
      log.warn({ channelId, userId: req.userId }, 'command.taken_over');
      return undefined;
    }
    // One thread, one job: another mention in the same thread may have just started one.
    const taken =
      inThread && (await store.findThread(teamId, channelId, inThread).catch(() => undefined));
    await reply(
      taken
        ? "A job is already starting in this thread, so I didn't start another. Once it has started, reply in the thread to send it more instructions."
        : "I couldn't record the job (a storage error), so I didn't start it. Please try again.",
    );
    return undefined;
  }

  /** The root post failed: says so to the requester, and forgets a start Slack refused. */
  async function rootNotPosted(
    req: StartRequest,
    thread: JobThread | undefined,
    err: unknown,
    reply: (text: string) => Promise<void>,
  ): Promise<void> {
    const code = err instanceof ChatError ? err.code : 'unknown';
    log.warn({ err, channelId: req.channelId, code }, 'job.root_post_failed');
    if (!thread) {
      // Its turn never came (a shutdown): nothing was recorded or posted.
      await reply("I'm restarting and couldn't start this job. Please run `/agent` again.");
      return;
    }
    if (!(err instanceof ChatError && err.answered)) {
      // The root may have been posted all the same: the recovery pass looks for it by
      // its marker and, if it is there, marks it as not started.
      await reply(
        `Slack did not confirm my message (${code}), so I didn't start a job. If a "Starting" message shows up here, I'll mark it as not started shortly; run \`/agent\` again.`,
      );
      return;
    }
    await store.forgetStart(thread.id);
    await reply(
      NOT_IN_CHANNEL_CODES.has(code)
        ? notInChannelText(
            'start a job',
            conversationKind(req.channelId, req.conversation),
            await deps.bot?.(req).catch(() => undefined),
          )
        : `I couldn't post in this channel (${code}), so I didn't start a job. Please try again.`,
    );
  }

  /** A start that ends without recording a thread lets its command's record go (a no-op once its thread took it). */
  async function commandEnded(req: StartRequest): Promise<void> {
    if (!req.command) return;
    await store
      .releasePendingCommand(req.command.responseUrl, req.command.owner)
      .catch((err: unknown) =>
        log.warn({ err, channelId: req.channelId }, 'command.release_failed'),
      );
  }

  return { recordThread, rootNotPosted, commandEnded };
}
