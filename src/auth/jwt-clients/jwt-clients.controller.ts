import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiData, ApiDeleted, ApiErrors, ApiPage } from '../../common/http/api-docs.js';
import { deleted, ok } from '../../common/http/envelope.js';
import { PageQuery, paginate } from '../../common/pagination/page.query.js';
import type { Principal } from '../access.js';
import { CurrentPrincipal, RequireAccess } from '../decorators/access.decorators.js';
import { CreateJwtClientDto } from './dto/create-jwt-client.dto.js';
import { JwtClientResponse } from './dto/jwt-client.response.js';
import { JwtClientsService } from './jwt-clients.service.js';

@ApiTags('JWT clients')
@Controller('v1/jwt-clients')
export class JwtClientsController {
  constructor(private readonly jwtClients: JwtClientsService) {}

  @Post()
  @HttpCode(201)
  @RequireAccess('credentials', 'write')
  @ApiOperation({ summary: 'Register a server-to-server client: its public key and scopes; returns application_id, the iss of its tokens' })
  @ApiData(JwtClientResponse, 201, 'Created')
  @ApiErrors(400)
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateJwtClientDto) {
    const client = await this.jwtClients.create(principal.organizationId, body.name, body.public_key, body.scopes);
    return ok(JwtClientResponse.from(client));
  }

  @Get()
  @RequireAccess('credentials', 'read')
  @ApiOperation({ summary: 'List JWT clients' })
  @ApiPage(JwtClientResponse)
  @ApiErrors(400)
  async list(@CurrentPrincipal() principal: Principal, @Query() query: PageQuery) {
    const [clients, total] = await this.jwtClients.list(principal.organizationId, query);
    return paginate(clients.map(JwtClientResponse.from), total, query);
  }

  @Delete(':id')
  @RequireAccess('credentials', 'delete')
  @ApiOperation({ summary: "Delete a JWT client; its tokens are refused at once on every API process" })
  @ApiDeleted()
  @ApiErrors(404)
  async delete(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    await this.jwtClients.delete(principal.organizationId, id);
    return deleted('JWT client deleted');
  }
}
