import { describe, expect, it } from 'vitest';
import { DomainError } from '../../common/errors/domain-error.js';
import type { TriggerType } from '../entities/trigger.entity.js';
import { parseTriggerConfiguration, presentTriggerConfiguration } from './index.js';
import { ianaTimeZone, isoInstant, scheduleRepeat } from './schedule.trigger-type.js';

function errorOf(type: TriggerType, configuration: unknown) {
  try {
    parseTriggerConfiguration(type, configuration);
  } catch (error) {
    if (error instanceof DomainError) return { status: error.status, ...error.toBody() };
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(configuration)} to be refused`);
}

const invalid = (field: string) => ({ status: 400, code: 'INVALID_TRIGGER_CONFIG', field });
const badCron = { status: 422, code: 'INVALID_CRON_EXPRESSION', field: 'configuration.cron_expression' };
const context = { id: 'b1d4b2a6-1c3e-4a57-9a59-1f2d3c4b5a69', publicBaseUrl: 'https://api.example.com' };

describe('trigger configuration registry', () => {
  it('refuses a non-object configuration', () => {
    for (const value of [null, [], 'x', 3]) {
      expect(errorOf('message', value)).toMatchObject(invalid('configuration'));
    }
  });

  it('refuses unknown keys with their path, for every type', () => {
    expect(errorOf('message', { keywords: ['a'], colour: 'red' })).toMatchObject(invalid('configuration.colour'));
    expect(errorOf('schedule', { cron_expression: '* * * * *', keywords: ['a'] })).toMatchObject(invalid('configuration.keywords'));
    expect(errorOf('webhook', { cron_expression: '* * * * *' })).toMatchObject(invalid('configuration.cron_expression'));
    expect(errorOf('api', { method: 'POST' })).toMatchObject(invalid('configuration.method'));
  });

  it('refuses the read-only url and endpoint', () => {
    expect(errorOf('webhook', { url: 'https://x.example/hook' })).toMatchObject(invalid('configuration.url'));
    expect(errorOf('api', { endpoint: '/v1/whatever' })).toMatchObject(invalid('configuration.endpoint'));
  });
});

describe('message trigger type', () => {
  it('fills defaults and normalises keywords', () => {
    expect(parseTriggerConfiguration('message', { keywords: [' help ', 'support', 'help'] })).toEqual({
      configuration: { keywords: ['help', 'support'], case_sensitive: false, exact_match: false, language: null, channel: null },
    });
    expect(
      parseTriggerConfiguration('message', { keywords: ['Hi'], case_sensitive: true, exact_match: true, language: 'pt-BR', channel: 'whatsapp' })
        .configuration,
    ).toEqual({ keywords: ['Hi'], case_sensitive: true, exact_match: true, language: 'pt-BR', channel: 'whatsapp' });
    expect(parseTriggerConfiguration('message', { keywords: ['x'], language: null, channel: null }).configuration).toMatchObject({ language: null, channel: null });
  });

  it('refuses missing, empty and malformed keywords with field configuration.keywords', () => {
    expect(errorOf('message', {})).toMatchObject(invalid('configuration.keywords'));
    expect(errorOf('message', { keywords: [] })).toMatchObject(invalid('configuration.keywords'));
    expect(errorOf('message', { keywords: 'help' })).toMatchObject(invalid('configuration.keywords'));
    expect(errorOf('message', { keywords: Array.from({ length: 51 }, (_, i) => `k${i}`) })).toMatchObject(invalid('configuration.keywords'));
    expect(errorOf('message', { keywords: ['ok', ''] })).toMatchObject(invalid('configuration.keywords[1]'));
    expect(errorOf('message', { keywords: ['   '] })).toMatchObject(invalid('configuration.keywords[0]'));
    expect(errorOf('message', { keywords: [42] })).toMatchObject(invalid('configuration.keywords[0]'));
    expect(errorOf('message', { keywords: ['x'.repeat(201)] })).toMatchObject(invalid('configuration.keywords[0]'));
    expect(parseTriggerConfiguration('message', { keywords: ['x'.repeat(200)] }).configuration.keywords[0]).toHaveLength(200);
  });

  it('counts keyword lengths in code points, as the document does', () => {
    // 200 astral characters are 400 UTF-16 units: within the documented maxLength of 200.
    expect(parseTriggerConfiguration('message', { keywords: ['😀'.repeat(200)] }).configuration.keywords[0]).toBe('😀'.repeat(200));
    expect(errorOf('message', { keywords: ['😀'.repeat(201)] })).toMatchObject(invalid('configuration.keywords[0]'));
  });

  it('checks booleans, language and channel', () => {
    expect(errorOf('message', { keywords: ['a'], case_sensitive: 'yes' })).toMatchObject(invalid('configuration.case_sensitive'));
    expect(errorOf('message', { keywords: ['a'], exact_match: 1 })).toMatchObject(invalid('configuration.exact_match'));
    for (const language of ['english', 'EN', 'e', 'en_US', 'en-', 7]) {
      expect(errorOf('message', { keywords: ['a'], language })).toMatchObject(invalid('configuration.language'));
    }
    for (const language of ['en', 'fil', 'zh-Hant-TW', 'es-419']) {
      expect(parseTriggerConfiguration('message', { keywords: ['a'], language }).configuration.language).toBe(language);
    }
    expect(errorOf('message', { keywords: ['a'], channel: 'sms' })).toMatchObject(invalid('configuration.channel'));
  });
});

describe('schedule trigger type', () => {
  it('normalises the expression and defaults the zone to UTC', () => {
    expect(parseTriggerConfiguration('schedule', { cron_expression: '  0   9 * * MON-FRI ' }).configuration).toEqual({
      cron_expression: '0 9 * * MON-FRI',
      timezone: 'UTC',
      start_date: null,
      end_date: null,
    });
    expect(parseTriggerConfiguration('schedule', { cron_expression: '@Daily', timezone: 'europe/paris' }).configuration).toMatchObject({
      cron_expression: '@daily',
      timezone: 'Europe/Paris',
    });
  });

  it('answers 422 INVALID_CRON_EXPRESSION for expressions the parser refuses', () => {
    for (const cron of ['61 * * * *', 'not a cron', '* * *', '* * * * * *', '', '   ', '0 0 30 2 *', '*/0 * * * *', '0 24 * * *', '@annually']) {
      expect(errorOf('schedule', { cron_expression: cron }), cron).toMatchObject(badCron);
    }
    expect(errorOf('schedule', { cron_expression: '61 * * * *' }).details).toMatch(/61/);
  });

  it('answers 400 for a missing or non-string expression', () => {
    expect(errorOf('schedule', {})).toMatchObject(invalid('configuration.cron_expression'));
    expect(errorOf('schedule', { cron_expression: 5 })).toMatchObject(invalid('configuration.cron_expression'));
  });

  it('accepts IANA zones only', () => {
    for (const timezone of ['Mars/Olympus', '+05:00', 'Z', '', 'Europe/../Paris', 42]) {
      expect(errorOf('schedule', { cron_expression: '* * * * *', timezone }), String(timezone)).toMatchObject(invalid('configuration.timezone'));
    }
    expect(ianaTimeZone('UTC')).toBe('UTC');
    expect(ianaTimeZone('utc')).toBe('UTC');
    expect(ianaTimeZone('America/New_York')).toBe('America/New_York');
    expect(ianaTimeZone('America/Argentina/Buenos_Aires')).toBe('America/Argentina/Buenos_Aires');
    expect(ianaTimeZone('Etc/GMT+5')).toBe('Etc/GMT+5');
  });

  it('reads start and end dates as UTC instants, end after start', () => {
    expect(
      parseTriggerConfiguration('schedule', { cron_expression: '* * * * *', start_date: '2030-01-01', end_date: '2030-06-30T18:00:00+02:00' }).configuration,
    ).toMatchObject({ start_date: '2030-01-01T00:00:00.000Z', end_date: '2030-06-30T16:00:00.000Z' });
    expect(errorOf('schedule', { cron_expression: '* * * * *', start_date: '2030-02-01', end_date: '2030-01-01' })).toMatchObject(
      invalid('configuration.end_date'),
    );
    expect(errorOf('schedule', { cron_expression: '* * * * *', start_date: '2030-01-01T00:00:00Z', end_date: '2030-01-01T00:00:00Z' })).toMatchObject(
      invalid('configuration.end_date'),
    );
    for (const date of ['tomorrow', '2030-02-30', '2030-13-01', '2030-01-01T10:00', '2030-01-01T25:00:00Z', 1735689600000]) {
      expect(errorOf('schedule', { cron_expression: '* * * * *', start_date: date }), String(date)).toMatchObject(invalid('configuration.start_date'));
    }
    expect(isoInstant('2030-01-01T10:00Z')).toBe('2030-01-01T10:00:00.000Z');
  });

  it('gives the Bull repeat options', () => {
    const { configuration } = parseTriggerConfiguration('schedule', { cron_expression: '*/5 * * * *', timezone: 'Asia/Tokyo', end_date: '2031-01-01' });
    expect(scheduleRepeat(configuration)).toEqual({ cron: '*/5 * * * *', tz: 'Asia/Tokyo', endDate: '2031-01-01T00:00:00.000Z' });
  });
});

describe('webhook trigger type', () => {
  it('defaults the method, lower-cases header names and splits the secret off', () => {
    expect(parseTriggerConfiguration('webhook', {})).toEqual({ configuration: { method: 'POST', headers: {} }, secret: undefined });
    expect(
      parseTriggerConfiguration('webhook', { method: 'put', headers: { 'X-Source': 'crm' }, secret: 's'.repeat(16) }),
    ).toEqual({ configuration: { method: 'PUT', headers: { 'x-source': 'crm' } }, secret: 's'.repeat(16) });
    expect(parseTriggerConfiguration('webhook', { secret: null }).secret).toBeNull();
  });

  it('refuses bad methods, headers and secrets', () => {
    for (const method of ['DELETE', 'PATCH', 'post-it', 3]) {
      expect(errorOf('webhook', { method }), String(method)).toMatchObject(invalid('configuration.method'));
    }
    expect(errorOf('webhook', { headers: ['x'] })).toMatchObject(invalid('configuration.headers'));
    expect(errorOf('webhook', { headers: { 'Bad Name': 'x' } })).toMatchObject(invalid('configuration.headers.Bad Name'));
    expect(errorOf('webhook', { headers: { 'X-Id': 5 } })).toMatchObject(invalid('configuration.headers.X-Id'));
    expect(errorOf('webhook', { headers: { 'X-Id': 'a\r\nb' } })).toMatchObject(invalid('configuration.headers.X-Id'));
    expect(errorOf('webhook', { headers: { 'X-Id': 'a', 'x-id': 'b' } })).toMatchObject(invalid('configuration.headers.x-id'));
    expect(errorOf('webhook', { secret: 'short' })).toMatchObject(invalid('configuration.secret'));
    expect(errorOf('webhook', { secret: 'x'.repeat(257) })).toMatchObject(invalid('configuration.secret'));
    expect(errorOf('webhook', { secret: 1234567890123456 })).toMatchObject(invalid('configuration.secret'));
  });

  it('presents the URL, and the secret only when given', () => {
    const configuration = { method: 'POST', headers: { 'x-source': 'crm' } };
    expect(presentTriggerConfiguration({ type: 'webhook', configuration }, { ...context, secret: 'sss' })).toEqual({
      url: `https://api.example.com/v1/hooks/${context.id}`,
      secret: 'sss',
      method: 'POST',
      headers: { 'x-source': 'crm' },
    });
    expect(presentTriggerConfiguration({ type: 'webhook', configuration }, context)).not.toHaveProperty('secret');
  });
});

describe('api trigger type', () => {
  it('defaults rate_limit and authentication, and presents the endpoint', () => {
    const { configuration } = parseTriggerConfiguration('api', {});
    expect(configuration).toEqual({ rate_limit: 100, authentication: 'any' });
    expect(presentTriggerConfiguration({ type: 'api', configuration: { ...configuration } }, context)).toEqual({
      endpoint: `/v1/triggers/${context.id}/fire`,
      authentication: 'any',
      rate_limit: 100,
    });
    expect(parseTriggerConfiguration('api', { rate_limit: 100000, authentication: 'Bearer' }).configuration).toEqual({ rate_limit: 100000, authentication: 'bearer' });
  });

  it('refuses rate limits outside 1..100000 and other authentication methods', () => {
    for (const rate_limit of [0, -1, 1.5, '10', 100001]) {
      expect(errorOf('api', { rate_limit }), String(rate_limit)).toMatchObject(invalid('configuration.rate_limit'));
    }
    expect(errorOf('api', { authentication: 'basic' })).toMatchObject(invalid('configuration.authentication'));
    for (const authentication of ['ANY', 'api_key', 'OAuth', 'jwt']) {
      expect(parseTriggerConfiguration('api', { authentication }).configuration).toMatchObject({ authentication: authentication.toLowerCase() });
    }
  });
});
