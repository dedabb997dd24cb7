import { z } from 'zod';
import { KEY_BYTES, KEY_ID, Keyring } from '../sealed.ts';

/**
 * ENCRYPTION_KEYS: `id:base64,id:base64`, the keys that seal secrets at rest (src/sealed.ts).
 * The first seals; the others only open values sealed before a rotation. Blank or unset:
 * undefined. A bad entry is named by its place (and its id, when the id is well formed),
 * never by its key.
 */
export const encryptionKeys = z.preprocess(
  (v) => (typeof v === 'string' && v.trim() === '' ? undefined : v),
  z
    .string()
    .transform((v, ctx): Keyring | undefined => {
      const entries = v
        .split(',')
        .map((e) => e.trim())
        .filter(Boolean);
      const problems: string[] = [];
      const seen = new Set<string>();
      const keys = entries.flatMap((entry, i) => {
        const parsed = parseEntry(entry, i + 1, entries.length);
        if (typeof parsed === 'string') {
          problems.push(parsed);
          return [];
        }
        if (seen.has(parsed.id)) problems.push(`names key id '${parsed.id}' more than once`);
        seen.add(parsed.id);
        return [parsed];
      });
      for (const message of problems) ctx.addIssue({ code: 'custom', message });
      return problems.length === 0 && keys.length > 0 ? new Keyring(keys) : undefined;
    })
    .optional(),
);

const STANDARD_OR_URL_BASE64 = /^(?:[A-Za-z0-9+/]+={0,2}|[A-Za-z0-9_-]+={0,2})$/;

/** One `id:key` entry, or the line that says what is wrong with it. */
function parseEntry(
  entry: string,
  place: number,
  of: number,
): { id: string; key: Buffer } | string {
  const at = entry.indexOf(':');
  const id = at > 0 ? entry.slice(0, at).trim() : '';
  const encoded = at > 0 ? entry.slice(at + 1).trim() : '';
  const where = `entry ${place} of ${of}`;
  if (at <= 0 || !KEY_ID.test(id))
    return `must be a comma-separated list of id:key pairs, ids of 1-16 characters a-z 0-9 _ - (such as k1:…); ${where} is not`;
  if (!STANDARD_OR_URL_BASE64.test(encoded))
    return `key '${id}' (${where}) must be ${KEY_BYTES} bytes in base64; it is not base64`;
  const key = Buffer.from(encoded, 'base64');
  if (key.length !== KEY_BYTES)
    return `key '${id}' (${where}) must be ${KEY_BYTES} bytes in base64; it decodes to ${key.length}`;
  return { id, key };
}
