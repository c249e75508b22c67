import { counter, statusClass } from '../metrics/metric-factory.js';
import { ProviderSendError } from './providers/provider-connector.js';

/**
 * Provider calls of the sender by provider and class of answer: 2xx, 4xx, 5xx (1xx, 3xx when a provider
 * answers so), timeout, network. A send refused before any call (a missing credential, a template on a
 * channel without them) is not a provider call and is not counted.
 */
export const providerSends = counter('channel_provider_sends_total', 'Provider send calls by provider and status class', ['provider', 'class']);

/** Counts one provider call: accepted (`error` undefined) or refused. */
export function countProviderSend(provider: string, error?: unknown): void {
  if (error === undefined) return void providerSends.inc({ provider, class: '2xx' });
  if (!(error instanceof ProviderSendError)) return;
  const { httpStatus, transport } = error.details;
  if (httpStatus === undefined && transport === undefined) return;
  providerSends.inc({ provider, class: statusClass(httpStatus, transport === 'timeout') });
}
