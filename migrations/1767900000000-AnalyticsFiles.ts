import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Analytics reports and exports: one row per requested file, and the file itself in 1 MiB chunks,
 * so that any API instance can serve a download and nothing depends on a local disk. Chunks are
 * stored uncompressed (STORAGE EXTERNAL): they are written once, read a few times, and deleted
 * after seven days, so compressing them would cost more CPU than the disk it saves.
 */
export class AnalyticsFiles1767900000000 implements MigrationInterface {
  name = 'AnalyticsFiles1767900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE analytics_files (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        kind varchar(8) NOT NULL CHECK (kind IN ('report', 'export')),
        name varchar(200),
        data_type varchar(32),
        format varchar(8) NOT NULL CHECK (format IN ('csv', 'json', 'pdf')),
        request jsonb NOT NULL,
        status varchar(16) NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'completed', 'failed')),
        error jsonb,
        row_count bigint,
        byte_size bigint,
        created_at timestamptz NOT NULL DEFAULT now(),
        estimated_completion timestamptz NOT NULL,
        completed_at timestamptz,
        expires_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX idx_analytics_files_expires ON analytics_files (expires_at)`);
    await q.query(`
      CREATE TABLE analytics_file_chunks (
        file_id uuid NOT NULL REFERENCES analytics_files(id) ON DELETE CASCADE,
        seq int NOT NULL,
        data bytea NOT NULL,
        PRIMARY KEY (file_id, seq)
      )`);
    await q.query(`ALTER TABLE analytics_file_chunks ALTER COLUMN data SET STORAGE EXTERNAL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS analytics_file_chunks`);
    await q.query(`DROP TABLE IF EXISTS analytics_files`);
  }
}
