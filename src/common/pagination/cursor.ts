import { InvalidRequestError } from '../errors/common.errors.js';
import { isUuid } from '../ids/uuid.js';

/**
 * A keyset cursor: where a list ordered newest first (time, then id) continues. Opaque to
 * clients: base64url of the last row's sort key, its time in microseconds since the epoch (the
 * database's precision, which a Date would truncate) and its id.
 */
export interface Cursor {
  /** Microseconds since 1970-01-01T00:00:00Z, as decimal text (beyond a double's exact range). */
  micros: string;
  id: string;
}

export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(`${cursor.micros}:${cursor.id}`).toString('base64url');
}

/** The cursor a list handed out, or 400 INVALID_REQUEST on `after` for anything else. */
export function decodeCursor(value: string): Cursor {
  const text = /^[A-Za-z0-9_-]{1,200}$/.test(value) ? Buffer.from(value, 'base64url').toString('utf8') : '';
  const match = /^(-?\d{1,17}):([0-9a-fA-F-]{36})$/.exec(text);
  if (!match || !isUuid(match[2])) throw new InvalidRequestError('after must be a pagination.next_cursor this list returned', 'after');
  return { micros: match[1], id: match[2].toLowerCase() };
}
