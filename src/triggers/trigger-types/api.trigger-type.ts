import type { ConfigReader, TriggerTypeDefinition } from './trigger-type.js';

/** Which credential type may fire: `any` (the default), or only one; `bearer` is an older name of `any`. */
export const API_AUTHENTICATION_METHODS = ['any', 'api_key', 'oauth', 'jwt', 'bearer'] as const;
export type ApiAuthentication = (typeof API_AUTHENTICATION_METHODS)[number];
export const DEFAULT_API_AUTHENTICATION: ApiAuthentication = 'any';

/** Whether a credential of this type may fire a trigger configured with `authentication`. */
export function credentialMayFire(authentication: unknown, credentialType: string): boolean {
  const method = typeof authentication === 'string' ? authentication : DEFAULT_API_AUTHENTICATION;
  return method === 'any' || method === 'bearer' || method === credentialType;
}
export const DEFAULT_API_RATE_LIMIT = 100;
export const MAX_API_RATE_LIMIT = 100_000;

export interface ApiTriggerConfiguration {
  /** Firings allowed per hour. */
  rate_limit: number;
  /** Which credential type of the organization may call the fire endpoint. */
  authentication: ApiAuthentication;
}

/** Fires on `POST /v1/triggers/{id}/fire` with a normal credential, within its hourly rate limit. */
export const apiTriggerType: TriggerTypeDefinition<ApiTriggerConfiguration> = {
  type: 'api',
  keys: ['rate_limit', 'authentication'],
  readOnlyKeys: ['endpoint'],

  parse(_input: Record<string, unknown>, r: ConfigReader) {
    return {
      configuration: {
        rate_limit: r.integer('rate_limit', 1, MAX_API_RATE_LIMIT, DEFAULT_API_RATE_LIMIT),
        authentication: r.oneOf('authentication', API_AUTHENTICATION_METHODS, DEFAULT_API_AUTHENTICATION, (a) => a.toLowerCase()),
      },
    };
  },

  present(configuration, context) {
    return { endpoint: `/v1/triggers/${context.id}/fire`, authentication: configuration.authentication, rate_limit: configuration.rate_limit };
  },
};
