import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { CHANNELS } from '../../common/channels.js';
import { WORKFLOW_STATUSES, type Workflow, type WorkflowStatus } from '../entities/workflow.entity.js';
import type { WorkflowConfiguration } from '../workflow-graph.validator.js';
import { WorkflowConfigurationDoc } from './workflow-configuration.doc.js';

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
  @ApiProperty({ format: 'date-time', type: String, nullable: true }) activated_at: Date | null;
  @ApiProperty({ format: 'date-time', type: String, nullable: true }) deactivated_at: Date | null;
  @ApiProperty({ format: 'date-time' }) created_at: Date;
  @ApiProperty({ format: 'date-time' }) updated_at: Date;

  static from(w: Workflow): WorkflowSummaryResponse {
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
      activated_at: w.activatedAt,
      deactivated_at: w.deactivatedAt,
      created_at: w.createdAt,
      updated_at: w.updatedAt,
    };
  }
}

export class WorkflowDetailResponse extends WorkflowSummaryResponse {
  @ApiPropertyOptional({ type: WorkflowConfigurationDoc }) configuration: WorkflowConfiguration;

  static override from(w: Workflow): WorkflowDetailResponse {
    return { ...WorkflowSummaryResponse.from(w), configuration: w.configuration };
  }
}

export class WorkflowActivatedResponse {
  @ApiProperty() id: string;
  @ApiProperty({ enum: ['active'] }) status: WorkflowStatus;
  @ApiProperty({ format: 'date-time' }) activated_at: Date;
}

export class WorkflowDeactivatedResponse {
  @ApiProperty() id: string;
  @ApiProperty({ enum: ['inactive'] }) status: WorkflowStatus;
  @ApiProperty({ format: 'date-time' }) deactivated_at: Date;
}
