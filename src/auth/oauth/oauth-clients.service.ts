import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { InvalidRequestError } from '../../common/errors/common.errors.js';
import { isUuid } from '../../common/ids/uuid.js';
import type { PageQuery } from '../../common/pagination/page.query.js';
import { OAuthClient, type TokenEndpointAuthMethod } from './entities/oauth-client.entity.js';
import { OAuthClientNotFoundError } from './oauth.errors.js';
import { OAuthTokenResolver } from './oauth-token.resolver.js';
import { redirectUriProblem } from './redirect-uri.js';

const SECRET_MARKER = 'wocs_';

export function hashSecret(value: string): string {
  return hash('sha256', value, 'hex');
}

@Injectable()
export class OAuthClientsService {
  constructor(
    @InjectRepository(OAuthClient) private readonly clients: Repository<OAuthClient>,
    private readonly tokens: OAuthTokenResolver,
  ) {}

  /** Registers a client; the secret (confidential clients) is returned here only, and stored as SHA-256. */
  async create(
    organizationId: string,
    input: { name: string; redirectUris: string[]; scopes: string[]; tokenEndpointAuthMethod: TokenEndpointAuthMethod | null },
  ): Promise<{ client: OAuthClient; secret?: string }> {
    input.redirectUris.forEach((uri, i) => {
      const problem = redirectUriProblem(uri);
      if (problem) throw new InvalidRequestError(`redirect_uris[${i}] ${problem}`, `redirect_uris[${i}]`);
    });
    // 256 random bits: a fast hash is enough (nothing to brute-force), as for API keys.
    const secret = input.tokenEndpointAuthMethod === 'none' ? undefined : SECRET_MARKER + randomBytes(32).toString('base64url');
    const client = await this.clients.save(
      this.clients.create({
        organizationId,
        name: input.name,
        secretHash: secret === undefined ? null : hashSecret(secret),
        redirectUris: [...new Set(input.redirectUris)],
        scopes: [...new Set(input.scopes)],
        tokenEndpointAuthMethod: input.tokenEndpointAuthMethod,
      }),
    );
    return { client, secret };
  }

  async list(organizationId: string, page: PageQuery): Promise<[OAuthClient[], number]> {
    return this.clients.findAndCount({ where: { organizationId }, order: { createdAt: 'DESC', id: 'DESC' }, skip: page.offset, take: page.limit });
  }

  /** Deletes a client with its codes and refresh tokens; its access tokens are refused at once on every process. */
  async delete(organizationId: string, id: string): Promise<void> {
    if (!isUuid(id)) throw new OAuthClientNotFoundError();
    const result = await this.clients.delete({ id, organizationId });
    if (!result.affected) throw new OAuthClientNotFoundError();
    await this.tokens.evictClient(id);
  }

  /** A client by its client_id (any organization: the client_id is what names the organization on /oauth/*). */
  async find(clientId: string): Promise<OAuthClient | null> {
    if (!isUuid(clientId)) return null;
    return this.clients.findOne({ where: { id: clientId } });
  }

  /** Whether the secret is the client's (constant time over the hashes). */
  secretMatches(client: OAuthClient, secret: string): boolean {
    if (client.secretHash === null || secret.length > 512) return false;
    return timingSafeEqual(Buffer.from(hashSecret(secret), 'hex'), Buffer.from(client.secretHash, 'hex'));
  }
}
