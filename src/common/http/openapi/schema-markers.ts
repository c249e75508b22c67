import type { Type } from '@nestjs/common';

/**
 * Class decorators for documentation-only schemas that class-validator does not describe (shapes a
 * hand-written checker such as the trigger-type registry validates). The OpenAPI post-processor reads
 * them by schema name, which @nestjs/swagger takes from the class name.
 */

const closed = new Set<string>();
const discriminated = new Map<string, Discrimination>();
const documentedMethods = new Map<Function, string[]>();

export interface Discrimination {
  /** The property whose value selects the branch, e.g. `type`. */
  property: string;
  /** Per value of that property, the schemas its other properties take (e.g. `{configuration: X}`). */
  branches: Record<string, Record<string, Type<unknown>>>;
}

/** The schema refuses properties it does not list (`additionalProperties: false`). */
export function ApiClosedSchema(): ClassDecorator {
  return (target) => {
    closed.add(target.name);
  };
}

/**
 * The schema is a `oneOf` of one branch per value of `property`, with a `discriminator`: each branch is
 * the class's schema with `property` fixed to its value and the listed properties replaced.
 */
export function ApiDiscriminated(discrimination: Discrimination): ClassDecorator {
  return (target) => {
    discriminated.set(target.name, discrimination);
  };
}

/**
 * Of the methods an `@All` route answers, only these are documented (one operation each); the others
 * exist only to answer 405.
 */
export function ApiMethods(...methods: readonly string[]): MethodDecorator {
  return (_target, _key, descriptor) => {
    documentedMethods.set(descriptor.value as Function, methods.map((m) => m.toLowerCase()));
  };
}

export function isClosedSchema(name: string): boolean {
  return closed.has(name);
}

export function discriminationOf(name: string): Discrimination | undefined {
  return discriminated.get(name);
}

export function documentedMethodsOf(handler: Function): string[] | undefined {
  return documentedMethods.get(handler);
}
