import type { ExecutionContext } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import type { ReflectableDecorator } from '@nestjs/core/services/reflector.service.js';

interface Remembered {
  controller: Function;
  /** Handler over controller (Reflector.getAllAndOverride). */
  overriding: Map<unknown, unknown>;
  /** The handler's own (Reflector.get on the handler). */
  own: Map<unknown, unknown>;
}

/** Per route handler. Declarations are decorators: fixed once the classes are loaded. */
const remembered = new WeakMap<Function, Remembered>();

function entryFor(context: ExecutionContext): [Function, Function, Remembered] {
  const handler = context.getHandler();
  const controller = context.getClass();
  let entry = remembered.get(handler);
  // A handler inherited by two controllers is remembered for the last one asked about.
  if (entry?.controller !== controller) {
    entry = { controller, overriding: new Map(), own: new Map() };
    remembered.set(handler, entry);
  }
  return [handler, controller, entry];
}

/**
 * A route's declaration, the handler's over the controller's (as Reflector.getAllAndOverride), read
 * once per route. The three global guards asked for six declarations on every request, each a pair
 * of reflect-metadata lookups walking the handler's and the class's prototype chains plus an array.
 */
export function routeDeclaration<T>(reflector: Reflector, key: ReflectableDecorator<T>, context: ExecutionContext): T | undefined {
  const [handler, controller, entry] = entryFor(context);
  if (entry.overriding.has(key)) return entry.overriding.get(key) as T | undefined;
  const value = reflector.getAllAndOverride(key, [handler, controller]) as T | undefined;
  entry.overriding.set(key, value);
  return value;
}

/** The handler's own declaration (Reflector.get on the handler), read once per route. */
export function handlerDeclaration<T>(reflector: Reflector, key: ReflectableDecorator<T>, context: ExecutionContext): T | undefined {
  const [handler, , entry] = entryFor(context);
  if (entry.own.has(key)) return entry.own.get(key) as T | undefined;
  const value = reflector.get(key, handler) as T | undefined;
  entry.own.set(key, value);
  return value;
}
