import { describe, expect, it } from 'vitest';
import { healthOf } from './webhook-deliveries.service.js';

const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));

describe('healthOf (a batch of attempt records -> each webhook health)', () => {
  it('takes the last attempt in time order, and failing since the first failure after the last success', () => {
    const health = healthOf([
      { webhookId: 'a', status: 'failed', attemptedAt: at(5), disable: false },
      { webhookId: 'a', status: 'delivered', attemptedAt: at(2), disable: false },
      { webhookId: 'a', status: 'retrying', attemptedAt: at(1), disable: false },
      { webhookId: 'a', status: 'retrying', attemptedAt: at(7), disable: false },
      { webhookId: 'b', status: 'failed', attemptedAt: at(3), disable: false },
      { webhookId: 'b', status: 'delivered', attemptedAt: at(4), disable: false },
      { webhookId: 'c', status: 'failed', attemptedAt: at(1), disable: true },
    ]);
    expect(health.get('a')).toEqual({ failing: true, firstFailure: at(5), disable: false });
    expect(health.get('b')).toEqual({ failing: false, firstFailure: null, disable: false });
    expect(health.get('c')).toEqual({ failing: true, firstFailure: at(1), disable: true });
  });
});
