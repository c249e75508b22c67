import { ApiProperty } from '@nestjs/swagger';
import type { AnalyticsFileRow } from '../files.repository.js';
import { isoTime, isoTimeOrNull } from '../../../common/iso-time.js';

const TIME = { type: String, format: 'date-time' } as const;
const NULLABLE_TIME = { ...TIME, nullable: true } as const;

export class FileErrorResponse {
  @ApiProperty({ example: 'REPORT_GENERATION_FAILED' }) code: string;
  @ApiProperty() message: string;
}

/** What a report and an export share: when the file was asked for, when it is ready, why it failed. */
abstract class FileProgressResponse {
  @ApiProperty(TIME) created_at: string;
  @ApiProperty(TIME) estimated_completion: string;
  @ApiProperty({ ...NULLABLE_TIME, description: 'Set when completed' }) completed_at: string | null;
  @ApiProperty({ ...NULLABLE_TIME, description: 'Set when completed: 7 days after completion, after which the download is 410 Gone' }) expires_at: string | null;
  @ApiProperty({ type: FileErrorResponse, nullable: true, description: 'Set when failed' }) error: FileErrorResponse | null;

  /** The shared fields of `row`. */
  protected static progress(row: AnalyticsFileRow): FileProgressResponse {
    const completed = row.status === 'completed';
    return {
      created_at: isoTime(row.created_at),
      estimated_completion: isoTime(row.estimated_completion),
      completed_at: isoTimeOrNull(row.completed_at),
      expires_at: isoTimeOrNull(completed ? row.expires_at : null),
      error: row.error,
    };
  }
}

/** Where a file is downloaded; `path` is the collection it lives under (`reports`, `exports`). */
const downloadUrl = (row: AnalyticsFileRow, baseUrl: string, path: string) => `${baseUrl}/v1/analytics/${path}/${row.id}/download`;

export class ReportResponse extends FileProgressResponse {
  @ApiProperty({ format: 'uuid' }) report_id: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: ['csv', 'json', 'pdf'] }) format: string;
  @ApiProperty({ enum: ['generating', 'completed', 'failed'] }) status: string;
  @ApiProperty({ type: String, nullable: true, description: 'Set when completed; needs a credential of the same organization' }) download_url: string | null;

  static from(row: AnalyticsFileRow, baseUrl: string): ReportResponse {
    return {
      report_id: row.id,
      name: row.name ?? '',
      format: row.format,
      status: row.status === 'running' ? 'generating' : row.status,
      ...FileProgressResponse.progress(row),
      download_url: row.status === 'completed' ? downloadUrl(row, baseUrl, 'reports') : null,
    };
  }
}

export class ExportResponse extends FileProgressResponse {
  @ApiProperty({ format: 'uuid' }) export_id: string;
  @ApiProperty() data_type: string;
  @ApiProperty({ enum: ['csv', 'json'] }) format: string;
  @ApiProperty({ enum: ['processing', 'completed', 'failed'] }) status: string;
  @ApiProperty({ type: Number, nullable: true, description: 'Rows in the file, set when completed' }) row_count: number | null;
  @ApiProperty({
    type: String,
    description:
      'From creation on; needs a credential of the same organization. The download answers 409 EXPORT_NOT_READY while the export is processing ' +
      '(or failed) and 410 EXPORT_EXPIRED after expires_at',
  })
  download_url: string;

  static from(row: AnalyticsFileRow, baseUrl: string): ExportResponse {
    return {
      export_id: row.id,
      data_type: row.data_type ?? '',
      format: row.format,
      status: row.status === 'running' ? 'processing' : row.status,
      row_count: row.status === 'completed' ? row.row_count : null,
      ...FileProgressResponse.progress(row),
      download_url: downloadUrl(row, baseUrl, 'exports'),
    };
  }
}
