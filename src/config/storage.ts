import type { Keyring } from '../sealed.ts';
import { EnvSchema, PLACEHOLDERS } from './config.ts';

/**
 * The part of the environment a tool on the database alone reads (`npm run rotate-keys`):
 * DATABASE_URL, DATABASE_TIMEOUT_MS and ENCRYPTION_KEYS, parsed by the bot's own rules;
 * nothing else is required. Problems come back one line each, never echoing a value.
 */
export interface StorageConfig {
  databaseUrl: string;
  databaseTimeoutMs: number;
  encryptionKeys: Keyring | undefined;
}

const StorageSchema = EnvSchema.pick({
  DATABASE_URL: true,
  DATABASE_TIMEOUT_MS: true,
  ENCRYPTION_KEYS: true,
});

export function loadStorageConfig(
  env: Record<string, string | undefined> = process.env,
): { ok: true; config: StorageConfig } | { ok: false; problems: string[] } {
  if (env.DATABASE_URL?.trim() === PLACEHOLDERS.DATABASE_URL)
    return { ok: false, problems: ['DATABASE_URL still holds the placeholder from .env.example'] };
  const parsed = StorageSchema.safeParse(env);
  if (!parsed.success)
    return {
      ok: false,
      problems: [...new Set(parsed.error.issues.map((i) => `${String(i.path[0])} ${i.message}`))],
    };
  const e = parsed.data;
  return {
    ok: true,
    config: {
      databaseUrl: e.DATABASE_URL,
      databaseTimeoutMs: e.DATABASE_TIMEOUT_MS,
      encryptionKeys: e.ENCRYPTION_KEYS,
    },
  };
}
