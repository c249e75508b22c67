import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Attributes, type Context, type Span } from '@opentelemetry/api';

/**
 * The service's own spans, through `@opentelemetry/api` only. Until the SDK has started
 * (OTEL_EXPORTER_OTLP_ENDPOINT set, tracing.ts) `enabled` is false and every helper here calls its
 * work directly: no span object, no context switch, no allocation on the hot path.
 *
 * Attributes are ids, types, counts and outcomes: never a message's content, a customer's
 * attributes, a token, a secret or a URL with credentials.
 */
let enabled = false;

/** Called once the SDK has started (tracing.ts). */
export function enableTracing(): void {
  enabled = true;
}

export function tracingEnabled(): boolean {
  return enabled;
}

const tracer = () => trace.getTracer('workflow-automation-service');

/**
 * Runs `work` in a new span, child of the active one (or of `parent`). The span ends when the work
 * settles; a throw marks it ERROR with the error's class name only (messages may quote provider
 * answers or contents).
 */
export async function inSpan<T>(
  name: string,
  attributes: Attributes,
  work: (span: Span | undefined) => Promise<T>,
  options: { kind?: SpanKind; parent?: Context } = {},
): Promise<T> {
  if (!enabled) return work(undefined);
  return tracer().startActiveSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes }, options.parent ?? context.active(), async (span) => {
    try {
      return await work(span);
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.constructor.name : 'error' });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** The active span's W3C `traceparent` (`00-<trace id>-<span id>-<flags>`); undefined without one (tracing off). */
export function currentTraceparent(): string | undefined {
  if (!enabled) return undefined;
  const span = trace.getActiveSpan();
  if (!span) return undefined;
  const { traceId, spanId, traceFlags } = span.spanContext();
  if (!trace.isSpanContextValid(span.spanContext())) return undefined;
  return `00-${traceId}-${spanId}-${(traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED ? '01' : '00'}`;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The context whose parent is the remote span a `traceparent` names (ROOT_CONTEXT for none or a malformed one). */
export function contextFromTraceparent(traceparent: unknown): Context {
  const match = typeof traceparent === 'string' ? TRACEPARENT.exec(traceparent) : null;
  if (!match) return ROOT_CONTEXT;
  const spanContext = { traceId: match[1], spanId: match[2], traceFlags: parseInt(match[3], 16) & TraceFlags.SAMPLED, isRemote: true };
  return trace.isSpanContextValid(spanContext) ? trace.setSpanContext(ROOT_CONTEXT, spanContext) : ROOT_CONTEXT;
}

/** The ids a log line carries while a span is active (the pino mixin of logger.options.ts). */
export function traceLogFields(): { trace_id?: string; span_id?: string } {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

export { SpanKind };
