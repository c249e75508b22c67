import { describe, expect, it } from 'vitest';
import { journeyOrder, selectMetrics, trendOf } from './analytics.service.js';

describe('analytics service helpers', () => {
  it('trends: beyond ±5% of the first half', () => {
    expect(trendOf(100, 105)).toBe('stable');
    expect(trendOf(100, 105.1)).toBe('increasing');
    expect(trendOf(100, 94.9)).toBe('decreasing');
    expect(trendOf(0, 0)).toBe('stable');
    expect(trendOf(0, 1)).toBe('increasing');
    expect(trendOf(null, 1)).toBe('stable');
    expect(trendOf(0.5, null)).toBe('stable');
  });

  it('metric selection: default all, unknown names refused', () => {
    expect(selectMetrics(undefined)).toHaveLength(10);
    expect(selectMetrics(['success_rate', 'success_rate'])).toEqual(['success_rate']);
    expect(() => selectMetrics(['success_rate', 'bogus'])).toThrow(expect.objectContaining({ code: 'INVALID_METRICS', extra: expect.objectContaining({ field: 'metrics' }) }));
  });

  it('journey order: from the first node along next, whatever the array order', () => {
    expect(journeyOrder([{ id: 'a', next: 'c' }, { id: 'b' }, { id: 'c', next: 'b' }])).toEqual(['a', 'c', 'b']);
    expect(journeyOrder([])).toEqual([]);
    expect(journeyOrder([{ id: 'a', next: 'missing' }])).toEqual(['a']);
  });
});
