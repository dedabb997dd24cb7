import { Cron } from 'croner';
import type { Logger } from '../log.ts';
import { SINGLE_WORKSPACE, scopedKey } from '../store/scope.ts';
import type { Store, WorkspaceRef } from '../store/types.ts';
import type { DigestPart } from './digest-parts.ts';
import { DigestGiveUp, storeDigestRetries } from './digest-retry.ts';
import { describeReportFailure } from './failures.ts';
import { type DateRange, digestPeriod, formatRange } from './range.ts';

/** A run down for longer than this missed its digest for good (the rule). */
export const CATCH_UP_MS = 24 * 3_600_000;
/** A claim this old and never marked posted belongs to an instance that died mid-post. */
export const STALE_CLAIM_MS = 15 * 60_000;
/**
 * A run that failed (API down, budget spent) is tried again this much later, and never
 * before its own claim is stale (so that it can retake it): the base of the backoff, which
 * doubles with each failure of the period (digest-retry.ts).
 */
export const RETRY_MS = 5 * 60_000;

export interface DigestDeps {
  store: Pick<
    Store,
    | 'claimDigest'
    | 'heartbeatDigest'
    | 'markDigestPosted'
    | 'claimEvent'
    | 'takeBudgetSlot'
    | 'budgetUsed'
    | 'oldestBudgetUse'
  >;
  /** Says in the channel what a run that gave up could not post (once, on one replica). */
  /** Posts a plain notice: in the thread `threadTs` (the traffic report's) when given. */
  notice: (channelId: string, text: string, threadTs?: string) => Promise<void>;
  /** What the digest posts, in order. */
  parts: readonly DigestPart[];
  log: Logger;
  /**
   * The workspace whose digest this is (its state scope, src/store/scope.ts): its claims and
   * retries are its own. The single workspace's by default.
   */
  ws?: WorkspaceRef;
  channelId: string;
  cron: string;
  timeZone: string;
  /** Names this instance in claims. */
  owner: string;
  now?: () => number;
  /** Tests shorten these. */
  staleClaimMs?: number;
  retryMs?: number;
  catchUpMs?: number;
}

export interface Digest {
  /** Posts the digest due at `scheduledAt`, exactly once per (workspace, channel, period). */
  runFor(scheduledAt: Date): Promise<'posted' | 'skipped' | 'failed'>;
  stop(): void;
}

/**
 * The weekly digest: croner fires DIGEST_CRON in DIGEST_TIMEZONE; each run reports the
 * previous complete week. A durable claim on (channel, period) is taken before posting and
 * marked done after, so restarts and replicas never post twice. At start, a run missed in
 * the last 24 h is caught up once; an older one is logged as skipped.
 */
export function startDigest(deps: DigestDeps): Digest {
  // No configuration value (channel, cron, zone) in its lines: they are named, not echoed.
  const ws = deps.ws ?? SINGLE_WORKSPACE;
  // A workspace's team names its lines in distributed mode (an id, not configuration).
  const log = deps.log.child({ component: 'digest', ...(ws.teamId ? { teamId: ws.teamId } : {}) });
  const now = deps.now ?? Date.now;
  const staleMs = deps.staleClaimMs ?? STALE_CLAIM_MS;
  const retryMs = deps.retryMs ?? RETRY_MS;
  const catchUpMs = deps.catchUpMs ?? CATCH_UP_MS;
  /** The channel as the workspace's buckets and events name it (the single one's: as it was). */
  const channelKey = scopedKey(ws, deps.channelId);
  const retries = storeDigestRetries(deps.store, {
    channelId: channelKey,
    baseMs: Math.max(retryMs, staleMs + 1_000),
    windowMs: 2 * catchUpMs,
  });
  /** Why each scheduled run last failed, for the notice if it is given up. */
  const lastError = new Map<number, unknown>();
  /** At most one pending retry per scheduled run. */
  const timers = new Map<number, NodeJS.Timeout>();
  let stopped = false;

  /** Tries again later, as long as the run is still within its catch-up window. */
  function later(scheduledAt: Date, delayMs: number, why: string): void {
    if (stopped || timers.has(scheduledAt.getTime())) return;
    if (now() + delayMs - scheduledAt.getTime() > catchUpMs) {
      log.error({ scheduledAt: scheduledAt.toISOString(), why }, 'digest.given_up');
      void giveUp(scheduledAt);
      return;
    }
    const timer = setTimeout(() => {
      timers.delete(scheduledAt.getTime());
      void runFor(scheduledAt);
    }, delayMs);
    timers.set(scheduledAt.getTime(), timer);
    log.info(
      { scheduledAt: scheduledAt.toISOString(), why, retryInMs: delayMs },
      'digest.retry_scheduled',
    );
  }

  /**
   * Runs `work` while beating on the claim, so that a slow build (the API struggling) is
   * not mistaken for a dead one and taken over by another replica.
   */
  async function alive<T>(periodKey: string, work: () => Promise<T>): Promise<T> {
    const beat = setInterval(
      () => {
        deps.store
          .heartbeatDigest(ws, deps.channelId, periodKey, deps.owner, now())
          .catch((err: unknown) => log.warn({ err, period: periodKey }, 'digest.heartbeat_failed'));
      },
      Math.max(50, Math.floor(staleMs / 3)),
    );
    try {
      return await work();
    } finally {
      clearInterval(beat);
    }
  }

  /**
   * The parts a run that died left unposted, and the thread the first one opened; logs the
   * ones already in the channel.
   */
  async function missingParts(
    key: string,
  ): Promise<{ missing: DigestPart[]; threadTs: string | undefined }> {
    const since = now() - 8 * 86_400_000;
    const missing: DigestPart[] = [];
    let threadTs: string | undefined;
    for (const part of deps.parts) {
      const found = await part.inChannel(deps.channelId, key, since, threadTs);
      if (found) {
        threadTs ??= found.ts;
        log.info({ period: key, part: part.name }, 'digest.part_in_channel');
      } else missing.push(part);
    }
    return { missing, threadTs };
  }

  /**
   * Says which parts of a run given up are missing, and why, so that a week without a digest
   * is never silent: in the traffic report's thread when it is posted (where the missing part
   * would be), in the channel otherwise. Claimed durably: one notice, whichever replica gives up.
   */
  async function giveUp(scheduledAt: Date): Promise<void> {
    const { key, range } = digestPeriod(scheduledAt, deps.timeZone);
    try {
      const once = `digest_given_up:${channelKey}:${key}`;
      if (!(await deps.store.claimEvent([once], now()))) return;
      const { missing, threadTs } = await missingParts(key);
      if (missing.length === 0) return;
      const what = missing.map((p) => p.label).join(' and ');
      const err = lastError.get(scheduledAt.getTime());
      const early = err instanceof DigestGiveUp;
      const why =
        err === undefined
          ? 'Another instance held the run and did not finish it.'
          : early
            ? err.message
            : describeReportFailure(err);
      await deps.notice(
        deps.channelId,
        `The weekly digest for ${formatRange(range)} is incomplete: I could not post ${what}${early ? '' : ' in 24 hours of tries'}. ${why} \`/visitors\` and \`/insights\` with that week's dates build them by hand.`,
        threadTs,
      );
      log.info({ period: key, missing: missing.map((p) => p.name) }, 'digest.gave_up_notice');
    } catch (err) {
      log.error({ err, period: key }, 'digest.notice_failed');
    }
  }

  async function runFor(scheduledAt: Date): Promise<'posted' | 'skipped' | 'failed'> {
    let key = '?';
    try {
      const period = digestPeriod(scheduledAt, deps.timeZone);
      key = period.key;
      // After a failure, every instance waits as long as the backoff says (digest-retry.ts).
      const { failures, notBefore } = await retries.state(key, now());
      if (notBefore > now()) {
        log.info({ period: key, failures }, 'digest.backing_off');
        later(scheduledAt, notBefore - now(), 'backing off');
        return 'skipped';
      }
      const claim = await deps.store.claimDigest(
        ws,
        deps.channelId,
        key,
        deps.owner,
        now(),
        staleMs,
      );
      if (claim.state === 'posted') {
        log.info({ period: key }, 'digest.already_posted');
        return 'skipped';
      }
      if (claim.state === 'busy') {
        // Another instance is posting it, or one that died recently held it: look again
        // once the claim would be stale.
        log.info({ period: key, owner: claim.owner }, 'digest.claimed_elsewhere');
        later(scheduledAt, staleMs + 1_000, 'claimed elsewhere');
        return 'skipped';
      }
      return await postMissing(key, period.range, claim.state === 'stale', failures > 0);
    } catch (err) {
      return failedRun(scheduledAt, key, err);
    }
  }

  /** Builds and posts the parts not in the channel yet, in order, under our claim. */
  async function postMissing(
    key: string,
    range: DateRange,
    stale: boolean,
    retry: boolean,
  ): Promise<'posted' | 'skipped'> {
    // A stale claim may have posted some parts before dying: look before posting again.
    const left = stale ? await missingParts(key) : { missing: deps.parts, threadTs: undefined };
    const parts = left.missing;
    let threadTs = left.threadTs;
    if (parts.length === 0) {
      await deps.store.markDigestPosted(ws, deps.channelId, key, deps.owner, now());
      log.info({ period: key }, 'digest.already_in_channel');
      return 'skipped';
    }
    const started = performance.now();
    for (const part of parts) {
      const post = await alive(key, () => part.build(range, key, { retry }));
      // Whoever holds the claim now posts: if it was taken over while we built, not us.
      if (!(await deps.store.heartbeatDigest(ws, deps.channelId, key, deps.owner, now()))) {
        log.warn({ period: key, part: part.name }, 'digest.claim_lost');
        return 'skipped';
      }
      const ts = await post(deps.channelId, threadTs);
      threadTs ??= ts; // the first part's message holds the others in its thread
      log.info({ period: key, part: part.name }, 'digest.part_posted');
    }
    await deps.store.markDigestPosted(ws, deps.channelId, key, deps.owner, now());
    log.info({ period: key, durationMs: Math.round(performance.now() - started) }, 'digest.posted');
    return 'posted';
  }

  /**
   * A run that failed: tried again when the backoff says (recorded in the database first),
   * or, when a part gave up for the day (DigestGiveUp), not again: the notice says why.
   */
  async function failedRun(scheduledAt: Date, key: string, err: unknown): Promise<'failed'> {
    lastError.set(scheduledAt.getTime(), err);
    if (err instanceof DigestGiveUp) {
      log.error({ period: key, why: err.message }, 'digest.given_up');
      void giveUp(scheduledAt);
      return 'failed';
    }
    log.error({ err, period: key }, 'digest.failed');
    // Our claim goes stale by the time we try again, which lets us (or a replica) retake it.
    let wait = Math.max(retryMs, staleMs + 1_000);
    try {
      await retries.failed(key, now());
      wait = Math.max(wait, (await retries.state(key, now())).notBefore - now());
    } catch (e) {
      log.warn({ err: e, period: key }, 'digest.backoff_unrecorded');
    }
    later(scheduledAt, wait, 'failed');
    return 'failed';
  }

  const job = new Cron(deps.cron, { timezone: deps.timeZone, protect: true }, (self: Cron) => {
    void runFor(self.currentRun() ?? new Date(now()));
  });

  const missed = new Cron(deps.cron, { timezone: deps.timeZone, paused: true }).previousRuns(
    1,
    new Date(now()),
  )[0];
  if (missed && now() - missed.getTime() <= catchUpMs) {
    log.info({ scheduledAt: missed.toISOString() }, 'digest.catch_up');
    void runFor(missed);
  } else if (missed) {
    log.info({ scheduledAt: missed.toISOString() }, 'digest.catch_up_skipped');
  }
  log.info({ next: job.nextRun()?.toISOString() }, 'digest.scheduled');

  return {
    runFor,
    stop() {
      stopped = true;
      job.stop();
      for (const t of timers.values()) clearTimeout(t);
      timers.clear();
    },
  };
}
