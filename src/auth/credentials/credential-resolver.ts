import type { DomainError } from '../../common/errors/domain-error.js';
import type { Principal } from '../access.js';

/**
 * One kind of bearer credential. The authentication guard asks each registered resolver in
 * turn whether it recognises the token's shape; the first that does resolves it. API keys
 * come last and accept any shape, so OAuth access tokens and JWTs plug in by adding a resolver.
 */
export interface CredentialResolver {
  accepts(token: string): boolean;
  resolve(token: string): Promise<Principal | null>;
  invalidError(): DomainError;
}

export const CREDENTIAL_RESOLVERS = Symbol('CREDENTIAL_RESOLVERS');
