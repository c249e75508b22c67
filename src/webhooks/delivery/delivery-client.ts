import type { LookupAddress } from 'node:dns';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { Agent, request } from 'node:https';
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect, createSecureContext, rootCertificates, type SecureContext } from 'node:tls';
import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../../config/app-config.js';
import { CidrList } from '../ssrf/address-classifier.js';
import { CheckedTargetCache, pinnedLookup, resolveTarget, systemResolver, TargetNotAllowedError, type HostResolver, type TargetPolicy } from '../ssrf/target-resolver.js';
import { parseRetryAfter, type AttemptResult } from './outcome.js';

export const MAX_RESPONSE_BYTES = 64 * 1024;
export const TARGET_NOT_ALLOWED = 'target address not allowed';
/**
 * How long a host name's checked addresses are reused by deliveries. Only addresses that passed the
 * check are kept, and connections still go only to them (pinned lookup), so the cache cannot let a
 * rebinding through: a changed DNS answer is merely noticed up to this much later.
 */
export const CHECKED_TARGET_TTL_MS = 5_000;

class AttemptTimeout extends Error {
  constructor(readonly ms: number) {
    super(`timeout after ${ms} ms`);
  }
}

/** A short, stable reason for a failed connection (the log's error_message). */
function describeError(error: NodeJS.ErrnoException): string {
  if (error instanceof AttemptTimeout) return error.message;
  switch (error.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return 'connection reset';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    case 'ETARGETUNRESOLVED':
    case 'ENOTFOUND':
      return 'host does not resolve';
    default:
      if (error.code?.startsWith('ERR_TLS') || /certificate|SSL|TLS/i.test(error.message)) return `TLS error: ${error.code ?? error.message}`.slice(0, 200);
      return (error.code ?? error.message).slice(0, 200);
  }
}

/**
 * Sends one webhook attempt over HTTPS: the host is resolved and every address checked (SSRF), the
 * socket is pinned to the checked addresses, redirects are not followed (Node's client never does),
 * the answer's body is read up to 64 KiB and dropped, and the whole attempt is bounded by
 * WEBHOOK_TIMEOUT_MS. One keep-alive agent per process reuses connections per host.
 */
@Injectable()
export class DeliveryClient implements OnModuleDestroy {
  private readonly agent: Agent;
  private readonly policy: TargetPolicy;
  private readonly timeoutMs: number;
  /**
   * Built once: passing `ca` itself would make the agent fold every CA certificate into the pool key
   * of each request (https.Agent#getName; ~20% of the worker's CPU in the deliveries bench) and build
   * a secure context, parsing them all again, for every new socket.
   */
  private readonly secureContext?: SecureContext;
  private readonly proxy?: URL;
  private readonly targets = new CheckedTargetCache(CHECKED_TARGET_TTL_MS);
  private currentResolver: HostResolver = systemResolver;

  /** Replaceable in tests, to resolve names without DNS (replacing it forgets the cached answers). */
  get resolver(): HostResolver {
    return this.currentResolver;
  }

  set resolver(resolver: HostResolver) {
    this.currentResolver = resolver;
    this.targets.clear();
  }

  constructor(config: AppConfig) {
    this.timeoutMs = config.webhooks.timeoutMs;
    this.policy = { allowPrivate: config.webhookAllowPrivateTargets, allowed: new CidrList(config.webhooks.allowedCidrs) };
    this.secureContext = config.webhooks.caFile ? createSecureContext({ ca: [...rootCertificates, readFileSync(config.webhooks.caFile, 'utf8')] }) : undefined;
    this.proxy = config.webhooks.proxyUrl ? new URL(config.webhooks.proxyUrl) : undefined;
    this.agent = new Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 64, timeout: 60_000, scheduling: 'lifo', secureContext: this.secureContext });
  }

  onModuleDestroy(): void {
    this.agent.destroy();
  }

  /** The same host check as at delivery, for create and update (422 when it fails). */
  checkHost(hostname: string): Promise<unknown> {
    return resolveTarget(hostname, this.policy, this.resolver);
  }

  /**
   * A connection through the egress proxy: `CONNECT <checked address>:<port>` (the address, not the
   * name, so the proxy cannot resolve it elsewhere), then TLS to the target's name over the tunnel.
   */
  private tunnel(proxy: URL, address: LookupAddress, host: string, port: number) {
    return (_options: unknown, done: (error: Error | null, socket: Duplex) => void): undefined => {
      const target = `${address.family === 6 ? `[${address.address}]` : address.address}:${port}`;
      const connect = httpRequest({ host: proxy.hostname, port: proxy.port === '' ? 80 : Number(proxy.port), method: 'CONNECT', path: target, headers: { Host: target }, agent: false });
      connect.once('connect', (res, socket) => {
        if (res.statusCode !== 200) {
          socket.destroy();
          done(Object.assign(new Error(`proxy answered ${res.statusCode}`), { code: 'EPROXY' }), socket);
          return;
        }
        done(null, tlsConnect({ socket, host, servername: isIP(host) === 0 ? host : undefined, secureContext: this.secureContext, ALPNProtocols: ['http/1.1'] }));
      });
      connect.once('error', (error) => done(error, connect.socket as Duplex));
      connect.end();
      return undefined;
    };
  }

  async send(url: URL, headers: Record<string, string>, body: string): Promise<AttemptResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let addresses;
    try {
      addresses = await this.targets.resolve(url.hostname, (host) => resolveTarget(host, this.policy, this.currentResolver, Math.min(this.timeoutMs, 5000)));
    } catch (error) {
      if (error instanceof TargetNotAllowedError) return { statusCode: null, responseTimeMs: elapsed(), error: TARGET_NOT_ALLOWED, refused: true };
      return { statusCode: null, responseTimeMs: elapsed(), error: describeError(error as NodeJS.ErrnoException) };
    }
    const remaining = Math.max(1, this.timeoutMs - elapsed());
    return new Promise<AttemptResult>((resolve) => {
      let settled = false;
      const finish = (result: Omit<AttemptResult, 'responseTimeMs'>) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ ...result, responseTimeMs: elapsed() });
      };
      const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
      const port = url.port === '' ? 443 : Number(url.port);
      const tunnel = this.proxy ? this.tunnel(this.proxy, addresses[0] as LookupAddress, host, port) : undefined;
      const req = request(
        {
          protocol: 'https:',
          hostname: host,
          port,
          path: `${url.pathname}${url.search}`,
          method: 'POST',
          // Through the proxy: a tunnel per attempt and no agent (an agent would open its own, resolving connection).
          ...(tunnel ? { createConnection: tunnel } : { agent: this.agent, lookup: pinnedLookup(addresses) }),
          headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
        },
        (res) => {
          const statusCode = res.statusCode ?? null;
          const retryAfterMs = parseRetryAfter(res.headers['retry-after']);
          let read = 0;
          const done = () =>
            finish({
              statusCode,
              error: statusCode !== null && statusCode >= 200 && statusCode < 300 ? null : `HTTP ${statusCode}`,
              retryAfterMs,
            });
          res.on('data', (chunk: Buffer) => {
            read += chunk.length;
            // Past the cap the rest is not worth reading: the socket is dropped instead of reused.
            if (read > MAX_RESPONSE_BYTES) {
              done();
              res.destroy();
            }
          });
          res.on('end', done);
          res.on('error', done);
          res.on('close', done);
        },
      );
      const timer = setTimeout(() => req.destroy(new AttemptTimeout(this.timeoutMs)), remaining);
      req.on('error', (error: NodeJS.ErrnoException) =>
        finish({ statusCode: null, error: describeError(error), ...(error instanceof AttemptTimeout && { timedOut: true }) }),
      );
      req.end(body);
    });
  }
}
