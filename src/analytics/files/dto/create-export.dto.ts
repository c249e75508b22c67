import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsOptional, IsString } from 'class-validator';
import { DateQueryParam } from '../../../common/date-range.js';
import { IsOmittable } from '../../../common/validation/is-omittable.decorator.js';
import { EXPORT_DATA_TYPES, EXPORT_FORMATS, exportDataTypesDescription } from '../export-datasets.js';

export const EXPORT_FILTERS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  description:
    'workflow_ids: up to 100 workflow ids of the organization (an unknown id → 404 WORKFLOW_NOT_FOUND); channels: up to 10 channels. ' +
    'A filter the data type does not have (workflow_ids for customers and webhook_logs, channels for webhook_logs) → 400 INVALID_REQUEST',
  properties: {
    workflow_ids: { type: 'array', maxItems: 100, items: { type: 'string', format: 'uuid' } },
    channels: { type: 'array', maxItems: 10, items: { type: 'string', minLength: 1, maxLength: 32 } },
  },
} as const;

export class CreateExportDto {
  @ApiProperty({ enum: EXPORT_DATA_TYPES, description: exportDataTypesDescription() })
  @IsString()
  @IsIn(EXPORT_DATA_TYPES as unknown as string[], { message: `data_type must be one of ${EXPORT_DATA_TYPES.join(', ')}` })
  data_type: (typeof EXPORT_DATA_TYPES)[number];

  @ApiPropertyOptional({ enum: EXPORT_FORMATS, default: 'csv', description: 'csv (RFC 4180, formula-like text prefixed with a quote) or json (NDJSON: one object per line)' })
  @IsOmittable()
  @IsIn(EXPORT_FORMATS as unknown as string[], { message: `format must be one of ${EXPORT_FORMATS.join(', ')}` })
  format?: (typeof EXPORT_FORMATS)[number];

  @DateQueryParam('Start of the period; default 30 days before end_date. A start in the future or a period over 366 days → 400 INVALID_DATE_RANGE')
  start_date?: string;

  @DateQueryParam('End of the period; default now. A date alone includes that whole day')
  end_date?: string;

  @ApiPropertyOptional(EXPORT_FILTERS_SCHEMA)
  // Checked by the service (INVALID_REQUEST with the field, WORKFLOW_NOT_FOUND).
  @IsOptional()
  filters?: unknown;

  @ApiPropertyOptional({ default: false, description: 'Add the JSON columns of the data type (inputs, outputs, errors, attributes, metadata)' })
  @IsOmittable()
  @IsBoolean({ message: 'include_metadata must be a boolean' })
  include_metadata?: boolean;
}
