import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { RateLimitsModule } from '../rate-limits/rate-limits.module.js';
import { ApiKeyResolver } from './api-keys/api-key.resolver.js';
import { ApiKeysController } from './api-keys/api-keys.controller.js';
import { ApiKeysService } from './api-keys/api-keys.service.js';
import { ApiKey } from './api-keys/entities/api-key.entity.js';
import { BootstrapKeyService } from './bootstrap-key.service.js';
import { CREDENTIAL_RESOLVERS } from './credentials/credential-resolver.js';
import { AccessGuard } from './guards/access.guard.js';
import { AuthenticationGuard } from './guards/authentication.guard.js';
import { BearerStrategy } from './guards/bearer.strategy.js';
import { JwtClient } from './jwt-clients/entities/jwt-client.entity.js';
import { JwtClientResolver } from './jwt-clients/jwt-client.resolver.js';
import { JwtClientsController } from './jwt-clients/jwt-clients.controller.js';
import { JwtClientsService } from './jwt-clients/jwt-clients.service.js';
import { MeController } from './me.controller.js';
import { Organization } from './organizations/entities/organization.entity.js';
import { OrganizationsService } from './organizations/organizations.service.js';
import { User } from './users/entities/user.entity.js';
import { UsersService } from './users/users.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([Organization, ApiKey, User, JwtClient]), RateLimitsModule],
  controllers: [ApiKeysController, JwtClientsController, MeController],
  providers: [
    OrganizationsService,
    ApiKeysService,
    UsersService,
    ApiKeyResolver,
    JwtClientsService,
    JwtClientResolver,
    BootstrapKeyService,
    // Token credential types (OAuth access tokens, JWTs) go before the API key, which accepts any shape.
    {
      provide: CREDENTIAL_RESOLVERS,
      useFactory: (jwts: JwtClientResolver, apiKeys: ApiKeyResolver) => [jwts, apiKeys],
      inject: [JwtClientResolver, ApiKeyResolver],
    },
    BearerStrategy,
    AuthenticationGuard,
    AccessGuard,
  ],
  exports: [OrganizationsService, ApiKeysService, UsersService, AuthenticationGuard, AccessGuard],
})
export class AuthModule {}
