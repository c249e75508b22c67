import type { INestApplication } from '@nestjs/common';
import { HTTP_CODE_METADATA, METHOD_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RequestMethod } from '@nestjs/common/enums/request-method.enum.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import { documentedMethodsOf } from './schema-markers.js';

/** What the post-processor needs to know about one controller method, beyond what @nestjs/swagger wrote. */
export interface RouteFacts {
  isPublic: boolean;
  /** Under the request throttler (429 and the rate-limit headers); false for routes exempt from it. */
  rateLimited?: boolean;
  /** The status Nest answers on success: @HttpCode, else 201 for POST and 200 for the rest. */
  successStatus: number;
  /** The classes of its @Query() and @Body() arguments, when they are DTO classes. */
  query?: Function;
  body?: Function;
  /** For an @All route, the methods to document (ApiMethods). */
  methods?: string[];
}

/** Whether a controller method needs no credential, as the authentication guard reads it. */
export type PublicCheck = (handler: Function, controller: Function) => boolean;
/** Whether the request throttler limits a controller method, as the rate-limit guard reads it. */
export type RateLimitCheck = (handler: Function, controller: Function) => boolean;

interface ControllerWrapper {
  metatype?: Function | null;
}

/**
 * Every route's facts, keyed as @nestjs/swagger's default operationId (`Controller_method`), read from
 * the same metadata Nest routes with.
 */
export function collectRouteFacts(app: INestApplication, isPublic: PublicCheck, isRateLimited?: RateLimitCheck): Map<string, RouteFacts> {
  // The container is not part of the public interface; @nestjs/swagger reads it the same way.
  const container = (app as unknown as { container: { getModules(): Map<string, { controllers: Map<unknown, ControllerWrapper> }> } }).container;
  const facts = new Map<string, RouteFacts>();
  for (const module of container.getModules().values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype;
      if (typeof controller !== 'function') continue;
      for (const key of methodNames(controller.prototype as object)) {
        const handler = (controller.prototype as Record<string, unknown>)[key] as Function;
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        if (method === undefined) continue;
        const code = Reflect.getMetadata(HTTP_CODE_METADATA, handler) as number | undefined;
        const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, key) ?? {}) as Record<string, { index: number; data?: unknown }>;
        const types = (Reflect.getMetadata('design:paramtypes', controller.prototype as object, key) ?? []) as Function[];
        const argType = (kind: RouteParamtypes) => {
          const arg = Object.entries(args).find(([k, v]) => k.split(':')[0] === String(kind) && v.data === undefined);
          const type = arg ? types[arg[1].index] : undefined;
          return type && type !== Object && type !== String ? type : undefined;
        };
        facts.set(`${controller.name}_${key}`, {
          isPublic: isPublic(handler, controller),
          rateLimited: isRateLimited?.(handler, controller) ?? false,
          successStatus: code ?? (method === RequestMethod.POST ? 201 : 200),
          query: argType(RouteParamtypes.QUERY),
          body: argType(RouteParamtypes.BODY),
          methods: documentedMethodsOf(handler),
        });
      }
    }
  }
  return facts;
}

function methodNames(prototype: object): string[] {
  const names = new Set<string>();
  for (let p: object | null = prototype; p && p !== Object.prototype; p = Object.getPrototypeOf(p) as object | null) {
    for (const name of Object.getOwnPropertyNames(p)) if (name !== 'constructor') names.add(name);
  }
  return [...names].filter((name) => typeof (prototype as Record<string, unknown>)[name] === 'function');
}
