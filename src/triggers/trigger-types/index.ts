import type { Trigger, TriggerType } from '../entities/trigger.entity.js';
import { apiTriggerType, type ApiTriggerConfiguration } from './api.trigger-type.js';
import { messageTriggerType, type MessageTriggerConfiguration } from './message.trigger-type.js';
import { scheduleTriggerType, type ScheduleTriggerConfiguration } from './schedule.trigger-type.js';
import { ConfigReader, isPlainObject, type ParsedConfiguration, type PresentContext, type TriggerTypeDefinition } from './trigger-type.js';
import { webhookTriggerType, type WebhookTriggerConfiguration } from './webhook.trigger-type.js';
import { InvalidTriggerConfigError } from '../triggers.errors.js';

export type { ApiTriggerConfiguration, MessageTriggerConfiguration, ScheduleTriggerConfiguration, WebhookTriggerConfiguration };

/** The stored configuration of each trigger type. */
export interface TriggerConfigurationMap {
  message: MessageTriggerConfiguration;
  schedule: ScheduleTriggerConfiguration;
  webhook: WebhookTriggerConfiguration;
  api: ApiTriggerConfiguration;
}

export type TriggerConfiguration = TriggerConfigurationMap[TriggerType];

type Definitions = { [K in TriggerType]: TriggerTypeDefinition<TriggerConfigurationMap[K]> };

/** Every trigger type, by name. */
export const TRIGGER_TYPE_DEFINITIONS: Readonly<Definitions> = Object.freeze({
  message: messageTriggerType,
  schedule: scheduleTriggerType,
  webhook: webhookTriggerType,
  api: apiTriggerType,
});

/**
 * Checks a client's configuration for a trigger type and returns it normalised, with any
 * secret split off. Faults are 400 INVALID_TRIGGER_CONFIG (422 INVALID_CRON_EXPRESSION for a
 * cron expression that does not parse) with `field` pointing at the value.
 */
export function parseTriggerConfiguration<T extends TriggerType>(
  type: T,
  input: unknown,
  path = 'configuration',
): ParsedConfiguration<TriggerConfigurationMap[T]> {
  const definition = TRIGGER_TYPE_DEFINITIONS[type] as TriggerTypeDefinition<TriggerConfigurationMap[T]>;
  if (!isPlainObject(input)) throw new InvalidTriggerConfigError('configuration must be an object', path);
  for (const key of Object.keys(input)) {
    if (definition.readOnlyKeys.includes(key)) {
      throw new InvalidTriggerConfigError(`${key} is set by the service and cannot be sent`, `${path}.${key}`);
    }
    if (!definition.keys.includes(key)) {
      throw new InvalidTriggerConfigError(`A ${type} trigger's configuration has no property ${key}`, `${path}.${key}`);
    }
  }
  return definition.parse(input, new ConfigReader(input, path));
}

/** A trigger's configuration as clients see it (service-filled keys added, secret only when given). */
export function presentTriggerConfiguration(trigger: Pick<Trigger, 'type' | 'configuration'>, context: PresentContext): Record<string, unknown> {
  const definition = TRIGGER_TYPE_DEFINITIONS[trigger.type] as TriggerTypeDefinition<object>;
  return definition.present(trigger.configuration, context);
}
