import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Matches } from 'class-validator';
import { GRANULARITIES } from '../../../common/date-range.js';
import { IsOmittable } from '../../../common/validation/is-omittable.decorator.js';
import { TextLength } from '../../../common/validation/text-length.decorator.js';
import { REPORT_FORMATS, REPORT_GROUPS, REPORT_METRIC_ALIASES, REPORT_METRICS } from '../report-data.js';

const DATE = { type: 'string', maxLength: 64, example: '2025-03-01' } as const;

export const REPORT_FILTERS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  description:
    'start_date and end_date: ISO 8601 dates or date-times, inclusive (default: the last 30 days; end before start, a start in the future or a ' +
    'period over 366 days → 400 INVALID_DATE_RANGE). workflow_ids: up to 100 workflow ids of the organization (default: all; an unknown id → 404 WORKFLOW_NOT_FOUND)',
  properties: {
    start_date: DATE,
    end_date: DATE,
    workflow_ids: { type: 'array', maxItems: 100, items: { type: 'string', format: 'uuid' } },
  },
} as const;

export class CreateReportDto {
  @ApiProperty({ minLength: 1, maxLength: 200, example: 'March workflow performance' })
  @IsString()
  @TextLength(1, 200)
  @Matches(/\S/, { message: 'name must not be blank' })
  name: string;

  @ApiPropertyOptional({ maxLength: 2000 })
  @IsOmittable()
  @IsString()
  @TextLength(0, 2000)
  description?: string;

  @ApiPropertyOptional({
    type: 'array',
    maxItems: REPORT_METRICS.length + Object.keys(REPORT_METRIC_ALIASES).length,
    items: { type: 'string', maxLength: 64 },
    description:
      `Metrics to include, the names of GET /v1/analytics/workflows/{workflow_id}; the file's columns take them in this order: ${REPORT_METRICS.join(', ')} ` +
      `(default: all). Aliases, accepted and written under the name they stand for: ` +
      `${Object.entries(REPORT_METRIC_ALIASES).map(([alias, name]) => `${alias} → ${name}`).join(', ')}. ` +
      'channel_breakdown is no column: use group_by ["channel"]. An unknown name → 400 INVALID_METRICS',
  })
  // Checked by the service (INVALID_METRICS).
  @IsOptional()
  metrics?: unknown;

  @ApiPropertyOptional(REPORT_FILTERS_SCHEMA)
  // Checked by the service (INVALID_REQUEST with the field, INVALID_DATE_RANGE, WORKFLOW_NOT_FOUND).
  @IsOptional()
  filters?: unknown;

  @ApiPropertyOptional({
    type: 'array',
    maxItems: REPORT_GROUPS.length,
    uniqueItems: true,
    items: { type: 'string', enum: [...REPORT_GROUPS] },
    description: 'Split each bucket by workflow and/or channel (default: one row per bucket, every bucket of the period present)',
  })
  @IsOptional()
  group_by?: unknown;

  @ApiPropertyOptional({ type: String, enum: GRANULARITIES, default: 'day', description: 'Bucket size; anything else → 422 INVALID_GRANULARITY' })
  // Checked by parseGranularity (422).
  @IsOptional()
  granularity?: unknown;

  @ApiPropertyOptional({ enum: REPORT_FORMATS, default: 'csv', description: 'File format: CSV (RFC 4180), a JSON document, or a PDF with a table and a chart' })
  @IsOmittable()
  @IsIn(REPORT_FORMATS as unknown as string[], { message: `format must be one of ${REPORT_FORMATS.join(', ')}` })
  format?: (typeof REPORT_FORMATS)[number];

  @ApiPropertyOptional({ type: String, maxLength: 64, default: 'UTC', example: 'Europe/Berlin', description: 'IANA time zone of the buckets; unknown → 400 INVALID_REQUEST' })
  @IsOmittable()
  @IsString()
  @TextLength(1, 64)
  timezone?: string;
}
