import { randomBytes } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { AppConfig } from '../../config/app-config.js';

/** The row of `service_keys` holding the generated key material. */
export const GENERATED_KEY_NAME = 'token_signing_key';

/**
 * The key material that signs OAuth access tokens (and the consent form's CSRF tokens) and seals
 * secrets at rest: TOKEN_SIGNING_KEY's keys (newest first) when it is set; otherwise one random key
 * generated for the deployment and kept in PostgreSQL (`service_keys`), so that the API, the workers
 * and the CLI, which share the database, all use the same key. Never a constant of the source.
 *
 * The material is never logged nor answered; each use derives its own key from it (HKDF, an info of
 * its own per use).
 */
export abstract class SigningKeys {
  /** Newest (signing, sealing) first; every one verifies and opens. */
  abstract readonly materials: readonly string[];
  /** True when the material is the generated one (TOKEN_SIGNING_KEY unset). */
  abstract readonly generated: boolean;
}

/** SigningKeys from a fixed list (TOKEN_SIGNING_KEY, tests, scripts). */
export function configuredSigningKeys(materials: readonly string[]): SigningKeys {
  if (materials.length === 0) throw new Error('configuredSigningKeys: no key material');
  return { materials: [...materials], generated: false };
}

/**
 * TOKEN_SIGNING_KEY when set; else the deployment's generated key: inserted by the first process to
 * start (ON CONFLICT DO NOTHING, so concurrent first starts race harmlessly) and read back by every
 * process, the winner's value being the only one stored.
 */
export async function loadSigningKeys(config: Pick<AppConfig, 'tokenSigningKeys'>, dataSource: DataSource): Promise<SigningKeys> {
  if (config.tokenSigningKeys.length > 0) return configuredSigningKeys(config.tokenSigningKeys);
  const candidate = randomBytes(32).toString('base64url');
  await dataSource.query('INSERT INTO service_keys (name, material) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [GENERATED_KEY_NAME, candidate]);
  const rows: { material: string }[] = await dataSource.query('SELECT material FROM service_keys WHERE name = $1', [GENERATED_KEY_NAME]);
  const material = rows[0]?.material;
  if (!material || material.length < 32) throw new Error('The generated signing key in service_keys is missing or shorter than 32 characters');
  new Logger(SigningKeys.name).warn(
    'TOKEN_SIGNING_KEY is not set: OAuth access tokens and stored secrets use a key generated for this deployment and kept in PostgreSQL (table service_keys). ' +
      'Whoever can read the database can read that key and mint tokens: set TOKEN_SIGNING_KEY in production.',
  );
  return { materials: [material], generated: true };
}
