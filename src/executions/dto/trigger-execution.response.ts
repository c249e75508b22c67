import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { TriggerExecution } from '../entities/trigger-execution.entity.js';
import { EXECUTION_STATUSES, type ExecutionStatus } from '../entities/workflow-execution.entity.js';
import { isoTime, isoTimeOrNull } from '../../common/iso-time.js';

function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function object(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

export class TriggerExecutionInputResponse {
  @ApiProperty({ type: String, nullable: true }) message: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'The client\'s id of the customer' }) customer_id: string | null;
  @ApiProperty({ type: String, nullable: true }) channel: string | null;
}

export class TriggerExecutionMetadataDoc {
  @ApiProperty({ type: String, nullable: true }) user_agent: string | null;
  @ApiProperty({ format: 'date-time' }) timestamp: string;
  @ApiPropertyOptional({ format: 'date-time', description: 'Schedule triggers: the slot this firing stands for (each slot fires once)' }) scheduled_for?: string;
}

export class TriggerExecutionInputDetailResponse extends TriggerExecutionInputResponse {
  @ApiProperty({ type: TriggerExecutionMetadataDoc }) metadata: Record<string, unknown>;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'The data an api trigger was fired with, when any' })
  data?: Record<string, unknown>;
}

export class TriggerExecutionOutputResponse {
  @ApiProperty({ type: String, nullable: true, description: 'null when the firing was refused' }) workflow_execution_id: string | null;
}

export class TriggerExecutionOutputDetailResponse extends TriggerExecutionOutputResponse {
  @ApiProperty({ enum: EXECUTION_STATUSES, nullable: true, description: 'Status of the linked workflow execution; null when there is none' })
  workflow_status: ExecutionStatus | null;
}

export class TriggerExecutionErrorDoc {
  @ApiProperty({ example: 'TRIGGER_INACTIVE' }) code: string;
  @ApiProperty() message: string;
}

class TriggerExecutionFields {
  @ApiProperty() id: string;
  @ApiProperty() trigger_id: string;
  @ApiProperty() workflow_id: string;
  @ApiProperty({ enum: EXECUTION_STATUSES }) status: ExecutionStatus;
  @ApiProperty({ format: 'date-time' }) triggered_at: string;
  @ApiProperty({ format: 'date-time', type: String, nullable: true, description: 'null while running' }) completed_at: string | null;
  @ApiProperty({ type: Number, nullable: true, description: 'null while running' }) duration_ms: number | null;
}

/** A list item: input without metadata, output without the workflow status, no error. */
export class TriggerExecutionResponse extends TriggerExecutionFields {
  @ApiProperty({ type: TriggerExecutionInputResponse }) input: TriggerExecutionInputResponse;
  @ApiProperty({ type: TriggerExecutionOutputResponse }) output: TriggerExecutionOutputResponse;

  static from(te: TriggerExecution): TriggerExecutionResponse {
    return {
      id: te.id,
      trigger_id: te.triggerId,
      workflow_id: te.workflowId,
      status: te.status,
      triggered_at: isoTime(te.triggeredAt),
      completed_at: isoTimeOrNull(te.completedAt),
      duration_ms: te.durationMs,
      input: { message: text(te.input.message), customer_id: text(te.input.customer_id), channel: text(te.input.channel) },
      output: { workflow_execution_id: te.workflowExecutionId },
    };
  }
}

export class TriggerExecutionDetailResponse extends TriggerExecutionFields {
  @ApiProperty({ type: TriggerExecutionInputDetailResponse }) input: TriggerExecutionInputDetailResponse;
  @ApiProperty({ type: TriggerExecutionOutputDetailResponse }) output: TriggerExecutionOutputDetailResponse;
  @ApiProperty({ type: TriggerExecutionErrorDoc, nullable: true, description: 'Why the firing failed; null otherwise' })
  error: TriggerExecutionErrorDoc | null;

  /** With the status of the workflow execution it started (null when none). */
  static from(te: TriggerExecution, workflowStatus: ExecutionStatus | null): TriggerExecutionDetailResponse {
    const summary = TriggerExecutionResponse.from(te);
    const input: TriggerExecutionInputDetailResponse = { ...summary.input, metadata: object(te.input.metadata) ?? {} };
    const data = object(te.input.data);
    if (data) input.data = data;
    return { ...summary, input, output: { ...summary.output, workflow_status: workflowStatus }, error: te.error };
  }
}
