import { ApiExtraModels, ApiProperty } from '@nestjs/swagger';
import { CHANNELS } from '../../common/channels.js';
import { TRIGGER_STATUSES, TRIGGER_TYPES, type Trigger, type TriggerStatus, type TriggerType } from '../entities/trigger.entity.js';
import { ApiDiscriminated } from '../../common/http/openapi/schema-markers.js';
import { TRIGGER_CONFIGURATION_DOCS, TRIGGER_RESPONSE_BRANCHES } from './trigger-configuration.doc.js';
import { isoTime, isoTimeOrNull } from '../../common/iso-time.js';

/** Documented as one branch per type, each with its own configuration schema. */
@ApiExtraModels(...TRIGGER_CONFIGURATION_DOCS)
@ApiDiscriminated({ property: 'type', branches: TRIGGER_RESPONSE_BRANCHES })
export class TriggerResponse {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: TRIGGER_TYPES }) type: TriggerType;
  @ApiProperty({ enum: TRIGGER_STATUSES }) status: TriggerStatus;
  @ApiProperty() workflow_id: string;
  @ApiProperty({ enum: CHANNELS, nullable: true, type: String }) channel: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'Depends on type. A webhook\'s secret is shown by create, get and update, not in lists.' })
  configuration: Record<string, unknown>;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
  @ApiProperty() execution_count: number;
  @ApiProperty({ format: 'date-time', type: String, nullable: true, description: 'null before the first firing' }) last_triggered: string | null;
  @ApiProperty({ format: 'date-time', type: String, nullable: true }) activated_at: string | null;
  @ApiProperty({ format: 'date-time', type: String, nullable: true }) deactivated_at: string | null;
  @ApiProperty({ format: 'date-time', type: String, nullable: true }) paused_at: string | null;
  @ApiProperty({ format: 'date-time', type: String, nullable: true }) resumed_at: string | null;

  /** `configuration` is the type's presentation of the stored one (see TriggersService.presentConfiguration). */
  static from(t: Trigger, configuration: Record<string, unknown>): TriggerResponse {
    return {
      id: t.id,
      name: t.name,
      type: t.type,
      status: t.status,
      workflow_id: t.workflowId,
      channel: t.channel,
      configuration,
      created_at: isoTime(t.createdAt),
      updated_at: isoTime(t.updatedAt),
      execution_count: t.executionCount,
      last_triggered: isoTimeOrNull(t.lastTriggered),
      activated_at: isoTimeOrNull(t.activatedAt),
      deactivated_at: isoTimeOrNull(t.deactivatedAt),
      paused_at: isoTimeOrNull(t.pausedAt),
      resumed_at: isoTimeOrNull(t.resumedAt),
    };
  }
}

export class TriggerActivatedResponse {
  @ApiProperty() id: string;
  @ApiProperty({ enum: ['active'] }) status: TriggerStatus;
  @ApiProperty({ format: 'date-time' }) activated_at: string;

  static from(t: Trigger): TriggerActivatedResponse {
    return { id: t.id, status: t.status, activated_at: isoTime(t.activatedAt as Date) };
  }
}

export class TriggerDeactivatedResponse {
  @ApiProperty() id: string;
  @ApiProperty({ enum: ['inactive'] }) status: TriggerStatus;
  @ApiProperty({ format: 'date-time' }) deactivated_at: string;

  static from(t: Trigger): TriggerDeactivatedResponse {
    return { id: t.id, status: t.status, deactivated_at: isoTime(t.deactivatedAt as Date) };
  }
}

export class TriggerPausedResponse {
  @ApiProperty() id: string;
  @ApiProperty({ enum: ['paused'] }) status: TriggerStatus;
  @ApiProperty({ format: 'date-time' }) paused_at: string;

  static from(t: Trigger): TriggerPausedResponse {
    return { id: t.id, status: t.status, paused_at: isoTime(t.pausedAt as Date) };
  }
}

export class TriggerResumedResponse {
  @ApiProperty() id: string;
  @ApiProperty({ enum: ['active'] }) status: TriggerStatus;
  @ApiProperty({ format: 'date-time' }) resumed_at: string;

  static from(t: Trigger): TriggerResumedResponse {
    return { id: t.id, status: t.status, resumed_at: isoTime(t.resumedAt as Date) };
  }
}
