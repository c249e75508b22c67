import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiData, ApiDeleted, ApiErrors, ApiPage } from '../../common/http/api-docs.js';
import { deleted, ok } from '../../common/http/envelope.js';
import { PageQuery, paginate } from '../../common/pagination/page.query.js';
import type { Principal } from '../access.js';
import { CurrentPrincipal, RequireAccess } from '../decorators/access.decorators.js';
import { ApiKeysService } from './api-keys.service.js';
import { ApiKeyResponse, CreatedApiKeyResponse } from './dto/api-key.response.js';
import { CreateApiKeyDto } from './dto/create-api-key.dto.js';

@ApiTags('API keys')
@Controller('v1/api-keys')
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  @Post()
  @HttpCode(201)
  @RequireAccess('credentials', 'write')
  @ApiOperation({ summary: 'Create an API key (the key is returned once)' })
  @ApiData(CreatedApiKeyResponse, 201, 'Created')
  @ApiErrors(400)
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateApiKeyDto) {
    const { apiKey, key } = await this.apiKeys.create(principal.organizationId, body.name, body.permission_level);
    return ok(CreatedApiKeyResponse.from({ ...apiKey, key }));
  }

  @Get()
  @RequireAccess('credentials', 'read')
  @ApiOperation({ summary: 'List API keys (never their values)' })
  @ApiPage(ApiKeyResponse)
  @ApiErrors(400)
  async list(@CurrentPrincipal() principal: Principal, @Query() query: PageQuery) {
    const [keys, total] = await this.apiKeys.list(principal.organizationId, query);
    return paginate(keys.map(ApiKeyResponse.from), total, query);
  }

  @Delete(':id')
  @RequireAccess('credentials', 'delete')
  @ApiOperation({ summary: 'Revoke an API key, at once on every API process' })
  @ApiDeleted()
  @ApiErrors(404)
  async delete(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    await this.apiKeys.delete(principal.organizationId, id);
    return deleted('API key deleted');
  }
}
