import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../auth/access.js';
import { CurrentPrincipal, RequireAccess } from '../auth/decorators/access.decorators.js';
import { ApiData, ApiDeleted, ApiErrors, ApiPage } from '../common/http/api-docs.js';
import { deleted, ok } from '../common/http/envelope.js';
import { paginate } from '../common/pagination/page.query.js';
import { CreateWebhookDto } from './dto/create-webhook.dto.js';
import { ListWebhookLogsQuery } from './dto/list-webhook-logs.query.js';
import { ListWebhooksQuery } from './dto/list-webhooks.query.js';
import { TestWebhookDto } from './dto/test-webhook.dto.js';
import { UpdateWebhookDto } from './dto/update-webhook.dto.js';
import { RecoverWebhookDto } from './dto/recover-webhook.dto.js';
import {
  EventTypeResponse,
  WebhookLogResponse,
  WebhookRecoverResponse,
  WebhookResendResponse,
  WebhookResponse,
  WebhookRotatedResponse,
  WebhookSummaryResponse,
  WebhookTestResponse,
} from './dto/webhook.response.js';
import { EVENT_DATA_SCHEMAS, eventTypesDescription } from './event-schemas.js';
import { WebhooksService } from './webhooks.service.js';

@ApiTags('Webhooks')
@Controller('v1/webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Get()
  @RequireAccess('webhooks', 'read')
  @ApiOperation({ summary: 'List webhooks, newest first (secrets and retry policies are left out)' })
  @ApiPage(WebhookSummaryResponse)
  async list(@CurrentPrincipal() principal: Principal, @Query() query: ListWebhooksQuery) {
    const [items, total] = await this.webhooks.list(principal.organizationId, query);
    return paginate(items.map((w) => WebhookSummaryResponse.from(w)), total, query);
  }

  @Get('event-types')
  @RequireAccess('webhooks', 'read')
  @ApiOperation({ summary: 'Event types a webhook can subscribe to, each with a JSON Schema of its payload data', description: eventTypesDescription() })
  @ApiPage(EventTypeResponse)
  eventTypes() {
    const items = Object.entries(EVENT_DATA_SCHEMAS).map(([type, { description, schema }]) => ({ type, description, data_schema: schema }));
    return paginate(items, items.length, { page: 1, limit: 100 });
  }

  @Get(':webhook_id')
  @RequireAccess('webhooks', 'read')
  @ApiOperation({ summary: 'Get a webhook, with its secret and retry policy' })
  @ApiData(WebhookResponse)
  async get(@CurrentPrincipal() principal: Principal, @Param('webhook_id') id: string) {
    const webhook = await this.webhooks.getOwned(principal.organizationId, id);
    return ok(WebhookResponse.from({ ...webhook, secret: this.webhooks.secretOf(webhook) }));
  }

  @Post()
  @HttpCode(201)
  @RequireAccess('webhooks', 'write')
  @ApiOperation({ summary: 'Create a webhook (secret generated when omitted)', description: eventTypesDescription() })
  @ApiData(WebhookResponse, 201, 'Created')
  @ApiErrors(409, 422)
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateWebhookDto) {
    const { webhook, secret } = await this.webhooks.create(principal.organizationId, body);
    return ok(WebhookResponse.from({ ...webhook, secret }));
  }

  @Put(':webhook_id')
  @RequireAccess('webhooks', 'write')
  @ApiOperation({ summary: 'Update a webhook; omitted fields are kept' })
  @ApiData(WebhookResponse)
  @ApiErrors(409, 422)
  async update(@CurrentPrincipal() principal: Principal, @Param('webhook_id') id: string, @Body() body: UpdateWebhookDto) {
    const { webhook, secret } = await this.webhooks.update(principal.organizationId, id, body);
    return ok(WebhookResponse.from({ ...webhook, secret }));
  }

  @Delete(':webhook_id')
  @RequireAccess('webhooks', 'delete')
  @ApiOperation({ summary: 'Delete a webhook (its pending deliveries and logs go with it)' })
  @ApiDeleted()
  async delete(@CurrentPrincipal() principal: Principal, @Param('webhook_id') id: string) {
    await this.webhooks.delete(principal.organizationId, id);
    return deleted('Webhook deleted');
  }

  @Post(':webhook_id/test')
  @HttpCode(200)
  @RequireAccess('webhooks', 'write')
  @ApiOperation({ summary: 'Send one signed delivery of event_type with test_data now (no retries); logged as attempt 1' })
  @ApiData(WebhookTestResponse)
  async test(@CurrentPrincipal() principal: Principal, @Param('webhook_id') id: string, @Body() body: TestWebhookDto) {
    const report = await this.webhooks.test(principal.organizationId, id, body);
    return ok(WebhookTestResponse.from(report));
  }

  @Get(':webhook_id/logs')
  @RequireAccess('webhooks', 'read')
  @ApiOperation({ summary: 'Delivery log of a webhook: one entry per attempt, newest first' })
  @ApiPage(WebhookLogResponse)
  async logs(@CurrentPrincipal() principal: Principal, @Param('webhook_id') id: string, @Query() query: ListWebhookLogsQuery) {
    const [items, total] = await this.webhooks.logs(principal.organizationId, id, query);
    return paginate(items.map((a) => WebhookLogResponse.from(a)), total, query);
  }

  @Post(':webhook_id/logs/:log_id/resend')
  @HttpCode(202)
  @RequireAccess('webhooks', 'write')
  @ApiOperation({ summary: 'Queue a new delivery of the event of a log entry (409 WEBHOOK_INACTIVE when the webhook is inactive; 404 WEBHOOK_LOG_NOT_FOUND)' })
  @ApiData(WebhookResendResponse, 202, 'Accepted')
  @ApiErrors(409)
  async resend(@CurrentPrincipal() principal: Principal, @Param('webhook_id') id: string, @Param('log_id') logId: string) {
    return ok({ delivery_id: await this.webhooks.resend(principal.organizationId, id, logId) } satisfies WebhookResendResponse);
  }

  @Post(':webhook_id/recover')
  @HttpCode(202)
  @RequireAccess('webhooks', 'write')
  @ApiOperation({ summary: 'Queue again every event whose delivery to this webhook ended failed since `since` (409 WEBHOOK_INACTIVE when inactive)' })
  @ApiData(WebhookRecoverResponse, 202, 'Accepted')
  @ApiErrors(409)
  async recover(@CurrentPrincipal() principal: Principal, @Param('webhook_id') id: string, @Body() body: RecoverWebhookDto) {
    return ok({ count: await this.webhooks.recover(principal.organizationId, id, body.since) } satisfies WebhookRecoverResponse);
  }

  @Post(':webhook_id/rotate-secret')
  @HttpCode(200)
  @RequireAccess('webhooks', 'write')
  @ApiOperation({ summary: 'Generate a new secret; for 24 hours deliveries carry signatures with both secrets in webhook-signature' })
  @ApiData(WebhookRotatedResponse)
  async rotateSecret(@CurrentPrincipal() principal: Principal, @Param('webhook_id') id: string) {
    const { webhook, secret } = await this.webhooks.rotateSecret(principal.organizationId, id);
    return ok(WebhookRotatedResponse.from({ ...webhook, secret }));
  }
}
