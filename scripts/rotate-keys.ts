/**
 * `npm run rotate-keys`: re-seals every stored secret (installations, docs keys) with the
 * first key of ENCRYPTION_KEYS, in batches of one transaction each; safe to interrupt and to
 * run again. Reads DATABASE_URL, DATABASE_TIMEOUT_MS and ENCRYPTION_KEYS only (and .env,
 * like `npm start`). Prints how many values each key sealed before and after; a key that
 * seals nothing afterwards may be removed from ENCRYPTION_KEYS (docs/operating.md).
 */
import type { SealedCount } from '../src/store/types.ts';
import { rotateKeys } from '../src/workspaces/rotate.ts';
import { requiredKeys, runOnStore, storageConfig } from './store-tool.ts';

const config = storageConfig();
const keyring = requiredKeys(config, 'the new key first, then the old ones');

const byKey = (counts: SealedCount[]) =>
  counts.length === 0
    ? 'nothing sealed'
    : counts.map((c) => `${c.kind} '${c.keyId}': ${c.count}`).join(', ');

await runOnStore(config, 'silent', async (store) => {
  console.log(`Re-sealing every stored secret with key '${keyring.sealingKeyId}'`);
  const report = await rotateKeys(store, keyring, {
    onBatch: (kind, n) => console.log(`  ${kind}: ${n} re-sealed`),
  });
  console.log(`before: ${byKey(report.before)}`);
  console.log(`after:  ${byKey(report.after)}`);
  console.log(`${report.resealed} value(s) re-sealed.`);
  const idle = keyring.ids.filter((id) => !report.after.some((c) => c.keyId === id));
  const old = idle.filter((id) => id !== report.sealingKeyId);
  if (old.length > 0)
    console.log(
      `No stored value needs ${old.map((id) => `'${id}'`).join(', ')} any more: it may be removed from ENCRYPTION_KEYS.`,
    );
  return 0;
});
