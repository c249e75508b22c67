import { Body, Controller, Get, HttpCode, Param, Post, Res, StreamableFile } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Readable } from 'node:stream';
import type { Principal } from '../../auth/access.js';
import { CurrentPrincipal, RequireAccess } from '../../auth/decorators/access.decorators.js';
import { ApiData, ApiErrors } from '../../common/http/api-docs.js';
import { ok } from '../../common/http/envelope.js';
import { AppConfig } from '../../config/app-config.js';
import { RateLimitClass } from '../../rate-limits/rate-limit.decorators.js';
import { AnalyticsFilesService } from './analytics-files.service.js';
import { CreateExportDto } from './dto/create-export.dto.js';
import { CreateReportDto } from './dto/create-report.dto.js';
import { ExportResponse, ReportResponse } from './dto/file.response.js';
import type { AnalyticsFileRow } from './files.repository.js';

const MEDIA_TYPES: Record<string, Record<string, string>> = {
  report: { csv: 'text/csv; charset=utf-8', json: 'application/json; charset=utf-8', pdf: 'application/pdf' },
  export: { csv: 'text/csv; charset=utf-8', json: 'application/x-ndjson; charset=utf-8' },
};
const EXTENSIONS: Record<string, string> = { csv: 'csv', json: 'json', pdf: 'pdf' };
const BINARY = { schema: { type: 'string', format: 'binary' } };
const DOWNLOAD_ERRORS = '404 when unknown or of another organization; 409 while generating or after a failure; 410 once expired (7 days after completion)';

function fileName(file: AnalyticsFileRow): string {
  const base = file.kind === 'report' ? `report-${(file.name ?? '').replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60) || 'report'}` : `export-${file.data_type}`;
  return `${base}-${file.id}.${file.format === 'json' && file.kind === 'export' ? 'ndjson' : EXTENSIONS[file.format]}`;
}

@ApiTags('Analytics')
@Controller('v1/analytics')
export class AnalyticsFilesController {
  constructor(
    private readonly service: AnalyticsFilesService,
    private readonly config: AppConfig,
  ) {}

  @Post('reports')
  @HttpCode(201)
  @RequireAccess('analytics', 'write')
  @RateLimitClass('analytics', 'reports')
  @ApiOperation({
    summary: 'Request a report: workflow metrics per time bucket as CSV, JSON or PDF, made in the background',
    description: 'Poll GET /v1/analytics/reports/{report_id} until `completed`, then download the file from `download_url`.',
  })
  @ApiData(ReportResponse, 201, 'Created; status generating')
  @ApiErrors(404, 422)
  async createReport(@CurrentPrincipal() principal: Principal, @Body() body: CreateReportDto) {
    return ok(ReportResponse.from(await this.service.createReport(principal.organizationId, body), this.config.publicBaseUrl));
  }

  @Get('reports/:report_id')
  @RequireAccess('analytics', 'read')
  // Polling a file's status and downloading it: the realtime class, not the 50 or 20 an hour of making one.
  @RateLimitClass('analytics', 'realtime')
  @ApiOperation({ summary: 'A report: its status, and when completed its download URL and expiry' })
  @ApiData(ReportResponse)
  async getReport(@CurrentPrincipal() principal: Principal, @Param('report_id') id: string) {
    return ok(ReportResponse.from(await this.service.get(principal.organizationId, 'report', id), this.config.publicBaseUrl));
  }

  @Get('reports/:report_id/download')
  @RequireAccess('analytics', 'read')
  // Polling a file's status and downloading it: the realtime class, not the 50 or 20 an hour of making one.
  @RateLimitClass('analytics', 'realtime')
  @ApiOperation({ summary: 'Download a completed report file', description: DOWNLOAD_ERRORS })
  @ApiProduces('text/csv', 'application/json', 'application/pdf')
  @ApiResponse({
    status: 200,
    description: 'The file, as an attachment',
    content: {
      'text/csv': BINARY,
      'application/json': { schema: { type: 'object', required: ['report', 'rows'], properties: { report: { type: 'object' }, rows: { type: 'array', items: { type: 'object' } } } } },
      'application/pdf': BINARY,
    },
  })
  @ApiErrors(409, 410)
  async downloadReport(@CurrentPrincipal() principal: Principal, @Param('report_id') id: string, @Res({ passthrough: true }) res: Response) {
    return this.download(await this.service.downloadable(principal.organizationId, 'report', id), res);
  }

  @Post('export')
  @HttpCode(202)
  @RequireAccess('analytics', 'write')
  @RateLimitClass('analytics', 'export')
  @ApiOperation({
    summary: 'Request an export of recorded data as CSV or NDJSON, made in the background',
    description: 'The answer carries `download_url` at once; it answers 409 EXPORT_NOT_READY until the export is `completed` (poll GET /v1/analytics/exports/{export_id}).',
  })
  @ApiData(ExportResponse, 202, 'Accepted; status processing')
  @ApiErrors(404)
  async createExport(@CurrentPrincipal() principal: Principal, @Body() body: CreateExportDto) {
    return ok(ExportResponse.from(await this.service.createExport(principal.organizationId, body), this.config.publicBaseUrl));
  }

  @Get('exports/:export_id')
  @RequireAccess('analytics', 'read')
  // Polling a file's status and downloading it: the realtime class, not the 50 or 20 an hour of making one.
  @RateLimitClass('analytics', 'realtime')
  @ApiOperation({ summary: 'An export: its status, and when completed its row count, download URL and expiry' })
  @ApiData(ExportResponse)
  async getExport(@CurrentPrincipal() principal: Principal, @Param('export_id') id: string) {
    return ok(ExportResponse.from(await this.service.get(principal.organizationId, 'export', id), this.config.publicBaseUrl));
  }

  @Get('exports/:export_id/download')
  @RequireAccess('analytics', 'read')
  // Polling a file's status and downloading it: the realtime class, not the 50 or 20 an hour of making one.
  @RateLimitClass('analytics', 'realtime')
  @ApiOperation({ summary: 'Download a completed export file (streamed)', description: DOWNLOAD_ERRORS })
  @ApiProduces('text/csv', 'application/x-ndjson')
  @ApiResponse({ status: 200, description: 'The file, as an attachment', content: { 'text/csv': BINARY, 'application/x-ndjson': BINARY } })
  @ApiErrors(409, 410)
  async downloadExport(@CurrentPrincipal() principal: Principal, @Param('export_id') id: string, @Res({ passthrough: true }) res: Response) {
    return this.download(await this.service.downloadable(principal.organizationId, 'export', id), res);
  }

  private download(file: AnalyticsFileRow, res: Response): StreamableFile {
    res.setHeader('Cache-Control', 'private, no-store');
    return new StreamableFile(Readable.from(this.service.chunks(file.id)), {
      type: MEDIA_TYPES[file.kind][file.format],
      disposition: `attachment; filename="${fileName(file)}"`,
      length: file.byte_size ?? undefined,
    });
  }
}
