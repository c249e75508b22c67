import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import type { DataSource, Repository } from 'typeorm';
import { isValidScope } from '../access.js';
import { UsersService } from '../users/users.service.js';
import { consoleRedirectUri, CONSOLE_CLIENT_ID } from './console-client.js';
import { ACCESS_TOKEN_LIFETIME_SECONDS, AccessTokenSigner } from './access-token.signer.js';
import { OAuthAuthorizationCode } from './entities/oauth-authorization-code.entity.js';
import { acceptedAuthMethods, type OAuthClient } from './entities/oauth-client.entity.js';
import { OAuthRefreshToken } from './entities/oauth-refresh-token.entity.js';
import { hashSecret, OAuthClientsService } from './oauth-clients.service.js';
import { InvalidClientError, OAuthError, type OAuthErrorCode } from './oauth.errors.js';
import { OAuthTokenResolver } from './oauth-token.resolver.js';
import { isPkceValue, verifierMatches } from './pkce.js';

export const AUTHORIZATION_CODE_LIFETIME_SECONDS = 600;
export const REFRESH_TOKEN_LIFETIME_SECONDS = 30 * 24 * 3600;
const MAX_STATE_LENGTH = 1024;
/** Clock skew allowance added to how long a revoked grant is remembered. */
const SKEW_SECONDS = 60;

export type Params = Record<string, unknown>;

/** A validated authorization request (GET and POST /oauth/authorize). */
export interface AuthorizationRequest {
  client: OAuthClient;
  redirectUri: string;
  scopes: string[];
  state?: string;
  codeChallenge?: string;
  /** The parameters to carry through the consent form, as received (valid ones only). */
  carried: Record<string, string>;
}

/** What an authorization request comes to: the consent page, an error page (never a redirect), or a redirect with an error. */
export type AuthorizationCheck =
  | { kind: 'ok'; request: AuthorizationRequest }
  | { kind: 'page'; status: number; message: string }
  | { kind: 'redirect'; location: string };

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/** The client and how it authenticated at the token, revocation or introspection endpoint. */
export interface ClientCredentials {
  basic?: { clientId: string; secret: string };
  body: Params;
}

/**
 * The authorization server of docs/API.md, "OAuth 2.0" (RFC 6749, 7636, 7009, 7662, 9207, BCP RFC 9700):
 * authorization requests, codes (hashed, single use, bound to client, redirect URI and PKCE
 * challenge, 10 minutes), token issuance with refresh-token rotation per grant, reuse detection
 * that revokes the grant, revocation and introspection.
 */
@Injectable()
export class OAuthService {
  constructor(
    private readonly clients: OAuthClientsService,
    private readonly users: UsersService,
    private readonly signer: AccessTokenSigner,
    private readonly tokens: OAuthTokenResolver,
    @InjectRepository(OAuthAuthorizationCode) private readonly codes: Repository<OAuthAuthorizationCode>,
    @InjectRepository(OAuthRefreshToken) private readonly refreshTokens: Repository<OAuthRefreshToken>,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  get issuer(): string {
    return this.signer.issuer;
  }

  /**
   * Validates an authorization request. An unknown client or a redirect URI that is not registered
   * exactly is an error page (redirecting there would make us an open redirector); every later
   * problem is sent back to the client's redirect URI (RFC 6749 §4.1.2.1).
   */
  async checkAuthorization(params: Params): Promise<AuthorizationCheck> {
    const clientId = params.client_id;
    const redirectUri = params.redirect_uri;
    if (typeof clientId !== 'string' || clientId === '') return { kind: 'page', status: 400, message: 'The request names no client (client_id is missing or repeated).' };
    const client = await this.clients.find(clientId);
    if (!client) return { kind: 'page', status: 400, message: 'The application asking for access is not registered (unknown client_id).' };
    if (typeof redirectUri !== 'string' || !this.redirectUrisOf(client).includes(redirectUri)) {
      return { kind: 'page', status: 400, message: 'The redirect_uri is missing or is not one registered for this application.' };
    }
    const state = params.state;
    const fail = (error: OAuthErrorCode, description: string): AuthorizationCheck => ({
      kind: 'redirect',
      location: this.redirectLocation(redirectUri, { error, error_description: description, state: typeof state === 'string' ? state : undefined }),
    });
    if (state !== undefined && (typeof state !== 'string' || state.length > MAX_STATE_LENGTH)) return fail('invalid_request', `state must be one string of at most ${MAX_STATE_LENGTH} characters`);
    if (params.response_type !== 'code') return fail('unsupported_response_type', 'Only response_type=code is supported');
    let scopes: string[];
    if (params.scope === undefined) scopes = client.scopes;
    else if (typeof params.scope !== 'string') return fail('invalid_scope', 'scope must be given once');
    else {
      scopes = [...new Set(params.scope.split(' ').filter((s) => s !== ''))];
      if (scopes.length === 0 || scopes.some((s) => !isValidScope(s) || !client.scopes.includes(s))) {
        return fail('invalid_scope', 'The requested scope is unknown or exceeds the scopes registered for this client');
      }
    }
    const challenge = params.code_challenge;
    const method = params.code_challenge_method;
    if (challenge === undefined) {
      if (client.tokenEndpointAuthMethod === 'none') return fail('invalid_request', 'Public clients must use PKCE: code_challenge with code_challenge_method=S256');
      if (method !== undefined) return fail('invalid_request', 'code_challenge_method without code_challenge');
    } else {
      if (typeof challenge !== 'string' || !isPkceValue(challenge) || challenge.length !== 43) return fail('invalid_request', 'code_challenge must be the 43-character BASE64URL(SHA256(code_verifier))');
      if (method !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256');
    }
    const carried: Record<string, string> = { client_id: clientId, redirect_uri: redirectUri, response_type: 'code', scope: scopes.join(' ') };
    if (typeof state === 'string') carried.state = state;
    if (typeof challenge === 'string') {
      carried.code_challenge = challenge;
      carried.code_challenge_method = 'S256';
    }
    return {
      kind: 'ok',
      request: { client, redirectUri, scopes, state: typeof state === 'string' ? state : undefined, codeChallenge: typeof challenge === 'string' ? challenge : undefined, carried },
    };
  }

  /** The redirect answering a denied request. */
  denied(request: AuthorizationRequest): string {
    return this.redirectLocation(request.redirectUri, { error: 'access_denied', error_description: 'The user denied the request', state: request.state });
  }

  /**
   * Signs the user in; the user must belong to the client's organization (any organization for the
   * console's client, whose grant then belongs to the user's). null: wrong credentials.
   */
  async signIn(request: AuthorizationRequest, email: string, password: string): Promise<{ id: string; organizationId: string } | null> {
    const user = await this.users.authenticate(email, password);
    if (!user || (request.client.organizationId !== null && user.organizationId !== request.client.organizationId)) return null;
    return { id: user.id, organizationId: user.organizationId };
  }

  /** Issues a code for an approved request and answers the redirect carrying it (with `state` and RFC 9207 `iss`). */
  async approve(request: AuthorizationRequest, user: { id: string; organizationId: string }): Promise<string> {
    const code = randomBytes(32).toString('base64url');
    await this.codes.insert({
      codeHash: hashSecret(code),
      clientId: request.client.id,
      organizationId: user.organizationId,
      userId: user.id,
      redirectUri: request.redirectUri,
      scopes: request.scopes,
      codeChallenge: request.codeChallenge ?? null,
      expiresAt: new Date(Date.now() + AUTHORIZATION_CODE_LIFETIME_SECONDS * 1000),
    });
    return this.redirectLocation(request.redirectUri, { code, state: request.state });
  }

  /** POST /oauth/token. */
  async token(credentials: ClientCredentials): Promise<TokenResponse> {
    const client = await this.authenticateClient(credentials);
    const params = credentials.body;
    const grantType = single(params, 'grant_type');
    if (grantType === 'authorization_code') return this.redeemCode(client, params);
    if (grantType === 'refresh_token') return this.refresh(client, params);
    throw new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token');
  }

  /** POST /oauth/revoke (RFC 7009): a refresh token revokes its whole grant, an access token its jti. Unknown tokens are no error. */
  async revoke(credentials: ClientCredentials): Promise<void> {
    const client = await this.authenticateClient(credentials);
    const token = required(credentials.body, 'token');
    const refresh = await this.refreshTokens.findOne({ where: { tokenHash: hashSecret(token), clientId: client.id } });
    if (refresh) return this.revokeGrant(refresh.grantId);
    const claims = await this.tokens.validClaims(token);
    if (claims && claims.client_id === client.id) await this.tokens.revoke(claims.jti, (claims.exp + SKEW_SECONDS) * 1000);
  }

  /** POST /oauth/introspect (RFC 7662), for confidential clients, about tokens of their own organization. */
  async introspect(credentials: ClientCredentials): Promise<Record<string, unknown>> {
    const client = await this.authenticateClient(credentials);
    const organizationId = client.organizationId;
    // The console's client (no organization) is public too.
    if (client.tokenEndpointAuthMethod === 'none' || organizationId === null) throw new InvalidClientError('Introspection needs a confidential client (public clients cannot authenticate)');
    const token = required(credentials.body, 'token');
    const claims = await this.tokens.validClaims(token);
    if (claims && claims.org === organizationId) {
      return { active: true, token_type: 'Bearer', scope: claims.scope, client_id: claims.client_id, sub: claims.sub, iss: claims.iss, exp: claims.exp, iat: claims.iat, jti: claims.jti };
    }
    const refresh = await this.refreshTokens.findOne({ where: { tokenHash: hashSecret(token), organizationId } });
    if (refresh && !refresh.rotatedAt && !refresh.revokedAt && refresh.expiresAt.getTime() > Date.now()) {
      return {
        active: true,
        token_type: 'refresh_token',
        scope: refresh.scopes.join(' '),
        client_id: refresh.clientId,
        sub: refresh.userId,
        iss: this.issuer,
        exp: Math.floor(refresh.expiresAt.getTime() / 1000),
        iat: Math.floor(refresh.createdAt.getTime() / 1000),
      };
    }
    return { active: false };
  }

  /**
   * RFC 6749 §2.3: HTTP Basic or client_secret in the body (one method per request: the one
   * registered, or either for a client registered without one), or for a public client its
   * client_id alone.
   */
  private async authenticateClient({ basic, body }: ClientCredentials): Promise<OAuthClient> {
    const bodyId = body.client_id;
    const bodySecret = body.client_secret;
    if ((bodyId !== undefined && typeof bodyId !== 'string') || (bodySecret !== undefined && typeof bodySecret !== 'string')) {
      throw new OAuthError('invalid_request', 'client_id and client_secret must be given once');
    }
    if (basic && bodySecret !== undefined) throw new OAuthError('invalid_request', 'Use one client authentication method, not HTTP Basic and client_secret together');
    if (basic && bodyId !== undefined && bodyId !== basic.clientId) throw new InvalidClientError();
    const method = basic ? 'client_secret_basic' : bodySecret !== undefined ? 'client_secret_post' : 'none';
    const clientId = basic?.clientId ?? bodyId;
    if (clientId === undefined) throw new InvalidClientError('Client authentication is missing');
    const client = await this.clients.find(clientId);
    if (!client) throw new InvalidClientError();
    const accepted = acceptedAuthMethods(client.tokenEndpointAuthMethod);
    if (!accepted.includes(method)) throw new InvalidClientError(`This client authenticates with ${accepted.join(' or ')}`);
    const secret = basic?.secret ?? bodySecret;
    if (method !== 'none' && (secret === undefined || !this.clients.secretMatches(client, secret))) throw new InvalidClientError();
    return client;
  }

  private async redeemCode(client: OAuthClient, params: Params): Promise<TokenResponse> {
    const code = required(params, 'code');
    const redirectUri = single(params, 'redirect_uri');
    const verifier = single(params, 'code_verifier');
    const row = await this.codes.findOne({ where: { codeHash: hashSecret(code) } });
    // A code of another client is refused without being spent: its rightful client may still redeem it.
    if (!row || row.clientId !== client.id) throw new OAuthError('invalid_grant', 'The authorization code is invalid');
    if (row.usedAt) {
      await this.revokeGrant(row.id);
      throw new OAuthError('invalid_grant', 'The authorization code was already used; the tokens issued from it are revoked');
    }
    if (row.expiresAt.getTime() <= Date.now()) throw new OAuthError('invalid_grant', 'The authorization code has expired');
    if (redirectUri !== row.redirectUri) throw new OAuthError('invalid_grant', 'redirect_uri differs from the one of the authorization request');
    if (row.codeChallenge !== null) {
      if (verifier === undefined) throw new OAuthError('invalid_grant', 'code_verifier is required: the authorization request carried a code_challenge');
      if (!verifierMatches(verifier, row.codeChallenge)) throw new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge');
    } else if (verifier !== undefined) {
      // RFC 9700 §4.8.2: a verifier for a code issued without challenge is a downgrade attempt.
      throw new OAuthError('invalid_grant', 'code_verifier given for a code issued without code_challenge');
    }
    const issued = await this.dataSource.transaction(async (manager) => {
      const spent = (await manager.query(`UPDATE oauth_authorization_codes SET used_at = now() WHERE id = $1 AND used_at IS NULL`, [row.id])) as [unknown[], number];
      if (spent[1] === 0) return null;
      return this.issue(manager.getRepository(OAuthRefreshToken), { grantId: row.id, client, organizationId: row.organizationId, userId: row.userId, scopes: row.scopes, accessScopes: row.scopes });
    });
    if (!issued) {
      // Lost the race to a concurrent redemption: that is a reuse too.
      await this.revokeGrant(row.id);
      throw new OAuthError('invalid_grant', 'The authorization code was already used; the tokens issued from it are revoked');
    }
    return issued;
  }

  private async refresh(client: OAuthClient, params: Params): Promise<TokenResponse> {
    const token = required(params, 'refresh_token');
    const scope = single(params, 'scope');
    const row = await this.refreshTokens.findOne({ where: { tokenHash: hashSecret(token) } });
    if (!row || row.clientId !== client.id || row.revokedAt) throw new OAuthError('invalid_grant', 'The refresh token is invalid or revoked');
    if (row.rotatedAt) {
      await this.revokeGrant(row.grantId);
      throw new OAuthError('invalid_grant', 'The refresh token was already used; every token of its grant is revoked');
    }
    if (row.expiresAt.getTime() <= Date.now()) throw new OAuthError('invalid_grant', 'The refresh token has expired');
    let accessScopes = row.scopes;
    if (scope !== undefined) {
      accessScopes = [...new Set(scope.split(' ').filter((s) => s !== ''))];
      if (accessScopes.length === 0 || accessScopes.some((s) => !row.scopes.includes(s))) throw new OAuthError('invalid_scope', 'The requested scope exceeds the scope of the grant');
    }
    const rotated = await this.dataSource.transaction(async (manager) => {
      const result = (await manager.query(
        `UPDATE oauth_refresh_tokens SET rotated_at = now() WHERE id = $1 AND rotated_at IS NULL AND revoked_at IS NULL`,
        [row.id],
      )) as [unknown[], number];
      if (result[1] === 0) return null;
      return this.issue(manager.getRepository(OAuthRefreshToken), { grantId: row.grantId, client, organizationId: row.organizationId, userId: row.userId, scopes: row.scopes, accessScopes });
    });
    if (!rotated) {
      await this.revokeGrant(row.grantId);
      throw new OAuthError('invalid_grant', 'The refresh token was already used; every token of its grant is revoked');
    }
    return rotated;
  }

  private async issue(
    refreshTokens: Repository<OAuthRefreshToken>,
    grant: { grantId: string; client: OAuthClient; organizationId: string; userId: string; scopes: string[]; accessScopes: string[] },
  ): Promise<TokenResponse> {
    const refreshToken = randomBytes(32).toString('base64url');
    await refreshTokens.insert({
      tokenHash: hashSecret(refreshToken),
      grantId: grant.grantId,
      clientId: grant.client.id,
      organizationId: grant.organizationId,
      userId: grant.userId,
      scopes: grant.scopes,
      expiresAt: new Date(Date.now() + REFRESH_TOKEN_LIFETIME_SECONDS * 1000),
    });
    const scope = grant.accessScopes.join(' ');
    const { token } = this.signer.sign({ sub: grant.userId, org: grant.organizationId, client_id: grant.client.id, scope, gid: grant.grantId });
    return { access_token: token, token_type: 'Bearer', expires_in: ACCESS_TOKEN_LIFETIME_SECONDS, refresh_token: refreshToken, scope };
  }

  /** Revokes every refresh token of a grant and, through the revocation list, every access token issued from it. */
  private async revokeGrant(grantId: string): Promise<void> {
    await this.refreshTokens.createQueryBuilder().update().set({ revokedAt: () => 'now()' }).where('grant_id = :grantId AND revoked_at IS NULL', { grantId }).execute();
    await this.tokens.revoke(grantId, Date.now() + (ACCESS_TOKEN_LIFETIME_SECONDS + SKEW_SECONDS) * 1000);
  }

  /** The redirect URIs a request may name: the registered ones; the console's follows PUBLIC_BASE_URL (the issuer). */
  private redirectUrisOf(client: OAuthClient): readonly string[] {
    return client.id === CONSOLE_CLIENT_ID ? [consoleRedirectUri(this.issuer)] : client.redirectUris;
  }

  private redirectLocation(redirectUri: string, params: Record<string, string | undefined>): string {
    const url = new URL(redirectUri);
    for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.append(name, value);
    // RFC 9207: the issuer, so that a client talking to several servers can tell which one answered.
    url.searchParams.append('iss', this.issuer);
    return url.toString();
  }
}

/** A parameter given at most once, as a string (RFC 6749 §3.1: parameters must not be repeated). */
function single(params: Params, name: string): string | undefined {
  const value = params[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw new OAuthError('invalid_request', `${name} must be given once`);
  return value;
}

function required(params: Params, name: string): string {
  const value = single(params, name);
  if (value === undefined) throw new OAuthError('invalid_request', `${name} is required`);
  return value;
}
