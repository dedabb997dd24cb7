import type { Logger } from '../log.ts';
import type { CommandRef, NewPendingCommand, PendingCommand, Store } from '../store/types.ts';
import type { StartRequest } from './service.ts';

/** How long Slack accepts posts to a command's response_url. */
export const RESPONSE_URL_MS = 30 * 60_000;
const BATCH = 20;
/** Commands recorded in one statement at most (9 values each, well under SQLite's limit). */
const MAX_BATCH = 500;

export const RESUMED_TEXT =
  'I was restarted before I could start your `/agent` request, so I am starting it now.';

/**
 * Acked `/agent` commands on their way to a start, kept in the store while they wait in the
 * starts lane and while their start waits for its channel's turn, so that a crash (even
 * `kill -9`) between the ack and the start loses none: the recovery pass of the next process
 * (or another replica) starts them instead. The record goes in the transaction that records
 * the job's thread (`NewThread.command`), or when the start ends without one.
 */
export interface PendingCommands {
  /**
   * Records a command after the current turn (never delaying the ack it follows);
   * resolves with its id, or undefined when it could not be recorded (logged).
   */
  record(c: NewPendingCommand): Promise<number | undefined>;
  /**
   * The queued start begins: what the start hands its thread, or false when it must not run
   * because this process is stopping (the record stays for a restart). A recorded command is
   * held (renewed) until the thread takes it or the start ends. `id` is undefined when the
   * record failed: it may still have been written (a timed-out insert that committed), so
   * the thread takes it by its response_url all the same.
   */
  begin(id: number | undefined, responseUrl: string): CommandRef | false;
  /** Commands recorded here and not started or ended yet. */
  readonly waiting: number;
  /** Takes nothing more and gives the waiting commands back at once. */
  stop(): Promise<void>;
}

export function createPendingCommands(deps: {
  store: Store;
  owner: string;
  leaseMs: number;
  log: Logger;
  now?: () => number;
}): PendingCommands {
  const { store, owner, leaseMs } = deps;
  const log = deps.log.child({ component: 'pending-commands' });
  const now = deps.now ?? Date.now;
  const waiting = new Set<number>();
  let stopped = false;

  // The lease is renewed well before it runs out, in one statement, while any command waits
  // or starts; those whose records are gone (their thread took them, their start ended) are
  // dropped here.
  const renew = setInterval(
    () => {
      if (waiting.size === 0) return;
      const ids = [...waiting];
      store.renewPendingCommands(ids, owner, now() + leaseMs).then(
        (held) => {
          const still = new Set(held);
          for (const id of ids) if (!still.has(id)) waiting.delete(id);
        },
        (err: unknown) => log.warn({ err, waiting: waiting.size }, 'command.renew_failed'),
      );
    },
    Math.max(1, Math.floor(leaseMs / 3)),
  );
  renew.unref();

  // The commands acked in one turn of the event loop are recorded together, in one statement
  // (a burst of acks then costs one write, not one each).
  let batch: { c: NewPendingCommand; resolve: (id: number | undefined) => void }[] = [];
  function flush(): void {
    const taken = batch.slice(0, MAX_BATCH);
    batch = batch.slice(MAX_BATCH);
    if (batch.length > 0) setImmediate(flush);
    store
      .recordPendingCommands(
        taken.map((t) => t.c),
        { owner, until: now() + leaseMs },
        now(),
      )
      .then(
        (ids) =>
          taken.forEach((t, i) => {
            const id = ids[i]!;
            waiting.add(id);
            log.debug({ commandId: id, channelId: t.c.channelId }, 'command.recorded');
            t.resolve(id);
          }),
        (err: unknown) =>
          taken.forEach((t) => {
            log.error({ err, channelId: t.c.channelId }, 'command.record_failed');
            t.resolve(undefined);
          }),
      );
  }

  return {
    record(c) {
      return new Promise((resolve) => {
        batch.push({ c, resolve });
        if (batch.length === 1) setImmediate(flush);
      });
    },
    begin(id, responseUrl) {
      if (stopped && id !== undefined) {
        log.info({ commandId: id }, 'command.left_pending');
        return false;
      }
      // Whether another process started it is known when its thread is recorded.
      return { responseUrl, owner };
    },
    get waiting() {
      return waiting.size;
    },
    async stop() {
      stopped = true;
      clearInterval(renew);
      if (waiting.size === 0) return;
      log.info({ waiting: waiting.size }, 'command.given_back');
      await store
        .renewPendingCommands([...waiting], owner, 0)
        .catch((err: unknown) => log.warn({ err }, 'command.give_back_failed'));
    },
  };
}

export interface ResumeDeps {
  store: Store;
  owner: string;
  leaseMs: number;
  /** The job service's start, as a fresh `/agent` takes it (budget first, and so on). */
  startJob: (req: StartRequest, reply: (text: string) => Promise<void>) => Promise<void>;
  /** Answers the person through the command's response_url. */
  answer: (responseUrl: string, text: string) => Promise<void>;
  now?: () => number;
}

/**
 * Commands whose process is gone (their lease ran out): each is claimed by one process and
 * started while its response_url is still valid, the person told so first; past that it is
 * only logged (nobody can be answered any more). Returns how many were started.
 */
export async function resumePendingCommands(deps: ResumeDeps, log: Logger): Promise<number> {
  const { store, owner } = deps;
  const now = deps.now ?? Date.now;
  let started = 0;
  const claimed = await store.claimPendingCommands(now(), BATCH, {
    owner,
    until: now() + deps.leaseMs,
  });
  for (const c of claimed) {
    const ageMs = now() - c.receivedAt;
    const ids = { commandId: c.id, channelId: c.channelId, userId: c.userId, ageMs };
    // Started already: a record whose insert timed out but committed after its start began.
    if (await store.commandStarted(c.responseUrl)) {
      await store.takePendingCommand(c.id, owner);
      log.info(ids, 'command.already_started');
      continue;
    }
    if (ageMs >= RESPONSE_URL_MS) {
      if (await store.takePendingCommand(c.id, owner)) log.warn(ids, 'command.expired');
      continue;
    }
    log.info(ids, 'command.resumed');
    const reply = (text: string) => deps.answer(c.responseUrl, text);
    await reply(RESUMED_TEXT);
    // The record goes with the thread its start records (or when the start ends without one).
    await deps
      .startJob({ ...toRequest(c), command: { responseUrl: c.responseUrl, owner } }, reply)
      .catch((err: unknown) => log.error({ err, ...ids }, 'command.resume_failed'));
    started++;
  }
  return started;
}

function toRequest(c: PendingCommand): StartRequest {
  return {
    teamId: c.teamId,
    enterpriseId: c.enterpriseId ?? undefined,
    channelId: c.channelId,
    userId: c.userId,
    prompt: c.text,
    ...(c.conversation ? { conversation: c.conversation } : {}),
  };
}
