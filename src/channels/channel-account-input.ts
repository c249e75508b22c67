import { randomBytes } from 'node:crypto';
import { CHANNELS } from '../common/channels.js';
import { isUuid } from '../common/ids/uuid.js';
import { InvalidChannelAccountError } from './channels.errors.js';
import type { ChannelAccountSettings } from './entities/channel-account.entity.js';
import { PROVIDER_NAMES, providerDefinition, type ProviderDefinition } from './providers/provider-definitions.js';

/**
 * The field rules of a channel account, beyond the DTOs' shapes: which provider serves which channel,
 * each provider's credentials, the settings. Every refusal is 400 INVALID_CHANNEL_ACCOUNT naming the
 * field; a credential's value never appears in a message.
 */

export function parseChannelAndProvider(channel: unknown, provider: unknown): { channel: string; provider: string; definition: ProviderDefinition } {
  if (typeof channel !== 'string' || !(CHANNELS as readonly string[]).includes(channel)) {
    throw new InvalidChannelAccountError(`channel must be one of ${CHANNELS.join(', ')}`, 'channel');
  }
  const definition = typeof provider === 'string' ? providerDefinition(provider) : undefined;
  if (!definition) throw new InvalidChannelAccountError(`provider must be one of ${PROVIDER_NAMES.join(', ')}`, 'provider');
  if (definition.channel !== channel) {
    const fits = PROVIDER_NAMES.filter((p) => providerDefinition(p)?.channel === channel);
    throw new InvalidChannelAccountError(`provider ${String(provider)} does not serve ${channel}; use ${fits.join(' or ')}`, 'provider');
  }
  return { channel, provider: provider as string, definition };
}

/**
 * Credentials as stored: on create every field of the provider is required; on update (`current` given)
 * the fields sent replace those stored and the rest are kept. Unknown fields are refused.
 */
export function parseCredentials(definition: ProviderDefinition, input: unknown, current?: Record<string, string>): Record<string, string> {
  if (input === undefined && current) return current;
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new InvalidChannelAccountError('credentials must be an object', 'credentials');
  }
  const given = input as Record<string, unknown>;
  for (const name of Object.keys(given)) {
    if (!Object.hasOwn(definition.credentials, name)) {
      throw new InvalidChannelAccountError(`credentials.${name} is not a credential of this provider (expected ${Object.keys(definition.credentials).join(', ')})`, `credentials.${name}`);
    }
  }
  const result: Record<string, string> = {};
  for (const [name, rule] of Object.entries(definition.credentials)) {
    const value = Object.hasOwn(given, name) ? given[name] : current?.[name];
    if (value === undefined || value === null || value === '') throw new InvalidChannelAccountError(`credentials.${name} is required`, `credentials.${name}`);
    if (typeof value !== 'string' || !rule.pattern.test(value)) {
      throw new InvalidChannelAccountError(`credentials.${name} must be ${rule.expected}`, `credentials.${name}`);
    }
    result[name] = value;
  }
  return result;
}

/** A given verify token, or one generated (Meta providers only). */
export function parseVerifyToken(definition: ProviderDefinition, input: unknown, current: string | null): string | null {
  if (!definition.meta) {
    if (input !== undefined) throw new InvalidChannelAccountError('verify_token is for Meta providers (whatsapp_cloud, instagram) only', 'verify_token');
    return null;
  }
  if (input === undefined) return current ?? randomBytes(24).toString('base64url');
  if (typeof input !== 'string' || !/^[\x21-\x7e]{16,128}$/.test(input)) {
    throw new InvalidChannelAccountError('verify_token must be 16 to 128 printable characters without spaces', 'verify_token');
  }
  return input;
}

/** The longest burst window (settings.burst_window_ms, CONVERSATION_BURST_WINDOW_MS): ten seconds. */
export const MAX_BURST_WINDOW_MS = 10_000;

/** A Twilio `<Say>` voice: `alice`, `man`, `woman`, or a named one such as `Polly.Joanna` or `Google.en-US-Standard-C`. */
const VOICE_NAME = /^[A-Za-z][A-Za-z0-9._-]{0,63}$/;
/** A language tag as Twilio takes it (`en-US`, `fr-FR`, `pt-BR`, `cmn-Hans-CN`). */
const LANGUAGE_TAG = /^[a-zA-Z]{2,3}(-[A-Za-z0-9]{2,8}){0,2}$/;

/**
 * Settings: an object of known keys only. `voice` and `language` (how a call speaks and hears, TwiML
 * `<Say voice language>` and `<Gather language>`) are for voice accounts; unset, Twilio's defaults apply.
 */
export function parseSettings(input: unknown, current: ChannelAccountSettings = {}, channel?: string): ChannelAccountSettings {
  if (input === undefined) return current;
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new InvalidChannelAccountError('settings must be an object', 'settings');
  const given = input as Record<string, unknown>;
  const settings: ChannelAccountSettings = {};
  for (const [key, value] of Object.entries(given)) {
    if (key === 'workflow_id') {
      if (value === null) continue;
      if (typeof value !== 'string' || !isUuid(value)) throw new InvalidChannelAccountError('settings.workflow_id must be a workflow id (UUID) or null', 'settings.workflow_id');
      settings.workflow_id = value;
    } else if (key === 'burst_window_ms') {
      if (channel === 'voice') throw new InvalidChannelAccountError('settings.burst_window_ms is for message accounts (whatsapp, instagram) only', 'settings.burst_window_ms');
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_BURST_WINDOW_MS) {
        throw new InvalidChannelAccountError(`settings.burst_window_ms must be an integer from 0 to ${MAX_BURST_WINDOW_MS} (milliseconds; 0: off)`, 'settings.burst_window_ms');
      }
      if (value > 0) settings.burst_window_ms = value;
    } else if (key === 'voice' || key === 'language') {
      if (channel !== 'voice') throw new InvalidChannelAccountError(`settings.${key} is for voice accounts only`, `settings.${key}`);
      if (value === null) continue;
      if (key === 'voice') {
        if (typeof value !== 'string' || !VOICE_NAME.test(value)) throw new InvalidChannelAccountError('settings.voice must be a Twilio voice name such as alice or Polly.Joanna, or null', 'settings.voice');
        settings.voice = value;
      } else {
        if (typeof value !== 'string' || !LANGUAGE_TAG.test(value)) throw new InvalidChannelAccountError('settings.language must be a language tag such as en-US, or null', 'settings.language');
        settings.language = value;
      }
    } else {
      throw new InvalidChannelAccountError(`settings.${key} is not a setting (known: workflow_id, ${channel === 'voice' ? 'voice, language' : 'burst_window_ms'})`, `settings.${key}`);
    }
  }
  return settings;
}
