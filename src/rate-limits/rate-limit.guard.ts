import { Inject, Injectable, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { getOptionsToken, getStorageToken, ThrottlerGuard, type ThrottlerModuleOptions, type ThrottlerStorage } from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { NO_RATE_LIMIT, RATE_LIMIT_CLASS } from './rate-limit.decorators.js';
import { RequestLimits } from './request-limits.service.js';

/**
 * The request throttler, after authentication (DESIGN §10): @nestjs/throttler's guard with its
 * named throttlers, except that every limit of a request is checked and counted in one Redis
 * round trip (the package's guard asks the storage once per throttler). Tracked per credential,
 * per source address where there is none.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  constructor(
    @Inject(getOptionsToken()) options: ThrottlerModuleOptions,
    @Inject(getStorageToken()) storage: ThrottlerStorage,
    reflector: Reflector,
    private readonly limits: RequestLimits,
  ) {
    super(options, storage, reflector);
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    if (!this.limits.enabled || context.getType() !== 'http') return true;
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride(NO_RATE_LIMIT, targets) !== undefined) return true;
    const req = context.switchToHttp().getRequest<Request>();
    const res = context.switchToHttp().getResponse<Response>();
    if (req.principal) await this.limits.authenticated(req, res, req.principal, this.reflector.getAllAndOverride(RATE_LIMIT_CLASS, targets));
    else await this.limits.anonymous(req, res);
    return true;
  }
}
