/**
 * Channels whose messages are not sent to a provider but spoken in the answer to the provider's own
 * request (a phone call: the TwiML of the call's next turn, built by the channels module). Their
 * messages are stored without a send (no `message_deliveries` row, no reply window), and each committed
 * run of their executions is announced on ANSWERED_RUNS_CHANNEL so that the process holding the call's
 * request answers it at once.
 */
export const ANSWERED_CHANNELS: ReadonlySet<string> = new Set(['voice']);

/** The Redis pub/sub channel (under REDIS_KEY_PREFIX) carrying the id of each such execution after a commit. */
export const ANSWERED_RUNS_CHANNEL = 'voice-runs';
