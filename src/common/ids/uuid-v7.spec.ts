import { describe, expect, it, vi } from 'vitest';
import { isUuid } from './uuid.js';

// A copy of the module of this file's own: its clock (the last millisecond it used) belongs to the
// process, and the specs that ran before this one in the same worker have moved it on.
vi.resetModules();
const { uuidv7 } = await import('./uuid-v7.js');

describe('uuidv7', () => {
  it('is a version 7, variant 10 UUID carrying the time in milliseconds', () => {
    const at = Date.parse('2026-11-22T21:40:00.123Z');
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
});
