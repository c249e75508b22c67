import { Module } from '@nestjs/common';
import { HealthController } from './health.controller.js';
import { HealthService } from './health.service.js';
import { WorkerHealthListener } from './worker-health.listener.js';

@Module({ controllers: [HealthController], providers: [HealthService, WorkerHealthListener], exports: [HealthService] })
export class HealthModule {}
