import { describe, expect, it } from 'vitest';
import { journeyFigures, journeyOrder, selectMetrics, trendOf } from './analytics.service.js';

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
    expect(selectMetrics(undefined)).toHaveLength(15);
    expect(selectMetrics(['success_rate', 'success_rate'])).toEqual(['success_rate']);
    expect(() => selectMetrics(['success_rate', 'bogus'])).toThrow(expect.objectContaining({ code: 'INVALID_METRICS', extra: expect.objectContaining({ field: 'metrics' }) }));
  });

  it('journey order: from the first node along next, whatever the array order', () => {
    expect(journeyOrder([{ id: 'a', next: 'c' }, { id: 'b' }, { id: 'c', next: 'b' }])).toEqual(['a', 'c', 'b']);
    expect(journeyOrder([])).toEqual([]);
    expect(journeyOrder([{ id: 'a', next: 'missing' }])).toEqual(['a']);
  });

  it('journey figures: steps plus waits reach a node; failures drop off where they stopped (entry when unknown), by code', () => {
    const outcome = (status: 'running' | 'success' | 'failed', stop_node: string, code: string, waits: boolean, executions: number, duration_sum = 0, timed = 0) => ({
      status, stop_node, code, waits, executions, duration_sum, timed,
    });
    const f = journeyFigures(
      ['a', 'b', 'c'],
      [
        outcome('success', '', '', false, 4, 10_001, 4),
        outcome('failed', 'c', 'NODE_FAILED', false, 1, 50, 1),
        outcome('failed', 'b', 'CONVERSATION_TIMEOUT', true, 2, 100, 2),
        outcome('running', 'b', '', true, 3),
        outcome('running', '', '', false, 1),
        outcome('failed', '', 'UNKNOWN', false, 2, 20, 2),
      ],
      [
        { node_id: 'a', steps: 11, completed: 11, average_duration_ms: 5 },
        { node_id: 'b', steps: 7, completed: 7, average_duration_ms: 9 },
        { node_id: 'c', steps: 5, completed: 4, average_duration_ms: 2 },
      ],
    );
    expect(f.total).toBe(13);
    expect(f.completed).toBe(4);
    expect(f.average_duration_ms).toBe(2500); // 10,001 / 4 = 2,500.25
    expect(f.steps.get('a')).toEqual({ reached: 11, completed: 11, average_duration_ms: 5 });
    expect(f.steps.get('b')).toEqual({ reached: 12, completed: 7, average_duration_ms: 9 }); // 7 steps + 2 expired + 3 waiting
    expect(f.steps.get('c')).toEqual({ reached: 5, completed: 4, average_duration_ms: 2 });
    expect(f.drops).toEqual(new Map([['c', new Map([['NODE_FAILED', 1]])], ['b', new Map([['CONVERSATION_TIMEOUT', 2]])], ['a', new Map([['UNKNOWN', 2]])]]));
    // Nothing finished successfully: no mean duration.
    expect(journeyFigures(['a'], [outcome('running', 'a', '', true, 1)], []).average_duration_ms).toBeNull();
    expect(journeyFigures(['a'], [outcome('running', 'a', '', true, 1)], []).steps.get('a')).toEqual({ reached: 1, completed: 0, average_duration_ms: null });
  });
});
