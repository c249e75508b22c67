import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../auth/access.js';
import { CurrentPrincipal, RequireAccess } from '../auth/decorators/access.decorators.js';
import { ApiData, ApiDeleted, ApiErrors, ApiPage } from '../common/http/api-docs.js';
import { deleted, ok } from '../common/http/envelope.js';
import { paginate } from '../common/pagination/page.query.js';
import { ChannelAccountsService } from './channel-accounts.service.js';
import { ChannelAccountResponse } from './dto/channel-account.response.js';
import { CreateChannelAccountDto } from './dto/create-channel-account.dto.js';
import { ListChannelAccountsQuery } from './dto/list-channel-accounts.query.js';
import { UpdateChannelAccountDto } from './dto/update-channel-account.dto.js';

@ApiTags('Channel accounts')
@Controller('v1/channel-accounts')
export class ChannelAccountsController {
  constructor(private readonly accounts: ChannelAccountsService) {}

  @Get()
  @RequireAccess('channels', 'read')
  @ApiOperation({ summary: 'List channel accounts, newest first (credentials say only which are set)' })
  @ApiPage(ChannelAccountResponse)
  async list(@CurrentPrincipal() principal: Principal, @Query() query: ListChannelAccountsQuery) {
    const [items, total] = await this.accounts.list(principal.organizationId, query);
    return paginate(items.map((v) => ChannelAccountResponse.from(v.account, v)), total, query);
  }

  @Get(':account_id')
  @RequireAccess('channels', 'read')
  @ApiOperation({ summary: 'Get a channel account, with its webhook_url and (Meta) verify_token' })
  @ApiData(ChannelAccountResponse)
  async get(@CurrentPrincipal() principal: Principal, @Param('account_id') id: string) {
    const view = await this.accounts.get(principal.organizationId, id);
    return ok(ChannelAccountResponse.from(view.account, view));
  }

  @Post()
  @HttpCode(201)
  @RequireAccess('channels', 'write')
  @ApiOperation({ summary: 'Connect a WhatsApp number (whatsapp_cloud), an Instagram account (instagram) or a phone line (twilio)' })
  @ApiData(ChannelAccountResponse, 201, 'Created')
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateChannelAccountDto) {
    const view = await this.accounts.create(principal.organizationId, body);
    return ok(ChannelAccountResponse.from(view.account, view));
  }

  @Put(':account_id')
  @RequireAccess('channels', 'write')
  @ApiOperation({ summary: 'Update a channel account; omitted fields are kept, credentials sent replace those stored' })
  @ApiData(ChannelAccountResponse)
  @ApiErrors(404)
  async update(@CurrentPrincipal() principal: Principal, @Param('account_id') id: string, @Body() body: UpdateChannelAccountDto) {
    const view = await this.accounts.update(principal.organizationId, id, body);
    return ok(ChannelAccountResponse.from(view.account, view));
  }

  @Delete(':account_id')
  @RequireAccess('channels', 'delete')
  @ApiOperation({ summary: 'Delete a channel account: its webhooks answer 404 and its unsent messages fail (CHANNEL_ACCOUNT_DELETED)' })
  @ApiDeleted()
  async delete(@CurrentPrincipal() principal: Principal, @Param('account_id') id: string) {
    await this.accounts.remove(principal.organizationId, id);
    return deleted('Channel account deleted');
  }
}
