import { type Keyring, sealedKeyId } from '../sealed.ts';
import type { WorkspaceStore } from '../store/workspace-port.ts';
import { CHECK_TEXT, keyCheckContext } from './contexts.ts';

/** ENCRYPTION_KEYS cannot open what the database holds: the process must not start. */
export class KeyCheckError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeyCheckError';
  }
}

/**
 * The start-up check (the composition root calls it after opening the store): every key
 * that sealed a stored value is in ENCRYPTION_KEYS and opens its check value, and every
 * configured key that has a check value opens it. Throws KeyCheckError, whose one-line
 * message names key ids, never keys. Nothing stored and no keys: nothing to check.
 */
export async function verifyKeys(
  store: Pick<WorkspaceStore, 'sealedCounts' | 'keyChecks'>,
  keyring: Keyring | undefined,
): Promise<void> {
  const counts = await store.sealedCounts();
  const used = [...new Set(counts.filter((c) => c.count > 0).map((c) => c.keyId))].sort();
  if (!keyring) {
    if (used.length > 0)
      throw new KeyCheckError(
        `ENCRYPTION_KEYS is unset, but the database holds secrets sealed with ${quoted(used)}: set it to the keys that sealed them`,
      );
    return;
  }
  for (const keyId of used)
    if (!keyring.has(keyId))
      throw new KeyCheckError(`ENCRYPTION_KEYS has no key '${keyId}' that sealed stored secrets`);
  const checks = new Map((await store.keyChecks()).map((c) => [c.keyId, c.check]));
  for (const keyId of keyring.ids) {
    const check = checks.get(keyId);
    if (check !== undefined && !opensCheck(keyring, keyId, check))
      throw new KeyCheckError(
        `ENCRYPTION_KEYS key '${keyId}' does not open the stored check value (wrong key?)`,
      );
  }
  for (const keyId of used)
    if (!checks.has(keyId))
      throw new KeyCheckError(
        `the database holds secrets sealed with key '${keyId}' but no check value for it (table secret_keys): restore it from a backup`,
      );
}

/**
 * Before the sealing key seals its first value: its check value is stored (by whichever
 * replica gets there first) and must open with this key, or nothing is sealed with it.
 */
export async function ensureKeyCheck(
  store: Pick<WorkspaceStore, 'putKeyCheck'>,
  keyring: Keyring,
  now: number,
): Promise<void> {
  const keyId = keyring.sealingKeyId;
  const stored = await store.putKeyCheck(
    keyId,
    keyring.seal(CHECK_TEXT, keyCheckContext(keyId)),
    now,
  );
  if (!opensCheck(keyring, keyId, stored))
    throw new KeyCheckError(
      `ENCRYPTION_KEYS key '${keyId}' does not open the stored check value (wrong key?)`,
    );
}

function opensCheck(keyring: Keyring, keyId: string, check: string): boolean {
  try {
    // A check value relabelled with another key id is no check of this one.
    return (
      sealedKeyId(check) === keyId && keyring.open(check, keyCheckContext(keyId)) === CHECK_TEXT
    );
  } catch {
    return false;
  }
}

const quoted = (ids: string[]) =>
  ids.length === 1 ? `key '${ids[0]}'` : `keys ${ids.map((id) => `'${id}'`).join(', ')}`;

/**
 * The doctor's line on the keys: verifyKeys, then which key seals and how many stored
 * secrets each key sealed (ids and counts, never a key). Throws what verifyKeys throws.
 */
export async function describeKeys(
  store: Pick<WorkspaceStore, 'sealedCounts' | 'keyChecks'>,
  keyring: Keyring | undefined,
): Promise<string> {
  await verifyKeys(store, keyring);
  if (!keyring) return 'ENCRYPTION_KEYS is unset and nothing sealed is stored';
  const byKey = new Map<string, number>();
  for (const c of await store.sealedCounts())
    byKey.set(c.keyId, (byKey.get(c.keyId) ?? 0) + c.count);
  const total = [...byKey.values()].reduce((a, b) => a + b, 0);
  const held = [...byKey].map(([id, n]) => `${n} with '${id}'`).join(', ');
  return `key '${keyring.sealingKeyId}' seals; ${total} stored secret${total === 1 ? '' : 's'} open${total > 0 ? ` (${held})` : ''}`;
}
