import 'reflect-metadata';
import { Reflector } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import { describe, expect, it, vi } from 'vitest';
import { handlerDeclaration, routeDeclaration } from './route-declarations.js';

const LABEL = Reflector.createDecorator<string>();

@LABEL('controller')
class Routes {
  @LABEL('handler') labelled() {}
  inherits() {}
}

@LABEL('other controller')
class OtherRoutes extends Routes {}

const contextFor = (controller: Function, method: 'labelled' | 'inherits') =>
  new ExecutionContextHost([], controller as never, (Routes.prototype as unknown as Record<string, Function>)[method]);

describe('route declarations', () => {
  it("answers as Reflector does: the handler's over the controller's, and the handler's own", () => {
    const reflector = new Reflector();
    expect(routeDeclaration(reflector, LABEL, contextFor(Routes, 'labelled'))).toBe('handler');
    expect(routeDeclaration(reflector, LABEL, contextFor(Routes, 'inherits'))).toBe('controller');
    expect(handlerDeclaration(reflector, LABEL, contextFor(Routes, 'inherits'))).toBeUndefined();
    // The same handler under a subclass controller takes that controller's declaration.
    expect(routeDeclaration(reflector, LABEL, contextFor(OtherRoutes, 'inherits'))).toBe('other controller');
    expect(routeDeclaration(reflector, LABEL, contextFor(Routes, 'inherits'))).toBe('controller');
  });

  it('reads the metadata once per route, not on every request', () => {
    const reflector = new Reflector();
    const reads = vi.spyOn(reflector, 'get');
    class Fresh {
      @LABEL('x') route() {}
    }
    const context = new ExecutionContextHost([], Fresh as never, Fresh.prototype.route);
    expect(routeDeclaration(reflector, LABEL, context)).toBe('x');
    expect(handlerDeclaration(reflector, LABEL, context)).toBe('x');
    const first = reads.mock.calls.length;
    expect(first).toBeGreaterThan(0);
    for (let i = 0; i < 5; i++) {
      expect(routeDeclaration(reflector, LABEL, context)).toBe('x');
      expect(handlerDeclaration(reflector, LABEL, context)).toBe('x');
    }
    expect(reads).toHaveBeenCalledTimes(first);
  });
});
