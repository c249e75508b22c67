import { DomainError } from '../../common/errors/domain-error.js';

/** A call request without a valid X-Twilio-Signature: nothing was started or stored. */
export class VoiceSignatureError extends DomainError {
  constructor() {
    super('INVALID_SIGNATURE', 403, 'The X-Twilio-Signature header is missing or does not match');
  }
}

/** A signed call request without what every call request carries (CallSid, From) or with a bad turn. */
export class VoiceRequestError extends DomainError {
  constructor(message: string, field: string) {
    super('INVALID_REQUEST', 400, message, { field });
  }
}
