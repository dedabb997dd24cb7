import type { Keyring } from '../sealed.ts';
import type { WorkspaceStore } from '../store/workspace-port.ts';
import type { SealedCount, SealedKind, SealedSecret } from '../store/workspace-records.ts';
import { docsKeyContext, installationContext } from './contexts.ts';
import { ensureKeyCheck, verifyKeys } from './key-check.ts';

/**
 * Key rotation (`npm run rotate-keys`): every sealed value not sealed by the first key of
 * ENCRYPTION_KEYS is opened and sealed again by it, in batches of one transaction each.
 * Re-running it, or running it after an interruption, takes up what is left; a second run
 * finds nothing to do. After it, the older keys may be removed from ENCRYPTION_KEYS.
 */

export interface RotationReport {
  sealingKeyId: string;
  before: SealedCount[];
  after: SealedCount[];
  /** Values re-sealed by this run. */
  resealed: number;
}

export interface RotationOptions {
  batchSize?: number;
  now?: () => number;
  /** Hears each batch as it commits (the command prints progress). */
  onBatch?: (kind: SealedKind, count: number) => void;
}

const KINDS: readonly SealedKind[] = ['installation', 'docs_key'];

export async function rotateKeys(
  store: WorkspaceStore,
  keyring: Keyring,
  opts: RotationOptions = {},
): Promise<RotationReport> {
  const batchSize = opts.batchSize ?? 100;
  // Every key that sealed a stored value must be here and be the right one, before any
  // value is touched.
  await verifyKeys(store, keyring);
  await ensureKeyCheck(store, keyring, (opts.now ?? Date.now)());
  const before = await store.sealedCounts();
  const keep = keyring.sealingKeyId;
  const reseal = (s: SealedSecret) => {
    const context = s.kind === 'installation' ? installationContext(s) : docsKeyContext(s);
    return { sealed: keyring.seal(keyring.open(s.sealed, context), context), keyId: keep };
  };
  let resealed = 0;
  for (const kind of KINDS) {
    for (;;) {
      const n = await store.resealSecrets(kind, keep, batchSize, reseal);
      if (n === 0) break;
      resealed += n;
      opts.onBatch?.(kind, n);
    }
  }
  return { sealingKeyId: keep, before, after: await store.sealedCounts(), resealed };
}
