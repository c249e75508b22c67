import { describe, expect, it } from 'vitest';
import { redactUrl } from './redact-url.js';

describe('redactUrl', () => {
  it.each([
    ['/v1/me?api_key=k1', '/v1/me?api_key=[REDACTED]'],
    ['/v1/me?API_KEY=k1&page=2', '/v1/me?API_KEY=[REDACTED]&page=2'],
    ['/v1/me?page=2&api_key=k1&api_key=k2', '/v1/me?page=2&api_key=[REDACTED]&api_key=[REDACTED]'],
    ['/v1/me?api_key[]=k1&api_key[0]=k2', '/v1/me?api_key[]=[REDACTED]&api_key[0]=[REDACTED]'],
    ['/v1/me?api_key%5B%5D=k1', '/v1/me?api_key%5B%5D=[REDACTED]'],
    ['/v1/me?api%5Fkey=k1', '/v1/me?api%5Fkey=[REDACTED]'],
    ['/v1/x?filter[client_secret]=k1&filter[name]=n', '/v1/x?filter[client_secret]=[REDACTED]&filter[name]=n'],
    ['/oauth/token?client_secret=k1&grant_type=x', '/oauth/token?client_secret=[REDACTED]&grant_type=x'],
    ['/oauth/authorize?code=k1&state=s', '/oauth/authorize?code=[REDACTED]&state=s'],
    ['/x?access_token=a&token=b&refresh_token=c&password=d&Password=e', '/x?access_token=[REDACTED]&token=[REDACTED]&refresh_token=[REDACTED]&password=[REDACTED]&Password=[REDACTED]'],
    ['/x?api_key', '/x?api_key=[REDACTED]'],
    ['/x?api_key=a=b', '/x?api_key=[REDACTED]'],
  ])('%s → %s', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });

  it('keeps URLs without credentials as they are', () => {
    for (const url of ['/v1/workflows', '/v1/workflows?page=2&limit=10', '/v1/x?tokens=1&codes=2&%E0%A4%A=bad', '/v1/x?']) expect(redactUrl(url)).toBe(url);
  });
});
