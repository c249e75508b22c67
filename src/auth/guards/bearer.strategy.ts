import { randomUUID } from 'node:crypto';
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import passport from 'passport';
import { Strategy } from 'passport-http-bearer';
import type { Principal } from '../access.js';
import { MissingAuthenticationError } from '../auth.errors.js';
import { CREDENTIAL_RESOLVERS, type CredentialResolver } from '../credentials/credential-resolver.js';

/** Passport's name for the one strategy (each app adds a suffix of its own). */
export const BEARER_STRATEGY = 'bearer';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The credential of an `Authorization: Bearer <credential>` header, or undefined. */
export function bearerToken(header: string | string[] | undefined): string | undefined {
  return typeof header === 'string' ? BEARER.exec(header)?.[1] : undefined;
}

/**
 * The one Passport strategy: a bearer credential, resolved by the first registered resolver
 * that recognises its shape. validate throws the resolver's own 401 (INVALID_API_KEY,
 * INVALID_TOKEN) so the guard can tell "no credential" from "a bad one".
 */
@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy) implements OnModuleDestroy {
  /** This app's name for the strategy in passport's registry (see the constructor). */
  override name: string;

  /**
   * Registered under a name of its own, not 'bearer': several apps live in one process (tests,
   * the bench), and a shared global 'bearer' would be the last app's, resolving every app's
   * credentials against its database, even after it closed. Passing passport the instance
   * instead of a name is no way out: passport then sets success/fail on that one shared object,
   * and concurrent requests overwrite each other's callbacks (a request never completes). By
   * name, passport derives a fresh object per request.
   */
  constructor(@Inject(CREDENTIAL_RESOLVERS) private readonly resolvers: CredentialResolver[]) {
    super();
    this.name = `${BEARER_STRATEGY}:${randomUUID()}`;
    passport.use(this.name, this);
  }

  /** The mixin registers every strategy under its default name; that registration goes to a throwaway authenticator. */
  getPassportInstance(): passport.PassportStatic {
    return new passport.Passport() as passport.PassportStatic;
  }

  onModuleDestroy(): void {
    passport.unuse(this.name);
  }

  /**
   * passport-http-bearer also reads `access_token` from the query string and the body (RFC 6750
   * §2.2, §2.3); we accept the header only, since tokens in URLs end up in logs and histories,
   * and parse it as before (any whitespace after "Bearer"), handing the strategy a normalised header.
   */
  override authenticate(req: Request, options?: object): void {
    const token = bearerToken(req.headers.authorization);
    super.authenticate({ headers: token ? { authorization: `Bearer ${token}` } : {} } as Request, options);
  }

  async validate(token: string): Promise<Principal> {
    const resolver = this.resolvers.find((r) => r.accepts(token));
    if (!resolver) throw new MissingAuthenticationError();
    const principal = await resolver.resolve(token);
    if (!principal) throw resolver.invalidError();
    return principal;
  }
}
