import { DomainError } from '../common/errors/domain-error.js';

export class CustomerNotFoundError extends DomainError {
  constructor() {
    super('CUSTOMER_NOT_FOUND', 404, 'Customer not found');
  }
}

/** An agent message to a customer who never wrote through a channel account, and none was named. */
export class NoChannelAccountError extends DomainError {
  constructor() {
    super('NO_CHANNEL_ACCOUNT', 409, 'The customer has written through no channel account: name one with channel_account_id', { field: 'channel_account_id' });
  }
}

/** A channel account that cannot carry an agent's message (no provider sends through it). */
export class ChannelAccountCannotSendError extends DomainError {
  constructor(provider: string) {
    super('INVALID_CHANNEL_ACCOUNT', 400, `Messages cannot be sent through a ${provider} account`, { field: 'channel_account_id' });
  }
}

/** An agent message outside the provider's window since the customer's last message on the account (nothing was queued). */
export class ChannelWindowClosedError extends DomainError {
  constructor(message: string) {
    super('CHANNEL_WINDOW_CLOSED', 409, message);
  }
}
