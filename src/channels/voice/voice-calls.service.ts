import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { uuidv7 } from '../../common/ids/uuid-v7.js';
import { isoTime } from '../../common/iso-time.js';
import { AppConfig } from '../../config/app-config.js';
import { SqlStatement } from '../../database/sql-statement.js';
import { ConversationsService } from '../../customers/conversations.service.js';
import { ExecutionEngine } from '../../executions/execution-engine.service.js';
import { ExecutionsService, type ConversationTurn } from '../../executions/executions.service.js';
import { RateLimiter, type RateLimitResult } from '../../rate-limits/rate-limiter.js';
import { RateLimitExceededError } from '../../rate-limits/rate-limits.errors.js';
import { WEBHOOK_WINDOW_SECONDS } from '../../triggers/trigger-firing.service.js';
import { ChannelAccountsService } from '../channel-accounts.service.js';
import { ChannelAccountNotFoundError } from '../channels.errors.js';
import type { ChannelAccount } from '../entities/channel-account.entity.js';
import { buildTwiml, EMPTY_TWIML, type SpeechSettings } from './twiml.js';
import { twilioSignatureMatches } from './twilio-signature.js';
import { VoiceRequestError, VoiceSignatureError } from './voice.errors.js';
import { VoiceTurnWaiter } from './voice-turn.waiter.js';

/** Twilio's CallStatus values after which the call is over (its status callback). */
export const TERMINAL_CALL_STATUSES: ReadonlySet<string> = new Set(['completed', 'busy', 'no-answer', 'failed', 'canceled']);
/** Said while the run is still going at VOICE_ANSWER_TIMEOUT, before Twilio asks again. */
export const HOLD_PHRASE = 'One moment, please.';
/** Said when the account has no workflow to start (or it could not start), before hanging up. */
export const UNAVAILABLE_PHRASE = 'Sorry, we cannot take your call right now. Goodbye.';
/** A call being started by a request that died half-way is taken over by the next request after this long. */
const START_LEASE_SECONDS = 15;
/** The same for handing a turn's input to the execution. */
const DELIVERY_LEASE_SECONDS = 15;

/*
 * The call's statements, named (parsed and planned once per connection) and run without TypeORM's per-query
 * bookkeeping, as the engine's are: a call runs six to eight of them besides the engine's. Every one finds its
 * rows by a key (the call's id, or the account and CallSid), so one generic plan fits every call.
 */
const CALL_COLUMNS = 'id, caller, execution_id';
const OPEN_CALL = new SqlStatement<CallRow>(
  `WITH c AS (
     INSERT INTO voice_calls (id, organization_id, channel_account_id, call_sid, caller) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (channel_account_id, call_sid) DO NOTHING
     RETURNING ${CALL_COLUMNS}
   ), t AS (
     INSERT INTO voice_call_turns (call_id, turn) SELECT id, 0 FROM c
   )
   SELECT ${CALL_COLUMNS} FROM c`,
  { prepareAs: 'voice.open-call' },
);
const TAKE_OVER_START = new SqlStatement<CallRow>(
  `UPDATE voice_calls SET claimed_at = now()
    WHERE channel_account_id = $1 AND organization_id = $2 AND call_sid = $3 AND execution_id IS NULL
      AND claimed_at < now() - make_interval(secs => $4)
   RETURNING ${CALL_COLUMNS}`,
  { prepareAs: 'voice.take-over-start' },
);
const FIND_CALL = new SqlStatement<CallRow>(
  `SELECT ${CALL_COLUMNS} FROM voice_calls WHERE channel_account_id = $1 AND organization_id = $2 AND call_sid = $3`,
  { prepareAs: 'voice.find-call' },
);
const CALL_BY_ID = new SqlStatement<CallRow>(`SELECT ${CALL_COLUMNS} FROM voice_calls WHERE id = $1`, { prepareAs: 'voice.call-by-id' });
const FIND_CALL_WITH_TURNS = new SqlStatement<CallRow & { turns: TurnRow[] }>(
  `SELECT c.id, c.caller, c.execution_id,
          COALESCE((SELECT json_agg(json_build_object('turn', t.turn, 'input', t.input, 'twiml', t.twiml, 'prompt', t.prompt, 'said_until', t.said_until::text))
                      FROM voice_call_turns t WHERE t.call_id = c.id AND t.turn = ANY ($4::int[])), '[]'::json) AS turns
     FROM voice_calls c WHERE c.channel_account_id = $1 AND c.organization_id = $2 AND c.call_sid = $3`,
  { prepareAs: 'voice.find-call-with-turns' },
);
const TURNS = new SqlStatement<TurnRow>(
  `SELECT turn, input, twiml, prompt, said_until::text AS said_until FROM voice_call_turns WHERE call_id = $1 AND turn = ANY ($2::int[])`,
  { prepareAs: 'voice.turns' },
);
const DELIVERED = new SqlStatement<{ delivered: boolean }>(`SELECT delivered FROM voice_call_turns WHERE call_id = $1 AND turn = $2`, {
  prepareAs: 'voice.delivered',
});
const MARK_DELIVERED = new SqlStatement<never>(`UPDATE voice_call_turns SET delivered = true WHERE call_id = $1 AND turn = $2`, {
  prepareAs: 'voice.mark-delivered',
});
/** A turn's claim to hand its input over: not answered, not handed over, and no other request holding it within the lease. */
const CLAIMABLE = `t.twiml IS NULL AND NOT t.delivered AND (t.delivering_at IS NULL OR t.delivering_at < now() - make_interval(secs => ${DELIVERY_LEASE_SECONDS}))`;
const CLAIM_RECORDED_INPUT = new SqlStatement<{ input: string }>(
  `UPDATE voice_call_turns t SET delivering_at = now() WHERE t.call_id = $1 AND t.turn = $2 AND t.input IS NOT NULL AND ${CLAIMABLE} RETURNING t.input`,
  { prepareAs: 'voice.claim-recorded-input' },
);
const RECORD_AND_CLAIM_INPUT = new SqlStatement<{ input: string }>(
  `INSERT INTO voice_call_turns AS t (call_id, turn, input, delivering_at) VALUES ($1, $2, $3, now())
   ON CONFLICT (call_id, turn) DO UPDATE SET delivering_at = now() WHERE t.input IS NOT NULL AND ${CLAIMABLE}
   RETURNING t.input`,
  { prepareAs: 'voice.record-and-claim-input' },
);
const STORE_ANSWER = new SqlStatement<{ twiml: string }>(
  `INSERT INTO voice_call_turns AS t (call_id, turn, twiml, prompt, said_until, answered_at) VALUES ($1, $2, $3, $4, $5, now())
   ON CONFLICT (call_id, turn) DO UPDATE SET twiml = EXCLUDED.twiml, prompt = EXCLUDED.prompt, said_until = EXCLUDED.said_until, answered_at = EXCLUDED.answered_at
    WHERE t.twiml IS NULL
   RETURNING twiml`,
  { prepareAs: 'voice.store-answer' },
);
const ATTACH_EXECUTION = new SqlStatement<{ execution_id: string; end_status: string | null }>(
  `UPDATE voice_calls SET execution_id = $2 WHERE id = $1 AND execution_id IS NULL RETURNING execution_id, end_status`,
  { prepareAs: 'voice.attach-execution' },
);
const CALL_ENDED = new SqlStatement<{ execution_id: string | null }>(
  `UPDATE voice_calls SET end_status = COALESCE(end_status, $4), ended_at = COALESCE(ended_at, now())
    WHERE channel_account_id = $1 AND organization_id = $2 AND call_sid = $3
   RETURNING execution_id`,
  { prepareAs: 'voice.call-ended' },
);

export interface VoiceRequest {
  rawBody: Buffer | undefined;
  /** The request's path and query, as received (the signed URL is PUBLIC_BASE_URL followed by it). */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  ip: string | undefined;
}

interface Call {
  id: string;
  caller: string;
  executionId: string | null;
}

interface TurnRow {
  turn: number;
  input: string | null;
  twiml: string | null;
  prompt: string | null;
  said_until: string | null;
}

/**
 * Phone calls through Twilio: each request of a call (the call coming in, the caller's answer to a
 * Gather, a redirect) is answered with the TwiML of its turn. A turn is answered once, when the
 * execution waits for the caller or ends, and the answer is kept (voice_call_turns), so a request
 * repeated by Twilio gets the same TwiML and runs nothing again; two API processes handling the same
 * call agree through the tables' unique keys and conditional updates. See docs/channels.md.
 */
@Injectable()
export class VoiceCallsService {
  private readonly logger = new Logger(VoiceCallsService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly accounts: ChannelAccountsService,
    private readonly executions: ExecutionsService,
    private readonly engine: ExecutionEngine,
    private readonly conversations: ConversationsService,
    private readonly rateLimiter: RateLimiter,
    private readonly config: AppConfig,
    private readonly waiter: VoiceTurnWaiter,
  ) {}

  /** POST …/voice: verified, limited, then answered with TwiML. */
  async answer(accountId: string, request: VoiceRequest): Promise<{ twiml: string; rateLimit: RateLimitResult | null }> {
    const account = await this.accounts.findById(accountId);
    if (!account || account.provider !== 'twilio') throw new ChannelAccountNotFoundError();
    const url = `${this.config.publicBaseUrl}${request.url}`;
    // The parameters as Twilio signed them: decoded from the raw body here, not by a body parser.
    const params = new URLSearchParams((request.rawBody ?? Buffer.alloc(0)).toString('utf8'));
    const limited = this.config.rateLimitsEnabled;
    if (!twilioSignatureMatches(this.accounts.credentialsOf(account).auth_token ?? '', url, params, request.headers['x-twilio-signature'])) {
      const failures = limited && (await this.rateLimiter.hit('hook-failures', request.ip ?? 'unknown', this.config.webhookSignatureFailuresPerMinute, WEBHOOK_WINDOW_SECONDS));
      if (failures && !failures.allowed) throw new RateLimitExceededError(failures);
      throw new VoiceSignatureError();
    }
    const rateLimit = limited ? await this.rateLimiter.hit('channel', account.id, this.config.channels.webhookPerMinute, WEBHOOK_WINDOW_SECONDS) : null;
    if (rateLimit && !rateLimit.allowed) throw new RateLimitExceededError(rateLimit);

    const callSid = params.get('CallSid') ?? '';
    if (!/^[A-Za-z0-9]{2,64}$/.test(callSid)) throw new VoiceRequestError('CallSid is missing or malformed', 'CallSid');
    const callStatus = params.get('CallStatus');
    if (callStatus !== null && TERMINAL_CALL_STATUSES.has(callStatus)) {
      await this.callEnded(account, callSid, callStatus);
      return { twiml: EMPTY_TWIML, rateLimit };
    }
    const turnParam = new URL(url).searchParams.get('turn');
    if (turnParam !== null && !/^\d{1,6}$/.test(turnParam)) throw new VoiceRequestError('turn must be a whole number', 'turn');
    const turn = turnParam === null ? 0 : Number(turnParam);
    const call = { account, callSid, url, speech: { voice: account.settings.voice, language: account.settings.language } };
    const twiml = turn === 0 ? await this.callComesIn(call, params) : await this.callerAnswers(call, turn, params);
    return { twiml, rateLimit };
  }

  /** Turn 0: the call is recorded and its workflow started once, then answered with what the run says. */
  private async callComesIn(call: CallRequest, params: URLSearchParams): Promise<string> {
    const caller = params.get('From') ?? '';
    if (caller === '' || caller.length > 64) throw new VoiceRequestError('From is missing or too long', 'From');
    const { row, mayStart, created } = await this.openCall(call.account, call.callSid, caller);
    // A call this request created has no answer yet; otherwise another request may have answered turn 0.
    const [answered] = created ? [] : await this.turns(row.id, [0]);
    if (answered?.twiml) return answered.twiml;
    let executionId = row.executionId;
    if (executionId === null) {
      // Another request is starting the call right now: Twilio asks again shortly.
      if (!mayStart) return this.hold(call);
      executionId = await this.start(call.account, row);
      if (executionId === null) return this.store(row.id, 0, buildTwiml({ say: [UNAVAILABLE_PHRASE], hangup: true }, call.speech), null, null);
    }
    return this.settle(call, { ...row, executionId }, 0, null);
  }

  /** Turn N ≥ 1: the caller's answer to turn N-1's question (SpeechResult or Digits), or silence. */
  private async callerAnswers(call: CallRequest, turn: number, params: URLSearchParams): Promise<string> {
    const hangup = buildTwiml({ say: [], hangup: true }, call.speech);
    const found = await this.findCallWithTurns(call.account, call.callSid, [turn - 1, turn]);
    const executionId = found?.row.executionId;
    if (!found || !executionId) return hangup;
    const { row, turns } = found;
    const previous = turns.find((t) => t.turn === turn - 1);
    const current = turns.find((t) => t.turn === turn);
    if (current?.twiml) return current.twiml;
    // Nothing was asked that this could answer (a turn out of order, or the call already ended).
    if (!previous?.twiml || previous.prompt === null) return hangup;
    const input = (params.get('SpeechResult') ?? params.get('Digits') ?? '').trim().slice(0, 2000);
    // Silence: the Gather's Redirect comes here without an answer; the question is asked again.
    if (!current && input === '') return buildTwiml({ say: [], gather: { prompt: previous.prompt, action: this.turnUrl(call.account, turn) } }, call.speech);
    const delivery = await this.claimDelivery(row.id, turn, input === '' ? null : input);
    if (!delivery) return this.settle(call, { ...row, executionId }, turn, previous.said_until);
    // This request hands the input over, once its wait is registered: the run it causes cannot be missed.
    return this.settle(call, { ...row, executionId }, turn, previous.said_until, async () => {
      await this.deliver(call, row, turn, delivery.input, params);
      await MARK_DELIVERED.run(this.dataSource, [row.id, turn]);
      // Wakes the other requests of this turn (a twin from Twilio, in this process or another).
      this.waiter.announce(executionId);
    });
  }

  /**
   * Records the caller's input for the turn (the first one recorded wins) and claims handing it to the
   * execution: returned (with the input to deliver) to the one request that should, null to the others. A
   * claim not completed within DELIVERY_LEASE_SECONDS (the request died) is taken over by the next request
   * of the turn. Delivering again would store nothing (the provider id), but would still touch the
   * execution's row and make a run in progress commit again.
   */
  private async claimDelivery(callId: string, turn: number, input: string | null): Promise<{ input: string } | null> {
    const [claimed] =
      input === null
        ? await CLAIM_RECORDED_INPUT.run(this.dataSource, [callId, turn])
        : await RECORD_AND_CLAIM_INPUT.run(this.dataSource, [callId, turn, input]);
    return claimed ?? null;
  }

  /** The caller's answer, through the conversation path of POST /v1/messages: kept for the waiting execution, which runs. */
  private async deliver(call: CallRequest, row: Call, turn: number, input: string, params: URLSearchParams): Promise<void> {
    // `call`: taken over from a request that died, whose parameters this one does not carry.
    const type = params.get('SpeechResult') !== null ? 'speech' : params.get('Digits') !== null ? 'dtmf' : 'call';
    const received = await this.conversations.receive({
      organizationId: call.account.organizationId,
      channel: 'voice',
      customerRef: row.caller,
      content: input,
      metadata: {
        type,
        call_sid: call.callSid,
        ...(params.get('Confidence') ? { confidence: Number(params.get('Confidence')) } : {}),
      },
      channelAccountId: call.account.id,
      providerMessageId: `${call.callSid}:${turn}`,
      type,
    });
    if (received.resumed) await this.executions.enqueue(received.resumed.executionId);
  }

  /**
   * Waits until the execution waits for the caller or ends (woken by its runs' announcements, bounded by
   * VOICE_ANSWER_TIMEOUT), then answers the turn with what it said since the previous turn, and keeps
   * the answer. Still running at the timeout: the caller is asked to hold and Twilio comes back here.
   */
  private async settle(call: CallRequest, row: Call & { executionId: string }, turn: number, since: string | null, handOver?: () => Promise<void>): Promise<string> {
    let state: ConversationTurn | 'gone' | null = null;
    try {
      state = await this.waiter.until(
        row.executionId,
        async () => {
          // Until the caller's input is handed over, the execution still waits for it and nothing is ready
          // (known without a read when this request handed it over).
          if (turn > 0 && !handOver && !(await this.delivered(row.id, turn))) return null;
          const read = await this.executions.conversationTurn(call.account.organizationId, row.executionId, since);
          if (!read) return 'gone' as const;
          return read.status !== 'running' || read.awaitsCustomer ? read : null;
        },
        this.config.channels.voiceAnswerTimeoutMs,
        handOver,
      );
    } catch (error) {
      // A signed request is never answered 5xx: the caller holds and Twilio asks again.
      this.logger.warn(`Call ${call.callSid}: the turn could not be read (${(error as Error).message}); asked to hold`);
    }
    if (state === null) return this.hold(call);
    if (state === 'gone') return this.store(row.id, turn, buildTwiml({ say: [], hangup: true }, call.speech), null, since);
    const said = state.said.map((m) => m.content);
    const saidUntil = state.said.at(-1)?.at ?? since;
    if (state.status === 'running') {
      // The question is the last thing said: it is spoken inside the Gather (the caller may answer over it).
      const prompt = said.pop() ?? '';
      return this.store(row.id, turn, buildTwiml({ say: said, gather: { prompt, action: this.turnUrl(call.account, turn + 1) } }, call.speech), prompt, saidUntil);
    }
    return this.store(row.id, turn, buildTwiml({ say: said, hangup: true }, call.speech), null, saidUntil);
  }

  /** Keeps a turn's answer; when another request answered it first, theirs is the answer (both would say the same). */
  private async store(callId: string, turn: number, twiml: string, prompt: string | null, saidUntil: string | null): Promise<string> {
    const [stored] = await STORE_ANSWER.run(this.dataSource, [callId, turn, twiml, prompt, saidUntil]);
    if (stored) return stored.twiml;
    const [first] = await this.turns(callId, [turn]);
    return first?.twiml ?? twiml;
  }

  private hold(call: CallRequest): string {
    return buildTwiml({ say: [HOLD_PHRASE], redirect: call.url }, call.speech);
  }

  /**
   * The call's row, created with its turn 0 on the first request. `mayStart`: this request starts its
   * workflow (it created the row, or took over a start left unfinished past START_LEASE_SECONDS).
   */
  private async openCall(account: ChannelAccount, callSid: string, caller: string): Promise<{ row: Call; mayStart: boolean; created: boolean }> {
    const [created] = await OPEN_CALL.run(this.dataSource, [uuidv7(), account.organizationId, account.id, callSid, caller]);
    if (created) return { row: toCall(created), mayStart: true, created: true };
    const [takenOver] = await TAKE_OVER_START.run(this.dataSource, [account.id, account.organizationId, callSid, START_LEASE_SECONDS]);
    if (takenOver) return { row: toCall(takenOver), mayStart: true, created: false };
    const row = await this.findCall(account, callSid);
    if (!row) throw new ChannelAccountNotFoundError();
    return { row, mayStart: false, created: false };
  }

  private async findCall(account: ChannelAccount, callSid: string): Promise<Call | null> {
    const [row] = await FIND_CALL.run(this.dataSource, [account.id, account.organizationId, callSid]);
    return row ? toCall(row) : null;
  }

  /** The call's row and the given turns' rows, in one read. */
  private async findCallWithTurns(account: ChannelAccount, callSid: string, turns: number[]): Promise<{ row: Call; turns: TurnRow[] } | null> {
    const [row] = await FIND_CALL_WITH_TURNS.run(this.dataSource, [account.id, account.organizationId, callSid, turns.filter((t) => t >= 0)]);
    return row ? { row: toCall(row), turns: row.turns } : null;
  }

  private async turns(callId: string, turns: number[]): Promise<TurnRow[]> {
    return TURNS.run(this.dataSource, [callId, turns.filter((t) => t >= 0)]);
  }

  /**
   * Starts the account's settings.workflow_id for the caller, and attaches the execution to the call.
   * Null when there is nothing to start (no workflow, or not active).
   */
  private async start(account: ChannelAccount, call: Call): Promise<string | null> {
    const workflowId = account.settings.workflow_id;
    if (!workflowId) return null;
    const fired = await this.executions.fire({
      organizationId: account.organizationId,
      triggerId: null,
      workflowId,
      customerRef: call.caller,
      channel: 'voice',
      channelAccountId: account.id,
      message: null,
      metadata: { user_agent: 'Twilio', timestamp: isoTime(new Date()), source: 'message' },
    });
    if (!fired.workflowExecutionId) return null;
    const [attached] = await ATTACH_EXECUTION.run(this.dataSource, [call.id, fired.workflowExecutionId]);
    if (!attached) {
      // A request that took over the start attached its own first: this execution is nobody's call.
      await this.engine.endCall(fired.workflowExecutionId, 'canceled');
      return (await this.callById(call.id))?.executionId ?? null;
    }
    // The status callback came while the execution was being started.
    if (attached.end_status) await this.engine.endCall(attached.execution_id, attached.end_status);
    return attached.execution_id;
  }

  private async delivered(callId: string, turn: number): Promise<boolean> {
    const [row] = await DELIVERED.run(this.dataSource, [callId, turn]);
    return row?.delivered === true;
  }

  private async callById(id: string): Promise<Call | null> {
    const [row] = await CALL_BY_ID.run(this.dataSource, [id]);
    return row ? toCall(row) : null;
  }

  /** A status callback with a terminal CallStatus: the call's execution, if still running, ends (CALL_ENDED). */
  private async callEnded(account: ChannelAccount, callSid: string, callStatus: string): Promise<void> {
    const [row] = await CALL_ENDED.run(this.dataSource, [account.id, account.organizationId, callSid, callStatus]);
    if (row?.execution_id) await this.engine.endCall(row.execution_id, callStatus);
  }

  private turnUrl(account: ChannelAccount, turn: number): string {
    return `${this.config.publicBaseUrl}/v1/channel-accounts/${account.id}/voice?turn=${turn}`;
  }
}

interface CallRequest {
  account: ChannelAccount;
  callSid: string;
  /** The public URL of this request (what Twilio signed, and where a hold redirects to). */
  url: string;
  speech: SpeechSettings;
}

interface CallRow {
  id: string;
  caller: string;
  execution_id: string | null;
}

function toCall(row: CallRow): Call {
  return { id: row.id, caller: row.caller, executionId: row.execution_id };
}

