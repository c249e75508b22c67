import { Inject, Injectable, Optional, type ExecutionContext, type Type } from '@nestjs/common';
import { ModuleRef, Reflector } from '@nestjs/core';
import { getOptionsToken, getStorageToken, ThrottlerGuard, type ThrottlerModuleOptions, type ThrottlerStorage } from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { handlerDeclaration, routeDeclaration } from '../common/reflection/route-declarations.js';
import { NO_RATE_LIMIT, RATE_LIMIT_CLASS, REQUEST_LIMIT_SOURCE, type RequestLimitSource } from './rate-limit.decorators.js';
import { RequestLimits } from './request-limits.service.js';

/**
 * The request throttler, after authentication (docs/API.md, "Rate limits"): @nestjs/throttler's guard with its
 * named throttlers, except that every limit of a request is checked and counted in one Redis
 * round trip (the package's guard asks the storage once per throttler), the limit of the
 * request's own resource included (`@CountsResourceLimit`: an api trigger's rate_limit). Tracked
 * per credential, per source address where there is none.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  private readonly sources = new Map<Type<RequestLimitSource>, RequestLimitSource>();

  constructor(
    @Inject(getOptionsToken()) options: ThrottlerModuleOptions,
    @Inject(getStorageToken()) storage: ThrottlerStorage,
    reflector: Reflector,
    private readonly limits: RequestLimits,
    @Optional() private readonly moduleRef?: ModuleRef,
  ) {
    super(options, storage, reflector);
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    if (!this.limits.enabled || context.getType() !== 'http') return true;
    const req = context.switchToHttp().getRequest<Request>();
    // The request reached the throttler: an error answered later is not counted again (ErrorEnvelopeFilter).
    RequestLimits.markConsidered(req);
    if (routeDeclaration(this.reflector, NO_RATE_LIMIT, context) !== undefined) return true;
    const res = context.switchToHttp().getResponse<Response>();
    if (req.principal) {
      const resource = handlerDeclaration(this.reflector, REQUEST_LIMIT_SOURCE, context);
      const own = resource ? await this.source(resource.source).limitFor(req, req.principal) : undefined;
      await this.limits.authenticated(req, res, req.principal, routeDeclaration(this.reflector, RATE_LIMIT_CLASS, context), own);
    } else await this.limits.anonymous(req, res);
    return true;
  }

  private source(type: Type<RequestLimitSource>): RequestLimitSource {
    const known = this.sources.get(type);
    if (known) return known;
    if (!this.moduleRef) throw new Error(`No ModuleRef to find ${type.name}`);
    const source = this.moduleRef.get(type, { strict: false }) as RequestLimitSource;
    this.sources.set(type, source);
    return source;
  }
}
