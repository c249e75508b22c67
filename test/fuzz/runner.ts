import fc from 'fast-check';
import { RequestTimeoutError, send, type WireRequest } from './http-client.js';
import type { Operation } from './openapi.js';
import { render, requestArbitrary, type FuzzRequest, type RenderContext, type RequestContext } from './requests.js';
import { truncate, type ReceivedResponse, type ResponseChecker } from './response-checker.js';

/** How a run is bounded and seeded, from the environment (see README "Contract fuzzer"). */
export interface FuzzSettings {
  seed: number;
  /** Upper bound of generated requests per operation (FUZZ_RUNS). */
  runsPerOperation: number;
  /** Time for all operations together, search and shrinking (FUZZ_SECONDS). */
  totalMs: number;
  /** Per-request time limit (FUZZ_REQUEST_TIMEOUT_MS). */
  requestTimeoutMs: number;
  /** Only the operations whose key (`POST /v1/workflows`) contains this text (FUZZ_ONLY). */
  only?: string;
  /**
   * FUZZ_SURVEY=1: do not stop at an operation's first failure; keep fuzzing and report one request
   * (unshrunk) per distinct kind of failure. For finding everything that is wrong at once; the run
   * still fails.
   */
  survey: boolean;
}

export function settingsFromEnv(env: NodeJS.ProcessEnv): FuzzSettings {
  const number = (name: string, fallback: number) => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, got ${raw}`);
    return value;
  };
  const seed = number('FUZZ_SEED', Math.floor(Math.random() * 2 ** 31));
  return {
    seed: Math.floor(seed) | 0,
    runsPerOperation: Math.max(1, Math.floor(number('FUZZ_RUNS', 200))),
    totalMs: number('FUZZ_SECONDS', 20) * 1000,
    requestTimeoutMs: number('FUZZ_REQUEST_TIMEOUT_MS', 5000),
    only: env.FUZZ_ONLY === '' ? undefined : env.FUZZ_ONLY,
    survey: env.FUZZ_SURVEY === '1',
  };
}

/** One operation's seed: the run's seed and the operation's key, so FUZZ_SEED replays each operation alone too. */
export function operationSeed(seed: number, key: string): number {
  let hash = seed | 0;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return hash | 0;
}

export interface Failure {
  operation: string;
  problem: string;
  wire: WireRequest;
  response?: ReceivedResponse;
  seed: number;
  path?: string;
  runs: number;
}

export interface OperationResult {
  operation: string;
  runs: number;
  statuses: Record<number, number>;
  failures: Failure[];
  ms: number;
}

const MAX_URL_LENGTH = 14_000;

class ContractViolation extends Error {
  constructor(
    readonly problem: string,
    readonly wire: WireRequest,
    readonly response?: ReceivedResponse,
  ) {
    super(problem);
  }
}

export interface FuzzTarget {
  port: number;
  checker: ResponseChecker;
  requestContext: RequestContext;
  renderContext: () => RenderContext;
}

/**
 * Fuzzes one operation: searches until the first failing request or the time is up, then replays
 * that failure's seed and path to shrink it to a small request within what time is left.
 */
export async function fuzzOperation(target: FuzzTarget, operation: Operation, settings: FuzzSettings, budgetMs: number): Promise<OperationResult> {
  const started = Date.now();
  const statuses: Record<number, number> = {};
  const seed = operationSeed(settings.seed, operation.key);
  const arbitrary = requestArbitrary(target.requestContext, operation);
  const surveyed = new Map<string, Failure>();
  const property = fc.asyncProperty(arbitrary, async (request: FuzzRequest) => {
    const wire = render(operation, request, target.renderContext());
    // Node refuses a request line and headers over 16 KB with its own 431 before the app sees it:
    // two 10 000-character parameters in one URL test Node, not the service.
    fc.pre(wire.path.length <= MAX_URL_LENGTH);
    let response: ReceivedResponse;
    try {
      response = await send(target.port, wire, settings.requestTimeoutMs);
    } catch (error) {
      const reason = error instanceof RequestTimeoutError ? error.message : `connection failed: ${(error as Error).message}`;
      throw new ContractViolation(reason, wire);
    }
    statuses[response.status] = (statuses[response.status] ?? 0) + 1;
    const problems = target.checker.check({ operation, method: operation.method, credential: request.credential, requestText: `${describeBody(wire)}\n${wire.path}\n${safeDecode(wire.path)}` }, response);
    if (problems.length === 0) return;
    if (!settings.survey) throw new ContractViolation(problems[0] as string, wire, response);
    for (const problem of problems) {
      // Keyed by the first (most telling) trait only: unshrunk requests carry several.
      const kind = `${failureKind(problem, response)} | ${requestTraits(wire)[0] ?? ''}`;
      if (!surveyed.has(kind)) surveyed.set(kind, { operation: operation.key, problem, wire, response, seed: settings.seed, runs: 0 });
    }
  });

  const search = await fc.check(property, {
    seed,
    numRuns: settings.runsPerOperation,
    endOnFailure: true,
    plugins: [fc.interruptAfterTimeLimit(budgetMs)],
  } as fc.Parameters<[FuzzRequest]>);
  let runs = search.numRuns;
  // fast-check reports "failed" with no error and no counterexample when its time limit struck before a
  // request came back (a loaded machine) or when too many generated requests were skipped (fc.pre):
  // nothing was found wrong with the service, so neither is a finding.
  if (search.failed && search.errorInstance == null && search.counterexample == null) {
    return { operation: operation.key, runs, statuses, failures: [...surveyed.values()], ms: Date.now() - started };
  }
  if (settings.survey || !search.failed || search.counterexamplePath === null) {
    const failures = [...surveyed.values()];
    if (search.failed && !(search.errorInstance instanceof ContractViolation)) failures.push(fuzzerFailure(operation, settings, search.errorInstance, runs));
    return { operation: operation.key, runs, statuses, failures, ms: Date.now() - started };
  }

  let details: fc.RunDetails<[FuzzRequest]> = search;
  const left = Math.max(budgetMs - (Date.now() - started), Math.min(1000, budgetMs));
  const shrunk = await fc.check(property, { seed, path: search.counterexamplePath, plugins: [fc.interruptAfterTimeLimit(left)] } as fc.Parameters<[FuzzRequest]>);
  // State moves on (a deleted resource), so the replay may no longer fail: keep the first failure then.
  if (shrunk.failed && shrunk.errorInstance instanceof ContractViolation) details = shrunk;
  runs += shrunk.numRuns;
  const violation = details.errorInstance;
  const failure: Failure =
    violation instanceof ContractViolation
      ? { operation: operation.key, problem: violation.problem, wire: violation.wire, response: violation.response, seed: settings.seed, path: details.counterexamplePath ?? undefined, runs }
      : fuzzerFailure(operation, settings, violation, runs);
  return { operation: operation.key, runs, statuses, failures: [failure], ms: Date.now() - started };
}

function fuzzerFailure(operation: Operation, settings: FuzzSettings, error: unknown, runs: number): Failure {
  return { operation: operation.key, problem: `the fuzzer itself failed: ${String(error)}`, wire: { method: operation.method, path: operation.path, headers: {} }, seed: settings.seed, runs };
}

/** A failure's kind, for the survey: the problem without its particulars, and the answer's error code. */
function failureKind(problem: string, response: ReceivedResponse): string {
  let code = '';
  try {
    const body = JSON.parse(response.text) as { error?: { code?: string; message?: string } };
    code = `${body.error?.code ?? ''} ${(body.error?.message ?? '').replace(/[0-9a-f-]{36}|\d+/g, '#').slice(0, 60)}`;
  } catch {
    // not JSON: the problem says so
  }
  return `${problem.split(/[:;]/)[0]?.replace(/\d{4,}/g, '#')} | ${code}`;
}

/**
 * What is unusual about a request, in words: printed with a failure so that its cause reads at a
 * glance, and used by the survey to tell failures with different causes apart.
 */
export function requestTraits(wire: WireRequest): string[] {
  const body = wire.body?.toString('latin1') ?? '';
  const all = `${wire.path} ${body}`;
  const traits: string[] = [];
  if (/(\[\s*){64}|(\{"a":){64}/.test(body)) traits.push('deep nesting');
  if (/\\u0000|%00/.test(all) || body.includes('\u0000')) traits.push('NUL');
  if (/\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}|%ED%[AB]/.test(all)) traits.push('lone surrogate');
  if (/\\u00(?:0[1-9a-fA-F]|1[0-9a-fA-F])|%(?:0[1-9A-F]|1[0-9A-F])/.test(all)) traits.push('control character');
  const text = wire.body?.toString('utf8') ?? '';
  if (/[\u{10000}-\u{10ffff}]/u.test(text) || /%F[0-4]/.test(wire.path)) traits.push('astral');
  if (/[^"]{1000,}/.test(text) || wire.path.length > 1000) traits.push('long string');
  if (wire.path.split(/[/?&=]/).some((part) => !decodes(part))) traits.push('malformed escape or bytes that are not UTF-8');
  if (wire.body !== undefined && wire.headers['content-type'] === undefined) traits.push('body without content-type');
  if (wire.headers['content-type']?.includes('json') === true) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed !== 'object' || parsed === null) traits.push('JSON body that is not an object or array');
    } catch {
      traits.push('body that is not JSON');
    }
  }
  if (wire.body !== undefined && ['GET', 'HEAD', 'DELETE', 'OPTIONS'].includes(wire.method)) traits.push(`body on ${wire.method}`);
  return traits;
}

function decodes(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function describeBody(wire: WireRequest): string {
  return wire.body === undefined ? '' : wire.body.toString('utf8');
}

/** A failure as a few lines: what broke, the request to replay, the answer. */
export function formatFailure(failure: Failure): string {
  const headers = Object.entries(failure.wire.headers)
    .map(([k, v]) => `${k}: ${k === 'authorization' && !v.includes('not-a-key') ? v.replace(/Bearer (.{6}).*/, 'Bearer $1…') : v}`)
    .join('; ');
  const traits = failure.wire.method === '-' ? [] : requestTraits(failure.wire);
  const lines = [
    `✗ ${failure.operation}: ${failure.problem}${traits.length > 0 ? ` [request has: ${traits.join(', ')}]` : ''}`,
    `    request:  ${failure.wire.method} ${truncate(failure.wire.path, 300)}`,
    `    headers:  ${headers}`,
  ];
  if (failure.wire.body !== undefined) lines.push(`    body:     ${truncate(JSON.stringify(failure.wire.body.toString('utf8')), 400)}`);
  if (failure.response !== undefined) lines.push(`    response: ${failure.response.status} ${truncate(failure.response.text, 300)}`);
  lines.push(`    replay:   FUZZ_SEED=${failure.seed} FUZZ_ONLY='${failure.operation}' npx vitest run --project e2e test/e2e/contract-fuzz.e2e-spec.ts`);
  return lines.join('\n');
}
