import { Logger } from '@nestjs/common';
import { Writable } from 'node:stream';
import { pinoHttp } from 'pino-http';
import { afterEach, describe, expect, it } from 'vitest';
import { pinoOptions } from '../http/logger.options.js';
import { AppLogger } from './app-logger.js';

function capture(level: 'info' | 'warn' = 'info') {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()));
      done();
    },
  });
  const logger = new AppLogger({ logger: pinoHttp(pinoOptions({ logLevel: level }), sink).logger });
  return { logger, lines };
}

describe('AppLogger (Nest LoggerService over pino)', () => {
  afterEach(() => Logger.overrideLogger(false));

  it("writes Nest's Logger calls as JSON lines with the context", () => {
    const { logger, lines } = capture();
    Logger.overrideLogger(logger);
    new Logger('Main').log('listening on http://localhost:3000');
    new Logger('Sweep').warn({ requeued: 3 });
    expect(lines).toMatchObject([
      { level: 30, context: 'Main', msg: 'listening on http://localhost:3000' },
      { level: 40, context: 'Sweep', requeued: 3 },
    ]);
  });

  it("turns an exception handler's error(message, stack) into err, and an Error into err", () => {
    const { logger, lines } = capture();
    const error = new Error('boom');
    logger.error('Unhandled', error.stack, 'ExceptionsHandler');
    logger.error(error, 'Worker');
    expect(lines[0]).toMatchObject({ level: 50, context: 'ExceptionsHandler', err: { message: 'Unhandled', stack: error.stack } });
    expect(lines[1]).toMatchObject({ level: 50, context: 'Worker', err: { message: 'boom' } });
  });

  it('honours the level', () => {
    const { logger, lines } = capture('warn');
    logger.log('quiet');
    logger.debug('quieter');
    logger.warn('loud');
    expect(lines.map((l) => l.msg)).toEqual(['loud']);
  });
});
