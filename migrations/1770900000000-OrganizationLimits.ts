import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Per-organization rate limits: an operator's overrides of the deployment's figures
 * (RATE_LIMIT_PER_CREDENTIAL, RATE_LIMIT_READ, ...) for one organization, set with the CLI's
 * `org:limits`. One row per organization that has at least one override; a NULL column is the
 * deployment's figure. Every API process holds the whole table in memory (the rate-limits module).
 */
export class OrganizationLimits1770900000000 implements MigrationInterface {
  name = 'OrganizationLimits1770900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE organization_limits (
        organization_id uuid PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
        per_credential_per_hour int NULL CHECK (per_credential_per_hour > 0),
        read_per_hour int NULL CHECK (read_per_hour > 0),
        write_per_hour int NULL CHECK (write_per_hour > 0),
        delete_per_hour int NULL CHECK (delete_per_hour > 0),
        execution_per_hour int NULL CHECK (execution_per_hour > 0),
        analytics_realtime_per_hour int NULL CHECK (analytics_realtime_per_hour > 0),
        analytics_historical_per_hour int NULL CHECK (analytics_historical_per_hour > 0),
        analytics_reports_per_hour int NULL CHECK (analytics_reports_per_hour > 0),
        analytics_export_per_hour int NULL CHECK (analytics_export_per_hour > 0),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE organization_limits`);
  }
}
