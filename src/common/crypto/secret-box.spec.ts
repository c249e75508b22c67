import { Logger } from '@nestjs/common';
import { beforeAll, describe, expect, it } from 'vitest';
import type { AppConfig } from '../../config/app-config.js';
import { SecretBox, SecretBoxError } from './secret-box.js';

const KEY_A = 'a'.repeat(40);
const KEY_B = 'b'.repeat(40);

function flipByte(sealed: string, index: number): string {
  const [version, payload] = sealed.split('.');
  const raw = Buffer.from(payload, 'base64url');
  raw[index] ^= 0x01;
  return `${version}.${raw.toString('base64url')}`;
}

describe('SecretBox', () => {
  // The development-key warning is expected here.
  beforeAll(() => Logger.overrideLogger(false));

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

  it('uses a development key when TOKEN_SIGNING_KEY is unset, distinct from any configured key', () => {
    const dev1 = new SecretBox({} as AppConfig);
    const dev2 = new SecretBox({} as AppConfig);
    expect(dev2.open(dev1.seal('secret'))).toBe('secret');
    expect(() => box.open(dev1.seal('secret'))).toThrow(SecretBoxError);
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
