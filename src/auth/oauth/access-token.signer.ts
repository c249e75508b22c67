import { createSecretKey, hkdfSync, randomUUID, type KeyObject } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { SigningKeys } from '../../common/crypto/signing-keys.js';
import { AppConfig } from '../../config/app-config.js';

/** The only algorithm of our own access tokens: HMAC-SHA256 with a key derived from the signing key material (SigningKeys). */
export const ACCESS_TOKEN_ALGORITHM = 'HS256';
/** RFC 9068's media type for JWT access tokens, in the `typ` header: how the bearer strategy tells them from client JWTs. */
export const ACCESS_TOKEN_TYPE = 'at+jwt';
export const ACCESS_TOKEN_LIFETIME_SECONDS = 3600;

const HKDF_SALT = 'workflow-automation-service';
const SIGNING_INFO = 'oauth-access-token/v1 hs256';
const KID_INFO = 'oauth-access-token/v1 kid';
const CSRF_INFO = 'oauth-consent-csrf/v1 hmac';

/** The claims of an access token, as issued and as verified. */
export interface AccessTokenClaims {
  iss: string;
  sub: string;
  /** Organization, user and client, as the brief names them; `client_id` per RFC 9068. */
  org: string;
  client_id: string;
  scope: string;
  jti: string;
  /** Grant id: the authorization code every token of the chain descends from. */
  gid: string;
  iat: number;
  exp: number;
}

interface SigningKey {
  kid: string;
  /**
   * A KeyObject, not a Buffer: given a Buffer, jsonwebtoken first tries to parse it as a PEM/DER
   * private or public key and catches the failure, which cost ~50x the HMAC itself (measured:
   * ~6 ms vs ~0.14 ms per verify on the loaded dev machine).
   */
  secret: KeyObject;
}

/** JwtService's option types name string | Buffer; it hands the value to jsonwebtoken, which takes a KeyObject. */
const asSecret = (key: KeyObject) => key as unknown as Buffer;

/**
 * Signs and verifies the service's own OAuth access tokens with @nestjs/jwt's JwtService. Each key
 * material of SigningKeys (TOKEN_SIGNING_KEY's keys, newest first, or the deployment's generated
 * key; never a constant) gives an HMAC key and a `kid`, both derived
 * with HKDF under infos of their own (the secret box derives its key from the same material under
 * another info, so they never share a key). The first key signs; a token verifies under the key its
 * `kid` names, if that key is still configured, so keys rotate without logging anyone out.
 */
@Injectable()
export class AccessTokenSigner {
  private readonly keys: SigningKey[];
  private readonly byKid: Map<string, SigningKey>;
  readonly issuer: string;
  /** HMAC key of the consent form's CSRF tokens, derived from the current key under an info of its own. */
  readonly csrfKey: Buffer;

  constructor(
    private readonly jwt: JwtService,
    config: AppConfig,
    signingKeys: SigningKeys,
  ) {
    const materials = signingKeys.materials;
    this.keys = materials.map(deriveSigningKey);
    this.byKid = new Map(this.keys.map((k) => [k.kid, k]));
    this.issuer = config.publicBaseUrl;
    this.csrfKey = Buffer.from(hkdfSync('sha256', Buffer.from(materials[0] as string, 'utf8'), HKDF_SALT, CSRF_INFO, 32));
  }

  /** The kid the current (first) key signs with. */
  get currentKid(): string {
    return (this.keys[0] as SigningKey).kid;
  }

  sign(claims: { sub: string; org: string; client_id: string; scope: string; gid: string }): { token: string; jti: string; exp: number } {
    const key = this.keys[0] as SigningKey;
    const jti = randomUUID();
    const iat = Math.floor(Date.now() / 1000);
    const exp = iat + ACCESS_TOKEN_LIFETIME_SECONDS;
    const token = this.jwt.sign(
      { ...claims, iss: this.issuer, jti, iat, exp },
      { secret: asSecret(key.secret), algorithm: ACCESS_TOKEN_ALGORITHM, keyid: key.kid, header: { alg: ACCESS_TOKEN_ALGORITHM, typ: ACCESS_TOKEN_TYPE, kid: key.kid } },
    );
    return { token, jti, exp };
  }

  /** The verified claims, or null (bad signature, unknown kid, expired, wrong issuer or type, missing claims). */
  verify(token: string): AccessTokenClaims | null {
    const header = decodeHeader(token);
    if (!header || header.typ !== ACCESS_TOKEN_TYPE || header.alg !== ACCESS_TOKEN_ALGORITHM || typeof header.kid !== 'string') return null;
    const key = this.byKid.get(header.kid);
    if (!key) return null;
    let claims: Partial<AccessTokenClaims>;
    try {
      claims = this.jwt.verify<Partial<AccessTokenClaims> & object>(token, { secret: asSecret(key.secret), algorithms: [ACCESS_TOKEN_ALGORITHM], issuer: this.issuer });
    } catch {
      return null;
    }
    const strings = [claims.sub, claims.org, claims.client_id, claims.scope, claims.jti, claims.gid];
    if (strings.some((v) => typeof v !== 'string') || typeof claims.exp !== 'number' || typeof claims.iat !== 'number') return null;
    return claims as AccessTokenClaims;
  }
}

/** Whether a bearer token looks like one of our access tokens (its header says so), without verifying it. */
export function isAccessTokenShape(token: string): boolean {
  const header = decodeHeader(token);
  return header?.typ === ACCESS_TOKEN_TYPE && header.alg === ACCESS_TOKEN_ALGORITHM;
}

const JWS_SHAPE = /^eyJ[A-Za-z0-9_-]{1,512}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

function decodeHeader(token: string): { alg?: unknown; typ?: unknown; kid?: unknown } | null {
  if (token.length > 4096 || !JWS_SHAPE.test(token)) return null;
  try {
    const header: unknown = JSON.parse(Buffer.from(token.slice(0, token.indexOf('.')), 'base64url').toString('utf8'));
    return header !== null && typeof header === 'object' ? (header as { alg?: unknown; typ?: unknown; kid?: unknown }) : null;
  } catch {
    return null;
  }
}

function deriveSigningKey(material: string): SigningKey {
  const ikm = Buffer.from(material, 'utf8');
  return {
    secret: createSecretKey(Buffer.from(hkdfSync('sha256', ikm, HKDF_SALT, SIGNING_INFO, 32))),
    kid: Buffer.from(hkdfSync('sha256', ikm, HKDF_SALT, KID_INFO, 12)).toString('base64url'),
  };
}
