import { ApiProperty } from '@nestjs/swagger';
import type { ExecutionStep } from '../entities/execution-step.entity.js';
import { EXECUTION_STATUSES, type ExecutionStatus, type WorkflowExecution } from '../entities/workflow-execution.entity.js';
import { isoTime, isoTimeOrNull } from '../../common/iso-time.js';

const OBJECT = { type: 'object', additionalProperties: true } as const;

export class WorkflowExecutionOutputDoc {
  @ApiProperty({ type: String, nullable: true, description: 'The last text sent to the customer' }) response: string | null;
  @ApiProperty({ description: 'end on success, abort on failure' }) next_action: string;
}

/** A list item: the execution without its steps or error. */
export class WorkflowExecutionResponse {
  @ApiProperty() id: string;
  @ApiProperty() workflow_id: string;
  @ApiProperty({ enum: EXECUTION_STATUSES }) status: ExecutionStatus;
  @ApiProperty({ format: 'date-time' }) started_at: string;
  @ApiProperty({ format: 'date-time', type: String, nullable: true, description: 'null while running' }) completed_at: string | null;
  @ApiProperty({ type: Number, nullable: true, description: 'null while running' }) duration_ms: number | null;
  @ApiProperty({ type: String, nullable: true, description: 'The client\'s id of the customer' }) customer_id: string | null;
  @ApiProperty({ type: String, nullable: true }) channel: string | null;
  @ApiProperty({ ...OBJECT, description: '`{ message }` and, for api triggers, the firing\'s data' }) input: Record<string, unknown>;
  @ApiProperty({ type: WorkflowExecutionOutputDoc, nullable: true, description: 'null until the first node has run' })
  output: WorkflowExecutionOutputDoc | null;
  @ApiProperty({ description: 'The workflow version the execution runs' }) workflow_version: number;
  @ApiProperty({ type: String, nullable: true, description: 'The trigger that started it (on a retry, the original\'s)' }) trigger_id: string | null;
  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'The failed execution this one re-runs (POST .../retry); null otherwise' })
  retry_of: string | null;

  static from(e: WorkflowExecution): WorkflowExecutionResponse {
    return {
      id: e.id,
      workflow_id: e.workflowId,
      status: e.status,
      started_at: isoTime(e.startedAt),
      completed_at: isoTimeOrNull(e.completedAt),
      duration_ms: e.durationMs,
      customer_id: e.customerRef,
      channel: e.channel,
      input: e.input,
      output: e.output,
      workflow_version: e.workflowVersion,
      trigger_id: e.triggerId,
      retry_of: e.retryOf ?? null,
    };
  }
}

export class ExecutionStepResponse {
  @ApiProperty() node_id: string;
  @ApiProperty({ example: 'message' }) type: string;
  @ApiProperty({ enum: ['completed', 'failed'] }) status: string;
  @ApiProperty({ format: 'date-time' }) started_at: string;
  @ApiProperty({ format: 'date-time' }) completed_at: string;
  @ApiProperty() duration_ms: number;
  @ApiProperty(OBJECT) input: Record<string, unknown>;
  @ApiProperty({ ...OBJECT, description: 'e.g. message_sent; response and confidence (0..1) for ai_response' }) output: Record<string, unknown>;
  @ApiProperty({ type: 'integer', minimum: 1, description: 'How many times the node was attempted: above 1 when it failed transiently and was tried again with back-off (NODE_RETRY_ATTEMPTS)' })
  attempt: number;

  static from(s: ExecutionStep): ExecutionStepResponse {
    return {
      node_id: s.nodeId,
      type: s.type,
      status: s.status,
      started_at: isoTime(s.startedAt),
      completed_at: isoTime(s.completedAt),
      duration_ms: s.durationMs,
      input: s.input,
      output: s.output,
      attempt: s.attempt,
    };
  }
}

export class ExecutionErrorDoc {
  @ApiProperty({ example: 'NODE_FAILED' }) code: string;
  @ApiProperty() message: string;
  @ApiProperty({ required: false, description: 'The node that failed, when one did' }) node_id?: string;
}

export class WorkflowExecutionDetailResponse extends WorkflowExecutionResponse {
  @ApiProperty({ type: [ExecutionStepResponse], description: 'One per node run, in the order they started' }) steps: ExecutionStepResponse[];
  @ApiProperty({ type: ExecutionErrorDoc, nullable: true, description: 'Why the execution failed; null otherwise' }) error: ExecutionErrorDoc | null;

  /** The execution with its steps, in the order they started. */
  static override from(e: WorkflowExecution & { steps: ExecutionStep[] }): WorkflowExecutionDetailResponse {
    return { ...WorkflowExecutionResponse.from(e), steps: e.steps.map(ExecutionStepResponse.from), error: e.error };
  }
}
