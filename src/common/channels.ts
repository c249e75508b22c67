/**
 * Messaging channels the service knows. The execution engine registers one adapter per
 * channel; a new channel is added here and in that registry.
 */
export const CHANNELS = ['whatsapp', 'instagram', 'voice'] as const;
export type Channel = (typeof CHANNELS)[number];
