import { ApiProperty } from '@nestjs/swagger';

export class LivenessResponse {
  @ApiProperty({ enum: ['ok'] }) status: 'ok';
}

export class ReadinessChecksResponse {
  @ApiProperty({ enum: ['up', 'down'] }) database: 'up' | 'down';
  @ApiProperty({ enum: ['up', 'down'] }) redis: 'up' | 'down';
}

export class ReadinessResponse {
  @ApiProperty({ enum: ['ok', 'unavailable'] }) status: 'ok' | 'unavailable';
  @ApiProperty({ type: ReadinessChecksResponse }) checks: ReadinessChecksResponse;
}

/** GET /: where to go from the root (the 302 goes to the first). */
export class RootResponse {
  @ApiProperty({ example: 'Workflow Automation Service' }) name: string;
  @ApiProperty({ description: 'Swagger UI', example: '/docs' }) docs: string;
  @ApiProperty({ description: 'The OpenAPI document (also /openapi.yaml)', example: '/openapi.json' }) openapi: string;
  @ApiProperty({ description: 'Readiness probe', example: '/health/ready' }) health: string;
}
