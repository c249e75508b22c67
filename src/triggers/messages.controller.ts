import { Body, Controller, Headers, HttpCode, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../auth/access.js';
import { CurrentPrincipal, RequireAccess } from '../auth/decorators/access.decorators.js';
import { ApiData, ApiErrors } from '../common/http/api-docs.js';
import { ok } from '../common/http/envelope.js';
import { InboundMessageDto, InboundMessageResponse } from './dto/inbound-message.dto.js';
import { TriggerFiringService } from './trigger-firing.service.js';

/**
 * A customer's inbound message. In the triggers module, which owns what it does: keep it for the
 * customer's running execution on the channel, else fire the matching message triggers,
 * workflows' managed ones included (TriggerFiringService).
 */
@ApiTags('Inbound')
@Controller('v1/messages')
export class MessagesController {
  constructor(private readonly firing: TriggerFiringService) {}

  @Post()
  @HttpCode(202)
  @RequireAccess('executions', 'write')
  @ApiOperation({ summary: "A customer's message: kept for their running execution on the channel (its next form answer), else fires matching message triggers" })
  @ApiData(InboundMessageResponse, 202, 'Accepted')
  @ApiErrors(400, 404)
  async message(@CurrentPrincipal() principal: Principal, @Body() body: InboundMessageDto, @Headers('user-agent') userAgent?: string) {
    const result = await this.firing.receiveMessage(
      principal.organizationId,
      {
        channel: body.channel,
        customerRef: body.customer_id,
        content: body.message,
        language: body.language,
        metadata: body.metadata,
        channelAccountId: body.channel_account_id,
      },
      userAgent ?? null,
    );
    return ok(InboundMessageResponse.from(result));
  }
}
