import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Hit {
  path: string;
  headers: Record<string, string>;
  body: string;
  at: number;
}

/** What the receiver answers a hit with; `null` never answers (a hanging receiver). */
export type Responder = (hit: Hit, index: number) => { status: number; headers?: Record<string, string>; body?: string } | null;

/** A self-signed certificate for 127.0.0.1, ::1 and localhost, made with openssl for this test run. */
export function selfSignedCertificate(): { key: string; cert: string; certFile: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'webhook-receiver-'));
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certFile,
    '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost,DNS:evil.test',
  ], { stdio: 'ignore' });
  return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8'), certFile, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A local HTTPS receiver on 127.0.0.1 that records every hit per path. */
export class HttpsReceiver {
  readonly hits: Hit[] = [];
  private server?: Server;
  private readonly responders = new Map<string, Responder>();
  port = 0;

  constructor(private readonly tls: { key: string; cert: string }) {}

  async start(host = '127.0.0.1'): Promise<void> {
    this.server = createServer({ key: this.tls.key, cert: this.tls.cert, keepAlive: true }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '/';
        const hit: Hit = { path, headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
        const index = this.hitsOf(path).length;
        this.hits.push(hit);
        const responder: Responder = this.responders.get(path) ?? (() => ({ status: 200 }));
        const answer = responder(hit, index);
        if (answer === null) return;
        res.writeHead(answer.status, answer.headers ?? {});
        res.end(answer.body ?? 'ok');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, host, () => resolve()));
    this.port = (this.server.address() as AddressInfo).port;
  }

  on(path: string, responder: Responder): void {
    this.responders.set(path, responder);
  }

  hitsOf(path: string): Hit[] {
    return this.hits.filter((h) => h.path === path);
  }

  url(path: string, host = '127.0.0.1'): string {
    return `https://${host}:${this.port}${path}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
