import { describe, expect, it } from 'vitest';
import { isUuid } from './uuid.js';
import { uuidv7, uuidv7Floor } from './uuid-v7.js';

// The module's clock (the last millisecond it used) belongs to the process, which the specs that ran
// before this one in the same worker have moved on: the times asked for explicitly are years ahead of
// now, each later than the one before, so that an id carries the time it was asked for. (A copy of the
// module through vi.resetModules() would give every later spec of the worker new copies of the modules
// it imports too, registering their metrics a second time.)

describe('uuidv7', () => {
  it('is a version 7, variant 10 UUID carrying the time in milliseconds', () => {
    const at = Date.parse('2046-11-22T21:40:00.123Z');
    const id = uuidv7(at + 10_000);
    expect(isUuid(id)).toBe(true);
    expect(id[14]).toBe('7');
    expect(['8', '9', 'a', 'b']).toContain(id[19]);
    expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(at + 10_000);
  });

  it('sorts in the order it was made, within a millisecond and across many', () => {
    const ids = Array.from({ length: 10_000 }, () => uuidv7());
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    // A clock stepping back does not break the order either.
    const later = uuidv7(Date.now() + 60_000);
    expect(uuidv7(Date.now()) > later).toBe(true);
  });

  it('has a floor per millisecond: ids made from that millisecond on sort at or above it, earlier ones below', () => {
    const at = Date.parse('2051-05-06T07:08:09.010Z');
    expect(uuidv7Floor(at)).toBe(`${at.toString(16).padStart(12, '0').slice(0, 8)}-${at.toString(16).padStart(12, '0').slice(8)}-0000-0000-000000000000`);
    expect(isUuid(uuidv7Floor(at))).toBe(true);
    // The same comparison PostgreSQL makes on uuid: byte order, which the lower-case text keeps.
    expect(uuidv7(at) >= uuidv7Floor(at)).toBe(true);
    expect(uuidv7(at + 1) > uuidv7Floor(at)).toBe(true);
    expect(uuidv7Floor(at) > uuidv7Floor(at - 1)).toBe(true);
    // The largest id of the millisecond before sorts below.
    const before = uuidv7Floor(at - 1).slice(0, 13);
    expect(`${before}-7fff-bfff-ffffffffffff` < uuidv7Floor(at)).toBe(true);
    expect(uuidv7Floor(-5)).toBe('00000000-0000-0000-0000-000000000000');
  });
});
