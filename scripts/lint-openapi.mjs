#!/usr/bin/env node
// Lints an OpenAPI document with Redocly (redocly.yaml: 0 errors and 0 warnings) and Spectral
// (.spectral.yaml, spectral:oas: 0 errors). Usage: npm run lint:openapi -- <file.json | http://…/openapi.json>
// Exits 1 when either finds a problem it must not, printing each one.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);

async function main() {
  const source = process.argv[2];
  if (!source) throw new Error('usage: lint-openapi <file.json | http(s) URL of /openapi.json>');
  let file = resolve(source);
  let temp;
  if (/^https?:\/\//.test(source)) {
    const res = await fetch(source);
    if (!res.ok) throw new Error(`${source}: HTTP ${res.status}`);
    temp = await mkdtemp(join(tmpdir(), 'openapi-'));
    file = join(temp, 'openapi.json');
    await writeFile(file, await res.text());
  }
  try {
    const problems = [...(await redocly(file)), ...(await spectral(file))];
    for (const problem of problems) console.error(problem);
    console.log(problems.length === 0 ? `${source}: Redocly and Spectral found no problem` : `${source}: ${problems.length} problem(s)`);
    return problems.length === 0 ? 0 : 1;
  } finally {
    if (temp) await rm(temp, { recursive: true, force: true });
  }
}

/** Both linters exit non-zero when they find errors; their JSON report is read either way. */
async function output(command, args) {
  try {
    return (await run(command, args, { cwd: root, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } })).stdout;
  } catch (error) {
    const stdout = typeof error?.stdout === 'string' ? error.stdout.trim() : '';
    if (stdout.startsWith('{') || stdout.startsWith('[')) return stdout;
    throw error;
  }
}

async function redocly(file) {
  const report = JSON.parse(await output(bin('redocly'), ['lint', file, '--config', join(root, 'redocly.yaml'), '--format=json']));
  return report.problems.map((p) => `redocly ${p.severity} ${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer ?? '?'}`);
}

async function spectral(file) {
  const report = JSON.parse(await output(bin('spectral'), ['lint', file, '--ruleset', join(root, '.spectral.yaml'), '-f', 'json', '--quiet']));
  // Spectral severities: 0 error, 1 warning, 2 info, 3 hint. Only errors fail.
  return report.filter((p) => p.severity === 0).map((p) => `spectral error ${p.code}: ${p.message} at ${p.path.join('.')}`);
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(2);
  },
);
