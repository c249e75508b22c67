import { expect } from 'vitest';
import { ProviderSendError } from '../../src/channels/providers/provider-connector.js';

/** A send's rejection, checked to be a ProviderSendError that carries `secret` nowhere (message or details). */
export async function sendFailure(sending: Promise<unknown>, secret: string): Promise<ProviderSendError> {
  const error = await sending.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderSendError);
  const sendError = error as ProviderSendError;
  expect(sendError.message).not.toContain(secret);
  expect(JSON.stringify(sendError.details)).not.toContain(secret);
  return sendError;
}
