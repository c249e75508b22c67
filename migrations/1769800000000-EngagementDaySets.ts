import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Distinct active customers of the engagement endpoint without hashing every session of the period
 * (docs/DECISIONS.md "Analytics", "Engagement"). A 30-day request over
 * a busy organization read ~80,000 sessions and grouped them twice (per customer and channel, then
 * per customer): ~150 ms of PostgreSQL per request, the whole of the endpoint's cost.
 *
 * `engagement_day_sets` keeps, per organization, UTC day and channel, the distinct customers whose
 * sessions started that day on that channel, as their 64-bit hashes (`uuid_hash_extended(customer_id,
 * 0)`, 8 bytes each, sorted), with the day's session count and a checksum (the sum of the sessions'
 * 31-bit customer hashes). The rows are written by the read path only (src/analytics/engagement-days.ts):
 * a set is valid exactly while its count and checksum equal those of the day's sessions, which the
 * request reads anyway for its sums; a missing or stale set is folded again from customer_sessions
 * (the truth) and stored. The write path never touches this table. Nothing to backfill: the first
 * request of a period folds its days.
 */
export class EngagementDaySets1769800000000 implements MigrationInterface {
  name = 'EngagementDaySets1769800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE engagement_day_sets (
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        day timestamptz NOT NULL,
        channel varchar(32) NOT NULL,
        sessions int NOT NULL,
        checksum bigint NOT NULL,
        customers bytea NOT NULL,
        PRIMARY KEY (organization_id, day, channel)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS engagement_day_sets`);
  }
}
