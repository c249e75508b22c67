import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Express, Request, Response } from 'express';
import { createServer, type Server } from 'node:http';
import { AppConfig } from '../config/app-config.js';
import { metricsRefusal } from '../metrics/metrics-access.js';
import { metricsRegistry } from '../metrics/metrics.middleware.js';
import { HealthService } from './health.service.js';

/**
 * A worker (APP_ROLE=worker) serves no API, so an orchestrator has nothing to probe. With
 * WORKER_HEALTH_PORT set it answers, on that port and nothing else, the two probes the API serves:
 * `GET /health/live` (200 while the process and its event loop run) and `GET /health/ready` (200 when
 * PostgreSQL and Redis answer, else 503), same bodies, and `GET /metrics` (the worker's Prometheus
 * metrics, under the API's rule: METRICS_TOKEN as bearer token when set, else loopback only in
 * production, the client address derived by TRUST_PROXY as on the API). Every other request is 404.
 * A bare Express handler (for `req.ip`), no Nest routing, guards or rate limits: it is a probe and
 * scrape port, not published (docker/compose.yml).
 */
@Injectable()
export class WorkerHealthListener implements OnApplicationBootstrap, OnApplicationShutdown {
  private server?: Server;
  private readonly logger = new Logger('WorkerHealth');

  constructor(
    private readonly config: AppConfig,
    private readonly health: HealthService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const port = this.config.workerHealthPort;
    if (this.config.role !== 'worker' || port === undefined) return;
    const app = new ExpressAdapter().getInstance<Express>();
    app.disable('x-powered-by');
    app.set('trust proxy', this.config.trustProxy);
    app.use((req: Request, res: Response) => {
      const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', ...headers });
        res.end(JSON.stringify(body));
      };
      if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, { status: 'method not allowed' });
      if (req.path === '/health/live') return send(200, { status: 'ok' });
      if (req.path === '/health/ready') {
        this.health.readiness().then(
          (readiness) => send(readiness.status === 'ok' ? 200 : 503, readiness),
          () => send(503, { status: 'unavailable' }),
        );
        return;
      }
      if (req.path === '/metrics') {
        const refusal = metricsRefusal(this.config.metrics, req.headers.authorization, req.ip);
        if (refusal) return send(refusal.status, { error: refusal.toBody() }, refusal.extra.headers);
        metricsRegistry.metrics().then(
          (text) => {
            res.writeHead(200, { 'Content-Type': metricsRegistry.contentType, 'Cache-Control': 'no-store' });
            res.end(text);
          },
          (error: Error) => {
            this.logger.error(`metrics: ${error.message}`);
            send(500, { error: { code: 'INTERNAL_ERROR', message: 'An unexpected error occurred' } });
          },
        );
        return;
      }
      send(404, { status: 'not found' });
    });
    const server = createServer(app);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, () => resolve());
    });
    this.server = server;
    this.logger.log(`worker health and metrics on http://localhost:${port}/health/ready and /metrics`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
