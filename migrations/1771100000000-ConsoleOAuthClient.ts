import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The console (served at /console) signs users in through the service's own OAuth server as one
 * public client for the whole deployment: a fixed client id, no secret (PKCE S256 only), no
 * organization of its own. Its authorization codes, refresh tokens and access tokens carry the
 * organization of the user who signed in, as every other grant already does in its own
 * `organization_id` column. `oauth_clients.organization_id` becomes nullable for that one row only
 * (a CHECK keeps every other client in an organization). The redirect URI is not stored: it is
 * `<PUBLIC_BASE_URL>/console/`, which only the deployment's configuration knows.
 * Frozen: the id and scopes are written out here, never imported.
 */
export class ConsoleOAuthClient1771100000000 implements MigrationInterface {
  name = 'ConsoleOAuthClient1771100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE oauth_clients ALTER COLUMN organization_id DROP NOT NULL`);
    await q.query(`
      ALTER TABLE oauth_clients ADD CONSTRAINT chk_oauth_clients_organization
        CHECK (organization_id IS NOT NULL OR id = 'c0501e00-0000-4000-8000-000000000001')`);
    await q.query(`
      INSERT INTO oauth_clients (id, organization_id, name, secret_hash, redirect_uris, scopes, token_endpoint_auth_method)
      VALUES ('c0501e00-0000-4000-8000-000000000001', NULL, 'Console', NULL, '{}',
        ARRAY['workflows:read','triggers:read','executions:read','analytics:read','webhooks:read','channels:read',
              'workflows:write','executions:write','analytics:write','webhooks:write','channels:write'], 'none')
      ON CONFLICT (id) DO NOTHING`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM oauth_clients WHERE id = 'c0501e00-0000-4000-8000-000000000001'`);
    await q.query(`ALTER TABLE oauth_clients DROP CONSTRAINT chk_oauth_clients_organization`);
    await q.query(`ALTER TABLE oauth_clients ALTER COLUMN organization_id SET NOT NULL`);
  }
}
