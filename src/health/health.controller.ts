import { Controller, Get, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../auth/decorators/access.decorators.js';
import { NoRateLimit } from '../rate-limits/rate-limit.decorators.js';
import { LivenessResponse, ReadinessResponse } from './dto/health.response.js';
import { HealthService, type Readiness } from './health.service.js';

@ApiTags('Operations')
@Public()
@NoRateLimit('probes of the orchestrator')
@Controller('health')
export class HealthController {
  constructor(private readonly health: HealthService) {}

  @Get('live')
  @ApiOperation({ summary: 'Liveness: the process answers' })
  @ApiResponse({ status: 200, description: 'The process answers', type: LivenessResponse })
  live(): LivenessResponse {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOperation({ summary: 'Readiness: PostgreSQL and Redis answer' })
  @ApiResponse({ status: 200, description: 'Ready: every check is up', type: ReadinessResponse })
  @ApiResponse({ status: 503, description: 'A dependency is down (status unavailable, the failing check down)', type: ReadinessResponse })
  async ready(@Res({ passthrough: true }) res: Response): Promise<Readiness> {
    const readiness = await this.health.readiness();
    if (readiness.status !== 'ok') res.status(503);
    return readiness;
  }
}
