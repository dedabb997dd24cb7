/**
 * The plumbing of an operator's tool on the database alone (`npm run rotate-keys`,
 * `npm run forget`): its command line parsed, the storage settings read by the bot's own
 * rules (DATABASE_URL, DATABASE_TIMEOUT_MS, ENCRYPTION_KEYS: src/config/storage.ts), the store
 * opened, the work run and the store closed, and the process ended with the work's exit code.
 * Every failure is a `✗` line naming no secret (the database URL's password, the keys) and
 * exit code 1.
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { loadStorageConfig, type StorageConfig } from '../src/config/storage.ts';
import { createLogger, type Logger, makeScrubber, urlSecrets } from '../src/log.ts';
import type { Keyring } from '../src/sealed.ts';
import { openStore } from '../src/store/open.ts';
import type { Store } from '../src/store/types.ts';

/** Prints `line` and ends the process with exit code 1. */
export function fail(line: string): never {
  console.log(line);
  process.exit(1);
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** The command line parsed by `config` (node:util's parseArgs); a bad one ends with `usage`. */
export function parseOrUsage<T extends ParseArgsConfig>(config: T, usage: string) {
  try {
    return parseArgs(config);
  } catch (err) {
    return fail(`✗ ${messageOf(err)}\n${usage}`);
  }
}

/** The storage settings from the environment; a problem ends the process, one line each. */
export function storageConfig(): StorageConfig {
  const loaded = loadStorageConfig(process.env);
  if (loaded.ok) return loaded.config;
  for (const problem of loaded.problems) console.log(`✗ Configuration: ${problem}`);
  process.exit(1);
}

/** ENCRYPTION_KEYS as parsed; unset ends the process with `why` (what it must hold). */
export function requiredKeys(config: StorageConfig, why: string): Keyring {
  if (!config.encryptionKeys) fail(`✗ Configuration: ENCRYPTION_KEYS is required: ${why}`);
  return config.encryptionKeys;
}

/**
 * Opens the store, runs `work` on it, closes it and ends the process with the code `work`
 * answered (1 when it threw: its message printed, scrubbed). The logger writes JSON lines
 * to stdout at `level`, scrubbed of the database URL's secrets and of the keys.
 */
export async function runOnStore(
  config: StorageConfig,
  level: 'info' | 'silent',
  work: (store: Store, log: Logger) => Promise<number>,
): Promise<never> {
  const secrets = [
    ...urlSecrets(config.databaseUrl),
    ...(config.encryptionKeys?.redactions() ?? []),
  ];
  const scrub = makeScrubber(secrets);
  const log = createLogger({ level, secrets });
  const store = await openStore(config.databaseUrl, log, {
    timeoutMs: config.databaseTimeoutMs,
  }).catch((err: unknown) => fail(`✗ Database: ${scrub(messageOf(err))}`));
  let code: number;
  try {
    code = await work(store, log);
  } catch (err) {
    console.log(`✗ ${scrub(messageOf(err))}`);
    code = 1;
  } finally {
    await store.close();
  }
  process.exit(code);
}
