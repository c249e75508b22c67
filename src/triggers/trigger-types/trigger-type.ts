import type { TriggerType } from '../entities/trigger.entity.js';
import { InvalidTriggerConfigError } from '../triggers.errors.js';
import { codePointLength } from '../../common/validation/text-length.decorator.js';

/** What a type's parser hands back: the configuration to store, and the secret kept apart from it. */
export interface ParsedConfiguration<C> {
  configuration: C;
  /** A secret to store encrypted: a string sets it, null clears it, undefined keeps the stored one. */
  secret?: string | null;
}

/** What a type needs to shape its configuration for a response. */
export interface PresentContext {
  id: string;
  publicBaseUrl: string;
  /** The decrypted secret, or undefined where secrets are not shown (list items). */
  secret?: string | null;
}

/**
 * One trigger type's configuration rules. Adding a trigger type is one file in this folder
 * implementing this, plus its line in index.ts; the firing paths keep their behaviour elsewhere.
 */
export interface TriggerTypeDefinition<C extends object = object> {
  readonly type: TriggerType;
  /** Keys a client may send. */
  readonly keys: readonly string[];
  /** Keys the service fills in and shows, which a client may not send. */
  readonly readOnlyKeys: readonly string[];
  /** Checks a client's configuration (already known to be an object of allowed keys) and normalises it. */
  parse(input: Record<string, unknown>, reader: ConfigReader): ParsedConfiguration<C>;
  /** The configuration as clients see it. */
  present(configuration: C, context: PresentContext): Record<string, unknown>;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads one configuration object, turning every fault into INVALID_TRIGGER_CONFIG with a dot-path `field`. */
export class ConfigReader {
  constructor(
    private readonly input: Record<string, unknown>,
    readonly path: string,
  ) {}

  field(key: string): string {
    return `${this.path}.${key}`;
  }

  fail(key: string, message: string): never {
    throw new InvalidTriggerConfigError(message, this.field(key));
  }

  /** The value, or undefined when absent or null (null means "not set" for optional keys). */
  optional(key: string): unknown {
    const value = this.input[key];
    return value === null ? undefined : value;
  }

  required(key: string): unknown {
    const value = this.optional(key);
    if (value === undefined) this.fail(key, `${key} is required`);
    return value;
  }

  boolean(key: string, fallback: boolean): boolean {
    const value = this.optional(key);
    if (value === undefined) return fallback;
    if (typeof value !== 'boolean') this.fail(key, `${key} must be a boolean`);
    return value;
  }

  /** A string of 1..maxLength characters, not only whitespace; undefined when absent. */
  string(key: string, maxLength: number): string | undefined {
    const value = this.optional(key);
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || value.trim() === '' || codePointLength(value) > maxLength) {
      this.fail(key, `${key} must be a non-empty string of at most ${maxLength} characters`);
    }
    return value;
  }

  oneOf<T extends string>(key: string, allowed: readonly T[], fallback: T, normalise: (s: string) => string = (s) => s): T {
    const value = this.optional(key);
    if (value === undefined) return fallback;
    const normalised = typeof value === 'string' ? normalise(value) : value;
    if (!(allowed as readonly unknown[]).includes(normalised)) this.fail(key, `${key} must be one of ${allowed.join(', ')}`);
    return normalised as T;
  }

  integer(key: string, min: number, max: number, fallback: number): number {
    const value = this.optional(key);
    if (value === undefined) return fallback;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      this.fail(key, `${key} must be an integer from ${min} to ${max}`);
    }
    return value;
  }
}
