import { describe, expect, it } from 'vitest';
import { SecretBox, SecretBoxError } from './secret-box.js';

const KEY_A = 'a'.repeat(40);
const KEY_B = 'b'.repeat(40);
/** The constant the service sealed with when TOKEN_SIGNING_KEY was unset, written out here. */
const LEGACY_DEVELOPMENT_KEY_MATERIAL = 'workflow-automation-service insecure development key';

function flipByte(sealed: string, index: number): string {
  const [version, payload] = sealed.split('.');
  const raw = Buffer.from(payload, 'base64url');
  raw[index] ^= 0x01;
  return `${version}.${raw.toString('base64url')}`;
}

describe('SecretBox', () => {

  const box = SecretBox.withKeyMaterial(KEY_A);

  it('opens what it sealed, including non-ASCII text', () => {
    for (const plain of ['whsec_0123456789abcdef', 'ünïcødé ✓ secret', '']) {
      expect(box.open(box.seal(plain))).toBe(plain);
    }
  });

  it('never shows the plain value and uses a fresh IV each time', () => {
    const plain = 'my-very-secret-value-123';
    const first = box.seal(plain);
    const second = box.seal(plain);
    expect(first).not.toContain(plain);
    expect(Buffer.from(first.split('.')[1], 'base64url').toString('latin1')).not.toContain(plain);
    expect(first).not.toBe(second);
    expect(first.startsWith('v1.')).toBe(true);
  });

  it('throws when any part of the sealed value is altered', () => {
    const sealed = box.seal('tamper-proof-secret');
    const length = Buffer.from(sealed.split('.')[1], 'base64url').length;
    // IV, tag and ciphertext.
    for (const index of [0, 11, 12, 27, 28, length - 1]) {
      expect(() => box.open(flipByte(sealed, index)), `byte ${index}`).toThrow(SecretBoxError);
    }
    expect(() => box.open(sealed.slice(0, 20))).toThrow(SecretBoxError);
    expect(() => box.open(`v2.${sealed.split('.')[1]}`)).toThrow(SecretBoxError);
    expect(() => box.open('not sealed at all')).toThrow(SecretBoxError);
  });

  it('cannot open a value sealed under another key', () => {
    const other = SecretBox.withKeyMaterial(KEY_B);
    expect(() => other.open(box.seal('secret'))).toThrow(SecretBoxError);
    expect(() => box.open(other.seal('secret'))).toThrow(SecretBoxError);
  });

  it('binds a value to its context', () => {
    const sealed = box.seal('secret', 'row-1');
    expect(box.open(sealed, 'row-1')).toBe('secret');
    expect(() => box.open(sealed, 'row-2')).toThrow(SecretBoxError);
    expect(() => box.open(sealed)).toThrow(SecretBoxError);
  });

  it('with the generated key: seals with it, opens what the old development constant sealed, and nothing seals with that constant', () => {
    const legacy = SecretBox.withKeyMaterial(LEGACY_DEVELOPMENT_KEY_MATERIAL);
    const generated = new SecretBox({ materials: [KEY_A], generated: true });
    expect(generated.open(legacy.seal('old dev secret', 'row'), 'row')).toBe('old dev secret');
    const sealed = generated.seal('new secret');
    expect(box.open(sealed)).toBe('new secret');
    expect(() => legacy.open(sealed)).toThrow(SecretBoxError);
    // A configured TOKEN_SIGNING_KEY never opens what the constant sealed.
    expect(() => box.open(legacy.seal('old dev secret'))).toThrow(SecretBoxError);
  });

  it('rotates: a list seals with its first key and opens what any listed key sealed', () => {
    const rotated = SecretBox.withKeyMaterial(`${KEY_B},${KEY_A}`);
    const sealedByOld = box.seal('old secret');
    expect(rotated.open(sealedByOld)).toBe('old secret');
    const sealedByNew = rotated.seal('new secret');
    expect(SecretBox.withKeyMaterial(KEY_B).open(sealedByNew)).toBe('new secret');
    expect(() => box.open(sealedByNew)).toThrow(SecretBoxError);
  });
});
