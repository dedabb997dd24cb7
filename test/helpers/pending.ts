import type { Lease, NewPendingCommand, Store } from '../../src/store/types.ts';

/** Records one pending command (the store takes them in batches); its id. */
export async function recordOne(
  store: Store,
  c: NewPendingCommand,
  lease: Lease,
  now: number,
): Promise<number> {
  const [id] = await store.recordPendingCommands([c], lease, now);
  return id!;
}
