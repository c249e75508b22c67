import { ValidationPipe } from '@nestjs/common';
import { toValidationError } from './validation.js';

/** The global pipe: DTOs are transformed, unknown properties refused, failures rendered by toValidationError. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    transform: true,
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    stopAtFirstError: true,
    exceptionFactory: (errors) => toValidationError(errors),
  });
}
