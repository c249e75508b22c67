import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../common/errors/common.errors.js';
import { importPublicKey } from './public-key.js';

function refusal(input: unknown): string {
  try {
    importPublicKey(input);
    return 'accepted';
  } catch (error) {
    if (!(error instanceof InvalidRequestError)) throw error;
    return `${error.code} ${error.extra.field}`;
  }
}

const REFUSED = 'INVALID_REQUEST public_key';

describe('importPublicKey', () => {
  it('maps each supported key type to its algorithms, from PEM, JWK object or JWK text', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey;
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey;
    const ed = generateKeyPairSync('ed25519').publicKey;
    expect(importPublicKey(rsa.export({ type: 'spki', format: 'pem' })).algorithms).toEqual(['RS256', 'PS256']);
    expect(importPublicKey(rsa.export({ type: 'pkcs1', format: 'pem' })).algorithms).toEqual(['RS256', 'PS256']);
    expect(importPublicKey(ec.export({ format: 'jwk' })).algorithms).toEqual(['ES256']);
    expect(importPublicKey(JSON.stringify(ed.export({ format: 'jwk' }))).algorithms).toEqual(['EdDSA']);
    const { jwk } = importPublicKey(ed.export({ type: 'spki', format: 'pem' }));
    expect(jwk).toEqual(ed.export({ format: 'jwk' }));
    expect(jwk).not.toHaveProperty('d');
  });

  it('refuses private keys in every form, symmetric keys, short RSA, other curves and key types, and junk', () => {
    const rsaPair = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const ecPair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const cases: unknown[] = [
      rsaPair.privateKey.export({ type: 'pkcs8', format: 'pem' }),
      rsaPair.privateKey.export({ type: 'pkcs1', format: 'pem' }),
      ecPair.privateKey.export({ type: 'sec1', format: 'pem' }),
      ecPair.privateKey.export({ format: 'jwk' }),
      JSON.stringify(ecPair.privateKey.export({ format: 'jwk' })),
      { kty: 'oct', k: 'c2VjcmV0' },
      generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' }),
      generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey.export({ format: 'jwk' }),
      generateKeyPairSync('ed448').publicKey.export({ type: 'spki', format: 'pem' }),
      generateKeyPairSync('x25519').publicKey.export({ format: 'jwk' }),
      '-----BEGIN PUBLIC KEY-----\nnot base64\n-----END PUBLIC KEY-----',
      '{not json',
      { kty: 'RSA' },
      [],
      null,
      42,
    ];
    for (const input of cases) expect(refusal(input), JSON.stringify(input)?.slice(0, 60)).toBe(REFUSED);
  });
});
