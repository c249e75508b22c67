import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { isUuid } from '../../common/ids/uuid.js';
import type { PageQuery } from '../../common/pagination/page.query.js';
import type { PermissionLevel } from '../access.js';
import { ApiKeyNotFoundError } from '../auth.errors.js';
import { ApiKeyResolver } from './api-key.resolver.js';
import { generateApiKey, hashApiKey, visiblePrefix } from './api-key.secret.js';
import { ApiKey } from './entities/api-key.entity.js';

@Injectable()
export class ApiKeysService {
  constructor(
    @InjectRepository(ApiKey) private readonly keys: Repository<ApiKey>,
    private readonly resolver: ApiKeyResolver,
  ) {}

  /** Creates a key; the returned `key` is the only time its value exists outside the caller. */
  async create(organizationId: string, name: string, permissionLevel: PermissionLevel): Promise<{ apiKey: ApiKey; key: string }> {
    const { key, prefix, hash } = generateApiKey();
    const apiKey = await this.keys.save(this.keys.create({ organizationId, name, prefix, keyHash: hash, permissionLevel }));
    return { apiKey, key };
  }

  async list(organizationId: string, page: PageQuery): Promise<[ApiKey[], number]> {
    return this.keys.findAndCount({
      where: { organizationId },
      order: { createdAt: 'DESC', id: 'DESC' },
      skip: page.offset,
      take: page.limit,
    });
  }

  async delete(organizationId: string, id: string): Promise<void> {
    if (!isUuid(id)) throw new ApiKeyNotFoundError();
    const key = await this.keys.findOne({ where: { id, organizationId } });
    if (!key) throw new ApiKeyNotFoundError();
    await this.keys.delete({ id, organizationId });
    await this.resolver.evict(key.keyHash);
  }

  /** BOOTSTRAP_API_KEY: a Full Access key of exactly this value in the given organization. Idempotent. */
  async ensureKey(organizationId: string, value: string, name: string): Promise<void> {
    await this.keys
      .createQueryBuilder()
      .insert()
      .values({ organizationId, name, prefix: visiblePrefix(value), keyHash: hashApiKey(value), permissionLevel: 'full_access' })
      .orIgnore()
      .execute();
  }
}
