import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiProcess } from '../utils/api-process.js';
import { testConfig } from '../utils/test-app.js';
import { waitFor } from '../utils/wait-for.js';

/*
 * What the request log of the built service (its stdout, LOG_LEVEL=info) holds when credentials come
 * in the query string or in headers: the request is logged (method, path, the other parameters), the
 * credentials are not.
 */
describe('request log: no credential in any line', () => {
  let api: ApiProcess;
  const secret = (name: string) => `${name}-${randomBytes(12).toString('hex')}`;

  beforeAll(async () => {
    api = await ApiProcess.start(testConfig(), { LOG_LEVEL: 'info' });
    await api.ready();
  });

  afterAll(async () => {
    await api?.stop();
  });

  it('redacts credential query parameters (any case, repeated, array and encoded forms) and keeps the rest of the URL', async () => {
    const secrets = {
      apiKey: secret('apikey'),
      upper: secret('upper'),
      repeated1: secret('rep1'),
      repeated2: secret('rep2'),
      array: secret('array'),
      indexed: secret('indexed'),
      encoded: secret('encoded'),
      accessToken: secret('access'),
      token: secret('token'),
      refresh: secret('refresh'),
      code: secret('code'),
      password: secret('password'),
      clientSecret: secret('clientsecret'),
      nested: secret('nested'),
    };
    const marker = `m${randomBytes(6).toString('hex')}`;
    const urls = [
      `/v1/me?api_key=${secrets.apiKey}&marker=${marker}-1`,
      `/v1/me?marker=${marker}-2&API_KEY=${secrets.upper}`,
      `/v1/me?api_key=${secrets.repeated1}&api_key=${secrets.repeated2}&marker=${marker}-3`,
      `/v1/me?api_key[]=${secrets.array}&Api_Key[0]=${secrets.indexed}&marker=${marker}-4`,
      `/v1/me?api%5Fkey=${secrets.encoded}&marker=${marker}-5`,
      `/v1/workflows?access_token=${secrets.accessToken}&token=${secrets.token}&marker=${marker}-6`,
      `/v1/workflows?refresh_token=${secrets.refresh}&code=${secrets.code}&password=${secrets.password}&marker=${marker}-7`,
      `/v1/workflows?filter[client_secret]=${secrets.nested}&marker=${marker}-8`,
    ];
    for (const url of urls) expect((await api.fetch(url)).status, url).toBe(401);
    const token = await api.fetch(`/oauth/token?client_secret=${secrets.clientSecret}&marker=${marker}-9`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=authorization_code',
    });
    expect(token.status).toBeGreaterThanOrEqual(400);
    await waitFor('the request lines', async () => [1, 2, 3, 4, 5, 6, 7, 8, 9].every((i) => api.output.includes(`marker=${marker}-${i}`)), 10_000, 50);

    for (const [name, value] of Object.entries(secrets)) expect(api.output, name).not.toContain(value);
    const lines = api.output.split('\n').filter((l) => l.includes(marker));
    expect(lines.length).toBeGreaterThanOrEqual(9);
    expect(lines.join('\n')).toContain(`/v1/me?api_key=[REDACTED]&marker=${marker}-1`);
    expect(lines.join('\n')).toContain(`/oauth/token?client_secret=[REDACTED]&marker=${marker}-9`);
  });

  it('never logs the Authorization, Proxy-Authorization, Cookie or X-Api-Key headers', async () => {
    const values = [secret('bearer'), secret('proxy'), secret('cookie'), secret('xapikey')];
    const marker = `h${randomBytes(6).toString('hex')}`;
    const res = await api.fetch(`/v1/me?marker=${marker}`, {
      headers: { Authorization: `Bearer ${values[0]}`, 'Proxy-Authorization': `Basic ${values[1]}`, Cookie: `session=${values[2]}`, 'X-Api-Key': values[3] as string },
    });
    expect(res.status).toBe(401);
    await waitFor('the request line', async () => api.output.includes(`marker=${marker}`), 10_000, 50);
    for (const value of values) expect(api.output).not.toContain(value);
  });
});
