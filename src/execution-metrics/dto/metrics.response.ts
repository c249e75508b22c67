import { ApiProperty } from '@nestjs/swagger';

const CHANNEL_COUNTS = {
  type: 'object',
  additionalProperties: { type: 'integer' },
  description: 'Executions per channel; executions without a channel are counted under "unknown"',
  example: { whatsapp: 12, instagram: 3 },
} as const;
const INT = { type: 'integer' } as const;
const RATE = { type: Number, nullable: true, description: 'successful / (successful + failed); null when none finished' } as const;
const AVERAGE = { type: 'integer', nullable: true, description: 'Mean duration of finished executions, rounded to a millisecond; null when none finished' } as const;

export class MetricsPeriodResponse {
  @ApiProperty({ format: 'date-time', description: 'Inclusive' }) start_date: string;
  @ApiProperty({ format: 'date-time', description: 'Inclusive' }) end_date: string;
}

export class TriggerMetricsTotals {
  @ApiProperty(INT) total_executions: number;
  @ApiProperty(INT) successful_executions: number;
  @ApiProperty(INT) failed_executions: number;
  @ApiProperty(RATE) success_rate: number | null;
  @ApiProperty(AVERAGE) average_duration_ms: number | null;
  @ApiProperty({
    ...INT,
    description:
      'Distinct customer ids of the executions. Exact up to 2,048 per UTC day or month merged (and always at `hour` granularity); beyond, a HyperLogLog estimate with a relative standard error of 0.81 %' }) unique_customers: number;
  @ApiProperty(CHANNEL_COUNTS) channel_breakdown: Record<string, number>;
}

export class TriggerMetricsBucket {
  @ApiProperty({ format: 'date-time', description: 'Start of the bucket (UTC; weeks start on Monday)' }) date: string;
  @ApiProperty(INT) executions: number;
  @ApiProperty(RATE) success_rate: number | null;
  @ApiProperty(AVERAGE) average_duration_ms: number | null;
}

export class TriggerMetricsResponse {
  @ApiProperty() trigger_id: string;
  @ApiProperty({ type: MetricsPeriodResponse }) period: MetricsPeriodResponse;
  @ApiProperty({ type: TriggerMetricsTotals }) metrics: TriggerMetricsTotals;
  @ApiProperty({ type: [TriggerMetricsBucket], description: 'One entry per bucket holding executions, oldest first; empty buckets are left out' })
  daily_metrics: TriggerMetricsBucket[];
}

export class WorkflowMetricsTotals extends TriggerMetricsTotals {
  @ApiProperty({ ...INT, description: 'Outbound messages of the period\'s executions' }) total_messages_sent: number;
  @ApiProperty({ ...INT, description: 'Inbound messages routed to the period\'s executions' }) total_messages_received: number;
}

export class WorkflowMetricsBucket extends TriggerMetricsBucket {
  @ApiProperty(INT) messages_sent: number;
  @ApiProperty(INT) messages_received: number;
  @ApiProperty({ ...INT, description: 'Distinct customer ids of the executions in the bucket. Exact up to 2,048 per UTC day or month merged (and always at `hour` granularity); beyond, a HyperLogLog estimate with a relative standard error of 0.81 %' }) unique_customers: number;
}

export class WorkflowMetricsResponse {
  @ApiProperty() workflow_id: string;
  @ApiProperty({ type: MetricsPeriodResponse }) period: MetricsPeriodResponse;
  @ApiProperty({ type: WorkflowMetricsTotals }) metrics: WorkflowMetricsTotals;
  @ApiProperty({ type: [WorkflowMetricsBucket], description: 'One entry per bucket holding executions, oldest first; empty buckets are left out' })
  daily_metrics: WorkflowMetricsBucket[];
}
