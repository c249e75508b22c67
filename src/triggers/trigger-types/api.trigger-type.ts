import type { ConfigReader, TriggerTypeDefinition } from './trigger-type.js';

export const API_AUTHENTICATION_METHODS = ['bearer'] as const;
export type ApiAuthentication = (typeof API_AUTHENTICATION_METHODS)[number];
export const DEFAULT_API_RATE_LIMIT = 100;
export const MAX_API_RATE_LIMIT = 100_000;

export interface ApiTriggerConfiguration {
  /** Firings allowed per hour. */
  rate_limit: number;
  /** How callers of the fire endpoint authenticate: a normal credential of the organization. */
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
        authentication: r.oneOf('authentication', API_AUTHENTICATION_METHODS, 'bearer', (a) => a.toLowerCase()),
      },
    };
  },

  present(configuration, context) {
    return { endpoint: `/v1/triggers/${context.id}/fire`, authentication: configuration.authentication, rate_limit: configuration.rate_limit };
  },
};
