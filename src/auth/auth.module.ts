import { Module } from '@nestjs/common';
import { JwtModule } from '@nestjs/jwt';
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
import { AccessTokenSigner } from './oauth/access-token.signer.js';
import { OAuthAuthorizationCode } from './oauth/entities/oauth-authorization-code.entity.js';
import { OAuthClient } from './oauth/entities/oauth-client.entity.js';
import { OAuthRefreshToken } from './oauth/entities/oauth-refresh-token.entity.js';
import { OAuthRevokedToken } from './oauth/entities/oauth-revoked-token.entity.js';
import { LoginLimiter } from './oauth/login-limiter.js';
import { OAuthClientsController } from './oauth/oauth-clients.controller.js';
import { OAuthClientsService } from './oauth/oauth-clients.service.js';
import { OAuthController } from './oauth/oauth.controller.js';
import { OAuthService } from './oauth/oauth.service.js';
import { OAuthTokenResolver } from './oauth/oauth-token.resolver.js';
import { WellKnownController } from './oauth/well-known.controller.js';
import { Organization } from './organizations/entities/organization.entity.js';
import { OrganizationsService } from './organizations/organizations.service.js';
import { User } from './users/entities/user.entity.js';
import { UsersService } from './users/users.service.js';

@Module({
  imports: [
    TypeOrmModule.forFeature([Organization, ApiKey, User, JwtClient, OAuthClient, OAuthAuthorizationCode, OAuthRefreshToken, OAuthRevokedToken]),
    RateLimitsModule,
    // Keys and algorithm are passed on each call (AccessTokenSigner): several keys verify during a rotation.
    JwtModule.register({}),
  ],
  controllers: [ApiKeysController, JwtClientsController, OAuthClientsController, OAuthController, WellKnownController, MeController],
  providers: [
    OrganizationsService,
    ApiKeysService,
    UsersService,
    ApiKeyResolver,
    JwtClientsService,
    JwtClientResolver,
    BootstrapKeyService,
    AccessTokenSigner,
    OAuthTokenResolver,
    OAuthClientsService,
    OAuthService,
    LoginLimiter,
    // Token credential types (OAuth access tokens, JWTs) go before the API key, which accepts any shape.
    {
      provide: CREDENTIAL_RESOLVERS,
      // Our access tokens (typ at+jwt, HS256) before client JWTs, which never use HS256.
      useFactory: (oauth: OAuthTokenResolver, jwts: JwtClientResolver, apiKeys: ApiKeyResolver) => [oauth, jwts, apiKeys],
      inject: [OAuthTokenResolver, JwtClientResolver, ApiKeyResolver],
    },
    BearerStrategy,
    AuthenticationGuard,
    AccessGuard,
  ],
  // BearerStrategy: the application module's early-answer limits resolve credentials through it (and its caches).
  exports: [OrganizationsService, ApiKeysService, UsersService, AuthenticationGuard, AccessGuard, BearerStrategy],
})
export class AuthModule {}
