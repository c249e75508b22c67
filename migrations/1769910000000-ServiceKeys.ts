import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Keys the service generates for itself when the operator configures none: today one row,
 * `token_signing_key`, the random key material that signs OAuth access tokens and seals secrets at
 * rest when TOKEN_SIGNING_KEY is unset (src/common/crypto/signing-keys.ts). The first process to start
 * inserts it (ON CONFLICT DO NOTHING), every process (API, workers, CLI) reads the same row back.
 * Whoever can read this table can mint tokens: production sets TOKEN_SIGNING_KEY instead.
 */
export class ServiceKeys1769910000000 implements MigrationInterface {
  name = 'ServiceKeys1769910000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE service_keys (
        name varchar(64) PRIMARY KEY,
        material text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE service_keys');
  }
}
