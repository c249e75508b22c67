import { Controller, Param, Post, Req, Res } from '@nestjs/common';
import { ApiConsumes, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../../auth/decorators/access.decorators.js';
import { ApiErrors } from '../../common/http/api-docs.js';
import { NoRateLimit } from '../../rate-limits/rate-limit.decorators.js';
import { rateLimitHeaders } from '../../rate-limits/rate-limiter.js';
import { VoiceCallsService } from './voice-calls.service.js';

/**
 * A voice account's `webhook_url`: what Twilio calls when the number is called, after each Gather and
 * with the call's status. Public: X-Twilio-Signature authenticates each request; the raw form body
 * arrives unparsed (app.factory.ts), so the signature covers the parameters exactly as posted.
 */
@ApiTags('Inbound')
@Controller('v1/channel-accounts')
export class ChannelAccountVoiceController {
  constructor(private readonly calls: VoiceCallsService) {}

  @Post(':account_id/voice')
  @Public()
  @NoRateLimit('limited per channel account after the signature check (RATE_LIMIT_CHANNEL_PER_MINUTE), and failed checks per source address')
  @ApiConsumes('application/x-www-form-urlencoded')
  @ApiOperation({
    summary:
      "Twilio's call requests (the call coming in, a Gather's answer, a redirect, the status callback): X-Twilio-Signature = base64 HMAC-SHA1 with the auth token " +
      'of PUBLIC_BASE_URL + path + query followed by the sorted POST parameters; answered with TwiML',
  })
  @ApiResponse({
    status: 200,
    description: "The call's next instructions (Say, Gather, Redirect, Hangup), or an empty Response for a status callback",
    content: { 'text/xml': { schema: { type: 'string', example: '<?xml version="1.0" encoding="UTF-8"?><Response><Say>Hello</Say><Hangup/></Response>' } } },
  })
  @ApiResponse({ status: 403, description: 'INVALID_SIGNATURE: nothing was started or stored' })
  @ApiErrors(400, 404, 429)
  async answer(@Param('account_id') accountId: string, @Req() req: Request & { rawBody?: Buffer }, @Res() res: Response) {
    const { twiml, rateLimit } = await this.calls.answer(accountId, { rawBody: req.rawBody, url: req.originalUrl, headers: req.headers, ip: req.ip });
    if (rateLimit) res.set(rateLimitHeaders(rateLimit));
    res.status(200).type('text/xml').send(twiml);
  }
}
