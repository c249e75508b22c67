import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { InvalidRequestError } from '../../common/errors/common.errors.js';

/** The only algorithms a client JWT may use: asymmetric, so the service never holds a signing secret. */
export const JWT_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA'] as const;

/** RSA keys shorter than this are refused (NIST SP 800-131A). */
const MIN_RSA_BITS = 2048;
/** A PEM or JWK longer than this is no public key of a supported type (RSA 8192 PEM is ~1.4 kB). */
export const MAX_PUBLIC_KEY_LENGTH = 8192;

export interface ImportedPublicKey {
  jwk: JsonWebKey;
  algorithms: string[];
}

function invalid(message: string): InvalidRequestError {
  return new InvalidRequestError(message, 'public_key');
}

/**
 * A registered public key, given as a PEM (SPKI or PKCS#1) or a JWK (object, or its JSON text),
 * stored as a JWK with the algorithms its type allows: RSA ≥ 2048 bits → RS256, PS256; EC P-256 →
 * ES256; Ed25519 → EdDSA. Private keys are refused rather than reduced to their public half, so a
 * leaked private key is noticed at registration; symmetric keys cannot be imported at all.
 */
export function importPublicKey(input: unknown): ImportedPublicKey {
  let key: KeyObject;
  try {
    key = toKeyObject(input);
  } catch (error) {
    if (error instanceof InvalidRequestError) throw error;
    throw invalid('public_key must be a public key as PEM or JWK');
  }
  return { jwk: key.export({ format: 'jwk' }), algorithms: algorithmsFor(key) };
}

function toKeyObject(input: unknown): KeyObject {
  if (typeof input === 'string') {
    const text = input.trim();
    if (text.startsWith('{')) return toKeyObject(JSON.parse(text) as unknown);
    if (/PRIVATE KEY/.test(text)) throw invalid('public_key must be a public key; this is a private key');
    if (!/^-----BEGIN (PUBLIC KEY|RSA PUBLIC KEY)-----/.test(text)) throw invalid('public_key must be a PEM public key (-----BEGIN PUBLIC KEY-----) or a JWK');
    return createPublicKey({ key: text, format: 'pem' });
  }
  if (input && typeof input === 'object' && !Array.isArray(input)) {
    const jwk = input as JsonWebKey;
    if ('d' in jwk || 'p' in jwk || 'k' in jwk) throw invalid('public_key must be a public JWK, without private or symmetric members (d, p, k)');
    return createPublicKey({ key: jwk, format: 'jwk' });
  }
  throw invalid('public_key must be a PEM string or a JWK object');
}

function algorithmsFor(key: KeyObject): string[] {
  const details = key.asymmetricKeyDetails ?? {};
  switch (key.asymmetricKeyType) {
    case 'rsa':
      if ((details.modulusLength ?? 0) < MIN_RSA_BITS) throw invalid(`RSA keys must have at least ${MIN_RSA_BITS} bits`);
      return ['RS256', 'PS256'];
    case 'ec':
      if (details.namedCurve !== 'prime256v1') throw invalid('EC keys must be on the P-256 curve (ES256)');
      return ['ES256'];
    case 'ed25519':
      return ['EdDSA'];
    default:
      throw invalid('public_key must be an RSA, EC P-256 or Ed25519 key');
  }
}
