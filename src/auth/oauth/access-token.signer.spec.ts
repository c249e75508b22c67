import { JwtService } from '@nestjs/jwt';
import { describe, expect, it } from 'vitest';
import { configuredSigningKeys } from '../../common/crypto/signing-keys.js';
import { AppConfig } from '../../config/app-config.js';
import { AccessTokenSigner, isAccessTokenShape } from './access-token.signer.js';

const OLD = 'old-key-0123456789abcdef0123456789abcdef';
const NEW = 'new-key-fedcba9876543210fedcba9876543210';
const signerFor = (config: AppConfig) => new AccessTokenSigner(new JwtService({}), config, configuredSigningKeys(config.tokenSigningKeys));
const signer = (keys: string) => signerFor(AppConfig.fromEnv({}, { TOKEN_SIGNING_KEY: keys, PUBLIC_BASE_URL: 'https://api.example.com' }));
const claims = { sub: 'user-1', org: 'org-1', client_id: 'client-1', scope: 'workflows:read', gid: 'grant-1' };
const part = (token: string, i: number) => JSON.parse(Buffer.from(token.split('.')[i] as string, 'base64url').toString()) as Record<string, unknown>;

describe('AccessTokenSigner', () => {
  it('signs HS256 at+jwt tokens with a kid, 1 h life, and verifies them', () => {
    const s = signer(OLD);
    const { token, jti } = s.sign(claims);
    expect(part(token, 0)).toEqual({ alg: 'HS256', typ: 'at+jwt', kid: s.currentKid });
    const verified = s.verify(token);
    expect(verified).toMatchObject({ ...claims, iss: 'https://api.example.com', jti });
    expect((verified?.exp ?? 0) - (verified?.iat ?? 0)).toBe(3600);
    expect(isAccessTokenShape(token)).toBe(true);
  });

  it('rotation: the first key signs, every listed key verifies, a dropped key no longer does', () => {
    const old = signer(OLD).sign(claims).token;
    const rotated = signer(`${NEW},${OLD}`);
    expect(rotated.verify(old)).not.toBeNull();
    const fresh = rotated.sign(claims).token;
    expect(part(fresh, 0).kid).toBe(signer(NEW).currentKid);
    expect(part(fresh, 0).kid).not.toBe(part(old, 0).kid);
    expect(signer(NEW).verify(old)).toBeNull();
    expect(signer(OLD).verify(fresh)).toBeNull();
  });

  it('refuses altered tokens, alg none, another issuer, and expired tokens', () => {
    const s = signer(OLD);
    const { token } = s.sign(claims);
    const [h, p, sig] = token.split('.') as [string, string, string];
    const payload = part(token, 1);
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    expect(s.verify(`${h}.${b64({ ...payload, scope: 'workflows:delete' })}.${sig}`)).toBeNull();
    expect(s.verify(`${b64({ alg: 'none', typ: 'at+jwt', kid: s.currentKid })}.${p}.`)).toBeNull();
    expect(s.verify(`${b64({ ...part(token, 0), kid: 'unknown' })}.${p}.${sig}`)).toBeNull();
    const otherIssuer = signerFor(AppConfig.fromEnv({}, { TOKEN_SIGNING_KEY: OLD, PUBLIC_BASE_URL: 'https://other.example.com' }));
    expect(otherIssuer.verify(token)).toBeNull();
    const expired = new JwtService({}).sign({ ...claims, iss: 'https://api.example.com', jti: 'j', iat: 1, exp: 2 }, { secret: (s as unknown as { keys: { secret: Buffer }[] }).keys[0]?.secret, algorithm: 'HS256', header: { alg: 'HS256', typ: 'at+jwt', kid: s.currentKid } });
    expect(s.verify(expired)).toBeNull();
  });

  it('does not take client JWTs (other typ or alg) or API keys for access tokens', () => {
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    expect(isAccessTokenShape(`${b64({ alg: 'ES256', typ: 'JWT' })}.${b64({})}.sig`)).toBe(false);
    expect(isAccessTokenShape(`${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({})}.sig`)).toBe(false);
    expect(isAccessTokenShape('wfk_abcdef')).toBe(false);
  });
});
