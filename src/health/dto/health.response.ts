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
