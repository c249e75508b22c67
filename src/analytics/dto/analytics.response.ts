import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export const TRENDS = ['increasing', 'stable', 'decreasing'] as const;
export type Trend = (typeof TRENDS)[number];

const INT = { type: 'integer', minimum: 0 } as const;
const RATE = { type: Number, nullable: true, minimum: 0, maximum: 1, description: 'successful / finished (successful + failed); null when none finished' } as const;
const AVERAGE = { type: 'integer', nullable: true, description: 'Mean duration of finished executions in milliseconds, rounded; null when none finished' } as const;
const TREND = { enum: TRENDS, description: 'Second half of the period against the first: beyond ±5% → increasing/decreasing, else stable (also when either half has no data)' } as const;
const TIME = { format: 'date-time', description: 'Local time of the request\'s timezone, with its offset' } as const;

export class AnalyticsPeriodResponse {
  @ApiProperty({ ...TIME, description: 'Inclusive; local time of `timezone` with its offset' }) start_date: string;
  @ApiProperty({ ...TIME, description: 'Inclusive; local time of `timezone` with its offset' }) end_date: string;
  @ApiProperty({ example: 'UTC' }) timezone: string;
}

export class WorkflowAnalyticsMetrics {
  @ApiPropertyOptional(INT) total_executions?: number;
  @ApiPropertyOptional(INT) successful_executions?: number;
  @ApiPropertyOptional(INT) failed_executions?: number;
  @ApiPropertyOptional(RATE) success_rate?: number | null;
  @ApiPropertyOptional(AVERAGE) average_duration_ms?: number | null;
  @ApiPropertyOptional({ ...INT, description: 'Outbound messages of the period\'s executions' }) total_messages_sent?: number;
  @ApiPropertyOptional({ ...INT, description: 'Inbound messages routed to the period\'s executions' }) total_messages_received?: number;
  @ApiPropertyOptional({ ...INT, description: 'Distinct customer ids' }) unique_customers?: number;
  @ApiPropertyOptional({ type: Number, nullable: true, minimum: 1, maximum: 5, description: 'Mean of the rating (1..5) answers of the period\'s executions; null without any' })
  customer_satisfaction?: number | null;
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'integer' }, description: 'Executions per channel ("unknown" without one)', example: { whatsapp: 3 } })
  channel_breakdown?: Record<string, number>;
  @ApiPropertyOptional({ type: 'integer', nullable: true, minimum: 0, description: "Messages the period's executions sent through a channel account that the provider reports delivered (or read); null when none of their sends has settled (accepted by the provider, or failed)" })
  messages_delivered?: number | null;
  @ApiPropertyOptional({ type: 'integer', nullable: true, minimum: 0, description: 'Of those, the ones the customer read; null as messages_delivered' })
  messages_read?: number | null;
  @ApiPropertyOptional({ type: Number, nullable: true, minimum: 0, maximum: 1, description: "delivered / settled sends (accepted by the provider, or failed); null when none has settled" })
  delivery_rate?: number | null;
  @ApiPropertyOptional({ type: Number, nullable: true, minimum: 0, maximum: 1, description: 'read / delivered; null when none was delivered' })
  read_rate?: number | null;
  @ApiPropertyOptional({ type: Number, nullable: true, minimum: 0, maximum: 1, description: "Of the period's executions, the share a person's takeover ended (failed with EXECUTION_HANDED_OFF); null when none started" })
  handoff_rate?: number | null;
}

export class WorkflowAnalyticsTrends {
  @ApiProperty(TREND) execution_trend: Trend;
  @ApiProperty(TREND) success_rate_trend: Trend;
  @ApiProperty(TREND) duration_trend: Trend;
}

export class WorkflowAnalyticsBucket {
  @ApiProperty({ ...TIME, description: 'Start of the local bucket (weeks start on Monday), with the zone\'s offset' }) date: string;
  @ApiProperty(INT) executions: number;
  @ApiProperty(RATE) success_rate: number | null;
  @ApiProperty(AVERAGE) average_duration_ms: number | null;
  @ApiProperty(INT) messages_sent: number;
  @ApiProperty(INT) messages_received: number;
  @ApiProperty(INT) unique_customers: number;
}

export class GroupFigures {
  @ApiProperty(INT) executions: number;
  @ApiProperty(INT) successful_executions: number;
  @ApiProperty(INT) failed_executions: number;
  @ApiProperty(RATE) success_rate: number | null;
  @ApiProperty(AVERAGE) average_duration_ms: number | null;
  @ApiProperty(INT) unique_customers: number;
}

const GROUP = { type: 'object', additionalProperties: { $ref: '#/components/schemas/GroupFigures' } } as const;

export class WorkflowAnalyticsGroups {
  @ApiPropertyOptional({ ...GROUP, description: 'Per channel ("unknown" without one)' }) channel?: Record<string, GroupFigures>;
  @ApiPropertyOptional({ ...GROUP, description: 'Per trigger id ("none" for executions started without a trigger)' }) trigger?: Record<string, GroupFigures>;
  @ApiPropertyOptional({ ...GROUP, description: 'Per execution status (running, success, failed)' }) status?: Record<string, GroupFigures>;
}

export class WorkflowAnalyticsResponse {
  @ApiProperty({ format: 'uuid' }) workflow_id: string;
  @ApiProperty({ type: AnalyticsPeriodResponse }) period: AnalyticsPeriodResponse;
  @ApiProperty({ type: WorkflowAnalyticsMetrics, description: 'The metrics named in `metrics` (all by default)' }) metrics: WorkflowAnalyticsMetrics;
  @ApiProperty({ type: WorkflowAnalyticsTrends }) trends: WorkflowAnalyticsTrends;
  @ApiProperty({ type: [WorkflowAnalyticsBucket], description: 'Every bucket of the period, oldest first; buckets without executions hold zeros and null rates' })
  daily_metrics: WorkflowAnalyticsBucket[];
  @ApiPropertyOptional({ type: WorkflowAnalyticsGroups, description: 'Present with group_by' }) groups?: WorkflowAnalyticsGroups;
}

/** The error bound of the percentiles of `/performance` (migration PerformanceRollups, docs/DECISIONS.md "Analytics", "Percentiles within a stated bound"). */
export const PERCENTILE_BOUND =
  'percentile_cont semantics (interpolated between the two nearest ranks), within 0.9901 % of the exact value: the whole UTC days of the period are read from a ' +
  'stored duration histogram (exact buckets below 100 ms, log-scale buckets of ratio 1.02 above, each reported as the harmonic mean of its bounds, ' +
  'within 0.9901 % of every duration in it); the partial days at the ends of the period are read exactly. Exact for a period without a whole UTC day.';

export class ExecutionTimeResponse {
  @ApiProperty({ type: Number, nullable: true, description: 'Mean duration of the finished executions; null when none finished' }) average_ms: number | null;
  @ApiProperty({ type: Number, nullable: true, description: `Median duration of the finished executions with a recorded duration; null when none. ${PERCENTILE_BOUND}` })
  median_ms: number | null;
  @ApiProperty({ type: Number, nullable: true, description: `95th percentile, as median_ms. ${PERCENTILE_BOUND}` }) p95_ms: number | null;
  @ApiProperty({ type: Number, nullable: true, description: `99th percentile, as median_ms. ${PERCENTILE_BOUND}` }) p99_ms: number | null;
}

export class ThroughputResponse {
  @ApiProperty({ type: Number, minimum: 0, description: 'Executions started in the period / its length in hours' }) executions_per_hour: number;
  @ApiProperty({ ...INT, description: 'Executions started in the busiest clock hour of the period' }) peak_executions_per_hour: number;
  @ApiProperty({ type: String, nullable: true, example: '14:00', description: 'Local hour of day (HH:00) of that busiest hour; null without executions' }) peak_hour: string | null;
}

export class ErrorRateResponse {
  @ApiProperty({ type: Number, nullable: true, minimum: 0, maximum: 1, description: 'failed / finished; null when none finished' }) overall: number | null;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'number' }, description: 'Per recorded error code: its failures / finished executions', example: { CONVERSATION_TIMEOUT: 0.1 } })
  by_error_type: Record<string, number>;
}

export class NodePerformanceResponse {
  @ApiProperty() node_id: string;
  @ApiProperty() type: string;
  @ApiProperty({ ...INT, description: 'Steps recorded at the node by the executions started in the period (one per execution: a node visited twice counts once)' })
  execution_count: number;
  @ApiProperty({ type: Number, minimum: 0, maximum: 1, description: 'Completed steps / steps' }) success_rate: number;
  @ApiProperty({ type: 'integer', description: 'Milliseconds, rounded' }) average_duration_ms: number;
  @ApiProperty(INT) error_count: number;
}

export class ChannelPerformanceResponse {
  @ApiProperty(INT) executions: number;
  @ApiProperty(RATE) success_rate: number | null;
  @ApiProperty(AVERAGE) average_duration_ms: number | null;
}

export class PerformanceFigures {
  @ApiProperty({ type: ExecutionTimeResponse }) execution_time: ExecutionTimeResponse;
  @ApiProperty({ type: ThroughputResponse }) throughput: ThroughputResponse;
  @ApiProperty({ type: ErrorRateResponse }) error_rate: ErrorRateResponse;
  @ApiPropertyOptional({ type: [NodePerformanceResponse], description: 'With include_nodes=true' }) node_performance?: NodePerformanceResponse[];
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { $ref: '#/components/schemas/ChannelPerformanceResponse' },
    description: 'With include_channels=true; per channel ("unknown" without one)',
  })
  channel_performance?: Record<string, ChannelPerformanceResponse>;
}

export class PerformanceResponse {
  @ApiProperty({ format: 'uuid' }) workflow_id: string;
  @ApiProperty({ type: AnalyticsPeriodResponse }) period: AnalyticsPeriodResponse;
  @ApiProperty({ type: PerformanceFigures }) performance: PerformanceFigures;
}

export class ChannelEngagementResponse {
  @ApiProperty({ ...INT, description: 'Customers with a session on the channel starting in the period' }) customers: number;
  @ApiProperty({ type: Number, nullable: true, description: 'Milliseconds; sessions on this channel' }) average_session_duration: number | null;
  @ApiProperty({ type: Number, nullable: true, description: 'Mean rating (1..5) of the channel\'s executions; null without any' }) satisfaction: number | null;
}

export class EngagementFigures {
  @ApiProperty({ ...INT, description: 'Customers first seen by the end of the period (in the segment; with `channel`, with a session on it started by then)' }) total_customers: number;
  @ApiProperty({ ...INT, description: 'Customers with a session starting in the period' }) active_customers: number;
  @ApiProperty({ ...INT, description: 'Active customers first seen within the period' }) new_customers: number;
  @ApiProperty({ ...INT, description: 'Active customers first seen before the period' }) returning_customers: number;
  @ApiProperty({ type: Number, nullable: true, description: 'Milliseconds from the first to the last message of a session (a customer\'s messages on one channel with gaps under 30 minutes), over the sessions starting in the period; null without sessions' })
  average_session_duration: number | null;
  @ApiProperty({ type: Number, nullable: true, description: 'Messages per session, over the sessions starting in the period' }) average_messages_per_session: number | null;
  @ApiProperty({ type: Number, nullable: true, description: 'Mean of the rating answers (1..5); null without any' }) customer_satisfaction: number | null;
  @ApiProperty({ type: Number, nullable: true, minimum: -100, maximum: 100, description: '% promoters (9..10) − % detractors (0..6) of the nps answers; null without any' })
  net_promoter_score: number | null;
  @ApiProperty({ type: 'object', additionalProperties: { $ref: '#/components/schemas/ChannelEngagementResponse' } })
  engagement_by_channel: Record<string, ChannelEngagementResponse>;
}

export class EngagementTrends {
  @ApiProperty({ ...TREND, description: `Active customers, second half against first. ${TREND.description}` }) customer_growth: Trend;
  @ApiProperty({ ...TREND, description: `Messages of the sessions starting in each half, second half against first. ${TREND.description}` }) engagement_trend: Trend;
  @ApiProperty({ ...TREND, description: `Mean rating, second half against first. ${TREND.description}` }) satisfaction_trend: Trend;
}

export class EngagementResponse {
  @ApiProperty({ type: AnalyticsPeriodResponse }) period: AnalyticsPeriodResponse;
  @ApiProperty({ type: EngagementFigures }) engagement: EngagementFigures;
  @ApiProperty({ type: EngagementTrends }) trends: EngagementTrends;
}

export class JourneyStepResponse {
  @ApiProperty({ type: 'integer', minimum: 1 }) step: number;
  @ApiProperty({ description: 'The node\'s id' }) name: string;
  @ApiProperty({
    ...INT,
    description:
      'Journeys (executions started in the period) that reached the step: those that recorded a step at the node (once per journey, ' +
      'however often it visited the node), plus those waiting there for the customer (running) or that expired waiting there (CONVERSATION_TIMEOUT)',
  })
  customers: number;
  @ApiProperty({ type: Number, nullable: true, minimum: 0, maximum: 1, description: 'Journeys whose step at the node completed / journeys that reached it' }) completion_rate: number | null;
  @ApiProperty({ type: 'integer', nullable: true, description: 'Mean duration of the step\'s recorded runs (completed or failed), milliseconds' }) average_duration_ms: number | null;
}

export class DropOffResponse {
  @ApiProperty({ type: 'integer', minimum: 1 }) step: number;
  @ApiProperty() name: string;
  @ApiProperty({ ...INT, description: 'Failed journeys that stopped at this step: the node in their error (`node_id`), else their cursor, else the entry node' })
  drop_off_count: number;
  @ApiProperty({ type: Number, minimum: 0, maximum: 1, description: 'drop_off_count / journeys that reached the step' }) drop_off_rate: number;
  @ApiProperty({ type: [String], description: 'Recorded error codes, most frequent first; a conversation timeout reads "no reply before the conversation expired"' })
  common_reasons: string[];
}

export class JourneyFigures {
  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'The workflow followed; null when journey_type=all and nothing ran' }) workflow_id: string | null;
  @ApiProperty(INT) total_journeys: number;
  @ApiProperty(INT) completed_journeys: number;
  @ApiProperty({ type: Number, nullable: true, minimum: 0, maximum: 1 }) completion_rate: number | null;
  @ApiProperty({ type: 'integer', nullable: true, description: 'Mean duration of completed (successful) journeys, milliseconds' }) average_journey_duration: number | null;
  @ApiProperty({ type: [JourneyStepResponse], description: 'The workflow\'s nodes from its entry along `next`' }) journey_steps: JourneyStepResponse[];
  @ApiPropertyOptional({ type: [DropOffResponse], description: 'Steps where journeys failed; left out with include_dropoffs=false' }) drop_off_points?: DropOffResponse[];
}

export class JourneyResponse {
  @ApiProperty({ type: AnalyticsPeriodResponse }) period: AnalyticsPeriodResponse;
  @ApiProperty({ type: JourneyFigures }) journey: JourneyFigures;
}

export const HEALTH_STATES = ['healthy', 'degraded', 'unhealthy'] as const;
export type HealthState = (typeof HEALTH_STATES)[number];

export class RealtimeCurrentMetrics {
  @ApiProperty({ ...INT, description: 'Workflows with status active' }) active_workflows: number;
  @ApiProperty({ ...INT, description: 'Executions running now' }) active_executions: number;
  @ApiProperty(INT) messages_in_last_hour: number;
  @ApiProperty({ type: 'integer', nullable: true, description: 'Mean duration (ms) of the executions started in the last hour that have finished; null without any' }) average_response_time_ms: number | null;
  @ApiProperty({ enum: HEALTH_STATES, description: 'unhealthy: database or Redis down; degraded: execution queue backlog over its threshold' }) system_health: HealthState;
}

export class RealtimeWorkflowMetrics {
  @ApiProperty({ format: 'uuid' }) workflow_id: string;
  @ApiProperty() name: string;
  @ApiProperty(INT) active_executions: number;
  @ApiProperty(INT) messages_in_last_hour: number;
  @ApiProperty({ type: 'integer', nullable: true }) average_response_time_ms: number | null;
}

export class RealtimeChannelMetrics {
  @ApiProperty({ ...INT, description: 'Running executions on the channel' }) active_conversations: number;
  @ApiProperty(INT) messages_in_last_hour: number;
}

export class RealtimeAccountMetrics {
  @ApiProperty({ format: 'uuid' }) channel_account_id: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: ['whatsapp', 'instagram', 'voice'] }) channel: string;
  @ApiProperty({ ...INT, description: 'Messages queued for the provider or being sent now' }) send_backlog: number;
  @ApiProperty({ format: 'date-time', nullable: true, description: 'When the oldest of them was queued; null without a backlog' }) oldest_queued_at: string | null;
}

export class SystemMetrics {
  @ApiProperty({ type: Number, minimum: 0, maximum: 1, description: 'Host CPU busy fraction since the previous reading (all cores)' }) cpu_usage: number;
  @ApiProperty({ type: Number, minimum: 0, maximum: 1, description: 'Host memory in use / total' }) memory_usage: number;
  @ApiProperty({ type: Number, nullable: true, description: 'Mean API request duration (ms) recorded by this process\'s request-duration histogram; null before any' })
  api_response_time_ms: number | null;
}

export class RealtimeResponse {
  @ApiProperty({ format: 'date-time' }) timestamp: string;
  @ApiProperty({ type: RealtimeCurrentMetrics }) current_metrics: RealtimeCurrentMetrics;
  @ApiProperty({ type: [RealtimeWorkflowMetrics], description: 'Workflows with running executions or activity in the last hour (at most 100)' })
  workflow_metrics: RealtimeWorkflowMetrics[];
  @ApiProperty({ type: 'object', additionalProperties: { $ref: '#/components/schemas/RealtimeChannelMetrics' } }) channel_metrics: Record<string, RealtimeChannelMetrics>;
  @ApiProperty({ type: [RealtimeAccountMetrics], description: 'Channel accounts (of `channel` when given; at most 100, longest backlog first) and their sends not yet settled' })
  channel_account_metrics: RealtimeAccountMetrics[];
  @ApiPropertyOptional({ type: SystemMetrics, description: 'Left out with include_system=false' }) system_metrics?: SystemMetrics;
}

export class WorkflowSummaryAnalytics {
  @ApiProperty({ format: 'uuid' }) workflow_id: string;
  @ApiProperty() name: string;
  @ApiProperty() status: string;
  @ApiProperty(INT) total_executions: number;
  @ApiProperty(INT) successful_executions: number;
  @ApiProperty(INT) failed_executions: number;
  @ApiProperty(RATE) success_rate: number | null;
  @ApiProperty(AVERAGE) average_duration_ms: number | null;
  @ApiProperty(INT) unique_customers: number;
}
