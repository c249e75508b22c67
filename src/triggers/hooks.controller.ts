import { All, Controller, HttpCode, Param, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../auth/decorators/access.decorators.js';
import { ApiData, ApiErrors } from '../common/http/api-docs.js';
import { ApiMethods } from '../common/http/openapi/schema-markers.js';
import { ok } from '../common/http/envelope.js';
import { NoRateLimit } from '../rate-limits/rate-limit.decorators.js';
import { rateLimitHeaders } from '../rate-limits/rate-limiter.js';
import { FiredExecutionResponse } from './dto/fired-execution.response.js';
import { WEBHOOK_BODY_DOC } from './dto/webhook-body.js';
import { TriggerFiringService } from './trigger-firing.service.js';
import { WEBHOOK_METHODS } from './trigger-types/webhook.trigger-type.js';

/** A webhook trigger's URL (its `configuration.url`): where outside systems start a workflow. */
@ApiTags('Inbound')
@Controller('v1/hooks')
export class HooksController {
  constructor(private readonly firing: TriggerFiringService) {}

  /**
   * Inbound webhooks: no bearer credential (the trigger's secret signs the body). Every method
   * is routed here so that a wrong one is answered 405 rather than 404.
   */
  @All(':trigger_id')
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
    return ok(FiredExecutionResponse.from(result));
  }
}
