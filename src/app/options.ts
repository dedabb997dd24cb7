import type { DestinationStream } from 'pino';
import type { RetryOptions } from '../api/client.ts';
import type { BucketLimit } from '../jobs/rate-limits.ts';
import type { Logger } from '../log.ts';
import type { OpenOptions } from '../store/open.ts';
import type { Store } from '../store/types.ts';
import type { LaneSize, WorkLanes } from '../work-queue.ts';
import type { DigestOptions } from './digests.ts';

export interface BotOptions {
  logDestination?: DestinationStream;
  /** Tests shorten these; production uses the defaults. */
  apiRetry?: Partial<RetryOptions>;
  apiTimeoutMs?: number;
  channelGapMs?: number;
  updateLimit?: BucketLimit;
  followUpGraceMs?: number;
  troubleAfterMs?: number;
  pendingRootMs?: number;
  /** How often the retention sweep runs (src/app/forgets.ts). */
  forgetSweepMs?: number;
  digest?: DigestOptions;
  /** The starts lane after acks (tests fill it to see the busy answer). */
  work?: LaneSize;
  /** The other lanes' sizes (tests). */
  lanes?: Partial<Record<keyof WorkLanes, LaneSize>>;
  /** This process's clock, under the database's (tests run a replica whose clock is off). */
  localClock?: () => number;
  /** Tests keep a handle on the store this way (to take the database away from a running bot). */
  openStore?: (databaseUrl: string, log: Logger, opts: OpenOptions) => Promise<Store>;
}

export interface Bot {
  log: Logger;
  /**
   * Stops taking commands and events, waits for those in flight (three quarters of
   * SHUTDOWN_TIMEOUT_MS at most), cuts short what still waits on the API, stops the loops,
   * closes the HTTP server and the database. The whole stop ends within SHUTDOWN_TIMEOUT_MS:
   * past it, it rejects (ShutdownDeadlineError) and logs `bot.shutdown_deadline` with what
   * it left undone.
   */
  stop(): Promise<void>;
}
