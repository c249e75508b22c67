import { createPublicKey, type KeyObject } from 'node:crypto';
import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { decodeJwt, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import type { Repository } from 'typeorm';
import { isUuid } from '../../common/ids/uuid.js';
import { AppConfig } from '../../config/app-config.js';
import { RedisService } from '../../redis/redis.service.js';
import type { Principal } from '../access.js';
import { InvalidTokenError } from '../auth.errors.js';
import type { CredentialResolver } from '../credentials/credential-resolver.js';
import { JwtClient } from './entities/jwt-client.entity.js';
import { JWT_ALGORITHMS } from './public-key.js';

const REVOCATION_CHANNEL = 'auth:jwt-client-revoked';
const MAX_CACHED_CLIENTS = 10_000;
const MAX_CACHED_TOKENS = 10_000;
/** Longer than any token an RSA-8192 signature and a sane claim set make; refused before any parsing. */
const MAX_TOKEN_LENGTH = 8192;
/** Allowed clock difference between the client and us (docs/API.md, "JWT clients"). */
export const CLOCK_SKEW_SECONDS = 60;
/** Longest allowed lifetime, exp − iat (docs/API.md, "JWT clients"). */
export const MAX_LIFETIME_SECONDS = 3600;
/** A compact JWS: three base64url segments, the header a JSON object ("eyJ" is `{"`). */
const JWT_SHAPE = /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*$/;

interface CachedClient {
  id: string;
  name: string;
  organizationId: string;
  key: KeyObject;
  algorithms: string[];
  scopes: Set<string>;
  expiresAt: number;
}

/**
 * Resolves JWTs signed by registered server-to-server clients (docs/API.md, "JWT clients"): asymmetric algorithms
 * only, and only those the registered key's type allows (so `none` and HMAC, including HS256
 * "signed" with the public key, never verify); aud = JWT_AUDIENCE, iss = application id, exp and
 * iat required, lifetime ≤ 1 h, 60 s skew; a jti is accepted once within the token's life.
 * Granted scopes are the token's `scope` ∩ the client's registered scopes.
 *
 * Client records are cached for AUTH_CACHE_TTL_SECONDS like API keys, and a deleted client is
 * evicted on every process through Redis at once.
 */
@Injectable()
export class JwtClientResolver implements CredentialResolver, OnModuleInit {
  private readonly logger = new Logger(JwtClientResolver.name);
  private readonly cache = new Map<string, CachedClient>();
  /**
   * Tokens without a jti that verified, until they expire or the client record's cache time ends,
   * whichever is first: a client sends the same token on every call for up to an hour, and a
   * signature check per request (ES256 ~0.1-0.2 ms of CPU) made JWT reads 23% slower than API-key
   * reads. A deleted client's tokens leave with it (evict, and the Redis channel on other processes).
   * Tokens with a jti are never cached: each must be seen once.
   */
  private readonly verified = new Map<string, { principal: Principal; until: number }>();

  constructor(
    @InjectRepository(JwtClient) private readonly clients: Repository<JwtClient>,
    private readonly redis: RedisService,
    private readonly config: AppConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.redis.subscribe(REVOCATION_CHANNEL, (id) => {
      if (id === null) this.cache.clear();
      else this.cache.delete(id);
      this.forgetTokens(id);
    });
  }

  accepts(token: string): boolean {
    return JWT_SHAPE.test(token);
  }

  invalidError() {
    return new InvalidTokenError();
  }

  async resolve(token: string): Promise<Principal | null> {
    const audience = this.config.jwtAudience;
    if (!audience || token.length > MAX_TOKEN_LENGTH) return null;
    const known = this.verified.get(token);
    if (known) {
      if (known.until > Date.now()) return known.principal;
      this.verified.delete(token);
    }
    let alg: string | undefined;
    let unverified: JWTPayload;
    try {
      alg = decodeProtectedHeader(token).alg;
      unverified = decodeJwt(token);
    } catch {
      return null;
    }
    if (!alg || !(JWT_ALGORITHMS as readonly string[]).includes(alg)) return null;
    const issuer = unverified.iss;
    if (typeof issuer !== 'string' || !isUuid(issuer)) return null;
    const client = await this.client(issuer);
    if (!client || !client.algorithms.includes(alg)) return null;

    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, client.key, {
        algorithms: client.algorithms,
        audience,
        issuer,
        clockTolerance: CLOCK_SKEW_SECONDS,
        maxTokenAge: MAX_LIFETIME_SECONDS,
        requiredClaims: ['exp', 'iat'],
      }));
    } catch {
      return null;
    }
    const { exp, iat, jti, scope } = payload as JWTPayload & { exp: number; iat: number };
    if (exp - iat > MAX_LIFETIME_SECONDS) return null;
    if (jti !== undefined && !(await this.firstUse(issuer, jti, exp))) return null;

    const requested = typeof scope === 'string' ? scope.split(' ') : [];
    const principal: Principal = {
      credentialType: 'jwt',
      credentialId: client.id,
      name: client.name,
      organizationId: client.organizationId,
      scopes: [...new Set(requested.filter((s) => client.scopes.has(s)))],
    };
    if (jti === undefined) {
      if (this.verified.size >= MAX_CACHED_TOKENS) this.verified.delete(this.verified.keys().next().value as string);
      this.verified.set(token, { principal, until: Math.min(exp * 1000, client.expiresAt) });
    }
    return principal;
  }

  /** Drops the verified tokens of a client (all with null). */
  private forgetTokens(id: string | null): void {
    if (id === null) return this.verified.clear();
    for (const [token, entry] of this.verified) if (entry.principal.credentialId === id) this.verified.delete(token);
  }

  /** Evicts a deleted client here and, through Redis, on every other process. */
  async evict(id: string): Promise<void> {
    this.cache.delete(id);
    this.forgetTokens(id);
    try {
      await this.redis.publish(REVOCATION_CHANNEL, id);
    } catch (error) {
      this.logger.error(`Could not publish the deletion of a JWT client; other processes trust it for up to ${this.config.authCacheTtlMs / 1000}s: ${(error as Error).message}`);
    }
  }

  /**
   * Records the jti until the token can no longer verify (exp + skew). SET NX answers whether
   * this is its first use. Without Redis a replay cannot be ruled out, so the token is refused.
   */
  private async firstUse(issuer: string, jti: unknown, exp: number): Promise<boolean> {
    if (typeof jti !== 'string' || jti.length === 0 || jti.length > 256) return false;
    const ttl = Math.max(1, exp + CLOCK_SKEW_SECONDS - Math.floor(Date.now() / 1000));
    try {
      return (await this.redis.client.set(this.redis.key('auth', 'jti', issuer, jti), '1', 'EX', ttl, 'NX')) === 'OK';
    } catch (error) {
      this.logger.error(`Could not record a JWT's jti, so the token is refused: ${(error as Error).message}`);
      return false;
    }
  }

  private async client(id: string): Promise<CachedClient | null> {
    const cached = this.cache.get(id);
    if (cached && cached.expiresAt > Date.now()) return cached;
    this.cache.delete(id);
    const row = await this.clients.findOne({ where: { id } });
    if (!row) return null;
    const client: CachedClient = {
      id: row.id,
      name: row.name,
      organizationId: row.organizationId,
      key: createPublicKey({ key: row.publicKey, format: 'jwk' }),
      algorithms: row.algorithms,
      scopes: new Set(row.scopes),
      expiresAt: Date.now() + this.config.authCacheTtlMs,
    };
    if (this.config.authCacheTtlMs > 0) {
      if (this.cache.size >= MAX_CACHED_CLIENTS) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(id, client);
    }
    return client;
  }
}
