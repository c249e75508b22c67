import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { ApiKeysService } from './api-keys/api-keys.service.js';
import { OrganizationsService } from './organizations/organizations.service.js';

export const BOOTSTRAP_ORGANIZATION = 'default';

/** BOOTSTRAP_API_KEY: the organization `default` with a Full Access key of exactly that value. */
@Injectable()
export class BootstrapKeyService implements OnApplicationBootstrap {
  private readonly logger = new Logger(BootstrapKeyService.name);

  constructor(
    private readonly config: AppConfig,
    private readonly organizations: OrganizationsService,
    private readonly apiKeys: ApiKeysService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const value = this.config.bootstrapApiKey;
    if (!value) return;
    const organization = await this.organizations.ensure(BOOTSTRAP_ORGANIZATION);
    await this.apiKeys.ensureKey(organization.id, value, 'Bootstrap key');
    this.logger.log(`Bootstrap API key ready in organization "${BOOTSTRAP_ORGANIZATION}" (${organization.id})`);
  }
}
