import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { isUuid } from '../../common/ids/uuid.js';
import type { PageQuery } from '../../common/pagination/page.query.js';
import { JwtClientNotFoundError } from '../auth.errors.js';
import { JwtClient } from './entities/jwt-client.entity.js';
import { JwtClientResolver } from './jwt-client.resolver.js';
import { importPublicKey } from './public-key.js';

@Injectable()
export class JwtClientsService {
  constructor(
    @InjectRepository(JwtClient) private readonly clients: Repository<JwtClient>,
    private readonly resolver: JwtClientResolver,
  ) {}

  async create(organizationId: string, name: string, publicKey: unknown, scopes: string[]): Promise<JwtClient> {
    const { jwk, algorithms } = importPublicKey(publicKey);
    return this.clients.save(this.clients.create({ organizationId, name, publicKey: jwk, algorithms, scopes: [...new Set(scopes)] }));
  }

  async list(organizationId: string, page: PageQuery): Promise<[JwtClient[], number]> {
    return this.clients.findAndCount({
      where: { organizationId },
      order: { createdAt: 'DESC', id: 'DESC' },
      skip: page.offset,
      take: page.limit,
    });
  }

  async delete(organizationId: string, id: string): Promise<void> {
    if (!isUuid(id)) throw new JwtClientNotFoundError();
    const result = await this.clients.delete({ id, organizationId });
    if (!result.affected) throw new JwtClientNotFoundError();
    await this.resolver.evict(id);
  }
}
