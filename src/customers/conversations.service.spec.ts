import { describe, expect, it } from 'vitest';
import { receiveStatement } from './conversations.service.js';

describe('the receive statement', () => {
  it('without bursts is free of every burst fragment (a window of 0 adds no work to the hot path)', () => {
    const plain = receiveStatement(false).text;
    expect(plain).not.toMatch(/burst/i);
    expect(receiveStatement(true).text).toContain('INSERT INTO message_bursts');
  });

  it('with bursts holds only routable messages with a window, null-safe for the others of the batch', () => {
    const text = receiveStatement(true).text;
    expect(text.match(/NOT \((\w+)\.routable AND COALESCE\(\1\.burst_window_ms, 0\) > 0\)/g)).toHaveLength(3);
  });
});
