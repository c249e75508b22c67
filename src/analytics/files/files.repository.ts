import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';

export type FileKind = 'report' | 'export';
export type FileFormat = 'csv' | 'json' | 'pdf';
export type FileStatus = 'running' | 'completed' | 'failed';

export interface AnalyticsFileRow {
  id: string;
  organization_id: string;
  kind: FileKind;
  name: string | null;
  data_type: string | null;
  format: FileFormat;
  request: Record<string, unknown>;
  status: FileStatus;
  error: { code: string; message: string } | null;
  row_count: number | null;
  byte_size: number | null;
  created_at: Date;
  estimated_completion: Date;
  completed_at: Date | null;
  expires_at: Date;
}

const COLUMNS = `id, organization_id, kind, name, data_type, format, request, status, error, row_count::float8 AS row_count,
  byte_size::float8 AS byte_size, created_at, estimated_completion, completed_at, expires_at`;

/** Report and export rows and their file chunks; every lookup is scoped to the organization. */
@Injectable()
export class FilesRepository {
  constructor(@InjectDataSource() private readonly ds: DataSource) {}

  async create(row: Pick<AnalyticsFileRow, 'organization_id' | 'kind' | 'name' | 'data_type' | 'format' | 'request'> & { estimatedMs: number; lifeMs: number }): Promise<AnalyticsFileRow> {
    const [created] = await this.ds.query(
      `INSERT INTO analytics_files (organization_id, kind, name, data_type, format, request, estimated_completion, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, now() + $7 * interval '1 millisecond', now() + $8 * interval '1 millisecond')
       RETURNING ${COLUMNS}`,
      [row.organization_id, row.kind, row.name, row.data_type, row.format, row.request, row.estimatedMs, row.lifeMs],
    );
    return created;
  }

  /** The organization's file of that kind, or null (an id of another organization is unknown here). */
  async findOwned(organizationId: string, kind: FileKind, id: string): Promise<AnalyticsFileRow | null> {
    const rows = await this.ds.query(`SELECT ${COLUMNS} FROM analytics_files WHERE id = $1 AND organization_id = $2 AND kind = $3`, [id, organizationId, kind]);
    return rows[0] ?? null;
  }

  async findById(id: string): Promise<AnalyticsFileRow | null> {
    const rows = await this.ds.query(`SELECT ${COLUMNS} FROM analytics_files WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  async organizationName(organizationId: string): Promise<string> {
    const rows = await this.ds.query(`SELECT name FROM organizations WHERE id = $1`, [organizationId]);
    return rows[0]?.name ?? '';
  }

  /** A retried job starts its file again from nothing. */
  async clearChunks(fileId: string): Promise<void> {
    await this.ds.query(`DELETE FROM analytics_file_chunks WHERE file_id = $1`, [fileId]);
  }

  async writeChunk(fileId: string, seq: number, data: Buffer): Promise<void> {
    await this.ds.query(`INSERT INTO analytics_file_chunks (file_id, seq, data) VALUES ($1, $2, $3)`, [fileId, seq, data]);
  }

  /** Completed: the file is served for `lifeMs` from now. Only a running file can complete. */
  async complete(fileId: string, rowCount: number, byteSize: number, lifeMs: number): Promise<void> {
    await this.ds.query(
      `UPDATE analytics_files SET status = 'completed', row_count = $2, byte_size = $3, completed_at = now(),
              expires_at = now() + $4 * interval '1 millisecond'
        WHERE id = $1 AND status = 'running'`,
      [fileId, rowCount, byteSize, lifeMs],
    );
  }

  async fail(fileId: string, error: { code: string; message: string }): Promise<void> {
    await this.ds.query(`UPDATE analytics_files SET status = 'failed', error = $2 WHERE id = $1 AND status = 'running'`, [fileId, error]);
    await this.clearChunks(fileId);
  }

  /** The file's chunks in order, `batch` at a time, so a download holds a few MiB at most. */
  async *chunks(fileId: string, batch = 4): AsyncGenerator<Buffer> {
    for (let next = 0; ; ) {
      const rows: { seq: number; data: Buffer }[] = await this.ds.query(
        `SELECT seq, data FROM analytics_file_chunks WHERE file_id = $1 AND seq >= $2 ORDER BY seq LIMIT $3`,
        [fileId, next, batch],
      );
      for (const row of rows) yield row.data;
      if (rows.length < batch) return;
      next = rows[rows.length - 1].seq + 1;
    }
  }

  /** Deletes files past their expiry (chunks go with them), at most `limit` per call; returns how many. */
  async deleteExpired(limit = 100): Promise<number> {
    // A SELECT around the DELETE: TypeORM answers a bare DELETE ... RETURNING with [rows, count].
    const [{ n }] = await this.ds.query(
      `WITH gone AS (
         DELETE FROM analytics_files WHERE id IN (SELECT id FROM analytics_files WHERE expires_at < now() ORDER BY expires_at LIMIT $1) RETURNING 1
       ) SELECT count(*)::int AS n FROM gone`,
      [limit],
    );
    return n;
  }
}
