// Starts bench/lib/https-receiver.mjs in its own process with a fresh self-signed certificate for
// 127.0.0.1, and gives the app environment that trusts it and restricts deliveries to loopback.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Returns { port, pid, env, stop() }; `env` is for the app processes (api and worker). */
export async function startReceiver() {
  const dir = mkdtempSync(join(tmpdir(), 'bench-receiver-'));
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certFile,
    '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  const receiver = spawn(process.execPath, [new URL('./https-receiver.mjs', import.meta.url).pathname, keyFile, certFile], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolve, reject) => {
    receiver.stdout.once('data', (d) => resolve(Number(String(d).trim())));
    receiver.once('exit', (code) => reject(new Error(`receiver exited ${code}`)));
  });
  return {
    port,
    pid: receiver.pid,
    url: `https://127.0.0.1:${port}/hook`,
    env: {
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8,::1/128',
      WEBHOOK_CA_FILE: certFile,
    },
    stop() {
      receiver.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
