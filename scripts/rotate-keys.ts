/**
 * `npm run rotate-keys`: re-seals every stored secret (installations, docs keys) with the
 * first key of ENCRYPTION_KEYS, in batches of one transaction each; safe to interrupt and to
 * run again. Reads DATABASE_URL, DATABASE_TIMEOUT_MS and ENCRYPTION_KEYS only (and .env,
 * like `npm start`). Prints how many values each key sealed before and after; a key that
 * seals nothing afterwards may be removed from ENCRYPTION_KEYS (docs/operating.md).
 */
import { loadStorageConfig } from '../src/config/storage.ts';
import { createLogger, makeScrubber, urlSecrets } from '../src/log.ts';
import { openStore } from '../src/store/open.ts';
import type { SealedCount } from '../src/store/types.ts';
import { rotateKeys } from '../src/workspaces/rotate.ts';

const loaded = loadStorageConfig(process.env);
if (!loaded.ok) {
  for (const problem of loaded.problems) console.log(`✗ Configuration: ${problem}`);
  process.exit(1);
}
const { databaseUrl, databaseTimeoutMs, encryptionKeys: keyring } = loaded.config;
if (!keyring) {
  console.log('✗ Configuration: ENCRYPTION_KEYS is required: the new key first, then the old ones');
  process.exit(1);
}
const secrets = [...urlSecrets(databaseUrl), ...keyring.redactions()];
const scrub = makeScrubber(secrets);
const log = createLogger({ level: 'silent', secrets });

const byKey = (counts: SealedCount[]) =>
  counts.length === 0
    ? 'nothing sealed'
    : counts.map((c) => `${c.kind} '${c.keyId}': ${c.count}`).join(', ');

let code = 0;
const store = await openStore(databaseUrl, log, { timeoutMs: databaseTimeoutMs }).catch(
  (err: unknown) => {
    console.log(`✗ Database: ${scrub(err instanceof Error ? err.message : String(err))}`);
    process.exit(1);
  },
);
try {
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
} catch (err) {
  console.log(`✗ ${scrub(err instanceof Error ? err.message : String(err))}`);
  code = 1;
} finally {
  await store.close();
}
process.exit(code);
