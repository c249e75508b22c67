import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, QueryFailedError, type EntityManager, type FindOptionsWhere, type Repository } from 'typeorm';
import { SecretBox } from '../common/crypto/secret-box.js';
import { isUuid } from '../common/ids/uuid.js';
import { AppConfig } from '../config/app-config.js';
import { isUniqueViolation } from '../database/postgres-errors.js';
import { WorkflowNotFoundError } from '../workflows/workflows.errors.js';
import { WorkflowsService } from '../workflows/workflows.service.js';
import type { CreateTriggerDto } from './dto/create-trigger.dto.js';
import type { ListTriggersQuery } from './dto/list-triggers.query.js';
import type { UpdateTriggerDto } from './dto/update-trigger.dto.js';
import { Trigger, type TriggerType } from './entities/trigger.entity.js';
import { TriggerRateLimits } from '../rate-limits/trigger-rate-limits.service.js';
import { TriggerSchedulesService, type ScheduleState } from './trigger-schedules.service.js';
import { parseTriggerConfiguration, presentTriggerConfiguration, type TriggerConfigurationMap } from './trigger-types/index.js';
import { InvalidStateTransitionError, ManagedTriggerError, TriggerAlreadyExistsError, TriggerNotFoundError } from './triggers.errors.js';

/** PostgreSQL's foreign_key_violation on the workflow reference (the workflow was deleted meanwhile). */
function isMissingWorkflow(error: unknown): boolean {
  if (!(error instanceof QueryFailedError)) return false;
  const driverError = error.driverError as { code?: string; detail?: string };
  return driverError.code === '23503' && (driverError.detail ?? '').includes('workflow_id');
}

@Injectable()
export class TriggersService {
  constructor(
    @InjectRepository(Trigger) private readonly triggers: Repository<Trigger>,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly workflows: WorkflowsService,
    private readonly schedules: TriggerSchedulesService,
    private readonly secretBox: SecretBox,
    private readonly config: AppConfig,
    private readonly rateLimits: TriggerRateLimits,
  ) {}

  async list(organizationId: string, query: ListTriggersQuery): Promise<[Trigger[], number]> {
    const where: FindOptionsWhere<Trigger> = { organizationId };
    if (query.type) where.type = query.type;
    if (query.status) where.status = query.status;
    if (query.workflow_id) where.workflowId = query.workflow_id;
    return this.triggers.findAndCount({ where, order: { createdAt: 'DESC', id: 'DESC' }, skip: query.offset, take: query.limit });
  }

  /** The caller's trigger, or 404 as if absent (another organization's, or a malformed id). Locked when in a transaction. */
  async getOwned(organizationId: string, id: string, manager?: EntityManager): Promise<Trigger> {
    if (!isUuid(id)) throw new TriggerNotFoundError();
    const repo = manager ? manager.getRepository(Trigger) : this.triggers;
    const trigger = await repo.findOne({ where: { id, organizationId }, lock: manager ? { mode: 'pessimistic_write' } : undefined });
    if (!trigger) throw new TriggerNotFoundError();
    return trigger;
  }

  /** The caller's trigger, locked, for a change: a workflow's managed trigger is 409 (it follows the workflow). */
  private async getChangeable(organizationId: string, id: string, manager: EntityManager): Promise<Trigger> {
    const trigger = await this.getOwned(organizationId, id, manager);
    if (trigger.managed) throw new ManagedTriggerError(trigger.workflowId);
    return trigger;
  }

  async create(organizationId: string, dto: CreateTriggerDto): Promise<Trigger> {
    const { configuration, secret } = parseTriggerConfiguration(dto.type, dto.configuration);
    await this.workflows.getOwned(organizationId, dto.workflow_id);
    // The id is known before the insert: the sealed secret is bound to it.
    const id = randomUUID();
    const now = new Date();
    const created = await this.writing(async (manager) => {
      const repo = manager.getRepository(Trigger);
      const trigger = await repo.save(
        repo.create({
          id,
          organizationId,
          workflowId: dto.workflow_id,
          name: dto.name,
          type: dto.type,
          status: 'active',
          channel: dto.channel ?? null,
          configuration: configuration as unknown as Record<string, unknown>,
          secretEncrypted: secret ? this.secretBox.seal(secret, id) : null,
          executionCount: 0,
          lastTriggered: null,
          activatedAt: now,
        }),
      );
      return trigger;
    });
    await this.schedules.apply(null, created);
    return created;
  }

  async update(organizationId: string, id: string, dto: UpdateTriggerDto): Promise<Trigger> {
    let before: ScheduleState | undefined;
    const saved = await this.writing(async (manager) => {
      const trigger = await this.getChangeable(organizationId, id, manager);
      before = scheduleState(trigger);
      if (dto.configuration !== undefined) {
        const { configuration, secret } = parseTriggerConfiguration(trigger.type, dto.configuration);
        trigger.configuration = configuration as unknown as Record<string, unknown>;
        if (secret !== undefined) trigger.secretEncrypted = secret === null ? null : this.secretBox.seal(secret, trigger.id);
      }
      if (dto.name !== undefined) trigger.name = dto.name;
      if (dto.channel !== undefined) trigger.channel = dto.channel;
      trigger.updatedAt = new Date();
      return manager.getRepository(Trigger).save(trigger);
    });
    // After the commit, so that no request reads the old row back into a cache meanwhile.
    await this.rateLimits.forget(saved.id);
    await this.schedules.apply(before!, saved);
    return saved;
  }

  async delete(organizationId: string, id: string): Promise<void> {
    const deleted = await this.writing(async (manager) => {
      const trigger = await this.getChangeable(organizationId, id, manager);
      await manager.getRepository(Trigger).delete({ id: trigger.id, organizationId });
      return trigger;
    });
    await this.rateLimits.forget(deleted.id);
    await this.schedules.apply(deleted, null);
  }

  /** From any state; activating an active trigger keeps its activated_at. */
  activate(organizationId: string, id: string): Promise<Trigger> {
    return this.transition(organizationId, id, (t, now) => {
      if (t.status === 'active' && t.activatedAt) return false;
      t.status = 'active';
      t.activatedAt = now;
      return true;
    });
  }

  /** From any state; deactivating an inactive trigger keeps its deactivated_at. */
  deactivate(organizationId: string, id: string): Promise<Trigger> {
    return this.transition(organizationId, id, (t, now) => {
      if (t.status === 'inactive' && t.deactivatedAt) return false;
      t.status = 'inactive';
      t.deactivatedAt = now;
      return true;
    });
  }

  /** From any state; pausing a paused trigger keeps its paused_at. */
  pause(organizationId: string, id: string): Promise<Trigger> {
    return this.transition(organizationId, id, (t, now) => {
      if (t.status === 'paused' && t.pausedAt) return false;
      t.status = 'paused';
      t.pausedAt = now;
      return true;
    });
  }

  /** Only from paused (409 INVALID_STATE_TRANSITION otherwise). */
  resume(organizationId: string, id: string): Promise<Trigger> {
    return this.transition(organizationId, id, (t, now) => {
      if (t.status !== 'paused') throw new InvalidStateTransitionError(`Only a paused trigger can be resumed; this one is ${t.status}`);
      t.status = 'active';
      t.resumedAt = now;
      return true;
    });
  }

  /** A webhook trigger's verification secret, decrypted; null when it has none. Throws when it cannot be decrypted (key changed). */
  webhookSecret(trigger: Pick<Trigger, 'id' | 'secretEncrypted'>): string | null {
    return trigger.secretEncrypted ? this.secretBox.open(trigger.secretEncrypted, trigger.id) : null;
  }

  /** The stored, normalised configuration of a trigger of the given type, typed; throws on a type mismatch. */
  configurationOf<T extends TriggerType>(trigger: Pick<Trigger, 'id' | 'type' | 'configuration'>, type: T): TriggerConfigurationMap[T] {
    if (trigger.type !== type) throw new Error(`Trigger ${trigger.id} is a ${trigger.type} trigger, not ${type}`);
    return trigger.configuration as unknown as TriggerConfigurationMap[T];
  }

  /** The configuration as clients see it; the webhook secret only when `withSecret` (create, get, update). */
  presentConfiguration(trigger: Trigger, withSecret: boolean): Record<string, unknown> {
    const secret = withSecret && trigger.type === 'webhook' ? this.webhookSecret(trigger) : undefined;
    return presentTriggerConfiguration(trigger, { id: trigger.id, publicBaseUrl: this.config.publicBaseUrl, secret });
  }

  /** Applies a state change under the row lock; `change` answers whether it changed anything. */
  private async transition(organizationId: string, id: string, change: (trigger: Trigger, now: Date) => boolean): Promise<Trigger> {
    let before: ScheduleState | undefined;
    const saved = await this.writing(async (manager) => {
      const trigger = await this.getChangeable(organizationId, id, manager);
      before = scheduleState(trigger);
      return change(trigger, new Date()) ? manager.getRepository(Trigger).save(trigger) : trigger;
    });
    // Also when nothing changed: re-adding heals a job lost from Redis.
    await this.schedules.apply(before!, saved);
    return saved;
  }

  /** Runs a write in a transaction; a name collision is 409 TRIGGER_ALREADY_EXISTS, a workflow deleted meanwhile 404. */
  private async writing<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    try {
      return await this.dataSource.transaction(work);
    } catch (error) {
      if (isUniqueViolation(error, 'uq_triggers_org_name')) throw new TriggerAlreadyExistsError();
      if (isMissingWorkflow(error)) throw new WorkflowNotFoundError();
      throw error;
    }
  }
}

/** A copy of what decides a trigger's schedule job, taken before the row is changed in place. */
function scheduleState(trigger: Trigger): ScheduleState {
  return { id: trigger.id, type: trigger.type, status: trigger.status, configuration: trigger.configuration };
}
