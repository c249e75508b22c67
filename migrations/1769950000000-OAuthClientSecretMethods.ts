import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A confidential OAuth client registered without `token_endpoint_auth_method` authenticates with
 * either secret method: HTTP Basic (client_secret_basic) or client_id and client_secret in the form
 * body (client_secret_post), as the specification's token request writes it. Such a client has no
 * method stored: `token_endpoint_auth_method` becomes nullable, NULL meaning "either secret method".
 * A client registered with an explicit method keeps it and is held to it. Rows already stored keep
 * theirs (a client registered before this change was told `client_secret_basic` and may rely on a
 * request by any other method being refused). The secret rule is unchanged: a client has a secret
 * exactly when its method is not `none`.
 */
export class OAuthClientSecretMethods1769950000000 implements MigrationInterface {
  name = 'OAuthClientSecretMethods1769950000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE oauth_clients DROP CONSTRAINT chk_oauth_clients_secret`);
    await q.query(`ALTER TABLE oauth_clients ALTER COLUMN token_endpoint_auth_method DROP NOT NULL`);
    await q.query(`
      ALTER TABLE oauth_clients ADD CONSTRAINT chk_oauth_clients_secret
        CHECK ((token_endpoint_auth_method IS NOT DISTINCT FROM 'none') = (secret_hash IS NULL))`);
  }

  async down(q: QueryRunner): Promise<void> {
    // Either method becomes Basic, the default before this migration.
    await q.query(`UPDATE oauth_clients SET token_endpoint_auth_method = 'client_secret_basic' WHERE token_endpoint_auth_method IS NULL`);
    await q.query(`ALTER TABLE oauth_clients DROP CONSTRAINT chk_oauth_clients_secret`);
    await q.query(`ALTER TABLE oauth_clients ALTER COLUMN token_endpoint_auth_method SET NOT NULL`);
    await q.query(`ALTER TABLE oauth_clients ADD CONSTRAINT chk_oauth_clients_secret CHECK ((token_endpoint_auth_method = 'none') = (secret_hash IS NULL))`);
  }
}
