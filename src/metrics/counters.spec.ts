import { describe, expect, it } from 'vitest';
import { countProviderSend, providerSends } from '../channels/channels.metrics.js';
import { ProviderSendError } from '../channels/providers/provider-connector.js';
import { countFinished, executionsFinished } from '../executions/executions.metrics.js';
import type { WorkflowExecution } from '../executions/entities/workflow-execution.entity.js';
import { countWebhookResponse, webhookResponses } from '../webhooks/webhooks.metrics.js';

/** The counter's value per label set, as `a=x,b=y` keys. */
async function values(metric: { get(): Promise<{ values: { labels: Partial<Record<string, string | number>>; value: number }[] }> }): Promise<Map<string, number>> {
  const { values } = await metric.get();
  return new Map(values.map((v) => [Object.entries(v.labels).sort().map(([k, l]) => `${k}=${l}`).join(','), v.value]));
}

async function delta(metric: Parameters<typeof values>[0], count: () => void): Promise<Record<string, number>> {
  const before = await values(metric);
  count();
  const after = await values(metric);
  const changed: Record<string, number> = {};
  for (const [key, value] of after) if (value !== (before.get(key) ?? 0)) changed[key] = value - (before.get(key) ?? 0);
  return changed;
}

describe('service counters', () => {
  it('count finished executions by status and a bounded channel, never a running one', async () => {
    const e = (status: string, channel: string | null) => ({ status, channel, durationMs: 1200 }) as unknown as WorkflowExecution;
    const changed = await delta(executionsFinished, () =>
      countFinished([e('success', 'whatsapp'), e('success', 'whatsapp'), e('failed', null), e('failed', 'carrier-pigeon'), e('running', 'whatsapp')]),
    );
    expect(changed).toEqual({ 'channel=whatsapp,status=success': 2, 'channel=none,status=failed': 1, 'channel=other,status=failed': 1 });
  });

  it('count provider calls by class, not a send refused before any call', async () => {
    const changed = await delta(providerSends, () => {
      countProviderSend('whatsapp_cloud');
      countProviderSend('whatsapp_cloud', new ProviderSendError('x', false, { httpStatus: 400 }));
      countProviderSend('whatsapp_cloud', new ProviderSendError('x', true, { httpStatus: 503 }));
      countProviderSend('instagram', new ProviderSendError('x', true, { transport: 'timeout' }));
      countProviderSend('instagram', new ProviderSendError('x', true, { transport: 'network' }));
      countProviderSend('instagram', new ProviderSendError('Instagram has no message templates', false));
      countProviderSend('instagram', new Error('not a provider answer'));
    });
    expect(changed).toEqual({
      'class=2xx,provider=whatsapp_cloud': 1,
      'class=4xx,provider=whatsapp_cloud': 1,
      'class=5xx,provider=whatsapp_cloud': 1,
      'class=timeout,provider=instagram': 1,
      'class=network,provider=instagram': 1,
    });
  });

  it('count webhook attempts by class of answer', async () => {
    const changed = await delta(webhookResponses, () => {
      countWebhookResponse({ statusCode: 200, responseTimeMs: 1, error: null });
      countWebhookResponse({ statusCode: 302, responseTimeMs: 1, error: 'HTTP 302' });
      countWebhookResponse({ statusCode: 500, responseTimeMs: 1, error: 'HTTP 500' });
      countWebhookResponse({ statusCode: null, responseTimeMs: 1, error: 'timeout after 10 ms', timedOut: true });
      countWebhookResponse({ statusCode: null, responseTimeMs: 1, error: 'ECONNREFUSED' });
      countWebhookResponse({ statusCode: null, responseTimeMs: 1, error: 'target address not allowed', refused: true });
    });
    expect(changed).toEqual({ 'class=2xx': 1, 'class=3xx': 1, 'class=5xx': 1, 'class=timeout': 1, 'class=network': 1, 'class=refused': 1 });
  });
});
