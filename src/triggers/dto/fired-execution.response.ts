import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { FireResult } from '../../executions/fire.types.js';

export class FiredExecutionResponse {
  @ApiProperty({ type: String, nullable: true }) trigger_id: string | null;
  @ApiProperty({ type: String, nullable: true }) trigger_execution_id: string | null;
  @ApiProperty({ type: String, nullable: true }) workflow_execution_id: string | null;
  @ApiProperty({ enum: ['running', 'failed'] }) status: string;
  @ApiPropertyOptional({ description: 'Why the firing was refused (inactive trigger or workflow)' }) error?: { code: string; message: string };

  static from(result: FireResult): FiredExecutionResponse {
    return {
      trigger_id: result.triggerId,
      trigger_execution_id: result.triggerExecutionId,
      workflow_execution_id: result.workflowExecutionId,
      status: result.status,
      ...(result.error ? { error: result.error } : {}),
    };
  }
}
