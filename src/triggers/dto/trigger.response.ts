import { ApiExtraModels, ApiProperty } from '@nestjs/swagger';
import { CHANNELS } from '../../common/channels.js';
import { TRIGGER_STATUSES, TRIGGER_TYPES, type Trigger, type TriggerStatus, type TriggerType } from '../entities/trigger.entity.js';
import { ApiDiscriminated } from '../../common/http/openapi/schema-markers.js';
import { TRIGGER_CONFIGURATION_DOCS, TRIGGER_RESPONSE_BRANCHES } from './trigger-configuration.doc.js';

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
  @ApiProperty({ format: 'date-time' }) created_at: Date;
  @ApiProperty({ format: 'date-time' }) updated_at: Date;
  @ApiProperty() execution_count: number;
  @ApiProperty({ format: 'date-time', type: String, nullable: true, description: 'null before the first firing' }) last_triggered: Date | null;
  @ApiProperty({ format: 'date-time', type: String, nullable: true }) activated_at: Date | null;
  @ApiProperty({ format: 'date-time', type: String, nullable: true }) deactivated_at: Date | null;
  @ApiProperty({ format: 'date-time', type: String, nullable: true }) paused_at: Date | null;
  @ApiProperty({ format: 'date-time', type: String, nullable: true }) resumed_at: Date | null;

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
      created_at: t.createdAt,
      updated_at: t.updatedAt,
      execution_count: t.executionCount,
      last_triggered: t.lastTriggered,
      activated_at: t.activatedAt,
      deactivated_at: t.deactivatedAt,
      paused_at: t.pausedAt,
      resumed_at: t.resumedAt,
    };
  }
}

export class TriggerActivatedResponse {
  @ApiProperty() id: string;
  @ApiProperty({ enum: ['active'] }) status: TriggerStatus;
  @ApiProperty({ format: 'date-time' }) activated_at: Date;
}

export class TriggerDeactivatedResponse {
  @ApiProperty() id: string;
  @ApiProperty({ enum: ['inactive'] }) status: TriggerStatus;
  @ApiProperty({ format: 'date-time' }) deactivated_at: Date;
}

export class TriggerPausedResponse {
  @ApiProperty() id: string;
  @ApiProperty({ enum: ['paused'] }) status: TriggerStatus;
  @ApiProperty({ format: 'date-time' }) paused_at: Date;
}

export class TriggerResumedResponse {
  @ApiProperty() id: string;
  @ApiProperty({ enum: ['active'] }) status: TriggerStatus;
  @ApiProperty({ format: 'date-time' }) resumed_at: Date;
}
