import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { configuredSigningKeys, SigningKeys } from './signing-keys.js';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const HKDF_SALT = 'workflow-automation-service';
const HKDF_INFO = 'secret-box/v1 aes-256-gcm';
/**
 * The key material this service once sealed with when TOKEN_SIGNING_KEY was unset: a constant of
 * the source, so what it sealed was never protected. Kept to OPEN such values in a development
 * database (with the generated key only), never to seal: every new or updated secret is sealed
 * with the generated key. Access tokens never verify under it (AccessTokenSigner has no such key).
 */
const LEGACY_DEVELOPMENT_KEY_MATERIAL = 'workflow-automation-service insecure development key';

export class SecretBoxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretBoxError';
  }
}

/**
 * Encrypts secrets kept at rest (webhook triggers' verification secrets) with AES-256-GCM.
 * The key is derived with HKDF-SHA256 from the signing key material (SigningKeys: TOKEN_SIGNING_KEY,
 * or the deployment's generated key), under an `info` of its own so that other uses of that
 * material never share derived keys with this one.
 *
 * Sealed form: `v1.<base64url(iv | tag | ciphertext)>`. An optional context (such as the id of
 * the row holding the value) is authenticated with it, so a sealed value copied to another row
 * does not open there.
 */
@Injectable()
export class SecretBox {
  /** Derived from each key material, the first (newest) sealing; every one opens (key rotation). */
  private readonly keys: Buffer[];

  constructor(signingKeys: SigningKeys) {
    const materials = [...signingKeys.materials, ...(signingKeys.generated ? [LEGACY_DEVELOPMENT_KEY_MATERIAL] : [])];
    this.keys = materials.map((m) => SecretBox.deriveKey(m));
  }

  /** A box for the given key material (comma-separated for several), outside dependency injection (tests, scripts). */
  static withKeyMaterial(material: string): SecretBox {
    return new SecretBox(configuredSigningKeys(material.split(',').map((k) => k.trim())));
  }

  private static deriveKey(material: string): Buffer {
    return Buffer.from(hkdfSync('sha256', Buffer.from(material, 'utf8'), HKDF_SALT, HKDF_INFO, 32));
  }

  seal(plain: string, context = ''): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.keys[0] as Buffer, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(aad(context));
    const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url')}`;
  }

  /** The plain value; throws SecretBoxError when the value was altered, sealed under another key or another context. */
  open(sealed: string, context = ''): string {
    const [version, payload, ...rest] = sealed.split('.');
    if (version !== VERSION || payload === undefined || rest.length > 0) throw new SecretBoxError('Unknown sealed value format');
    const raw = Buffer.from(payload, 'base64url');
    if (raw.length < IV_BYTES + TAG_BYTES) throw new SecretBoxError('Sealed value is truncated');
    for (const key of this.keys) {
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
      decipher.setAAD(aad(context));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      try {
        return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
      } catch {
        // Sealed under another of the keys, or altered: try the next.
      }
    }
    throw new SecretBoxError('Sealed value cannot be opened with this key (altered, or sealed under another key)');
  }
}

function aad(context: string): Buffer {
  return Buffer.from(`${VERSION}:${context}`, 'utf8');
}
