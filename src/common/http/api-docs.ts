import { applyDecorators, type Type } from '@nestjs/common';
import { ApiExtraModels, ApiProperty, ApiPropertyOptional, ApiResponse, getSchemaPath } from '@nestjs/swagger';

export class ErrorBodyDto {
  @ApiProperty({ example: 'WORKFLOW_NOT_FOUND' }) code: string;
  @ApiProperty() message: string;
  @ApiPropertyOptional() details?: string;
  @ApiPropertyOptional({ description: 'Dot path of the offending request field', example: 'configuration.nodes[0].content' }) field?: string;
  @ApiPropertyOptional({ description: 'Seconds to wait before retrying (429 RATE_LIMIT_EXCEEDED, 409 IDEMPOTENCY_KEY_IN_USE, 503 SERVICE_UNAVAILABLE)' }) retry_after?: number;
}

export class ErrorEnvelopeDto {
  @ApiProperty({ type: ErrorBodyDto }) error: ErrorBodyDto;
}

export class PaginationDto {
  @ApiProperty() page: number;
  @ApiProperty() limit: number;
  @ApiProperty() total: number;
  @ApiProperty() pages: number;
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: 'Lists that take `after`: pass it as `after` for the next page (keyset, constant time); null on the last page',
  })
  next_cursor?: string | null;
}

export class MessageEnvelopeDto {
  @ApiProperty() message: string;
}

/** What each error status means; ApiErrors and the OpenAPI post-processor describe errors with it. */
export const ERROR_DESCRIPTIONS: Readonly<Record<number, string>> = {
  400: 'Invalid request: INVALID_REQUEST (including NUL characters, lone surrogates and over-deep JSON), MISSING_REQUIRED_FIELD or a domain code, with `field`',
  401: 'MISSING_AUTHENTICATION, INVALID_API_KEY or INVALID_TOKEN',
  403: 'INSUFFICIENT_PERMISSIONS or SCOPE_INSUFFICIENT',
  404: 'The resource does not exist in the caller\'s organization',
  405: 'The route does not take this method',
  409: 'Conflict with an existing resource or its state',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE: a body that is not JSON',
  422: 'Semantically invalid request',
  429: 'RATE_LIMIT_EXCEEDED, with `retry_after` and Retry-After: a rate limit of the credential, the route class or the source address (failed authentications count per address)',
  500: 'INTERNAL_ERROR',
  503: 'SERVICE_UNAVAILABLE, with `retry_after` and Retry-After: PostgreSQL or Redis does not answer (a restart, a failover), or the instance is shutting down; nothing was done, send the same request again later',
};

/** Documents error responses with the envelope schema. */
export function ApiErrors(...statuses: number[]) {
  return applyDecorators(
    ...statuses.map((status) =>
      ApiResponse({ status, description: ERROR_DESCRIPTIONS[status] ?? 'Error', type: ErrorEnvelopeDto }),
    ),
  );
}

/** Documents a `{data: Model}` success response. */
export function ApiData(model: Type<unknown>, status = 200, description = 'OK') {
  return applyDecorators(
    ApiExtraModels(model),
    ApiResponse({
      status,
      description,
      schema: { type: 'object', required: ['data'], properties: { data: { $ref: getSchemaPath(model) } } },
    }),
  );
}

/** Documents a `{data: [Model], pagination}` list response. */
export function ApiPage(model: Type<unknown>) {
  return applyDecorators(
    ApiExtraModels(model, PaginationDto),
    ApiResponse({
      status: 200,
      description: 'A page of results, newest first',
      schema: {
        type: 'object',
        required: ['data', 'pagination'],
        properties: {
          data: { type: 'array', items: { $ref: getSchemaPath(model) } },
          pagination: { $ref: getSchemaPath(PaginationDto) },
        },
      },
    }),
  );
}

/** Documents a `{message}` deletion response. */
export function ApiDeleted() {
  return ApiResponse({ status: 200, description: 'Deleted', type: MessageEnvelopeDto });
}
