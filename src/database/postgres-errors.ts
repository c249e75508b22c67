import { QueryFailedError } from 'typeorm';

/** PostgreSQL's unique_violation, optionally on a named constraint or index. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (!(error instanceof QueryFailedError)) return false;
  const driverError = error.driverError as { code?: string; constraint?: string };
  return driverError.code === '23505' && (constraint === undefined || driverError.constraint === constraint);
}

/**
 * PostgreSQL's data exceptions a client's value can cause: string too long (22001), invalid byte
 * sequence such as NUL (22021), invalid text representation (22P02), unsupported Unicode escape
 * in jsonb (22P05), numeric out of range (22003). Validation should stop each before the database.
 */
export const CLIENT_DATA_ERROR_CODES: ReadonlySet<string> = new Set(['22001', '22021', '22P02', '22P05', '22003']);

/** The SQLSTATE of a client-data error, or undefined for any other failure. */
export function clientDataErrorCode(error: unknown): string | undefined {
  if (!(error instanceof QueryFailedError)) return undefined;
  const code = (error.driverError as { code?: string }).code;
  return code !== undefined && CLIENT_DATA_ERROR_CODES.has(code) ? code : undefined;
}
