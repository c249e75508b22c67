/**
 * The Idempotency-Key headers (src/idempotency), here so that the OpenAPI post-processor can
 * document them without importing a module: 1 to 255 printable ASCII characters, as Stripe takes.
 */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
/** Added to a replayed answer. */
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
/** Space to tilde. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;
