import { InjectQueue } from '@nestjs/bull';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Queue } from 'bull';
import type { DataSource } from 'typeorm';
import { AnalyticsService } from '../analytics.service.js';
import { InvalidRequestError } from '../../common/errors/common.errors.js';
import { InvalidDateRangeError, parseGranularity, resolveDateRange, type DateRange } from '../../common/date-range.js';
import { isUuid } from '../../common/ids/uuid.js';
import { WorkflowNotFoundError } from '../../workflows/workflows.errors.js';
import { AnalyticsFileJobs, ANALYTICS_FILES_QUEUE, generateJobOptions } from './analytics-files.queue.js';
import type { CreateExportDto } from './dto/create-export.dto.js';
import type { CreateReportDto } from './dto/create-report.dto.js';
import { EXPORT_DATASETS } from './export-datasets.js';
import { FileExpiredError, FileNotFoundError, FileNotReadyError, InvalidMetricsError } from './files.errors.js';
import { FilesRepository, type AnalyticsFileRow, type FileKind } from './files.repository.js';
import { FILE_LIFE_MS, type ExportRequest, type ReportRequest } from './file-generator.service.js';
import { DEFAULT_REPORT_METRICS, REPORT_GROUPS, REPORT_METRIC_ALIASES, REPORT_METRICS, reportMetric, type ReportGroup, type ReportMetric } from './report-data.js';
import { isoTime } from '../../common/iso-time.js';

const HOUR_MS = 3_600_000;
const MAX_PERIOD_MS = 366 * 86_400_000;
/** Rows a generator writes per millisecond, measured on the bench's 1,000,000-row export: the basis of estimated_completion. */
const ROWS_PER_MS = 40;

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Only the listed keys; anything else is named as the offending field. */
function assertKeys(value: Record<string, unknown>, allowed: readonly string[], prefix: string): void {
  for (const key of Object.keys(value)) if (!allowed.includes(key)) throw new InvalidRequestError(`${prefix}.${key} is not a known field`, `${prefix}.${key}`);
}

function stringArray(value: unknown, field: string, max: number, item: (v: string) => boolean, itemRule: string): string[] | null {
  if (value === undefined) return null;
  if (!Array.isArray(value) || value.length > max) throw new InvalidRequestError(`${field} must be an array of at most ${max} items`, field);
  value.forEach((v, i) => {
    if (typeof v !== 'string' || !item(v)) throw new InvalidRequestError(`${field}[${i}] must be ${itemRule}`, `${field}[${i}]`);
  });
  return [...new Set(value as string[])];
}

/** A period for a file: end not before start, start not in the future, at most 366 days. */
function filePeriod(input: { start_date?: unknown; end_date?: unknown }, prefix: string): DateRange {
  for (const key of ['start_date', 'end_date'] as const) {
    const v = input[key];
    if (v !== undefined && (typeof v !== 'string' || v.length > 64)) throw new InvalidRequestError(`${key} must be an ISO 8601 date or date-time`, `${prefix}${key}`);
  }
  const now = new Date();
  const range = resolveDateRange({ start_date: input.start_date as string | undefined, end_date: input.end_date as string | undefined }, now);
  if (range.start.getTime() > now.getTime()) throw new InvalidDateRangeError('start_date must not be in the future');
  if (range.end.getTime() - range.start.getTime() > MAX_PERIOD_MS) throw new InvalidDateRangeError('the period must not be longer than 366 days');
  return range;
}

/** Requests and reads report and export files; the Bull processor makes them (FileGenerator). */
@Injectable()
export class AnalyticsFilesService {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    @InjectQueue(ANALYTICS_FILES_QUEUE) private readonly queue: Queue,
    private readonly files: FilesRepository,
    private readonly analytics: AnalyticsService,
  ) {}

  async createReport(organizationId: string, body: CreateReportDto): Promise<AnalyticsFileRow> {
    const metrics = this.reportMetrics(body.metrics);
    const filters = body.filters === undefined ? {} : body.filters;
    if (!isPlainObject(filters)) throw new InvalidRequestError('filters must be an object', 'filters');
    assertKeys(filters, ['start_date', 'end_date', 'workflow_ids'], 'filters');
    const range = filePeriod(filters, 'filters.');
    const groupBy = stringArray(body.group_by, 'group_by', REPORT_GROUPS.length, (v) => (REPORT_GROUPS as readonly string[]).includes(v), `one of ${REPORT_GROUPS.join(', ')}`) ?? [];
    const granularity = parseGranularity(body.granularity);
    // The analytics endpoints' check: a zone PostgreSQL (which buckets the report) and Intl (which labels the PDF) both know.
    const timezone = await this.analytics.timezone(body.timezone);
    const workflowIds = await this.ownedWorkflows(organizationId, filters.workflow_ids, 'filters.workflow_ids');
    // Whole rollup hours: from the hour holding the start to the end of the hour holding the end.
    const start = new Date(Math.floor(range.start.getTime() / HOUR_MS) * HOUR_MS);
    const end = new Date(Math.floor(range.end.getTime() / HOUR_MS) * HOUR_MS + HOUR_MS);
    const request: ReportRequest = {
      description: body.description ?? null,
      start: isoTime(start),
      end: isoTime(end),
      granularity,
      timezone,
      workflow_ids: workflowIds,
      group_by: REPORT_GROUPS.filter((g) => groupBy.includes(g)) as ReportGroup[],
      metrics,
    };
    const file = await this.files.create({
      organization_id: organizationId,
      kind: 'report',
      name: body.name,
      data_type: null,
      format: body.format ?? 'csv',
      request: request as unknown as Record<string, unknown>,
      estimatedMs: 2000,
      lifeMs: FILE_LIFE_MS,
    });
    await this.queue.add(AnalyticsFileJobs.generate, { fileId: file.id }, generateJobOptions(file.id));
    return file;
  }

  async createExport(organizationId: string, body: CreateExportDto): Promise<AnalyticsFileRow> {
    const dataset = EXPORT_DATASETS[body.data_type];
    const range = filePeriod(body, '');
    const filters = body.filters === undefined ? {} : body.filters;
    if (!isPlainObject(filters)) throw new InvalidRequestError('filters must be an object', 'filters');
    assertKeys(filters, ['workflow_ids', 'channels'], 'filters');
    if (filters.workflow_ids !== undefined && !dataset.workflowFilter) {
      throw new InvalidRequestError(`${body.data_type} exports cannot be filtered by workflow`, 'filters.workflow_ids');
    }
    if (filters.channels !== undefined && !dataset.channelFilter) throw new InvalidRequestError(`${body.data_type} exports cannot be filtered by channel`, 'filters.channels');
    const channels = stringArray(filters.channels, 'filters.channels', 10, (v) => v.length >= 1 && v.length <= 32, 'a channel name of 1 to 32 characters');
    const workflowIds = await this.ownedWorkflows(organizationId, filters.workflow_ids, 'filters.workflow_ids');
    const request: ExportRequest = {
      start: isoTime(range.start),
      end: isoTime(range.end),
      workflow_ids: workflowIds,
      channels,
      include_metadata: body.include_metadata ?? false,
    };
    const file = await this.files.create({
      organization_id: organizationId,
      kind: 'export',
      name: null,
      data_type: body.data_type,
      format: body.format ?? 'csv',
      request: request as unknown as Record<string, unknown>,
      estimatedMs: 2000 + (await this.estimatedRows(organizationId, body.data_type)) / ROWS_PER_MS,
      lifeMs: FILE_LIFE_MS,
    });
    await this.queue.add(AnalyticsFileJobs.generate, { fileId: file.id }, generateJobOptions(file.id));
    return file;
  }

  async get(organizationId: string, kind: FileKind, id: string): Promise<AnalyticsFileRow> {
    const file = isUuid(id) ? await this.files.findOwned(organizationId, kind, id) : null;
    if (!file) throw new FileNotFoundError(kind);
    return file;
  }

  /** The file when it can be downloaded: completed and not expired. */
  async downloadable(organizationId: string, kind: FileKind, id: string): Promise<AnalyticsFileRow> {
    const file = await this.get(organizationId, kind, id);
    if (file.status !== 'completed') throw new FileNotReadyError(kind, file.status === 'failed');
    if (file.expires_at.getTime() <= Date.now()) throw new FileExpiredError(kind);
    return file;
  }

  chunks(fileId: string): AsyncGenerator<Buffer> {
    return this.files.chunks(fileId);
  }

  /** The metrics asked for, aliases resolved, in column order (default: all but the delivery figures); 400 INVALID_METRICS otherwise. */
  private reportMetrics(value: unknown): ReportMetric[] {
    if (value === undefined) return [...DEFAULT_REPORT_METRICS];
    if (!Array.isArray(value) || value.length === 0 || value.some((v) => typeof v !== 'string')) {
      throw new InvalidMetricsError(`metrics must be a non-empty array of metric names: ${REPORT_METRICS.join(', ')}`);
    }
    const unknown = (value as string[]).filter((v) => reportMetric(v) === undefined);
    if (unknown.includes('channel_breakdown')) {
      throw new InvalidMetricsError('channel_breakdown is not a column of a report: split the rows by channel with group_by ["channel"]');
    }
    if (unknown.length > 0) {
      const aliases = Object.keys(REPORT_METRIC_ALIASES).join(', ');
      throw new InvalidMetricsError(`unknown metrics: ${unknown.slice(0, 5).join(', ')}; known: ${REPORT_METRICS.join(', ')} (aliases: ${aliases})`);
    }
    const asked = new Set((value as string[]).map((v) => reportMetric(v)));
    return REPORT_METRICS.filter((m) => asked.has(m));
  }

  /** The ids, each a workflow of the organization (404 WORKFLOW_NOT_FOUND otherwise); null when absent. */
  private async ownedWorkflows(organizationId: string, value: unknown, field: string): Promise<string[] | null> {
    const ids = stringArray(value, field, 100, isUuid, 'a workflow id');
    if (ids === null) return null;
    if (ids.length === 0) throw new InvalidRequestError(`${field} must not be empty`, field);
    const [{ n }] = await this.ds.query(`SELECT count(*)::int AS n FROM workflows WHERE organization_id = $1 AND id = ANY ($2::uuid[])`, [organizationId, ids]);
    if (n !== ids.length) throw new WorkflowNotFoundError();
    return ids;
  }

  /** The organization's row count for the data type from the counters kept exactly (no count over rows). */
  private async estimatedRows(organizationId: string, dataType: string): Promise<number> {
    if (dataType !== 'executions' && dataType !== 'messages' && dataType !== 'trigger_executions') return 0;
    const [{ n }] = await this.ds.query(`SELECT COALESCE(sum(execution_count), 0)::float8 AS n FROM workflows WHERE organization_id = $1`, [organizationId]);
    return dataType === 'messages' ? n * 3 : n;
  }
}
