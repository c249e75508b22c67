import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { CHANNELS } from '../../common/channels.js';
import { WORKFLOW_STATUSES, type Workflow, type WorkflowStatus, type WorkflowSummary, type WorkflowSummaryRow } from '../entities/workflow.entity.js';
import type { WorkflowConfiguration } from '../workflow-graph.validator.js';
import { WorkflowConfigurationResponse } from './workflow-configuration.doc.js';
import { isoTime, isoTimeOrNull } from '../../common/iso-time.js';
import type { CredentialType } from '../../auth/access.js';
import type { WorkflowVersionRow, WorkflowVersionSummaryRow } from '../workflow-versions.repository.js';

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

/** The credential that wrote a version. */
export class VersionAuthorResponse {
  @ApiProperty({ enum: ['api_key', 'oauth', 'jwt'] }) credential_type: CredentialType;
  @ApiProperty({ format: 'uuid', description: 'The API key, OAuth client or JWT client' }) credential_id: string;
  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'OAuth tokens: the user who authorized the client' }) user_id: string | null;
}

/** A version as the history lists it: without its configuration. */
export class WorkflowVersionSummaryResponse {
  @ApiProperty({ description: 'The version number: 1 on create, one more for each new configuration' }) version: number;
  @ApiProperty({ type: String, nullable: true, description: "The workflow's name when this version was written (null: written before versions recorded it)" })
  name: string | null;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ enum: CHANNELS, nullable: true, type: String }) channel: string | null;
  @ApiProperty({ type: VersionAuthorResponse, nullable: true, description: 'Who wrote it (null: written before versions recorded it)' })
  created_by: VersionAuthorResponse | null;
  @ApiProperty({ format: 'date-time', type: String }) created_at: string;

  static from(v: WorkflowVersionSummaryRow): WorkflowVersionSummaryResponse {
    return {
      version: v.version,
      name: v.name,
      description: v.description,
      channel: v.channel,
      created_by: v.createdByType && v.createdById ? { credential_type: v.createdByType, credential_id: v.createdById, user_id: v.createdByUserId } : null,
      created_at: isoTime(v.createdAt),
    };
  }
}

/** One version with the configuration it pins. */
export class WorkflowVersionResponse extends WorkflowVersionSummaryResponse {
  @ApiProperty({ format: 'uuid' }) workflow_id: string;
  @ApiProperty({ type: WorkflowConfigurationResponse }) configuration: WorkflowConfiguration;

  static override from(v: WorkflowVersionRow): WorkflowVersionResponse {
    const detail = WorkflowVersionSummaryResponse.from(v) as WorkflowVersionResponse;
    detail.workflow_id = v.workflowId;
    detail.configuration = v.configuration;
    return detail;
  }
}
