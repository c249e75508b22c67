import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { CHANNELS } from '../../common/channels.js';
import { WORKFLOW_STATUSES, type Workflow, type WorkflowStatus, type WorkflowSummary, type WorkflowSummaryRow } from '../entities/workflow.entity.js';
import type { WorkflowConfiguration } from '../workflow-graph.validator.js';
import { WorkflowConfigurationResponse } from './workflow-configuration.doc.js';
import { isoTime, isoTimeOrNull } from '../../common/iso-time.js';

export class WorkflowSummaryResponse {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ enum: WORKFLOW_STATUSES }) status: WorkflowStatus;
  @ApiProperty({ enum: CHANNELS, nullable: true, type: String }) channel: string | null;
  @ApiProperty({ description: 'Current configuration version' }) version: number;
  @ApiProperty() execution_count: number;
  @ApiProperty({ type: Number, nullable: true, description: 'Fraction of finished executions that succeeded; null before any finished' })
  success_rate: number | null;
  @ApiProperty({ format: 'date-time', type: String, nullable: true }) activated_at: string | null;
  @ApiProperty({ format: 'date-time', type: String, nullable: true }) deactivated_at: string | null;
  @ApiProperty({ format: 'date-time', type: String }) created_at: string;
  @ApiProperty({ format: 'date-time', type: String }) updated_at: string;

  /** From an entity, or from a list row whose timestamps are already ISO-8601 text. */
  static from(w: WorkflowSummary | WorkflowSummaryRow): WorkflowSummaryResponse {
    const finished = w.successCount + w.failureCount;
    return {
      id: w.id,
      name: w.name,
      description: w.description,
      status: w.status,
      channel: w.channel,
      version: w.version,
      execution_count: w.executionCount,
      success_rate: finished === 0 ? null : w.successCount / finished,
      activated_at: isoTimeOrNull(w.activatedAt),
      deactivated_at: isoTimeOrNull(w.deactivatedAt),
      created_at: isoTime(w.createdAt),
      updated_at: isoTime(w.updatedAt),
    };
  }
}

export class WorkflowDetailResponse extends WorkflowSummaryResponse {
  @ApiProperty({ type: WorkflowConfigurationResponse }) configuration: WorkflowConfiguration;

  static override from(w: Workflow): WorkflowDetailResponse {
    // Not `{ ...summary, configuration }`: V8 gives an object spread's copy a hidden class of its
    // own each time, and adding a property to it makes another (docs/DECISIONS.md, "Platform and HTTP", "Per-request layers").
    const detail = WorkflowSummaryResponse.from(w) as WorkflowDetailResponse;
    detail.configuration = w.configuration;
    return detail;
  }
}

export class WorkflowActivatedResponse {
  @ApiProperty() id: string;
  @ApiProperty({ enum: ['active'] }) status: WorkflowStatus;
  @ApiProperty({ format: 'date-time' }) activated_at: string;

  static from(w: Workflow): WorkflowActivatedResponse {
    return { id: w.id, status: w.status, activated_at: isoTime(w.activatedAt as Date) };
  }
}

export class WorkflowDeactivatedResponse {
  @ApiProperty() id: string;
  @ApiProperty({ enum: ['inactive'] }) status: WorkflowStatus;
  @ApiProperty({ format: 'date-time' }) deactivated_at: string;

  static from(w: Workflow): WorkflowDeactivatedResponse {
    return { id: w.id, status: w.status, deactivated_at: isoTime(w.deactivatedAt as Date) };
  }
}
