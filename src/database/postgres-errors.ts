import { QueryFailedError } from 'typeorm';

/** PostgreSQL's unique_violation, optionally on a named constraint or index. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (!(error instanceof QueryFailedError)) return false;
  const driverError = error.driverError as { code?: string; constraint?: string };
  return driverError.code === '23505' && (constraint === undefined || driverError.constraint === constraint);
}

/** PostgreSQL's foreign_key_violation, optionally on a named constraint. */
export function isForeignKeyViolation(error: unknown, constraint?: string): boolean {
  if (!(error instanceof QueryFailedError)) return false;
  const driverError = error.driverError as { code?: string; constraint?: string };
  return driverError.code === '23503' && (constraint === undefined || driverError.constraint === constraint);
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

/**
 * SQLSTATEs of a database that is not there to answer: connection exceptions (class 08), the
 * server shutting down, restarting or not yet accepting connections (57P01-57P03), too many
 * connections (53300), and a statement cancelled by DATABASE_STATEMENT_TIMEOUT (57014).
 */
const UNAVAILABLE_SQLSTATES = /^(08...|57P0[1-3]|53300|57014)$/;

/** Socket-level failures of the driver (the server is down or went away mid-query). */
const UNAVAILABLE_ERRNOS: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/** pg's own messages when a pooled connection cannot be made or was lost (they carry no code). */
const UNAVAILABLE_MESSAGES = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection terminated due to connection timeout|terminating connection)/;

/**
 * True when the error says PostgreSQL is unreachable or went away, not that the statement was
 * wrong: the request may be retried unchanged once it is back (503 SERVICE_UNAVAILABLE).
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const cause = error instanceof QueryFailedError ? (error.driverError as unknown) : error;
  if (!cause || typeof cause !== 'object') return false;
  const { code, message } = cause as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (UNAVAILABLE_SQLSTATES.test(code) || UNAVAILABLE_ERRNOS.has(code))) return true;
  // An AggregateError (every address of the host refused) carries the errno of each attempt.
  const errors = (cause as { errors?: unknown }).errors;
  if (Array.isArray(errors) && errors.some((e) => isDatabaseUnavailable(e))) return true;
  return typeof message === 'string' && UNAVAILABLE_MESSAGES.test(message);
}
