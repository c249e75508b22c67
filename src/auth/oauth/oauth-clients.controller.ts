import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiData, ApiDeleted, ApiErrors, ApiPage } from '../../common/http/api-docs.js';
import { deleted, ok } from '../../common/http/envelope.js';
import { PageQuery, paginate } from '../../common/pagination/page.query.js';
import type { Principal } from '../access.js';
import { CurrentPrincipal, RequireAccess } from '../decorators/access.decorators.js';
import { CreateOAuthClientDto } from './dto/create-oauth-client.dto.js';
import { CreatedOAuthClientResponse, OAuthClientResponse } from './dto/oauth-client.response.js';
import { OAuthClientsService } from './oauth-clients.service.js';

@ApiTags('OAuth clients')
@Controller('v1/oauth/clients')
export class OAuthClientsController {
  constructor(private readonly clients: OAuthClientsService) {}

  @Post()
  @HttpCode(201)
  @RequireAccess('credentials', 'write')
  @ApiOperation({ summary: 'Register an OAuth client: redirect URIs, scopes, token endpoint authentication; the secret is shown once' })
  @ApiData(CreatedOAuthClientResponse, 201, 'Created')
  @ApiErrors(400)
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateOAuthClientDto) {
    const { client, secret } = await this.clients.create(principal.organizationId, {
      name: body.name,
      redirectUris: body.redirect_uris,
      scopes: body.scopes,
      tokenEndpointAuthMethod: body.token_endpoint_auth_method ?? null,
    });
    return ok(CreatedOAuthClientResponse.from({ ...client, secret }));
  }

  @Get()
  @RequireAccess('credentials', 'read')
  @ApiOperation({ summary: 'List OAuth clients (never their secrets)' })
  @ApiPage(OAuthClientResponse)
  @ApiErrors(400)
  async list(@CurrentPrincipal() principal: Principal, @Query() query: PageQuery) {
    const [clients, total] = await this.clients.list(principal.organizationId, query);
    return paginate(clients.map(OAuthClientResponse.from), total, query);
  }

  @Delete(':id')
  @RequireAccess('credentials', 'delete')
  @ApiOperation({ summary: 'Delete an OAuth client; its codes and tokens are refused at once on every API process' })
  @ApiDeleted()
  @ApiErrors(404)
  async delete(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    await this.clients.delete(principal.organizationId, id);
    return deleted('OAuth client deleted');
  }
}
