import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The OAuth 2.0 authorization server (docs/API.md, "OAuth 2.0"): registered clients (secret stored as SHA-256),
 * authorization codes (stored hashed, single use), refresh tokens (stored hashed, one chain per
 * grant so that reuse of a rotated token revokes the whole grant), and revoked access-token ids
 * (a jti, or a grant id revoking every access token of that grant) kept until the tokens expire.
 */
export class OAuthServer1767100000000 implements MigrationInterface {
  name = 'OAuthServer1767100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE oauth_clients (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        name varchar(200) NOT NULL,
        secret_hash char(64),
        redirect_uris text[] NOT NULL,
        scopes text[] NOT NULL,
        token_endpoint_auth_method varchar(32) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT chk_oauth_clients_secret CHECK ((token_endpoint_auth_method = 'none') = (secret_hash IS NULL))
      )`);
    await q.query(`CREATE INDEX idx_oauth_clients_org_created ON oauth_clients (organization_id, created_at)`);
    await q.query(`
      CREATE TABLE oauth_authorization_codes (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        code_hash char(64) NOT NULL UNIQUE,
        client_id uuid NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
        organization_id uuid NOT NULL,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        redirect_uri text NOT NULL,
        scopes text[] NOT NULL,
        code_challenge varchar(128),
        expires_at timestamptz NOT NULL,
        used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX idx_oauth_codes_client ON oauth_authorization_codes (client_id)`);
    // grant_id is the id of the authorization code the chain started from.
    await q.query(`
      CREATE TABLE oauth_refresh_tokens (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        token_hash char(64) NOT NULL UNIQUE,
        grant_id uuid NOT NULL,
        client_id uuid NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
        organization_id uuid NOT NULL,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        scopes text[] NOT NULL,
        expires_at timestamptz NOT NULL,
        rotated_at timestamptz,
        revoked_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX idx_oauth_refresh_grant ON oauth_refresh_tokens (grant_id)`);
    await q.query(`CREATE INDEX idx_oauth_refresh_client ON oauth_refresh_tokens (client_id)`);
    await q.query(`
      CREATE TABLE oauth_revoked_tokens (
        id uuid PRIMARY KEY,
        expires_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX idx_oauth_revoked_expires ON oauth_revoked_tokens (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE oauth_revoked_tokens`);
    await q.query(`DROP TABLE oauth_refresh_tokens`);
    await q.query(`DROP TABLE oauth_authorization_codes`);
    await q.query(`DROP TABLE oauth_clients`);
  }
}
