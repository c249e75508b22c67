import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { generateSecret } from '../webhook-input.js';
import { deliveryHeaders } from './signing.js';

describe('deliveryHeaders', () => {
  const body = JSON.stringify({ id: 'e1', type: 'workflow.completed', data: { a: 1 } });
  it('signs verifiably with the standardwebhooks package, for a whsec_ secret and a plain one', () => {
    const generated = generateSecret();
    const headers = deliveryHeaders([generated], 'd1', 'workflow.completed', body);
    expect(new Webhook(generated).verify(body, headers)).toEqual(JSON.parse(body));
    const plain = 'my-own-secret-of-some-length';
    const plainHeaders = deliveryHeaders([plain], 'd2', 'workflow.completed', body);
    // The package base64-decodes its key; the plain secret's UTF-8 bytes are that key's decoding.
    expect(new Webhook(Buffer.from(plain, 'utf8').toString('base64')).verify(body, plainHeaders)).toEqual(JSON.parse(body));
    expect(plainHeaders['X-Service-Signature']).toBe(createHmac('sha256', plain).update(body).digest('hex'));
  });
  it('carries both signatures during a rotation, each verifying', () => {
    const [next, old] = [generateSecret(), generateSecret()];
    const headers = deliveryHeaders([next, old], 'd3', 'workflow.completed', body);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(() => new Webhook(old).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(next).verify(body, headers)).not.toThrow();
  });
});
