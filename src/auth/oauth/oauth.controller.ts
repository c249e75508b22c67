import { Controller, Get, Header, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiExtraModels, ApiOperation, ApiQuery, ApiResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { AppConfig } from '../../config/app-config.js';
import { ALL_SCOPES } from '../access.js';
import { Public } from '../decorators/access.decorators.js';
import { AccessTokenSigner } from './access-token.signer.js';
import { CsrfTokens, sendConsentPage, sendErrorPage } from './consent-page.js';
import { IntrospectionResponseDto, OAuthErrorResponse, TokenResponseDto } from './dto/oauth.responses.js';
import { LoginLimiter } from './login-limiter.js';
import { InvalidClientError } from './oauth.errors.js';
import { OAuthService, type AuthorizationRequest, type ClientCredentials, type Params } from './oauth.service.js';

const FORM = 'application/x-www-form-urlencoded';
const HTML = (description: string) => ({ description, content: { 'text/html': { schema: { type: 'string' as const } } } });
const OAUTH_ERROR = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: getSchemaPath(OAuthErrorResponse) } } } });
const REDIRECT = (description: string) => ({
  description,
  headers: { Location: { description: 'The redirect URI with code, state and iss, or error, error_description, state and iss', schema: { type: 'string' } } },
});

const STRING = (maxLength: number, extra: Record<string, unknown> = {}) => ({ type: 'string', maxLength, ...extra });
/** The authorization request's parameters (query of GET, form of POST). */
const AUTHORIZATION_PARAMETERS: Record<string, Record<string, unknown>> = {
  client_id: STRING(64, { format: 'uuid', description: 'The client_id of a registered OAuth client' }),
  redirect_uri: STRING(2000, { description: 'Exactly one of the redirect URIs registered for the client' }),
  response_type: { type: 'string', enum: ['code'] },
  scope: STRING(1000, { description: `Space-separated scopes, a subset of the client's (default: all of them): ${ALL_SCOPES.join(', ')}` }),
  state: STRING(1024, { description: 'Opaque value returned unchanged (CSRF protection of the client)' }),
  code_challenge: STRING(128, { description: 'PKCE: BASE64URL(SHA256(code_verifier)); required for public clients' }),
  code_challenge_method: { type: 'string', enum: ['S256'] },
};

function formBody(properties: Record<string, Record<string, unknown>>, required: string[] = [], description?: string) {
  return { required: true, description, schema: { type: 'object', properties, required, additionalProperties: false } };
}

const CLIENT_AUTH_FIELDS = {
  client_id: STRING(64, { description: 'With client_secret_post or a public client (none); with HTTP Basic it may be left out' }),
  client_secret: STRING(512, { description: 'With client_secret_post (a client registered with it, or registered without a method); never together with HTTP Basic' }),
};

/**
 * The OAuth 2.0 endpoints outside /v1 (docs/API.md, "OAuth 2.0"). Errors are rendered `{error, error_description}`
 * by the global filter for every /oauth/* path; the authorization endpoint answers HTML pages and
 * redirects itself.
 */
@ApiTags('OAuth 2.0')
@ApiExtraModels(OAuthErrorResponse)
@Public()
@Controller('oauth')
export class OAuthController {
  private readonly csrf: CsrfTokens;

  constructor(
    private readonly oauth: OAuthService,
    private readonly limiter: LoginLimiter,
    signer: AccessTokenSigner,
    config: AppConfig,
  ) {
    this.csrf = new CsrfTokens(signer.csrfKey, config.publicBaseUrl.startsWith('https:'));
  }

  @Get('authorize')
  @ApiOperation({
    summary: 'Authorization endpoint: the sign-in and consent page (RFC 6749 §4.1.1)',
    description:
      'An unknown client or an unregistered redirect URI is shown as an error page (400), never redirected to. Other problems redirect to the redirect URI with `error` (unsupported_response_type, invalid_scope, invalid_request), `state` and `iss`.',
  })
  @ApiQuery({ name: 'client_id', required: true, schema: AUTHORIZATION_PARAMETERS.client_id })
  @ApiQuery({ name: 'redirect_uri', required: true, schema: AUTHORIZATION_PARAMETERS.redirect_uri })
  @ApiQuery({ name: 'response_type', required: true, schema: AUTHORIZATION_PARAMETERS.response_type })
  @ApiQuery({ name: 'scope', required: false, schema: AUTHORIZATION_PARAMETERS.scope })
  @ApiQuery({ name: 'state', required: false, schema: AUTHORIZATION_PARAMETERS.state })
  @ApiQuery({ name: 'code_challenge', required: false, schema: AUTHORIZATION_PARAMETERS.code_challenge })
  @ApiQuery({ name: 'code_challenge_method', required: false, schema: AUTHORIZATION_PARAMETERS.code_challenge_method })
  @ApiResponse({ status: 200, ...HTML('The sign-in and consent page (sets the CSRF cookie)') })
  @ApiResponse({ status: 302, ...REDIRECT('An error sent back to the client') })
  @ApiResponse({ status: 400, ...HTML('Error page: unknown client or unregistered redirect URI') })
  async authorizePage(@Req() req: Request, @Res() res: Response): Promise<void> {
    const check = await this.oauth.checkAuthorization(req.query as Params);
    if (check.kind === 'page') return sendErrorPage(res, check.status, check.message);
    if (check.kind === 'redirect') return redirect(res, check.location);
    this.consent(req, res, 200, check.request);
  }

  @Post('authorize')
  @HttpCode(302)
  @ApiOperation({
    summary: 'Sign in and approve or deny (the consent page posts here)',
    description: 'Approve: 302 to the redirect URI with `code`, `state` and `iss`. Deny: 302 with `error=access_denied`. Wrong credentials re-render the page with 401; a missing or stale CSRF token with 403; too many attempts for this address or email with 429.',
  })
  @ApiConsumes(FORM)
  @ApiBody(
    formBody(
      {
        ...AUTHORIZATION_PARAMETERS,
        email: STRING(320, { format: 'email' }),
        password: STRING(1024, { format: 'password' }),
        decision: { type: 'string', enum: ['approve', 'deny'] },
        csrf_token: STRING(64, { description: 'The token of the page, matching the oauth_csrf cookie' }),
      },
      ['client_id', 'redirect_uri', 'response_type', 'decision', 'csrf_token'],
    ),
  )
  @ApiResponse({ status: 302, ...REDIRECT('The authorization response') })
  @ApiResponse({ status: 400, ...HTML('Error page: unknown client or unregistered redirect URI') })
  @ApiResponse({ status: 401, ...HTML('The page again: wrong email or password') })
  @ApiResponse({ status: 403, ...HTML('The page again, with a fresh CSRF token: the form was not posted from it') })
  @ApiResponse({ status: 429, ...HTML('The page again: too many sign-in attempts; see Retry-After') })
  async authorize(@Req() req: Request, @Res() res: Response): Promise<void> {
    const form = (req.body ?? {}) as Params;
    const check = await this.oauth.checkAuthorization(form);
    if (check.kind === 'page') return sendErrorPage(res, check.status, check.message);
    if (check.kind === 'redirect') return redirect(res, check.location);
    const request = check.request;
    if (!this.csrf.verify(req.headers.cookie, form.csrf_token)) {
      return this.consent(req, res, 403, request, 'The form expired or was not sent from this page. Please try again.');
    }
    if (form.decision === 'deny') return redirect(res, this.oauth.denied(request));
    if (form.decision !== 'approve') return this.consent(req, res, 400, request, 'Choose Allow or Deny.');
    const email = typeof form.email === 'string' ? form.email.slice(0, 320) : '';
    const password = typeof form.password === 'string' ? form.password.slice(0, 1024) : '';
    if (email === '' || password === '') return this.consent(req, res, 401, request, 'Enter your email and password.', email);
    const wait = await this.limiter.attempt(req.ip ?? 'unknown', email);
    if (wait !== undefined) {
      res.setHeader('Retry-After', String(wait));
      return this.consent(req, res, 429, request, `Too many sign-in attempts. Try again in ${Math.ceil(wait / 60)} minute(s).`, email);
    }
    const user = await this.oauth.signIn(request, email, password);
    if (!user) return this.consent(req, res, 401, request, 'Wrong email or password.', email);
    await this.limiter.succeeded(req.ip ?? 'unknown', email);
    redirect(res, await this.oauth.approve(request, user));
  }

  @Post('token')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @Header('Pragma', 'no-cache')
  @ApiOperation({
    summary: 'Token endpoint: redeem a code or rotate a refresh token (RFC 6749 §4.1.3, §6)',
    description:
      'Client authentication: HTTP Basic (client_secret_basic), client_id and client_secret in the form (client_secret_post), or client_id alone for public clients (none), ' +
      'as registered; a client registered without a method may use either secret method.',
  })
  @ApiConsumes(FORM)
  @ApiBody(
    formBody(
      {
        grant_type: { type: 'string', enum: ['authorization_code', 'refresh_token'] },
        code: STRING(256),
        redirect_uri: STRING(2000),
        code_verifier: STRING(128, { minLength: 43, pattern: '^[A-Za-z0-9._~-]{43,128}$', description: 'PKCE (RFC 7636): required when the authorization request carried a code_challenge' }),
        refresh_token: STRING(256),
        scope: STRING(1000, { description: 'refresh_token only: narrow the access token to these scopes' }),
        ...CLIENT_AUTH_FIELDS,
      },
      ['grant_type'],
    ),
  )
  @ApiResponse({ status: 200, description: 'Tokens', type: TokenResponseDto })
  @ApiResponse({ status: 400, ...OAUTH_ERROR('invalid_request, invalid_grant, unsupported_grant_type or invalid_scope') })
  @ApiResponse({ status: 401, ...OAUTH_ERROR('invalid_client') })
  token(@Req() req: Request) {
    return this.oauth.token(clientCredentials(req));
  }

  @Post('revoke')
  @HttpCode(200)
  @ApiOperation({ summary: 'Revoke a token (RFC 7009): a refresh token revokes its whole grant, an access token itself; unknown tokens answer 200 too' })
  @ApiConsumes(FORM)
  @ApiBody(formBody({ token: STRING(4096), token_type_hint: { type: 'string', enum: ['access_token', 'refresh_token'] }, ...CLIENT_AUTH_FIELDS }, ['token']))
  @ApiResponse({ status: 200, description: 'Revoked (or nothing to revoke)' })
  @ApiResponse({ status: 400, ...OAUTH_ERROR('invalid_request') })
  @ApiResponse({ status: 401, ...OAUTH_ERROR('invalid_client') })
  async revoke(@Req() req: Request): Promise<void> {
    await this.oauth.revoke(clientCredentials(req));
  }

  @Post('introspect')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @ApiOperation({ summary: 'Introspect a token of the organization (RFC 7662); confidential clients only' })
  @ApiConsumes(FORM)
  @ApiBody(formBody({ token: STRING(4096), token_type_hint: { type: 'string', enum: ['access_token', 'refresh_token'] }, ...CLIENT_AUTH_FIELDS }, ['token']))
  @ApiResponse({ status: 200, description: 'Whether the token is active, and its claims when it is', type: IntrospectionResponseDto })
  @ApiResponse({ status: 400, ...OAUTH_ERROR('invalid_request') })
  @ApiResponse({ status: 401, ...OAUTH_ERROR('invalid_client') })
  introspect(@Req() req: Request) {
    return this.oauth.introspect(clientCredentials(req));
  }

  private consent(req: Request, res: Response, status: number, request: AuthorizationRequest, error?: string, email?: string): void {
    sendConsentPage(res, status, {
      clientName: request.client.name,
      scopes: request.scopes,
      carried: request.carried,
      csrfToken: this.csrf.issue(req.headers.cookie, res),
      redirectUri: request.redirectUri,
      error,
      email,
    });
  }
}

/** A 302 without body (Express's redirect() writes one, which the document does not describe). */
function redirect(res: Response, location: string): void {
  res.status(302).setHeader('Location', location);
  res.setHeader('Cache-Control', 'no-store');
  res.end();
}

/** HTTP Basic credentials (RFC 6749 §2.3.1: each part form-urlencoded) and the form body. */
function clientCredentials(req: Request): ClientCredentials {
  const body = (req.body && typeof req.body === 'object' ? req.body : {}) as Params;
  const header = req.headers.authorization;
  if (header === undefined) return { body };
  const match = /^Basic\s+([A-Za-z0-9+/]+={0,2})\s*$/i.exec(header);
  if (!match) throw new InvalidClientError('The Authorization header must be HTTP Basic');
  const decoded = Buffer.from(match[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) throw new InvalidClientError('Malformed HTTP Basic credentials');
  try {
    const part = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    return { basic: { clientId: part(decoded.slice(0, colon)), secret: part(decoded.slice(colon + 1)) }, body };
  } catch {
    throw new InvalidClientError('Malformed HTTP Basic credentials');
  }
}
