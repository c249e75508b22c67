import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { AppConfig } from '../../config/app-config.js';
import { RedisService } from '../../redis/redis.service.js';
import type { Principal } from '../access.js';
import { InvalidApiKeyError } from '../auth.errors.js';
import type { CredentialResolver } from '../credentials/credential-resolver.js';
import { hashApiKey } from './api-key.secret.js';
import { ApiKey } from './entities/api-key.entity.js';

const REVOCATION_CHANNEL = 'auth:api-key-revoked';
const MAX_CACHED_KEYS = 10_000;
const MAX_KEY_LENGTH = 512;

interface CacheEntry {
  principal: Principal;
  expiresAt: number;
}

/**
 * Resolves API keys, the fallback credential (it accepts any token shape). A key once seen is
 * trusted from memory for AUTH_CACHE_TTL_SECONDS, so authentication costs no database round
 * trip per request; a revocation is published on Redis and evicts the key on every process at
 * once. After a lost subscription the whole cache is dropped, since revocations may have been missed.
 */
@Injectable()
export class ApiKeyResolver implements CredentialResolver, OnModuleInit {
  private readonly logger = new Logger(ApiKeyResolver.name);
  private readonly cache = new Map<string, CacheEntry>();

  constructor(
    @InjectRepository(ApiKey) private readonly keys: Repository<ApiKey>,
    private readonly redis: RedisService,
    private readonly config: AppConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.redis.subscribe(REVOCATION_CHANNEL, (hash) => {
      if (hash === null) this.cache.clear();
      else this.cache.delete(hash);
    });
  }

  accepts(): boolean {
    return true;
  }

  invalidError() {
    return new InvalidApiKeyError();
  }

  async resolve(token: string): Promise<Principal | null> {
    if (token.length > MAX_KEY_LENGTH) return null;
    const hash = hashApiKey(token);
    const cached = this.cache.get(hash);
    if (cached && cached.expiresAt > Date.now()) return cached.principal;
    this.cache.delete(hash);

    const key = await this.keys.findOne({ where: { keyHash: hash } });
    if (!key) return null;
    const principal: Principal = {
      credentialType: 'api_key',
      credentialId: key.id,
      name: key.name,
      organizationId: key.organizationId,
      permissionLevel: key.permissionLevel,
    };
    if (this.config.authCacheTtlMs > 0) {
      if (this.cache.size >= MAX_CACHED_KEYS) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(hash, { principal, expiresAt: Date.now() + this.config.authCacheTtlMs });
    }
    return principal;
  }

  /** Evicts a revoked key here and, through Redis, on every other process. */
  async evict(keyHash: string): Promise<void> {
    this.cache.delete(keyHash);
    try {
      await this.redis.publish(REVOCATION_CHANNEL, keyHash);
    } catch (error) {
      this.logger.error(`Could not publish the revocation of an API key; other processes trust it for up to ${this.config.authCacheTtlMs / 1000}s: ${(error as Error).message}`);
    }
  }
}
