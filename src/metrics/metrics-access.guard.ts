import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { AppConfig } from '../config/app-config.js';
import { metricsRefusal } from './metrics-access.js';

/** `GET /metrics`: METRICS_TOKEN as bearer token when set; else loopback only in production (metricsRefusal). */
@Injectable()
export class MetricsAccessGuard implements CanActivate {
  constructor(private readonly config: AppConfig) {}

  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<Request>();
    const refusal = metricsRefusal(this.config.metrics, req.headers.authorization, req.ip);
    if (refusal) throw refusal;
    return true;
  }
}
