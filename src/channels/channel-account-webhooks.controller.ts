import { Controller, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../auth/decorators/access.decorators.js';
import { ApiErrors } from '../common/http/api-docs.js';
import { NoRateLimit } from '../rate-limits/rate-limit.decorators.js';
import { rateLimitHeaders } from '../rate-limits/rate-limiter.js';
import { ChannelInboundService } from './channel-inbound.service.js';

/**
 * A channel account's webhook URL (its `webhook_url`): what Meta calls. Public: the provider's
 * signature authenticates each payload; the raw bytes arrive unparsed (app.factory.ts).
 */
@ApiTags('Inbound')
@Controller('v1/channel-accounts')
export class ChannelAccountWebhooksController {
  constructor(private readonly inbound: ChannelInboundService) {}

  @Get(':account_id/webhook')
  @Public()
  @NoRateLimit('answered from the account alone; a wrong token is 403')
  @ApiOperation({ summary: "Meta's webhook verification: hub.mode=subscribe and the account's hub.verify_token echo hub.challenge (text/plain)" })
  @ApiResponse({ status: 200, description: 'hub.challenge, as text/plain', content: { 'text/plain': { schema: { type: 'string', example: '1158201444' } } } })
  @ApiResponse({ status: 403, description: 'VERIFICATION_FAILED' })
  @ApiErrors(404)
  async verify(@Param('account_id') accountId: string, @Query() query: Record<string, unknown>, @Res() res: Response) {
    const challenge = await this.inbound.verify(accountId, query);
    res.status(200).type('text/plain').send(challenge);
  }

  @Post(':account_id/webhook')
  @Public()
  @NoRateLimit('limited per channel account after the signature check (RATE_LIMIT_CHANNEL_PER_MINUTE), and failed checks per source address')
  @HttpCode(200)
  @ApiOperation({
    summary:
      "Meta's payloads (WhatsApp Cloud API, Instagram Messaging): X-Hub-Signature-256 = sha256= + hex HMAC-SHA256 of the raw body with the app secret; " +
      '200 once applied, or stored to be applied again',
  })
  @ApiResponse({
    status: 200,
    description: 'Applied (or, for the part that could not be yet, stored and applied again later): nothing of it can be lost',
    schema: { type: 'object', properties: { received: { type: 'boolean', enum: [true] } }, required: ['received'], additionalProperties: false },
  })
  @ApiResponse({ status: 401, description: 'INVALID_SIGNATURE: nothing was stored' })
  @ApiErrors(400, 404, 429)
  async receive(@Param('account_id') accountId: string, @Req() req: Request & { rawBody?: Buffer }, @Res({ passthrough: true }) res: Response) {
    const { rateLimit } = await this.inbound.receive(accountId, { rawBody: req.rawBody, headers: req.headers, ip: req.ip });
    if (rateLimit) res.set(rateLimitHeaders(rateLimit));
    return { received: true };
  }
}
