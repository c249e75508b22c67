import { ApiProperty } from '@nestjs/swagger';
import type { AnalyticsFileRow } from '../files.repository.js';
import { isoTime, isoTimeOrNull } from '../../../common/iso-time.js';

const TIME = { type: String, format: 'date-time' } as const;
const NULLABLE_TIME = { ...TIME, nullable: true } as const;

export class FileErrorResponse {
  @ApiProperty({ example: 'REPORT_GENERATION_FAILED' }) code: string;
  @ApiProperty() message: string;
}

/** What a report and an export share: when the file was asked for, when it is ready, where to fetch it, why it failed. */
abstract class FileProgressResponse {
  @ApiProperty(TIME) created_at: string;
  @ApiProperty(TIME) estimated_completion: string;
  @ApiProperty({ ...NULLABLE_TIME, description: 'Set when completed' }) completed_at: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'Set when completed; needs a credential of the same organization' }) download_url: string | null;
  @ApiProperty({ ...NULLABLE_TIME, description: 'Set when completed: 7 days after completion, after which the download is 410 Gone' }) expires_at: string | null;
  @ApiProperty({ type: FileErrorResponse, nullable: true, description: 'Set when failed' }) error: FileErrorResponse | null;

  /** The shared fields of `row`; `path` is the collection its download lives under (`reports`, `exports`). */
  protected static progress(row: AnalyticsFileRow, baseUrl: string, path: string): FileProgressResponse {
    const completed = row.status === 'completed';
    return {
      created_at: isoTime(row.created_at),
      estimated_completion: isoTime(row.estimated_completion),
      completed_at: isoTimeOrNull(row.completed_at),
      download_url: completed ? `${baseUrl}/v1/analytics/${path}/${row.id}/download` : null,
      expires_at: isoTimeOrNull(completed ? row.expires_at : null),
      error: row.error,
    };
  }
}

export class ReportResponse extends FileProgressResponse {
  @ApiProperty({ format: 'uuid' }) report_id: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: ['csv', 'json', 'pdf'] }) format: string;
  @ApiProperty({ enum: ['generating', 'completed', 'failed'] }) status: string;

  static from(row: AnalyticsFileRow, baseUrl: string): ReportResponse {
    return {
      report_id: row.id,
      name: row.name ?? '',
      format: row.format,
      status: row.status === 'running' ? 'generating' : row.status,
      ...FileProgressResponse.progress(row, baseUrl, 'reports'),
    };
  }
}

export class ExportResponse extends FileProgressResponse {
  @ApiProperty({ format: 'uuid' }) export_id: string;
  @ApiProperty() data_type: string;
  @ApiProperty({ enum: ['csv', 'json'] }) format: string;
  @ApiProperty({ enum: ['processing', 'completed', 'failed'] }) status: string;
  @ApiProperty({ type: Number, nullable: true, description: 'Rows in the file, set when completed' }) row_count: number | null;

  static from(row: AnalyticsFileRow, baseUrl: string): ExportResponse {
    return {
      export_id: row.id,
      data_type: row.data_type ?? '',
      format: row.format,
      status: row.status === 'running' ? 'processing' : row.status,
      row_count: row.status === 'completed' ? row.row_count : null,
      ...FileProgressResponse.progress(row, baseUrl, 'exports'),
    };
  }
}
