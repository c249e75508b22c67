import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { PoolClient } from 'pg';
import Cursor from 'pg-cursor';
import type { DataSource } from 'typeorm';
import { ChunkSink } from './chunk-sink.js';
import { csvRecord } from './csv.js';
import { EXPORT_DATASETS, type ExportDataType } from './export-datasets.js';
import { RollupFolder } from '../../rollups/rollup-folder.js';
import { FilesRepository, type AnalyticsFileRow } from './files.repository.js';
import { writePdfReport } from './pdf-report.js';
import { reportColumns, reportMetric, REPORT_METRICS, reportSql, type ReportGroup, type ReportMetric, type ReportRow } from './report-data.js';

/** How long a completed file is served (docs/API.md: 7 days). */
export const FILE_LIFE_MS = 7 * 86_400_000;
const CURSOR_BATCH = 500;

/** What the service stored as the file's `request`: the resolved, validated parameters. */
export interface ExportRequest {
  start: string;
  end: string;
  workflow_ids: string[] | null;
  channels: string[] | null;
  include_metadata: boolean;
}

export interface ReportRequest {
  description: string | null;
  start: string;
  end: string;
  granularity: 'hour' | 'day' | 'week' | 'month';
  timezone: string;
  workflow_ids: string[] | null;
  group_by: ReportGroup[];
  metrics: ReportMetric[];
}

async function write(out: Writable, text: string): Promise<void> {
  if (!out.write(text)) await once(out, 'drain');
}

/**
 * Makes a report's or an export's file: rows from a database cursor (a few thousand at a time),
 * formatted and written into the file's chunks with back-pressure, in one read-only REPEATABLE READ
 * transaction so the file is one consistent snapshot. Memory holds one cursor batch and one chunk.
 */
@Injectable()
export class FileGenerator {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly files: FilesRepository,
    private readonly rollups: RollupFolder,
  ) {}

  /** Returns false when there is nothing to do (unknown file, or no longer running). */
  async generate(fileId: string): Promise<boolean> {
    const file = await this.files.findById(fileId);
    if (!file || file.status !== 'running') return false;
    await this.files.clearChunks(fileId);
    // Every execution committed before the file was asked for is in the rollups the snapshot reads.
    await this.rollups.catchUp();
    const sink = new ChunkSink(this.files, fileId);
    const runner = this.ds.createQueryRunner();
    const client = (await runner.connect()) as PoolClient;
    let rows: number;
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      rows = file.kind === 'export' ? await this.writeExport(client, file, sink) : await this.writeReport(client, file, sink);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      sink.destroy();
      throw error;
    } finally {
      await runner.release();
    }
    await this.files.complete(fileId, rows, sink.bytes, FILE_LIFE_MS);
    return true;
  }

  private async *cursor(client: PoolClient, sql: string, values: unknown[]): AsyncGenerator<Record<string, unknown>[]> {
    const cursor = client.query(new Cursor(sql, values));
    try {
      for (;;) {
        const batch: Record<string, unknown>[] = await cursor.read(CURSOR_BATCH);
        if (batch.length === 0) return;
        yield batch;
      }
    } finally {
      await cursor.close();
    }
  }

  private async writeExport(client: PoolClient, file: AnalyticsFileRow, sink: ChunkSink): Promise<number> {
    const request = file.request as unknown as ExportRequest;
    const dataset = EXPORT_DATASETS[file.data_type as ExportDataType];
    const columns = request.include_metadata ? [...dataset.columns, ...dataset.metadata] : [...dataset.columns];
    // NDJSON: each line built from its columns; JSON columns arrive as JSON text and are embedded as they are.
    const keys = columns.map((c) => JSON.stringify(c) + ':');
    const json = columns.map((c) => dataset.metadata.includes(c));
    const line = (row: Record<string, unknown>) =>
      '{' + columns.map((c, i) => keys[i] + (row[c] === null || row[c] === undefined ? 'null' : json[i] ? row[c] : JSON.stringify(row[c]))).join(',') + '}\n';
    const values = [file.organization_id, request.start, request.end, request.workflow_ids, request.channels];
    let count = 0;
    if (dataset.indexReadsOnly) await client.query('SET LOCAL enable_seqscan = off');
    if (file.format === 'csv') await write(sink, csvRecord(columns));
    for await (const batch of this.cursor(client, dataset.sql, values)) {
      let text = '';
      for (const row of batch) {
        if (file.format === 'csv') text += csvRecord(columns.map((c) => row[c] as never));
        else text += line(row);
      }
      count += batch.length;
      await write(sink, text);
    }
    sink.end();
    await finished(sink);
    return count;
  }

  private async writeReport(client: PoolClient, file: AnalyticsFileRow, sink: ChunkSink): Promise<number> {
    const request = file.request as unknown as ReportRequest;
    // A report requested before the analytics names were the columns may have stored an alias.
    const asked = new Set(request.metrics.map((m) => reportMetric(m)));
    const metrics = REPORT_METRICS.filter((m) => asked.has(m));
    await client.query(`SELECT set_config('TimeZone', $1, true)`, [request.timezone]);
    const { rows } = await client.query(reportSql(request.group_by, metrics), [
      file.organization_id,
      request.start,
      request.end,
      request.granularity,
      request.workflow_ids,
    ]);
    const reportRows = rows as ReportRow[];
    const columns = reportColumns({ groupBy: request.group_by, metrics });
    const header = {
      name: file.name ?? '',
      description: request.description,
      organization: await this.files.organizationName(file.organization_id),
      periodStart: new Date(request.start),
      periodEnd: new Date(request.end),
      timezone: request.timezone,
      granularity: request.granularity,
      generatedAt: new Date(),
    };
    const pick = (row: ReportRow) => Object.fromEntries(columns.map((c) => [c, (row as unknown as Record<string, unknown>)[c] ?? null]));
    if (file.format === 'pdf') {
      await writePdfReport(sink, header, columns, reportRows);
      return reportRows.length;
    }
    if (file.format === 'csv') {
      await write(sink, csvRecord(columns));
      for (const row of reportRows) await write(sink, csvRecord(Object.values(pick(row)) as never[]));
    } else {
      const meta = {
        report_id: file.id,
        name: header.name,
        description: header.description,
        organization: header.organization,
        period_start: header.periodStart,
        period_end: header.periodEnd,
        timezone: header.timezone,
        granularity: header.granularity,
        group_by: request.group_by,
        metrics,
        generated_at: header.generatedAt,
      };
      await write(sink, `{"report":${JSON.stringify(meta)},"rows":[`);
      for (let i = 0; i < reportRows.length; i++) await write(sink, (i > 0 ? ',' : '') + JSON.stringify(pick(reportRows[i])));
      await write(sink, ']}');
    }
    sink.end();
    await finished(sink);
    return reportRows.length;
  }
}
