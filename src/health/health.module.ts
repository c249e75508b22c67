import { Module } from '@nestjs/common';
import { HealthController } from './health.controller.js';
import { HealthService } from './health.service.js';
import { RootController } from './root.controller.js';
import { WorkerHealthListener } from './worker-health.listener.js';

@Module({ controllers: [HealthController, RootController], providers: [HealthService, WorkerHealthListener], exports: [HealthService] })
export class HealthModule {}
