import type { PollRecord, Store } from '../store/types.ts';

export interface PollWriter {
  /**
   * Queues a poll's outcome; resolves once it is in the database: true when recorded,
   * false when refused (superseded, or another replica's lease). Rejects when the batch
   * it went out in failed.
   */
  record(p: PollRecord): Promise<boolean>;
  /** Writes what is queued now rather than at the end of the wait. */
  flush(): void;
  /** Resolves once nothing is queued or being written. */
  idle(): Promise<void>;
}

interface Queued {
  record: PollRecord;
  resolve: (recorded: boolean) => void;
  reject: (err: unknown) => void;
}

/**
 * Write-behind for poll outcomes: outcomes that arrive within `maxWaitMs` of each other
 * (or `maxBatch` of them) are recorded in one transaction, one batch at a time; what
 * arrives while a batch is being written goes out in the next. Each caller still learns
 * its own outcome, and only once it is written, so nothing is announced before that.
 */
export function createPollWriter(o: {
  store: Pick<Store, 'recordPolls'>;
  maxWaitMs: number;
  maxBatch: number;
}): PollWriter {
  let queue: Queued[] = [];
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> | undefined;

  function write(): void {
    clearTimeout(timer);
    timer = undefined;
    if (writing || queue.length === 0) return;
    writing = (async () => {
      while (queue.length > 0) {
        const batch = queue.slice(0, o.maxBatch);
        queue = queue.slice(batch.length);
        try {
          const recorded = await o.store.recordPolls(batch.map((q) => q.record));
          for (const [i, q] of batch.entries()) q.resolve(recorded[i] ?? false);
        } catch (err) {
          for (const q of batch) q.reject(err);
        }
      }
    })().finally(() => {
      writing = undefined;
      if (queue.length > 0) write(); // queued in the moment between the last batch and here
    });
  }

  return {
    record(record) {
      return new Promise<boolean>((resolve, reject) => {
        queue.push({ record, resolve, reject });
        if (queue.length >= o.maxBatch) write();
        else timer ??= setTimeout(write, o.maxWaitMs);
      });
    },
    flush: write,
    async idle() {
      while (writing || queue.length > 0) {
        write();
        await writing;
      }
    },
  };
}
