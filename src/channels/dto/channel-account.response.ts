import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { isoTime } from '../../common/iso-time.js';
import type { ChannelAccount } from '../entities/channel-account.entity.js';

export class ChannelAccountSettingsResponse {
  @ApiPropertyOptional({ format: 'uuid' }) workflow_id?: string;
  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: 10_000, description: 'Messages of one customer within this many ms after the first are handled as one turn' }) burst_window_ms?: number;
  @ApiPropertyOptional({ description: 'Voice accounts: the voice calls are spoken with (TwiML <Say voice>)', example: 'Polly.Joanna' }) voice?: string;
  @ApiPropertyOptional({ description: 'Voice accounts: the language calls are spoken and heard in', example: 'en-US' }) language?: string;
}

/** An account as clients see it: which credentials are set, never their values. */
export class ChannelAccountResponse {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: ['whatsapp', 'instagram', 'voice'] }) channel: string;
  @ApiProperty({ enum: ['whatsapp_cloud', 'instagram', 'twilio'] }) provider: string;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'boolean' }, description: 'Each credential of the provider: true when set (values are write-only)', example: { phone_number_id: true, access_token: true, app_secret: true } })
  credentials: Record<string, boolean>;
  @ApiProperty({ description: "What to paste into the provider's console as the callback (webhook) URL" }) webhook_url: string;
  @ApiPropertyOptional({ description: "Meta providers: the verify token to paste beside the callback URL" }) verify_token?: string;
  @ApiProperty({ type: ChannelAccountSettingsResponse }) settings: ChannelAccountSettingsResponse;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;

  static from(account: ChannelAccount, extra: { webhookUrl: string; verifyToken: string | null; credentialNames: readonly string[] }): ChannelAccountResponse {
    const set = new Set(account.credentialFields);
    return {
      id: account.id,
      name: account.name,
      channel: account.channel,
      provider: account.provider,
      credentials: Object.fromEntries(extra.credentialNames.map((name) => [name, set.has(name)])),
      webhook_url: extra.webhookUrl,
      ...(extra.verifyToken !== null ? { verify_token: extra.verifyToken } : {}),
      settings: {
        ...(account.settings.workflow_id ? { workflow_id: account.settings.workflow_id } : {}),
        ...(account.settings.burst_window_ms ? { burst_window_ms: account.settings.burst_window_ms } : {}),
        ...(account.settings.voice ? { voice: account.settings.voice } : {}),
        ...(account.settings.language ? { language: account.settings.language } : {}),
      },
      created_at: isoTime(account.createdAt),
      updated_at: isoTime(account.updatedAt),
    };
  }
}
