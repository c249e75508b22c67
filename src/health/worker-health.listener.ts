import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { createServer, type Server } from 'node:http';
import { AppConfig } from '../config/app-config.js';
import { HealthService } from './health.service.js';

/**
 * A worker (APP_ROLE=worker) serves no API, so an orchestrator has nothing to probe. With
 * WORKER_HEALTH_PORT set it answers, on that port and nothing else, the two probes the API serves:
 * `GET /health/live` (200 while the process and its event loop run) and `GET /health/ready` (200 when
 * PostgreSQL and Redis answer, else 503), same bodies. Every other request is 404. Plain node:http,
 * no Nest routing, guards or rate limits: it is a probe port, not published (docker/compose.yml).
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
    const server = createServer((req, res) => {
      const path = (req.url ?? '').split('?')[0];
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' });
        res.end(JSON.stringify(body));
      };
      if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, { status: 'method not allowed' });
      if (path === '/health/live') return send(200, { status: 'ok' });
      if (path === '/health/ready') {
        this.health.readiness().then(
          (readiness) => send(readiness.status === 'ok' ? 200 : 503, readiness),
          () => send(503, { status: 'unavailable' }),
        );
        return;
      }
      send(404, { status: 'not found' });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, () => resolve());
    });
    this.server = server;
    this.logger.log(`worker health on http://localhost:${port}/health/ready`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
