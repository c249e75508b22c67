import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Organizations, credentials, users, workflows with their versions, and the sample pets. */
export class Foundation1763769600000 implements MigrationInterface {
  name = 'Foundation1763769600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE organizations (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name varchar(200) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT uq_organizations_name UNIQUE (name)
      )`);
    await q.query(`
      CREATE TABLE api_keys (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        name varchar(200) NOT NULL,
        prefix varchar(16) NOT NULL,
        key_hash char(64) NOT NULL,
        permission_level varchar(20) NOT NULL CHECK (permission_level IN ('read_only', 'read_write', 'full_access')),
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT uq_api_keys_key_hash UNIQUE (key_hash)
      )`);
    await q.query(`CREATE INDEX idx_api_keys_org_created ON api_keys (organization_id, created_at)`);
    await q.query(`
      CREATE TABLE users (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        email varchar(320) NOT NULL,
        password_hash text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT uq_users_email UNIQUE (email)
      )`);
    await q.query(`CREATE INDEX idx_users_org ON users (organization_id)`);
    await q.query(`
      CREATE TABLE workflows (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        name varchar(200) NOT NULL,
        description text,
        channel varchar(32),
        status varchar(16) NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'active', 'inactive')),
        configuration jsonb NOT NULL,
        version int NOT NULL DEFAULT 1,
        execution_count int NOT NULL DEFAULT 0,
        success_count int NOT NULL DEFAULT 0,
        failure_count int NOT NULL DEFAULT 0,
        activated_at timestamptz,
        deactivated_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX uq_workflows_org_name ON workflows (organization_id, name)`);
    await q.query(`CREATE INDEX idx_workflows_org_created ON workflows (organization_id, created_at, id)`);
    await q.query(`
      CREATE TABLE workflow_versions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        workflow_id uuid NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
        version int NOT NULL,
        configuration jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX uq_workflow_versions_workflow_version ON workflow_versions (workflow_id, version)`);
    await q.query(`
      CREATE TABLE pets (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        name varchar(200) NOT NULL,
        status varchar(16) NOT NULL CHECK (status IN ('available', 'pending', 'sold')),
        category jsonb NOT NULL DEFAULT '{}'::jsonb,
        photo_urls jsonb NOT NULL DEFAULT '[]'::jsonb,
        tags jsonb NOT NULL DEFAULT '[]'::jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX idx_pets_status ON pets (status, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['pets', 'workflow_versions', 'workflows', 'users', 'api_keys', 'organizations']) {
      await q.query(`DROP TABLE IF EXISTS ${table}`);
    }
  }
}
