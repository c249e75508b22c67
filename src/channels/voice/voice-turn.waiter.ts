import { Injectable, Logger } from '@nestjs/common';
import { ANSWERED_RUNS_CHANNEL } from '../../executions/channels/answered-channels.js';
import { RedisService } from '../../redis/redis.service.js';

/**
 * Waits, in the API process holding a call's request, for the execution's next committed run. Workers
 * announce each committed run of a voice execution on one Redis channel (ExecutionEngine); this process
 * subscribes to it once, on the shared subscriber connection, and wakes the requests waiting for that
 * execution. Each wait registers before it reads the state, so a commit between the read and the wait
 * still wakes it; after a Redis reconnect (announcements may have been missed) every wait reads again.
 */
@Injectable()
export class VoiceTurnWaiter {
  private readonly logger = new Logger(VoiceTurnWaiter.name);
  private subscribed?: Promise<void>;
  private readonly wakers = new Map<string, Set<() => void>>();

  constructor(private readonly redis: RedisService) {}

  /**
   * `read()` until it gives a value, reading again after each announced run of the execution; null
   * when `timeoutMs` passes first. `cause`, when given, is what makes the next run happen (handing the
   * caller's input over): it is done once the wait is registered, so its run's announcement cannot be
   * missed, and the first read is left out (nothing can be ready before that run).
   */
  async until<T>(executionId: string, read: () => Promise<T | null>, timeoutMs: number, cause?: () => Promise<void>): Promise<T | null> {
    await this.subscribe();
    const deadline = Date.now() + timeoutMs;
    let pending = cause;
    for (;;) {
      let wake!: () => void;
      const woken = new Promise<void>((resolve) => (wake = resolve));
      this.register(executionId, wake);
      try {
        if (pending) {
          const first = pending;
          pending = undefined;
          await first();
        } else {
          const value = await read();
          if (value !== null) return value;
        }
        const left = deadline - Date.now();
        if (left <= 0) return null;
        let timer: NodeJS.Timeout | undefined;
        const timedOut = await Promise.race([
          woken.then(() => false),
          new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), left))),
        ]);
        clearTimeout(timer);
        if (timedOut) return null;
      } finally {
        this.unregister(executionId, wake);
      }
    }
  }

  /** Wakes the waits for the execution in every process (as a worker's commit does); never rejects. */
  announce(executionId: string): void {
    this.redis.publish(ANSWERED_RUNS_CHANNEL, executionId).catch((error: Error) => this.logger.warn(`Could not announce ${executionId}: ${error.message}`));
  }

  private subscribe(): Promise<void> {
    this.subscribed ??= this.redis
      .subscribe(ANSWERED_RUNS_CHANNEL, (executionId) => {
        if (executionId === null) for (const set of this.wakers.values()) for (const wake of set) wake();
        else for (const wake of this.wakers.get(executionId) ?? []) wake();
      })
      // Redis down: waits end at their timeout (the caller is told to hold and asks again), and the
      // subscriber connection subscribes once it is back (ioredis resubscribes on reconnect).
      .catch((error: Error) => this.logger.warn(`Could not subscribe to run announcements: ${error.message}`));
    return this.subscribed;
  }

  private register(executionId: string, wake: () => void): void {
    const set = this.wakers.get(executionId) ?? new Set();
    set.add(wake);
    this.wakers.set(executionId, set);
  }

  private unregister(executionId: string, wake: () => void): void {
    const set = this.wakers.get(executionId);
    set?.delete(wake);
    if (set?.size === 0) this.wakers.delete(executionId);
  }
}
