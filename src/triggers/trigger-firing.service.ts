import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { Job, Queue } from 'bull';
import type { Repository } from 'typeorm';
import type { CredentialType } from '../auth/access.js';
import { ChannelAccountsService } from '../channels/channel-accounts.service.js';
import { ConversationsService, type ActiveMessageTrigger, type ClaimedBurst, type InboundMessage } from '../customers/conversations.service.js';
import { ExecutionErrorCodes } from '../executions/executions.errors.js';
import { ExecutionsService } from '../executions/executions.service.js';
import type { FireInput, FireResult } from '../executions/fire.types.js';
import { isUuid } from '../common/ids/uuid.js';
import { AppConfig } from '../config/app-config.js';
import { RateLimiter, type RateLimitResult } from '../rate-limits/rate-limiter.js';
import { parseWebhookFields } from './dto/webhook-body.js';
import { Trigger } from './entities/trigger.entity.js';
import { RateLimitExceededError } from '../rate-limits/rate-limits.errors.js';
import { CredentialTypeRefusedError, InvalidSignatureError, MethodNotAllowedError, NotAnApiTriggerError, TriggerNotFoundError } from './triggers.errors.js';
import { matchesKeywords, type KeywordRules } from './keyword-matcher.js';
import { TriggersService } from './triggers.service.js';
import { TriggerSchedulesService } from './trigger-schedules.service.js';
import { BURSTS_QUEUE, BurstJobs, type TickJob, type TurnJob } from './triggers.queue.js';
import { credentialMayFire } from './trigger-types/api.trigger-type.js';
import { WEBHOOK_METHODS } from './trigger-types/webhook.trigger-type.js';
import { isoTime } from '../common/iso-time.js';

/**
 * Inbound webhooks: RATE_LIMIT_HOOK_PER_MINUTE (100, the specification's Limits) per trigger,
 * counting authenticated requests only; failed authentications per source IP in the same window.
 */
export const WEBHOOK_WINDOW_SECONDS = 60;

/** What a firing needs of its trigger. */
type FiringTrigger = Pick<Trigger, 'id' | 'organizationId' | 'workflowId' | 'status' | 'channel' | 'configuration'>;

export interface FiringContext {
  customerRef?: string | null;
  /** The customer's row, when the caller has just stored it (an inbound message). */
  customerId?: string | null;
  channel?: string | null;
  channelAccountId?: string | null;
  message?: string | null;
  data?: Record<string, unknown>;
  userAgent: string | null;
  source: FireInput['metadata']['source'];
  /** A schedule tick's slot (ISO 8601): recorded in the trigger execution's metadata as `scheduled_for`. */
  scheduledFor?: string;
}

/** What a schedule tick did: fired its slot, or nothing because its job is stale or the slot already fired. */
export type TickOutcome = { fired: FireResult } | { skipped: 'stale' | 'already-fired' };

export interface WebhookRequest {
  method: string;
  headers: Record<string, string | string[] | undefined>;
  rawBody: Buffer | undefined;
  body: unknown;
  /** The source address, which failed authentications are counted against. */
  ip: string | undefined;
}

export interface InboundMessageResult {
  messageId: string;
  executions: FireResult[];
  /** False for a provider's message already stored for the account (a redelivery): nothing was done. */
  stored: boolean;
  /** Bursts: the message is held for its burst's turn, taken at `heldUntil` (executions is empty). */
  turn?: { heldUntil: Date };
}

/** What a burst's turn did. */
export type TurnOutcome =
  | { taken: 'resumed' | 'fired'; messages: number; executions: FireResult[] }
  | { skipped: 'claimed-elsewhere' | 'empty' | 'already-taken' | 'account-gone' | 'handed-off' };

/**
 * The four ways a workflow starts — inbound message, webhook, API call, schedule tick — all
 * end in `fire()`: refused firings (inactive trigger or workflow) are recorded as failed
 * trigger executions; accepted ones start an execution.
 */
@Injectable()
export class TriggerFiringService {
  private readonly logger = new Logger(TriggerFiringService.name);

  constructor(
    @InjectRepository(Trigger) private readonly triggers: Repository<Trigger>,
    private readonly triggersService: TriggersService,
    private readonly executions: ExecutionsService,
    private readonly conversations: ConversationsService,
    private readonly rateLimiter: RateLimiter,
    private readonly config: AppConfig,
    private readonly schedules: TriggerSchedulesService,
    private readonly accounts: ChannelAccountsService,
    @InjectQueue(BURSTS_QUEUE) private readonly bursts: Queue,
  ) {}

  /** Fires the trigger; the firing (accepted or refused) also counts on the trigger (execution_count, last_triggered). */
  async fire(trigger: FiringTrigger, context: FiringContext): Promise<FireResult> {
    const refusal =
      trigger.status === 'active' ? undefined : { code: ExecutionErrorCodes.triggerInactive, message: `The trigger is ${trigger.status}` };
    return this.executions.fire({
      organizationId: trigger.organizationId,
      triggerId: trigger.id,
      workflowId: trigger.workflowId,
      refusal,
      customerRef: context.customerRef ?? null,
      customerId: context.customerId ?? null,
      channel: context.channel ?? trigger.channel ?? null,
      channelAccountId: context.channelAccountId ?? null,
      message: context.message ?? null,
      data: context.data,
      metadata: {
        user_agent: context.userAgent,
        timestamp: isoTime(new Date()),
        source: context.source,
        ...(context.scheduledFor ? { scheduled_for: context.scheduledFor } : {}),
      },
    });
  }

  /**
   * POST /v1/messages: keeps the message for the customer's running execution on that channel if there is
   * one; otherwise fires every active message trigger whose keywords match.
   */
  async receiveMessage(
    organizationId: string,
    inbound: Omit<InboundMessage, 'organizationId'>,
    userAgent: string | null,
  ): Promise<InboundMessageResult> {
    // A message through a channel account that matches no trigger starts the account's settings.workflow_id.
    const settings = inbound.channelAccountId ? (await this.accounts.checkChannel(organizationId, inbound.channelAccountId, inbound.channel)).settings : undefined;
    const fallbackWorkflowId = settings?.workflow_id;
    // --- Bursts: with a window (the account's settings.burst_window_ms, else CONVERSATION_BURST_WINDOW_MS),
    // the message is held for its burst's turn (takeTurn); 0 adds nothing to the statement below.
    const burstWindowMs = inbound.channelAccountId ? (settings?.burst_window_ms ?? 0) : this.config.conversationBurstWindowMs;
    const bursting = burstWindowMs > 0 && inbound.routable !== false ? { burstWindowMs, userAgent } : {};
    // Stored together with the read of the active message triggers, which a message that resumes
    // nothing is matched against.
    const received = await this.conversations.receive({ organizationId, ...inbound, ...bursting });
    if (received.held) {
      if (received.held.opened) await this.scheduleTurn(received.held.burstId, received.held.heldUntil);
      if (received.stored) return { messageId: received.messageId, executions: [], stored: true, turn: { heldUntil: received.held.heldUntil } };
    }
    // --- end of bursts
    if (!received.stored) return { messageId: received.messageId, executions: [], stored: false };
    // Handoff: a person has the conversation; the message is recorded and emitted only.
    if (received.handedOff) return { messageId: received.messageId, executions: [], stored: true };
    if (received.resumed) {
      await this.executions.enqueue(received.resumed.executionId);
      const { executionId, triggerId, triggerExecutionId } = received.resumed;
      return { messageId: received.messageId, executions: [{ triggerId, triggerExecutionId, workflowExecutionId: executionId, status: 'running', error: null }], stored: true };
    }
    // A message without text (an image, a location) is recorded and emitted only.
    if (inbound.routable === false) return { messageId: received.messageId, executions: [], stored: true };
    const executions = await this.startTurn(received.messageTriggers, fallbackWorkflowId, {
      organizationId,
      customerRef: inbound.customerRef,
      customerId: received.customerId,
      channel: inbound.channel,
      channelAccountId: inbound.channelAccountId ?? null,
      text: inbound.content,
      language: inbound.language,
      userAgent,
    });
    return { messageId: received.messageId, executions, stored: true };
  }

  /**
   * A turn that resumed nothing: fires every active message trigger whose keywords match the text,
   * else starts the account's settings.workflow_id. A message's turn, or a burst's (its joined text).
   */
  private async startTurn(
    triggers: ActiveMessageTrigger[],
    fallbackWorkflowId: string | undefined,
    turn: { organizationId: string; customerRef: string; customerId: string; channel: string; channelAccountId: string | null; text: string; language?: string | null; userAgent: string | null },
  ): Promise<FireResult[]> {
    const matching = triggers.filter((t) =>
      matchesKeywords({ ...(t.configuration as unknown as KeywordRules), channel: (t.configuration.channel as string | undefined) ?? t.channel ?? undefined }, {
        text: turn.text,
        channel: turn.channel,
        language: turn.language,
      }),
    );
    // Together, so that the firings share one statement (see ExecutionsService).
    const executions = await Promise.all(
      matching.map((trigger) =>
        this.fire(trigger, {
          customerRef: turn.customerRef,
          customerId: turn.customerId,
          channel: turn.channel,
          channelAccountId: turn.channelAccountId,
          message: turn.text,
          userAgent: turn.userAgent,
          source: 'message',
        }),
      ),
    );
    if (matching.length === 0 && fallbackWorkflowId) {
      const started = await this.executions.fire({
        organizationId: turn.organizationId,
        triggerId: null,
        workflowId: fallbackWorkflowId,
        customerRef: turn.customerRef,
        customerId: turn.customerId,
        channel: turn.channel,
        channelAccountId: turn.channelAccountId,
        message: turn.text,
        metadata: { user_agent: turn.userAgent, timestamp: isoTime(new Date()), source: 'message' },
      });
      return [started];
    }
    return executions;
  }

  // --- Bursts: a burst's turn, in a worker (BurstsProcessor) ---

  /**
   * The burst's one delayed job, at its deadline (its id derives from the burst, so a second add
   * collapses into the first). A failed add is left to the sweep (BurstsProcessor), which takes the
   * burst's turn once its deadline is BURST_SWEEP_GRACE_MS past.
   */
  private async scheduleTurn(burstId: string, heldUntil: Date): Promise<void> {
    try {
      await this.bursts.add(BurstJobs.turn, { burstId } satisfies TurnJob, {
        delay: Math.max(0, heldUntil.getTime() - Date.now()),
        jobId: `turn:${burstId}`,
        attempts: 5,
        backoff: { type: 'exponential', delay: 500 },
        removeOnComplete: true,
        removeOnFail: 1000,
      });
    } catch (error) {
      this.logger.warn(`The turn of burst ${burstId} could not be scheduled (the sweep will take it): ${(error as Error).message}`);
    }
  }

  /**
   * Takes a burst's turn: claims it (one worker only; see ConversationsService.claimBurst), joins its
   * held messages' text in arrival order (newline-separated), then does for that text what
   * receiveMessage does for one message: the customer's running execution on the channel (and
   * account) gets it as one reply, else matching message triggers fire, else the account's
   * settings.workflow_id starts. A burst claimed again after a failure does not start its turn twice.
   */
  async takeTurn(burstId: string, leaseMs: number): Promise<TurnOutcome> {
    const burst = await this.conversations.claimBurst(burstId, leaseMs);
    if (!burst) return { skipped: 'claimed-elsewhere' };
    // Handoff: a person took the conversation over while the burst was open; its messages stay recorded.
    if (burst.handedOff) {
      await this.conversations.finishBurst(burst.id);
      return { skipped: 'handed-off' };
    }
    const messages = await this.conversations.heldMessages(burst);
    if (messages.length === 0) {
      await this.conversations.finishBurst(burst.id);
      return { skipped: 'empty' };
    }
    const joined = messages.map((m) => m.content).join('\n');
    const outcome = await this.startBurstTurn(burst, messages, joined);
    await this.conversations.finishBurst(burst.id);
    return outcome;
  }

  private async startBurstTurn(burst: ClaimedBurst, messages: { id: string; language: string | null; executionId: string | null }[], joined: string): Promise<TurnOutcome> {
    const first = messages[0]!;
    // Claimed again: its turn may have been taken by the worker that failed.
    if (burst.claims > 1 && (first.executionId !== null || (await this.conversations.turnStarted(burst, joined)))) return { skipped: 'already-taken' };
    const resumed = await this.conversations.routeTurn(burst, first.id, joined);
    if (resumed) {
      await this.executions.enqueue(resumed.executionId);
      const execution: FireResult = { triggerId: resumed.triggerId, triggerExecutionId: resumed.triggerExecutionId, workflowExecutionId: resumed.executionId, status: 'running', error: null };
      return { taken: 'resumed', messages: messages.length, executions: [execution] };
    }
    const account = burst.channelAccountId ? await this.accounts.findById(burst.channelAccountId) : null;
    // An account deleted since: its messages stay recorded; nothing starts through it.
    if (burst.channelAccountId && (!account || account.organizationId !== burst.organizationId)) return { skipped: 'account-gone' };
    const executions = await this.startTurn(await this.conversations.activeMessageTriggers(burst.organizationId), account?.settings.workflow_id, {
      organizationId: burst.organizationId,
      customerRef: burst.customerRef,
      customerId: burst.customerId,
      channel: burst.channel,
      channelAccountId: burst.channelAccountId,
      text: joined,
      language: messages.find((m) => m.language)?.language ?? null,
      userAgent: burst.userAgent,
    });
    return { taken: 'fired', messages: messages.length, executions };
  }
  // --- end of bursts

  /** POST /v1/hooks/{trigger_id}: no credential; the trigger's secret and headers authenticate. */
  async receiveWebhook(triggerId: string, request: WebhookRequest): Promise<{ result: FireResult; rateLimit: RateLimitResult | null }> {
    // A method no webhook trigger can be configured with is refused for every trigger URL alike.
    if (!(WEBHOOK_METHODS as readonly string[]).includes(request.method.toUpperCase())) throw new MethodNotAllowedError(WEBHOOK_METHODS.join(', '));
    if (!isUuid(triggerId)) throw new TriggerNotFoundError();
    const trigger = await this.triggers.findOne({ where: { id: triggerId, type: 'webhook' } });
    if (!trigger) throw new TriggerNotFoundError();

    const method = ((trigger.configuration.method as string | undefined) ?? 'POST').toUpperCase();
    if (request.method.toUpperCase() !== method) throw new MethodNotAllowedError(method);

    // Authentication before the trigger's limit: a stranger who knows the URL cannot use up its
    // window with bad signatures. Failures are limited per source address instead.
    const limited = this.config.rateLimitsEnabled;
    if (!this.authenticates(trigger, request)) {
      const failures = limited && await this.rateLimiter.hit('hook-failures', request.ip ?? 'unknown', this.config.webhookSignatureFailuresPerMinute, WEBHOOK_WINDOW_SECONDS);
      if (failures && !failures.allowed) throw new RateLimitExceededError(failures);
      throw new InvalidSignatureError();
    }

    // One round trip (the route is exempt from the request throttler). RATE_LIMITS_ENABLED=false: none.
    const rateLimit = limited ? await this.rateLimiter.hit('hook', trigger.id, this.config.rateLimits.hookPerMinute, WEBHOOK_WINDOW_SECONDS) : null;
    if (rateLimit && !rateLimit.allowed) throw new RateLimitExceededError(rateLimit);

    const fields = parseWebhookFields(request.body);
    const result = await this.fire(trigger, {
      customerRef: fields.customerRef,
      channel: fields.channel,
      message: fields.message,
      data: request.body === undefined || request.method === 'GET' ? undefined : (request.body as Record<string, unknown>),
      userAgent: headerValue(request.headers['user-agent']),
      source: 'webhook',
    });
    return { result, rateLimit };
  }

  /** The signature (when the trigger has a secret) and every required header, all compared in constant time. */
  private authenticates(trigger: Trigger, request: WebhookRequest): boolean {
    const secret = this.triggersService.webhookSecret(trigger);
    let ok = secret === null || signatureMatches(secret, request.rawBody ?? Buffer.alloc(0), request.headers['x-service-signature']);
    const required = (trigger.configuration.headers as Record<string, string> | undefined) ?? {};
    // Every header is compared, whatever the earlier ones gave, so the time taken tells nothing.
    for (const [name, value] of Object.entries(required)) {
      ok = constantTimeEquals(headerValue(request.headers[name.toLowerCase()]), value) && ok;
    }
    return ok;
  }

  /**
   * POST /v1/triggers/{id}/fire: an api trigger. Its configured rate_limit per hour is counted
   * before, by the request throttler, with the request's other limits (TriggerRateLimits).
   */
  async fireApiTrigger(
    organizationId: string,
    triggerId: string,
    body: { customer_id?: string; channel?: string; message?: string; data?: Record<string, unknown> },
    userAgent: string | null,
    credentialType: CredentialType,
  ): Promise<FireResult> {
    const trigger = await this.triggersService.getOwned(organizationId, triggerId);
    if (trigger.type !== 'api') throw new NotAnApiTriggerError();
    if (!credentialMayFire(trigger.configuration.authentication, credentialType)) throw new CredentialTypeRefusedError(String(trigger.configuration.authentication));
    return this.fire(trigger, {
      customerRef: body.customer_id ?? null,
      channel: body.channel ?? null,
      message: body.message ?? null,
      data: body.data,
      userAgent,
      source: 'api',
    });
  }

  /**
   * A schedule tick (Bull repeatable job): fires when the job is its trigger's current one; a
   * tick of a deleted trigger, or of a schedule the trigger no longer has, removes its own job
   * (TriggerSchedulesService.isCurrent) and fires nothing.
   */
  /**
   * A tick of a schedule trigger's repeatable job. Each slot is one Bull job (its id derives from the
   * slot), so two workers never both take it; but Bull runs a job again when the worker that had it
   * died before marking it completed (a stalled job), and the firing may have committed by then. So
   * the slot is recorded with the firing (`metadata.scheduled_for`) and a tick whose slot has a
   * firing already fires nothing: each slot fires once, crashes included.
   */
  async fireSchedule(job: Job<TickJob>): Promise<TickOutcome> {
    const trigger = isUuid(job.data.triggerId) ? await this.triggers.findOne({ where: { id: job.data.triggerId, type: 'schedule' } }) : null;
    if (!(await this.schedules.isCurrent(job, trigger))) return { skipped: 'stale' };
    const slot = tickSlot(job);
    if (slot && (await this.executions.scheduleSlotFired(trigger!.id, slot))) return { skipped: 'already-fired' };
    return { fired: await this.fire(trigger!, { userAgent: null, source: 'schedule', scheduledFor: slot }) };
  }
}

/** The slot a tick stands for: Bull's `prevMillis` of the repeat (the time its id derives from), as ISO 8601. */
export function tickSlot(job: Pick<Job, 'id' | 'opts'>): string | undefined {
  const fromOpts = (job.opts as { prevMillis?: unknown }).prevMillis;
  const millis = typeof fromOpts === 'number' && fromOpts > 0 ? fromOpts : Number(String(job.id ?? '').split(':').pop());
  return Number.isSafeInteger(millis) && millis > 0 ? isoTime(new Date(millis)) : undefined;
}

function headerValue(value: string | string[] | undefined): string | null {
  return Array.isArray(value) ? (value[0] ?? null) : (value ?? null);
}

/** Constant-time comparison of the hex HMAC-SHA256 of the raw body. */
export function signatureMatches(secret: string, rawBody: Buffer, header: string | string[] | undefined): boolean {
  const given = headerValue(header)?.trim().toLowerCase();
  if (!given || !/^[0-9a-f]{64}$/.test(given)) return false;
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  return timingSafeEqual(expected, Buffer.from(given, 'hex'));
}

/**
 * Equality of two strings in a time that depends on neither: both are hashed to 32 bytes first,
 * so timingSafeEqual compares equal-length buffers and not even the length leaks.
 */
export function constantTimeEquals(given: string | null, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();
  const same = timingSafeEqual(digest(given ?? ''), digest(expected));
  return same && given !== null;
}
