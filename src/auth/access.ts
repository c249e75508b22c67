/** What a credential may do: API keys carry a level, tokens carry scopes. */
export const PERMISSION_LEVELS = ['read_only', 'read_write', 'full_access'] as const;
export type PermissionLevel = (typeof PERMISSION_LEVELS)[number];

export const SCOPE_RESOURCES = ['workflows', 'triggers', 'executions', 'analytics', 'webhooks', 'channels'] as const;
export type ScopeResource = (typeof SCOPE_RESOURCES)[number];
export const SCOPE_ACTIONS = ['read', 'write', 'delete'] as const;
export type Action = (typeof SCOPE_ACTIONS)[number];

/** `credentials` (API keys, OAuth and JWT clients) is managed by Full Access API keys only; no scope grants it. */
export type Resource = ScopeResource | 'credentials';

export interface AccessRequirement {
  resource: Resource;
  action: Action;
}

export type CredentialType = 'api_key' | 'oauth' | 'jwt';

/** The authenticated caller, as every guard and service sees it. */
export interface Principal {
  credentialType: CredentialType;
  credentialId: string;
  name: string;
  organizationId: string;
  permissionLevel?: PermissionLevel;
  scopes?: string[];
  /** OAuth tokens only: the user who authorized the client. */
  userId?: string;
}

const LEVEL_RANK: Record<PermissionLevel, number> = { read_only: 0, read_write: 1, full_access: 2 };
const ACTION_LEVEL: Record<Action, PermissionLevel> = { read: 'read_only', write: 'read_write', delete: 'full_access' };

export function requiredLevel(requirement: AccessRequirement): PermissionLevel {
  return requirement.resource === 'credentials' ? 'full_access' : ACTION_LEVEL[requirement.action];
}

export function levelAllows(level: PermissionLevel, requirement: AccessRequirement): boolean {
  return LEVEL_RANK[level] >= LEVEL_RANK[requiredLevel(requirement)];
}

export function scopeFor(requirement: AccessRequirement): string | undefined {
  return requirement.resource === 'credentials' ? undefined : `${requirement.resource}:${requirement.action}`;
}

export function scopesAllow(scopes: readonly string[], requirement: AccessRequirement): boolean {
  const needed = scopeFor(requirement);
  return needed !== undefined && scopes.includes(needed);
}

/** Whether the caller passes the requirement (what AccessGuard checks): the level of an API key, else the scopes. */
export function principalAllows(principal: Principal, requirement: AccessRequirement): boolean {
  if (principal.credentialType === 'api_key') return principal.permissionLevel !== undefined && levelAllows(principal.permissionLevel, requirement);
  return scopesAllow(principal.scopes ?? [], requirement);
}

export function isValidScope(scope: string): boolean {
  const [resource, action, ...rest] = scope.split(':');
  return rest.length === 0 && (SCOPE_RESOURCES as readonly string[]).includes(resource) && (SCOPE_ACTIONS as readonly string[]).includes(action);
}

/** Every scope a token can carry, `<resource>:<action>`. */
export const ALL_SCOPES: string[] = SCOPE_RESOURCES.flatMap((resource) => SCOPE_ACTIONS.map((action) => `${resource}:${action}`));
