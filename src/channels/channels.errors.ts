import { DomainError } from '../common/errors/domain-error.js';

export class ChannelAccountNotFoundError extends DomainError {
  constructor() {
    super('CHANNEL_ACCOUNT_NOT_FOUND', 404, 'Channel account not found');
  }
}

/** A channel, provider, credential or setting the account cannot have; `field` names it. */
export class InvalidChannelAccountError extends DomainError {
  constructor(message: string, field: string) {
    super('INVALID_CHANNEL_ACCOUNT', 400, message, { field });
  }
}

/** A provider webhook without a valid signature (nothing was stored). */
export class ChannelSignatureError extends DomainError {
  constructor() {
    super('INVALID_SIGNATURE', 401, 'The request signature is missing or does not match');
  }
}

/** Meta's verification handshake with a wrong token or mode. */
export class ChannelVerificationError extends DomainError {
  constructor() {
    super('VERIFICATION_FAILED', 403, 'hub.mode must be subscribe and hub.verify_token must match the account');
  }
}

/** The provider's signature checked out but the body is not a JSON object. */
export class ChannelPayloadError extends DomainError {
  constructor() {
    super('INVALID_REQUEST', 400, 'The payload is not a JSON object');
  }
}

/** Stable codes of executions' channel failures (steps and messages). */
export const ChannelErrorCodes = {
  windowClosed: 'CHANNEL_WINDOW_CLOSED',
  accountDeleted: 'CHANNEL_ACCOUNT_DELETED',
  sendFailed: 'CHANNEL_SEND_FAILED',
} as const;
