import { describe, expect, it } from 'vitest';
import { DomainError } from '../errors/domain-error.js';
import { decodeCursor, encodeCursor } from './cursor.js';

describe('keyset cursor', () => {
  it('round-trips a sort key with microseconds', () => {
    const cursor = { micros: '1748736000123456', id: '0190b5a0-1234-7abc-8def-0123456789ab' };
    expect(decodeCursor(encodeCursor(cursor))).toEqual(cursor);
    expect(encodeCursor(cursor)).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it.each(['', 'not a cursor', '!!!', Buffer.from('123:not-a-uuid').toString('base64url'), Buffer.from('x:0190b5a0-1234-7abc-8def-0123456789ab').toString('base64url'), 'a'.repeat(201)])(
    'refuses %j with INVALID_REQUEST on after',
    (value) => {
      try {
        decodeCursor(value);
        expect.unreachable();
      } catch (error) {
        expect(error).toBeInstanceOf(DomainError);
        expect({ code: (error as DomainError).code, field: (error as DomainError).extra.field }).toEqual({ code: 'INVALID_REQUEST', field: 'after' });
      }
    },
  );
});
