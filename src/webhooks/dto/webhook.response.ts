import { ApiProperty } from '@nestjs/swagger';
import { ATTEMPT_STATUSES, type AttemptStatus, type WebhookDeliveryAttempt } from '../entities/webhook-delivery-attempt.entity.js';
import type { Webhook } from '../entities/webhook.entity.js';
import type { AttemptReport } from '../webhook-deliveries.service.js';
import { isoTime } from '../../common/iso-time.js';

export class RetryPolicyResponse {
  @ApiProperty({ type: 'integer', minimum: 0, maximum: 10 }) max_retries: number;
  @ApiProperty({ type: 'integer', minimum: 100, maximum: 30000 }) retry_delay_ms: number;
}

/** A list item: no secret, no retry policy. */
export class WebhookSummaryResponse {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty() url: string;
  @ApiProperty({ type: [String] }) events: string[];
  @ApiProperty() active: boolean;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;

  static from(w: Webhook): WebhookSummaryResponse {
    return { id: w.id, name: w.name, url: w.url, events: w.events, active: w.active, created_at: isoTime(w.createdAt), updated_at: isoTime(w.updatedAt) };
  }
}

/** Create, get and update: with the secret and the retry policy. */
export class WebhookResponse extends WebhookSummaryResponse {
  @ApiProperty({ description: 'Signing secret' }) secret: string;
  @ApiProperty({ type: RetryPolicyResponse }) retry_policy: RetryPolicyResponse;

  /** With the webhook's secret, decrypted by the service. */
  static override from(w: Webhook & { secret: string }): WebhookResponse {
    return { ...WebhookSummaryResponse.from(w), secret: w.secret, retry_policy: { max_retries: w.maxRetries, retry_delay_ms: w.retryDelayMs } };
  }
}

export class WebhookTestResponse {
  @ApiProperty({ description: 'The delivery id (also the webhook-id header)' }) test_id: string;
  @ApiProperty({ enum: ['delivered', 'failed'] }) status: 'delivered' | 'failed';
  @ApiProperty({ type: 'integer', nullable: true, description: 'null when no HTTP answer came (network error, timeout, refused target)' }) response_code: number | null;
  @ApiProperty({ type: 'integer' }) response_time_ms: number;
  @ApiProperty({ format: 'date-time' }) tested_at: string;

  static from(report: AttemptReport): WebhookTestResponse {
    return {
      test_id: report.deliveryId,
      status: report.status === 'delivered' ? 'delivered' : 'failed',
      response_code: report.result.statusCode,
      response_time_ms: report.result.responseTimeMs,
      tested_at: isoTime(report.attemptedAt),
    };
  }
}

export class WebhookLogResponse {
  @ApiProperty() id: string;
  @ApiProperty() webhook_id: string;
  @ApiProperty({ description: 'The delivery (stable across its attempts; the X-Service-Delivery header)' }) delivery_id: string;
  @ApiProperty() event_type: string;
  @ApiProperty({ enum: ATTEMPT_STATUSES }) status: AttemptStatus;
  @ApiProperty({ type: 'integer', nullable: true, description: 'null on network errors, timeouts and refused targets' }) response_code: number | null;
  @ApiProperty({ type: 'integer', nullable: true }) response_time_ms: number | null;
  @ApiProperty({ type: 'integer', minimum: 1 }) attempt: number;
  @ApiProperty({ format: 'date-time', description: 'The attempt\'s time' }) delivered_at: string;
  @ApiProperty({ type: String, nullable: true, description: 'null when delivered; a short reason otherwise' }) error_message: string | null;

  static from(a: WebhookDeliveryAttempt): WebhookLogResponse {
    return {
      id: a.id,
      webhook_id: a.webhookId,
      delivery_id: a.deliveryId,
      event_type: a.eventType,
      status: a.status,
      response_code: a.responseCode,
      response_time_ms: a.responseTimeMs,
      attempt: a.attempt,
      delivered_at: isoTime(a.deliveredAt),
      error_message: a.errorMessage,
    };
  }
}

export class EventTypeResponse {
  @ApiProperty() type: string;
  @ApiProperty() description: string;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'JSON Schema of the payload\'s data' }) data_schema: Record<string, unknown>;
}

export class WebhookResendResponse {
  @ApiProperty({ description: 'The new delivery (its X-Service-Delivery / webhook-id)' }) delivery_id: string;
}

export class WebhookRecoverResponse {
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Events queued again' }) count: number;
}

export class WebhookRotatedResponse extends WebhookResponse {
  @ApiProperty({ format: 'date-time', description: 'Until then deliveries also carry a signature with the previous secret' }) previous_secret_expires_at: string;

  static override from(w: Webhook & { secret: string }): WebhookRotatedResponse {
    return { ...WebhookResponse.from(w), previous_secret_expires_at: isoTime(w.previousSecretExpiresAt as Date) };
  }
}
