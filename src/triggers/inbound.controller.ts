import { All, Body, Controller, Headers, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { Principal } from '../auth/access.js';
import { CurrentPrincipal, Public, RequireAccess } from '../auth/decorators/access.decorators.js';
import { RateLimitClass } from '../rate-limits/rate-limit.decorators.js';
import { ApiData, ApiErrors } from '../common/http/api-docs.js';
import { ApiMethods } from '../common/http/openapi/schema-markers.js';
import { ok } from '../common/http/envelope.js';
import type { FireResult } from '../executions/fire.types.js';
import { NoRateLimit } from '../rate-limits/rate-limit.decorators.js';
import { rateLimitHeaders } from '../redis/rate-limiter.js';
import { FiredExecutionResponse, FireTriggerDto, InboundMessageDto, InboundMessageResponse, WEBHOOK_BODY_DOC } from './dto/inbound.dto.js';
import { TriggerFiringService } from './trigger-firing.service.js';
import { WEBHOOK_METHODS } from './trigger-types/webhook.trigger-type.js';

function toResponse(result: FireResult): FiredExecutionResponse {
  return {
    trigger_id: result.triggerId,
    trigger_execution_id: result.triggerExecutionId,
    workflow_execution_id: result.workflowExecutionId,
    status: result.status,
    ...(result.error ? { error: result.error } : {}),
  };
}

/** Where workflows are started from outside: inbound messages, webhooks, API calls. */
@ApiTags('Inbound')
@Controller('v1')
export class InboundController {
  constructor(private readonly firing: TriggerFiringService) {}

  @Post('messages')
  @HttpCode(202)
  @RequireAccess('executions', 'write')
  @ApiOperation({ summary: "A customer's message: kept for their running execution on the channel (its next form answer), else fires matching message triggers" })
  @ApiData(InboundMessageResponse, 202, 'Accepted')
  @ApiErrors(400)
  async message(@CurrentPrincipal() principal: Principal, @Body() body: InboundMessageDto, @Headers('user-agent') userAgent?: string) {
    const result = await this.firing.receiveMessage(
      principal.organizationId,
      { channel: body.channel, customerRef: body.customer_id, content: body.message, language: body.language, metadata: body.metadata },
      userAgent ?? null,
    );
    return ok({ message_id: result.messageId, executions: result.executions.map(toResponse) });
  }

  @Post('triggers/:trigger_id/fire')
  @HttpCode(202)
  @RequireAccess('triggers', 'write')
  @RateLimitClass('triggers', 'execution')
  @ApiOperation({ summary: 'Fire an api trigger (limited by its rate_limit per hour)' })
  @ApiData(FiredExecutionResponse, 202, 'Accepted (status failed with an error when the trigger or workflow is not active)')
  @ApiErrors(400, 404, 429)
  async fire(
    @CurrentPrincipal() principal: Principal,
    @Param('trigger_id') triggerId: string,
    @Body() body: FireTriggerDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
    @Headers('user-agent') userAgent?: string,
  ) {
    // The request throttler's limits (credential, triggers-execution) and the trigger's own rate_limit: the tightest one's headers.
    const applied = req.rateLimits ?? [];
    const { result, rateLimit } = await this.firing.fireApiTrigger(principal.organizationId, triggerId, body, userAgent ?? null, principal.credentialType, applied);
    res.set(rateLimitHeaders(rateLimit ? [...applied, rateLimit] : applied));
    return ok(toResponse(result));
  }

  /**
   * Inbound webhooks: no bearer credential (the trigger's secret signs the body). Every method
   * is routed here so that a wrong one is answered 405 rather than 404.
   */
  @All('hooks/:trigger_id')
  @Public()
  @NoRateLimit('limited per trigger after the signature check, and failed checks per source address (TriggerFiringService)')
  @HttpCode(202)
  @ApiMethods(...WEBHOOK_METHODS)
  @ApiOperation({ summary: "A webhook trigger's URL: X-Service-Signature = hex HMAC-SHA256 of the raw body with the trigger's secret", requestBody: WEBHOOK_BODY_DOC })
  @ApiData(FiredExecutionResponse, 202, 'Accepted')
  @ApiResponse({ status: 401, description: 'INVALID_SIGNATURE' })
  @ApiErrors(404, 405, 429)
  async hook(@Param('trigger_id') triggerId: string, @Req() req: Request & { rawBody?: Buffer }, @Res({ passthrough: true }) res: Response) {
    const { result, rateLimit } = await this.firing.receiveWebhook(triggerId, {
      method: req.method,
      headers: req.headers,
      rawBody: req.rawBody,
      body: req.body,
      ip: req.ip,
    });
    if (rateLimit) res.set(rateLimitHeaders(rateLimit));
    return ok(toResponse(result));
  }
}
