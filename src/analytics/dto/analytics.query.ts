import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsOptional, IsString, IsUUID } from 'class-validator';
import { DateQueryParam, DEFAULT_GRANULARITY, GRANULARITIES } from '../../common/date-range.js';
import { PageQuery } from '../../common/pagination/page.query.js';
import { TextLength } from '../../common/validation/text-length.decorator.js';

/** The metric names `metrics` accepts (GET /v1/analytics/workflows/{workflow_id}). */
export const WORKFLOW_METRICS = [
  'total_executions', 'successful_executions', 'failed_executions', 'success_rate', 'average_duration_ms', 'total_messages_sent',
  'total_messages_received', 'unique_customers', 'customer_satisfaction', 'channel_breakdown', 'messages_delivered', 'messages_read',
  'delivery_rate', 'read_rate', 'handoff_rate',
] as const;
export type WorkflowMetricName = (typeof WORKFLOW_METRICS)[number];
export const GROUP_BY = ['channel', 'trigger', 'status'] as const;
export type GroupBy = (typeof GROUP_BY)[number];
export const CUSTOMER_SEGMENTS = ['all', 'new', 'returning'] as const;
export type CustomerSegment = (typeof CUSTOMER_SEGMENTS)[number];
export const WORKFLOW_SORTS = ['executions', 'success_rate'] as const;
export const SORT_ORDERS = ['asc', 'desc'] as const;

const booleanParam = () => Transform(({ value }) => (value === 'true' ? true : value === 'false' ? false : value));

/** Comma-separated or repeated: `a,b` and `x=a&x=b` both give [a, b]. */
const listParam = () =>
  Transform(({ value }) => {
    const parts = (Array.isArray(value) ? value : [value]).flatMap((v) => (typeof v === 'string' ? v.split(',') : [v]));
    return parts.map((p) => (typeof p === 'string' ? p.trim() : p)).filter((p) => p !== '');
  });

function TimezoneParam() {
  return (target: object, key: string) => {
    ApiPropertyOptional({
      description: 'IANA time zone of the buckets and of dates without an offset (default UTC). Unknown → 400 INVALID_REQUEST, field timezone',
      example: 'Europe/Berlin',
      maxLength: 64,
    })(target, key);
    IsOptional()(target, key);
    IsString()(target, key);
    TextLength(1, 64)(target, key);
  };
}

/** `start_date`, `end_date` (at most 366 days, not starting in the future; default the last 30 days) and `timezone`. */
export class AnalyticsPeriodQuery {
  @DateQueryParam('Start of the period; default 30 days before end_date. Without an offset: local time of `timezone`. Not in the future')
  start_date?: string;

  @DateQueryParam('End of the period; default now. A date alone includes that whole local day. At most 366 days after start_date')
  end_date?: string;

  @TimezoneParam()
  timezone?: string;
}

export class WorkflowAnalyticsQuery extends AnalyticsPeriodQuery {
  @ApiPropertyOptional({ enum: GRANULARITIES, default: DEFAULT_GRANULARITY, description: 'Bucket size of daily_metrics, in local time (weeks start on Monday). Invalid → 422 INVALID_GRANULARITY' })
  @IsOptional()
  granularity?: string;

  @ApiPropertyOptional({
    type: [String],
    maxItems: 20,
    description: `Metric names to return in \`metrics\` (comma-separated or repeated; default all). Accepted: ${WORKFLOW_METRICS.join(', ')}. Unknown → 400 INVALID_METRICS`,
  })
  @IsOptional()
  @listParam()
  @IsArray()
  @ArrayMaxSize(20)
  @IsString({ each: true })
  @TextLength(1, 64, { each: true })
  metrics?: string[];

  @ApiPropertyOptional({
    type: [String],
    enum: GROUP_BY,
    maxItems: 3,
    description: 'Also return the figures per channel, trigger or status in `groups` (comma-separated or repeated)',
  })
  @IsOptional()
  @listParam()
  @IsArray()
  @ArrayMaxSize(3)
  @IsIn(GROUP_BY, { each: true })
  group_by?: GroupBy[];
}

export class PerformanceQuery extends AnalyticsPeriodQuery {
  @ApiPropertyOptional({
    type: Boolean,
    default: false,
    description: 'Add node_performance: the steps recorded by the executions started in the period, per node and type (whole UTC days from day rollups)',
  })
  @IsOptional()
  @booleanParam()
  @IsBoolean({ message: 'include_nodes must be true or false' })
  include_nodes?: boolean;

  @ApiPropertyOptional({ type: Boolean, default: false, description: 'Add channel_performance' })
  @IsOptional()
  @booleanParam()
  @IsBoolean({ message: 'include_channels must be true or false' })
  include_channels?: boolean;
}

export class EngagementQuery extends AnalyticsPeriodQuery {
  @ApiPropertyOptional({
    enum: CUSTOMER_SEGMENTS,
    default: 'all',
    description: 'new: customers first seen within the period; returning: first seen before it; all: both',
  })
  @IsOptional()
  @IsIn(CUSTOMER_SEGMENTS)
  customer_segment?: CustomerSegment;

  @ApiPropertyOptional({ maxLength: 32, description: 'Only sessions (and form answers of executions) on this channel', example: 'whatsapp' })
  @IsOptional()
  @IsString()
  @TextLength(1, 32)
  channel?: string;
}

export class JourneyQuery extends AnalyticsPeriodQuery {
  @ApiPropertyOptional({
    maxLength: 64,
    default: 'all',
    description:
      'A workflow id, or `all` for the organization\'s most-executed workflow of the period (most executions started in it; ties: the smallest id). ' +
      'Unknown or foreign id → 404 WORKFLOW_NOT_FOUND. Whole UTC days of the period are read from day rollups, its partial days from the recorded rows: ' +
      'the same numbers either way, in any timezone',
  })
  @IsOptional()
  @IsString()
  @TextLength(1, 64)
  journey_type?: string;

  @ApiPropertyOptional({ type: Boolean, default: true, description: 'false leaves drop_off_points out' })
  @IsOptional()
  @booleanParam()
  @IsBoolean({ message: 'include_dropoffs must be true or false' })
  include_dropoffs?: boolean;
}

export class RealtimeQuery {
  @ApiPropertyOptional({ format: 'uuid', description: 'Only this workflow (an id of another organization matches nothing)' })
  @IsOptional()
  @IsUUID('all', { message: 'workflow_id must be a UUID' })
  workflow_id?: string;

  @ApiPropertyOptional({ maxLength: 32, example: 'whatsapp' })
  @IsOptional()
  @IsString()
  @TextLength(1, 32)
  channel?: string;

  @ApiPropertyOptional({ type: Boolean, default: true, description: 'false leaves system_metrics out' })
  @IsOptional()
  @booleanParam()
  @IsBoolean({ message: 'include_system must be true or false' })
  include_system?: boolean;

  @TimezoneParam()
  timezone?: string;
}

/**
 * A page of the organization's workflows with their figures over one period. The period's three fields repeat
 * AnalyticsPeriodQuery's: `IntersectionType(PageQuery, AnalyticsPeriodQuery)` would copy their metadata but not
 * PageQuery's `offset` getter (every page came back as the first; test/e2e/analytics.e2e-spec.ts, page 2).
 */
export class WorkflowListQuery extends PageQuery {
  @DateQueryParam('Start of the period; default 30 days before end_date. Without an offset: local time of `timezone`. Not in the future')
  start_date?: string;

  @DateQueryParam('End of the period; default now. A date alone includes that whole local day. At most 366 days after start_date')
  end_date?: string;

  @TimezoneParam()
  timezone?: string;

  @ApiPropertyOptional({ enum: WORKFLOW_SORTS, default: 'executions', description: 'Workflows without finished executions (success_rate null) sort last' })
  @IsOptional()
  @IsIn(WORKFLOW_SORTS)
  sort_by?: (typeof WORKFLOW_SORTS)[number];

  @ApiPropertyOptional({ enum: SORT_ORDERS, default: 'desc' })
  @IsOptional()
  @IsIn(SORT_ORDERS)
  order?: (typeof SORT_ORDERS)[number];
}
