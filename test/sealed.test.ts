import { randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { Keyring, SealError, sealedKeyId } from '../src/sealed.ts';

const k1 = { id: 'k1', key: randomBytes(32) };
const k2 = { id: 'k2', key: randomBytes(32) };
const ring = new Keyring([k1]);
const TOKEN = 'xoxb-1111-2222-abcdefghijkl';

/** Flips one bit of one byte of the part at `index` (2 iv, 3 tag, 4 ciphertext). */
function flipped(sealed: string, index: number, byte = 0): string {
  const parts = sealed.split('.');
  const bytes = Buffer.from(parts[index]!, 'base64url');
  bytes[byte]! ^= 0x01;
  parts[index] = bytes.toString('base64url');
  return parts.join('.');
}

const reason = (fn: () => unknown) => {
  try {
    fn();
    return 'opened';
  } catch (err) {
    return err instanceof SealError ? err.reason : `other: ${String(err)}`;
  }
};

describe('sealed values (AES-256-GCM)', () => {
  it('opens what it sealed, in the v1.<keyId>.<iv>.<tag>.<ciphertext> form, a fresh IV each time', () => {
    const a = ring.seal(TOKEN, 'installation::T1:team');
    const b = ring.seal(TOKEN, 'installation::T1:team');
    expect(a).toMatch(/^v1\.k1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]+$/);
    expect(a).not.toBe(b);
    expect(a.split('.')[2]).not.toBe(b.split('.')[2]);
    expect(a).not.toContain(TOKEN);
    expect(ring.open(a, 'installation::T1:team')).toBe(TOKEN);
    expect(ring.open(b, 'installation::T1:team')).toBe(TOKEN);
    expect(sealedKeyId(a)).toBe('k1');
    expect(ring.open(ring.seal('', 'c'), 'c')).toBe('');
    const unicode = '{"name":"Équipe ✓"}';
    expect(ring.open(ring.seal(unicode, 'c'), 'c')).toBe(unicode);
  });

  it('refuses a value with any byte of its IV, tag or ciphertext changed', () => {
    const sealed = ring.seal(TOKEN, 'ctx');
    for (const [part, bytes] of [
      [2, 12],
      [3, 16],
      [4, TOKEN.length],
    ] as const)
      for (const byte of [0, bytes - 1])
        expect(reason(() => ring.open(flipped(sealed, part, byte), 'ctx'))).toBe('unopenable');
    expect(ring.open(sealed, 'ctx')).toBe(TOKEN);
  });

  it('refuses a value opened for other associated data (another row or workspace)', () => {
    const sealed = ring.seal(TOKEN, 'installation::T1:team');
    expect(reason(() => ring.open(sealed, 'installation::T2:team'))).toBe('unopenable');
    expect(reason(() => ring.open(sealed, 'installation:E1:T1:team'))).toBe('unopenable');
    expect(reason(() => ring.open(sealed, 'installation::T1:tea'))).toBe('unopenable');
  });

  it('refuses a wrong key, an unknown key id, and a value relabelled with another key id', () => {
    const sealed = ring.seal(TOKEN, 'ctx');
    const impostor = new Keyring([{ id: 'k1', key: randomBytes(32) }]);
    expect(reason(() => impostor.open(sealed, 'ctx'))).toBe('unopenable');
    expect(reason(() => new Keyring([k2]).open(sealed, 'ctx'))).toBe('unknown_key');
    // k2 holding k1's bytes: the key id is bound too, so relabelling does not open.
    const same = new Keyring([k1, { id: 'k2', key: k1.key }]);
    expect(reason(() => same.open(sealed.replace('v1.k1.', 'v1.k2.'), 'ctx'))).toBe('unopenable');
  });

  it('refuses malformed values, non-canonical base64 included, without echoing them', () => {
    const sealed = ring.seal(TOKEN, 'ctx');
    const parts = sealed.split('.');
    const tag = parts[3]!;
    // The tag's last character carries 4 unused bits: setting one spells the same bytes
    // another way, which Node's decoder would take.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const respelled = tag.slice(0, -1) + alphabet[alphabet.indexOf(tag.at(-1)!) | 1];
    expect(Buffer.from(respelled, 'base64url').equals(Buffer.from(tag, 'base64url'))).toBe(true);
    const bad = [
      '',
      TOKEN,
      sealed.replace('v1.', 'v2.'),
      sealed.replace('.k1.', '.K1.'),
      [...parts.slice(0, 4)].join('.'),
      `${sealed}.x`,
      [parts[0], parts[1], parts[2]!.slice(2), parts[3], parts[4]].join('.'),
      [parts[0], parts[1], parts[2], `${tag}+`, parts[4]].join('.'),
      [parts[0], parts[1], parts[2], respelled, parts[4]].join('.'),
    ];
    for (const value of bad) {
      expect(reason(() => ring.open(value, 'ctx'))).toBe('malformed');
      try {
        ring.open(value, 'ctx');
      } catch (err) {
        expect((err as Error).message).not.toContain(TOKEN);
        if (value) expect((err as Error).message).not.toContain(value);
      }
    }
  });

  it('seals with the first key and opens with every key (rotation)', () => {
    const old = ring.seal(TOKEN, 'ctx');
    const rotated = new Keyring([k2, k1]);
    expect(rotated.sealingKeyId).toBe('k2');
    expect(rotated.open(old, 'ctx')).toBe(TOKEN);
    const fresh = rotated.seal(TOKEN, 'ctx');
    expect(sealedKeyId(fresh)).toBe('k2');
    expect(new Keyring([k2]).open(fresh, 'ctx')).toBe(TOKEN);
  });

  it('never shows its key bytes: JSON, inspect and string forms hold ids only', () => {
    const both = new Keyring([k1, k2]);
    const shown = [JSON.stringify(both), inspect(both, { depth: 5 }), String(both), `${both}`];
    for (const text of shown)
      for (const { key } of [k1, k2]) {
        expect(text).not.toContain(key.toString('base64'));
        expect(text).not.toContain(key.toString('hex'));
      }
    expect(JSON.parse(JSON.stringify(both))).toEqual({ keyIds: ['k1', 'k2'], sealingKeyId: 'k1' });
  });

  it('refuses a key of the wrong size, a bad id and a repeated id', () => {
    expect(() => new Keyring([{ id: 'k1', key: randomBytes(16) }])).toThrow(/32 bytes/);
    expect(() => new Keyring([{ id: 'K.1', key: randomBytes(32) }])).toThrow(/key id/);
    expect(() => new Keyring([k1, { id: 'k1', key: randomBytes(32) }])).toThrow(/twice/);
    expect(() => new Keyring([])).toThrow(/at least one/);
  });
});
