import 'reflect-metadata';
import type { DataSource } from 'typeorm';
import { describe, expect, it } from 'vitest';
import { AppConfig } from '../config/app-config.js';
import { validateEnv } from '../config/env.schema.js';
import type { WorkflowsService } from '../workflows/workflows.service.js';
import { StoringChannelAdapter } from './channels/storing-channel.adapter.js';
import { WorkflowExecution, type ExecutionState } from './entities/workflow-execution.entity.js';
import { ExecutionEngine, MAX_STORED_DURATION_MS, storableDuration } from './execution-engine.service.js';
import { NodeFailure, TransientNodeError, type NodeContext, type NodeHandler, type NodeOutcome } from './nodes/node-handler.js';
import type { RunCommit, RunsRepository } from './runs.repository.js';
import type { ChannelSendDispatcher } from './channels/channel-send.dispatcher.js';
import type { RedisService } from '../redis/redis.service.js';

/** A node type whose behaviour each test scripts: one function per attempt. */
class ScriptedHandler implements NodeHandler {
  readonly type = 'scripted';
  calls = 0;
  constructor(private readonly script: ((ctx: NodeContext) => Promise<NodeOutcome>)[]) {}
  run(ctx: NodeContext): Promise<NodeOutcome> {
    const step = this.script[Math.min(this.calls, this.script.length - 1)];
    this.calls += 1;
    return step(ctx);
  }
}

const completed = async (ctx: NodeContext): Promise<NodeOutcome> => {
  await ctx.send(`done ${ctx.node.id}`);
  return { status: 'completed', input: {}, output: { ok: true } };
};

function execution(overrides: Partial<WorkflowExecution> = {}): WorkflowExecution {
  return Object.assign(new WorkflowExecution(), {
    id: 'e1', organizationId: 'o1', workflowId: 'w1', workflowVersion: 1, triggerId: 't1', triggerExecutionId: 'te1', customerId: 'c1',
    customerRef: '+1555', channel: 'whatsapp', status: 'running', input: {}, output: null, error: null, state: { lastMessage: 'hi' } as ExecutionState,
    waiting: false, waitExpiresAt: null, startedAt: new Date(), completedAt: null, durationMs: null, retryOf: null,
    createdAt: new Date(), updatedAt: new Date(), ...overrides,
  });
}

/**
 * An engine over an in-memory execution: `commits` records what each commit would write; a commit
 * listed in `conflicts` (by its index) misses, as when the row changed meanwhile, and the next
 * load returns `afterConflict`.
 */
function engineFor(nodes: { id: string; type: string; next?: string }[], handler: NodeHandler, env: Record<string, string> = {}, start = execution()) {
  const commits: RunCommit[] = [];
  let current = start;
  const conflicts = new Set<number>();
  let afterConflict: WorkflowExecution | undefined;
  const runs = {
    load: async () => ({ execution: Object.assign(new WorkflowExecution(), structuredClone(current)), version: '1', replies: [] }),
    commit: async (run: RunCommit) => {
      const index = commits.length;
      commits.push(run);
      if (conflicts.has(index)) {
        if (afterConflict) current = afterConflict;
        return false;
      }
      current = run.execution;
      return true;
    },
  } as unknown as RunsRepository;
  const workflows = { getVersion: async () => ({ nodes }) } as unknown as WorkflowsService;
  const channels = Object.assign(new Map(), { fallback: new StoringChannelAdapter() });
  const config = new AppConfig(validateEnv({ NODE_RETRY_BASE_DELAY_MS: '1', LOG_LEVEL: 'silent', ...env }));
  const dispatched: string[] = [];
  const sends = { dispatch: async (ids: string[]) => void dispatched.push(...ids) } as unknown as ChannelSendDispatcher;
  const published: [string, string][] = [];
  const redis = { publish: async (channel: string, message: string) => void published.push([channel, message]) } as unknown as RedisService;
  const engine = new ExecutionEngine({} as DataSource, [handler], channels, workflows, runs, config, sends, redis);
  return {
    engine,
    commits,
    dispatched,
    published,
    conflictOn: (index: number, then: WorkflowExecution) => {
      conflicts.add(index);
      afterConflict = then;
    },
  };
}

const transient = () => Promise.reject(new Error('connection terminated: secret-driver-detail'));

describe('ExecutionEngine: transient node failures', () => {
  it('attempts a node again after a transient failure; the step counts the attempts', async () => {
    const handler = new ScriptedHandler([transient, completed]);
    const { engine, commits } = engineFor([{ id: 'a', type: 'scripted' }], handler);
    expect(await engine.run('e1')).toEqual({ status: 'success' });
    expect(handler.calls).toBe(2);
    expect(commits).toHaveLength(1);
    expect(commits[0].writes.steps).toMatchObject([{ nodeId: 'a', status: 'completed', attempt: 2 }]);
  });

  it('fails the execution after NODE_RETRY_ATTEMPTS, without the driver\'s message; a provider\'s message is kept', async () => {
    const handler = new ScriptedHandler([transient]);
    const { engine, commits } = engineFor([{ id: 'a', type: 'scripted' }], handler);
    expect(await engine.run('e1')).toEqual({ status: 'failed' });
    expect(handler.calls).toBe(3);
    expect(commits[0].writes.steps).toMatchObject([{ nodeId: 'a', status: 'failed', attempt: 3 }]);
    const { error } = commits[0].execution;
    expect(error).toMatchObject({ code: 'NODE_RETRIES_EXHAUSTED', node_id: 'a' });
    expect(error?.message).toMatch(/after 3 attempts/);
    expect(JSON.stringify(commits[0].writes.steps[0].output)).not.toContain('secret-driver-detail');
    expect(error?.message).not.toContain('secret-driver-detail');

    const provider = new ScriptedHandler([() => Promise.reject(new TransientNodeError('AI provider failed (HTTP 503)'))]);
    const five = engineFor([{ id: 'a', type: 'scripted' }], provider, { NODE_RETRY_ATTEMPTS: '5' });
    await five.engine.run('e1');
    expect(provider.calls).toBe(5);
    expect(five.commits[0].execution.error?.message).toBe('The node failed after 5 attempts: AI provider failed (HTTP 503)');
  });

  it('throws to the job, rather than failing the execution, while PostgreSQL or Redis stays unreachable', async () => {
    for (const outage of [
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      new Error('Connection terminated unexpectedly'),
    ]) {
      const handler = new ScriptedHandler([() => Promise.reject(outage)]);
      const { engine, commits } = engineFor([{ id: 'a', type: 'scripted' }], handler);
      await expect(engine.run('e1')).rejects.toBe(outage);
      expect(handler.calls).toBe(3);
      expect(commits).toEqual([]);
    }
  });

  it('finishes an execution older than the 32-bit duration column holds, its duration saturated (the commit would fail forever)', async () => {
    const { engine, commits } = engineFor([{ id: 'a', type: 'scripted' }], new ScriptedHandler([completed]), {}, execution({ startedAt: new Date(Date.now() - 30 * 86_400_000) }));
    expect(await engine.run('e1')).toEqual({ status: 'success' });
    expect(commits[0].execution.durationMs).toBe(MAX_STORED_DURATION_MS);
    expect(storableDuration(-5)).toBe(0);
  });

  it('undoes what a failed attempt wrote (messages, replies read, state) before the next one', async () => {
    const handler = new ScriptedHandler([
      async (ctx) => {
        await ctx.send('half-way');
        ctx.state.lastResponse = 'dirty';
        throw new Error('timeout');
      },
      completed,
    ]);
    const { engine, commits } = engineFor([{ id: 'a', type: 'scripted' }], handler);
    await engine.run('e1');
    expect(commits[0].writes.messages.map((m) => m.content)).toEqual(['done a']);
    expect(commits[0].writes.events.filter((e) => e.type === 'message.sent')).toHaveLength(1);
    expect(commits[0].execution.state.lastResponse).toBe('done a');
  });

  it('does not attempt a node again for its own failure, and leaves the context as it was before the node', async () => {
    const handler = new ScriptedHandler([
      async (ctx) => {
        ctx.state.lastResponse = 'changed by the failing node';
        throw new NodeFailure('NO_RECIPIENT', 'nobody');
      },
    ]);
    const { engine, commits } = engineFor([{ id: 'a', type: 'scripted' }], handler, {}, execution({ state: { lastMessage: 'hi', lastResponse: 'before' } }));
    expect(await engine.run('e1')).toEqual({ status: 'failed' });
    expect(handler.calls).toBe(1);
    expect(commits[0].writes.steps).toMatchObject([{ nodeId: 'a', status: 'failed', attempt: 1 }]);
    expect(commits[0].execution.state).toEqual({ lastMessage: 'hi', lastResponse: 'before', cursor: 'a' });
  });
});

describe('ExecutionEngine.cancel', () => {
  it('fails a running execution with EXECUTION_CANCELLED and the usual events', async () => {
    const { engine, commits } = engineFor([{ id: 'a', type: 'scripted' }], new ScriptedHandler([completed]), {}, execution({ state: { cursor: 'a' }, waiting: true }));
    expect(await engine.cancel('e1')).toBe(true);
    expect(commits[0].execution).toMatchObject({ status: 'failed', waiting: false, error: { code: 'EXECUTION_CANCELLED', node_id: 'a' } });
    expect(commits[0].writes.events.map((e) => e.type)).toEqual(['workflow.completed', 'workflow.failed']);
    // Ended now: a run finds nothing to do, and a second cancel is refused.
    expect(await engine.run('e1')).toEqual({ status: 'failed' });
    expect(await engine.cancel('e1')).toBe(false);
    expect(commits).toHaveLength(1);
  });

  it('loses to a run that commits first and then finds it finished: nothing is overwritten', async () => {
    const { engine, commits, conflictOn } = engineFor([{ id: 'a', type: 'scripted' }], new ScriptedHandler([completed]));
    conflictOn(0, execution({ status: 'success', completedAt: new Date() }));
    expect(await engine.cancel('e1')).toBe(false);
    expect(commits).toHaveLength(1);
  });
});

describe('ExecutionEngine: a phone call\'s execution (voice, answered in the provider\'s request)', () => {
  it('stores its messages without a send or a reply window, and announces each commit; other runs announce nothing', async () => {
    const voice = engineFor([{ id: 'a', type: 'scripted' }], new ScriptedHandler([completed]), {}, execution({ channel: 'voice', channelAccountId: 'acc1' }));
    // The reply window would be read through the (absent) DataSource: reaching it fails the node.
    expect(await voice.engine.run('e1')).toEqual({ status: 'success' });
    expect(voice.commits[0].writes.messages).toMatchObject([{ content: 'done a', channelAccountId: 'acc1', queued: false }]);
    expect(voice.dispatched).toEqual([]);
    expect(voice.published).toEqual([['voice-runs', 'e1']]);

    const chat = engineFor([{ id: 'a', type: 'scripted' }], new ScriptedHandler([completed]), {}, execution({ channel: 'whatsapp', channelAccountId: null }));
    expect(await chat.engine.run('e1')).toEqual({ status: 'success' });
    expect(chat.published).toEqual([]);
  });

  it('ends a running call with CALL_ENDED (the call status in the message), and leaves an ended one as it is', async () => {
    const waiting = execution({ channel: 'voice', channelAccountId: 'acc1', waiting: true, state: { cursor: 'ask' } as ExecutionState });
    const { engine, commits, published } = engineFor([{ id: 'ask', type: 'scripted' }], new ScriptedHandler([completed]), {}, waiting);
    expect(await engine.endCall('e1', 'no-answer')).toBe(true);
    expect(commits[0].execution).toMatchObject({ status: 'failed', waiting: false, error: { code: 'CALL_ENDED', node_id: 'ask' } });
    expect(commits[0].execution.error?.message).toContain('no-answer');
    expect(published).toEqual([['voice-runs', 'e1']]);
    expect(await engine.endCall('e1', 'completed')).toBe(false);
    expect(commits).toHaveLength(1);
  });
});
