// Reads of workflows through the full stack (auth guard, rate limits, access checks, validation,
// TypeORM, response mapping, logging), against a bare NestJS + pg app doing SELECT * by id.
// One row per credential type: an API key, a JWT of a registered JWT client and (once
// the OAuth server is merged) an OAuth access token, with rate limits ENABLED as in production and
// every figure raised by env so that none is reached: the cost of counting is what is measured.
import { exportSPKI, generateKeyPair, SignJWT } from 'jose';
import { obtainOAuthToken } from '../lib/oauth-token.mjs';

const BASELINE = 'nest-pg-workflow-by-id';
const PROTOTYPES_BASELINE = 'nest-pg-workflow-by-id-express-prototypes';
const BY_ID_TARGET_RATIO = 0.75;
const LIST_TARGET_RATIO = 0.6;
/** The credential rows' requests/s may differ by at most this fraction of the best of them. */
const MAX_CREDENTIAL_GAP = 0.1;
const SEED_CONCURRENCY = 8;
export const JWT_AUDIENCE = 'https://bench.workflow-automation.invalid';
const OUT_OF_REACH = '100000000';

/** Rate limits on, as in production, with every figure out of the bench's reach. */
export const RATE_LIMITS_ON_OUT_OF_REACH = Object.fromEntries([
  ['RATE_LIMITS_ENABLED', 'true'],
  ...['PER_CREDENTIAL', 'READ', 'WRITE', 'DELETE', 'EXECUTION', 'PUBLIC_PER_IP', 'AUTH_FAILURES_PER_MINUTE'].map((n) => [`RATE_LIMIT_${n}`, OUT_OF_REACH]),
]);

async function seedWorkflows(ctx, appUrl, count) {
  const ids = new Array(count);
  let next = 0;
  async function worker() {
    while (next < count) {
      const i = next++;
      const res = await ctx.api(appUrl, 'POST', '/v1/workflows', {
        name: `bench workflow ${String(i).padStart(4, '0')}`,
        channel: 'whatsapp',
        configuration: { nodes: [{ id: 'a', type: 'message', content: 'hi' }] },
      });
      if (res.status !== 201 || typeof res.body?.data?.id !== 'string') {
        throw new Error(`POST /v1/workflows answered ${res.status}: ${JSON.stringify(res.body).slice(0, 500)}`);
      }
      ids[i] = res.body.data.id;
    }
  }
  await Promise.all(Array.from({ length: Math.min(SEED_CONCURRENCY, count) }, worker));
  return ids;
}

/** Registers a JWT client (ES256) with the bootstrap key and signs one token for the whole run (no jti: it is reused). */
export async function mintJwt(ctx, appUrl) {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  const res = await ctx.api(appUrl, 'POST', '/v1/jwt-clients', { name: 'bench client', public_key: await exportSPKI(publicKey), scopes: ['workflows:read'] });
  if (res.status !== 201) throw new Error(`POST /v1/jwt-clients answered ${res.status}: ${JSON.stringify(res.body).slice(0, 500)}`);
  return new SignJWT({ scope: 'workflows:read' })
    .setProtectedHeader({ alg: 'ES256' })
    .setIssuer(res.body.data.application_id)
    .setAudience(JWT_AUDIENCE)
    .setIssuedAt()
    .setExpirationTime('55m')
    .sign(privateKey);
}

/**
 * HOOK FOR THE OAUTH SERVER: return an OAuth access
 * token with `workflows:read` for the organization of `ctx.apiKey`, minted against the app at
 * `appUrl` (register a client with POST /v1/oauth/clients, run the authorization-code flow with
 * PKCE, redeem the code at POST /oauth/token). Null until then: the OAuth row is left out.
 * The app's environment for it (e.g. TOKEN_SIGNING_KEY) goes into OAUTH_APP_ENV below.
 */
export async function mintOAuthAccessToken(ctx, appUrl) {
  return obtainOAuthToken(ctx, appUrl);
}
const OAUTH_APP_ENV = {};

export default {
  name: 'workflows-read',
  description:
    'GET /v1/workflows/{id} (rotating over the seeded ids) with an API key, a JWT and an OAuth token side by side, and GET /v1/workflows?limit=20 with an API key; rate limits on, figures out of reach',

  async run(ctx) {
    const app = await ctx.startApp({ role: 'api', env: { ...RATE_LIMITS_ON_OUT_OF_REACH, JWT_AUDIENCE, ...OAUTH_APP_ENV } });
    // The interleaved A/B of the rate limits' cost: the same build and database with limits off.
    const unlimited = await ctx.startApp({ role: 'api', env: { RATE_LIMITS_ENABLED: 'false' } });
    const workflowIds = await seedWorkflows(ctx, app.url, ctx.config.workflows);
    const byIdPaths = workflowIds.map((id) => `/v1/workflows/${id}`);
    const credentials = [
      { name: 'API key', token: ctx.apiKey },
      { name: 'JWT (ES256)', token: await mintJwt(ctx, app.url) },
    ];
    const oauth = await mintOAuthAccessToken(ctx, app.url);
    if (oauth) credentials.push({ name: 'OAuth access token', token: oauth });
    for (const c of credentials) {
      c.headers = { authorization: `Bearer ${c.token}` };
      const body = await ctx.expectStatus(`${app.url}${byIdPaths[0]}`, 200, c.headers);
      if (JSON.parse(body)?.data?.id !== workflowIds[0]) throw new Error(`GET by id with ${c.name} returned another body`);
    }
    // Rate limits are really on: the answer carries their headers.
    const probe = await fetch(`${app.url}${byIdPaths[0]}`, { headers: credentials[0].headers });
    if (!probe.headers.get('x-ratelimit-limit')) throw new Error('rate limits are not enabled in the bench app (no X-RateLimit-Limit header)');
    const page = JSON.parse(await ctx.expectStatus(`${app.url}/v1/workflows?limit=20`, 200, credentials[0].headers));
    if (page?.data?.length !== Math.min(20, workflowIds.length)) throw new Error(`GET /v1/workflows?limit=20 returned ${page?.data?.length} items`);

    // A reference, not a target: the bare baseline given the service's hidden-class fix (ExpressHttpAdapter).
    const prototypes = await ctx.startBaseline(PROTOTYPES_BASELINE);
    const [baseline, ...measured] = await ctx.measureAgainstBaseline(BASELINE, { workflowIds }, [
      ...credentials.map((c) => ({ url: app.url, headers: c.headers, paths: byIdPaths })),
      { url: `${app.url}/v1/workflows?limit=20`, headers: credentials[0].headers },
      { url: unlimited.url, headers: credentials[0].headers, paths: byIdPaths },
      { url: prototypes.url, paths: prototypes.baseline.paths({ workflowIds }) },
    ]);
    await unlimited.process.stop();
    await prototypes.process.stop();
    const reference = measured[credentials.length + 2];
    const byId = measured.slice(0, credentials.length);
    const list = measured[credentials.length];
    const withoutLimits = measured[credentials.length + 1];
    const best = Math.max(...byId.map((m) => m.requests_per_s));
    return [
      ...credentials.map((c, i) => {
        const gap = best > 0 ? 1 - byId[i].requests_per_s / best : 0;
        return {
          name: `GET /v1/workflows/{id} (${c.name})`,
          measurement: byId[i],
          baseline,
          target_ratio: BY_ID_TARGET_RATIO,
          max_gap_to_peers: MAX_CREDENTIAL_GAP,
          gap_to_peers: Math.round(gap * 1000) / 1000,
          note: `${Math.round(gap * 100)}% below the fastest credential (at most ${MAX_CREDENTIAL_GAP * 100}%)`,
        };
      }),
      { name: 'GET /v1/workflows?limit=20 (API key)', measurement: list, baseline, target_ratio: LIST_TARGET_RATIO },
      {
        name: 'GET /v1/workflows/{id} (API key, rate limits OFF: A/B reference)',
        measurement: withoutLimits,
        baseline,
        note: `limits on cost ${Math.round((1 - byId[0].requests_per_s / (withoutLimits.requests_per_s || 1)) * 100)}% of this row's req/s (API key row vs this one)`,
      },
      {
        name: 'reference: the bare baseline with requests made with Express\'s prototypes',
        measurement: reference,
        baseline,
        note: `against it, by id ${byId.map((m) => (m.requests_per_s / (reference.requests_per_s || 1)).toFixed(2)).join(' / ')}, the list ${(list.requests_per_s / (reference.requests_per_s || 1)).toFixed(2)} (no target)`,
      },
    ];
  },
};
