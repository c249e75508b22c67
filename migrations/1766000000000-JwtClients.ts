import type { MigrationInterface, QueryRunner } from 'typeorm';

/** JWT server-to-server clients: a registered public key (as a JWK) and the scopes its tokens may carry. */
export class JwtClients1766000000000 implements MigrationInterface {
  name = 'JwtClients1766000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE jwt_clients (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        name varchar(200) NOT NULL,
        public_key jsonb NOT NULL,
        algorithms text[] NOT NULL,
        scopes text[] NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX idx_jwt_clients_org_created ON jwt_clients (organization_id, created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE jwt_clients`);
  }
}
