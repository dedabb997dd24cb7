import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { inspect } from 'node:util';

/**
 * Secrets at rest: AES-256-GCM through node:crypto. A sealed value is one string,
 * `v1.<keyId>.<iv>.<tag>.<ciphertext>` (base64url parts, a random 12-byte IV per value), so
 * that the key which sealed it is known without opening it (rotation, the start-up check).
 * The associated data is the caller's context (`installation:E1:T1:team`): a sealed value
 * copied into another row or workspace does not open there. The keys come from
 * ENCRYPTION_KEYS (src/config); the first seals, the others only open.
 */

/** What a key id looks like: short, and free of the `.` that separates a sealed value's parts. */
export const KEY_ID = /^[a-z0-9_-]{1,16}$/;
export const KEY_BYTES = 32;
const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const ALGORITHM = 'aes-256-gcm';
const BASE64URL = /^[A-Za-z0-9_-]*$/;

export type SealErrorReason = 'malformed' | 'unknown_key' | 'unopenable';

/** A sealed value that could not be opened. Its message never holds the value or a key. */
export class SealError extends Error {
  readonly reason: SealErrorReason;
  readonly keyId: string | undefined;
  constructor(reason: SealErrorReason, keyId?: string) {
    super(
      reason === 'malformed'
        ? 'a sealed value is malformed'
        : reason === 'unknown_key'
          ? `a sealed value needs key '${keyId}', which ENCRYPTION_KEYS does not hold`
          : `a sealed value does not open with key '${keyId}' (wrong key, altered value, or another row's value)`,
    );
    this.name = 'SealError';
    this.reason = reason;
    this.keyId = keyId;
  }
}

export interface KeyMaterial {
  id: string;
  /** Exactly 32 bytes. */
  key: Uint8Array;
}

/**
 * The keys, the first of which seals. The key bytes are private: a keyring logged, inspected
 * or turned into JSON shows its ids only.
 */
export class Keyring {
  readonly #keys: Map<string, Buffer>;
  /** The id of the key new values are sealed with. */
  readonly sealingKeyId: string;

  constructor(keys: readonly KeyMaterial[]) {
    if (keys.length === 0) throw new Error('a keyring needs at least one key');
    this.#keys = new Map();
    for (const { id, key } of keys) {
      if (!KEY_ID.test(id)) throw new Error('a key id must be 1-16 of a-z 0-9 _ -');
      if (key.length !== KEY_BYTES) throw new Error(`key '${id}' must be ${KEY_BYTES} bytes`);
      if (this.#keys.has(id)) throw new Error(`key id '${id}' appears twice`);
      this.#keys.set(id, Buffer.from(key));
    }
    this.sealingKeyId = keys[0]!.id;
  }

  /** Every key id, the sealing one first. */
  get ids(): string[] {
    return [...this.#keys.keys()];
  }

  has(keyId: string): boolean {
    return this.#keys.has(keyId);
  }

  /** Seals `plaintext` with the first key, bound to `context`. */
  seal(plaintext: string, context: string): string {
    const keyId = this.sealingKeyId;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.#keys.get(keyId)!, iv, {
      authTagLength: TAG_BYTES,
    });
    cipher.setAAD(associatedData(keyId, context));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const parts = [iv, cipher.getAuthTag(), ciphertext].map((b) => b.toString('base64url'));
    return [VERSION, keyId, ...parts].join('.');
  }

  /** Opens a value sealed for `context` by any key of the ring; SealError otherwise. */
  open(sealed: string, context: string): string {
    const { keyId, iv, tag, ciphertext } = parseSealed(sealed);
    const key = this.#keys.get(keyId);
    if (!key) throw new SealError('unknown_key', keyId);
    try {
      const decipher = createDecipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(associatedData(keyId, context));
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
    } catch {
      throw new SealError('unopenable', keyId);
    }
  }

  /** The key bytes as ENCRYPTION_KEYS spells them, for the log scrubber only. */
  redactions(): string[] {
    return [...this.#keys.values()].flatMap((k) => [k.toString('base64'), k.toString('base64url')]);
  }

  toJSON(): { keyIds: string[]; sealingKeyId: string } {
    return { keyIds: this.ids, sealingKeyId: this.sealingKeyId };
  }

  [inspect.custom](): string {
    return `Keyring { keyIds: [${this.ids.join(', ')}], sealingKeyId: ${this.sealingKeyId} }`;
  }
}

/** The id of the key that sealed `sealed`, without opening it; undefined when malformed. */
export function sealedKeyId(sealed: string): string | undefined {
  try {
    return parseSealed(sealed).keyId;
  } catch {
    return undefined;
  }
}

/** The version and key id are bound too: a value relabelled with another key id fails. */
function associatedData(keyId: string, context: string): Buffer {
  return Buffer.from(`${VERSION}.${keyId}.${context}`, 'utf8');
}

function parseSealed(sealed: string) {
  const parts = sealed.split('.');
  if (parts.length !== 5 || parts[0] !== VERSION || !KEY_ID.test(parts[1]!))
    throw new SealError('malformed');
  const [iv, tag, ciphertext] = parts.slice(2).map(strictBase64url);
  if (iv?.length !== IV_BYTES || tag?.length !== TAG_BYTES || !ciphertext)
    throw new SealError('malformed');
  return { keyId: parts[1]!, iv, tag, ciphertext };
}

/** Decodes only the one canonical spelling: Node's decoder skips stray characters. */
function strictBase64url(part: string): Buffer | undefined {
  if (!BASE64URL.test(part)) return undefined;
  const bytes = Buffer.from(part, 'base64url');
  return bytes.toString('base64url') === part ? bytes : undefined;
}
