import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { isDeepStrictEqual } from 'node:util';
import { DataSource, type EntityManager, type Repository } from 'typeorm';
import type { Principal } from '../auth/access.js';
import { InvalidRequestError } from '../common/errors/common.errors.js';
import { isUuid } from '../common/ids/uuid.js';
import { decodeCursor, encodeCursor } from '../common/pagination/cursor.js';
import type { CursorPageQuery } from '../common/pagination/page.query.js';
import { isUniqueViolation } from '../database/postgres-errors.js';
import type { CreateWorkflowDto } from './dto/create-workflow.dto.js';
import type { ListWorkflowsQuery } from './dto/list-workflows.query.js';
import type { UpdateWorkflowDto } from './dto/update-workflow.dto.js';
import { WorkflowVersion } from './entities/workflow-version.entity.js';
import { Workflow, type WorkflowSummaryRow } from './entities/workflow.entity.js';
import { validateWorkflowConfiguration, type WorkflowConfiguration } from './workflow-graph.validator.js';
import { InvalidWorkflowConfigError, WorkflowAlreadyExistsError, WorkflowNotFoundError, WorkflowVersionNotFoundError } from './workflows.errors.js';
import { WorkflowsRepository } from './workflows.repository.js';
import { NO_VERSION_CURSOR, WorkflowVersionsRepository, type WorkflowVersionRow, type WorkflowVersionSummaryRow } from './workflow-versions.repository.js';

const VERSION_CACHE_SIZE = 1000;
/** The largest version number (the column is an int). */
const MAX_VERSION = 2 ** 31 - 1;

/** Who writes a version: the caller's credential (and, for an OAuth token, its user). */
export type VersionAuthor = Pick<Principal, 'credentialType' | 'credentialId' | 'userId'>;

/** See WorkflowsService.onDelete. */
export type WorkflowDeletionListener = (organizationId: string, workflowId: string) => Promise<() => Promise<void>>;

@Injectable()
export class WorkflowsService {
  private readonly deletionListeners: WorkflowDeletionListener[] = [];
  private readonly versionCache = new Map<string, WorkflowConfiguration>();

  constructor(
    @InjectRepository(Workflow) private readonly workflows: Repository<Workflow>,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly reads: WorkflowsRepository,
    private readonly versions: WorkflowVersionsRepository,
  ) {}

  list(organizationId: string, query: ListWorkflowsQuery): Promise<[WorkflowSummaryRow[], number, string | null]> {
    return this.reads.findPage(organizationId, query);
  }

  /** The organization's active workflows (or whether `workflowId`, when given, is one of them: 0 or 1). */
  async countActive(organizationId: string, workflowId?: string): Promise<number> {
    if (workflowId === undefined) return this.reads.countByStatus(organizationId, 'active');
    if (!isUuid(workflowId)) return 0;
    return (await this.reads.findOwned(organizationId, workflowId))?.status === 'active' ? 1 : 0;
  }

  /** The caller's workflow, or 404 as if absent (another organization's, or a malformed id). */
  async getOwned(organizationId: string, id: string): Promise<Workflow> {
    if (!isUuid(id)) throw new WorkflowNotFoundError();
    const workflow = await this.reads.findOwned(organizationId, id);
    if (!workflow) throw new WorkflowNotFoundError();
    return workflow;
  }

  /** getOwned for a write: the row, locked until the transaction ends, as an entity to save back. */
  private async lockOwned(manager: EntityManager, organizationId: string, id: string): Promise<Workflow> {
    if (!isUuid(id)) throw new WorkflowNotFoundError();
    const workflow = await manager.getRepository(Workflow).findOne({ where: { id, organizationId }, lock: { mode: 'pessimistic_write' } });
    if (!workflow) throw new WorkflowNotFoundError();
    return workflow;
  }

  async create(organizationId: string, dto: CreateWorkflowDto, author: VersionAuthor): Promise<Workflow> {
    const configuration = validateWorkflowConfiguration(dto.configuration ?? { nodes: [] });
    return this.writing(async (manager) => {
      const workflow = await manager.getRepository(Workflow).save(
        manager.getRepository(Workflow).create({
          organizationId,
          name: dto.name,
          description: dto.description ?? null,
          channel: dto.channel ?? null,
          status: 'draft',
          configuration,
          version: 1,
        }),
      );
      await this.saveVersion(manager, workflow, author);
      return workflow;
    });
  }

  /**
   * A configuration that differs from the current one (deep equality) is a new version, written with
   * the workflow in one transaction; a change of name, description or channel alone is not (the
   * version counts configurations, which executions pin).
   */
  async update(organizationId: string, id: string, dto: UpdateWorkflowDto, author: VersionAuthor): Promise<Workflow> {
    const configuration = dto.configuration === undefined ? undefined : validateWorkflowConfiguration(dto.configuration);
    return this.writing(async (manager) => {
      const workflow = await this.lockOwned(manager, organizationId, id);
      if (dto.name !== undefined) workflow.name = dto.name;
      if (dto.description !== undefined) workflow.description = dto.description;
      if (dto.channel !== undefined) workflow.channel = dto.channel;
      if (configuration && !isDeepStrictEqual(configuration, workflow.configuration)) {
        if (workflow.status === 'active') assertRunnable(configuration);
        workflow.version += 1;
        workflow.configuration = configuration;
        await this.saveVersion(manager, workflow, author);
      }
      workflow.updatedAt = new Date();
      return manager.getRepository(Workflow).save(workflow);
    });
  }

  /**
   * Lets a module that keeps state outside the database for a workflow's rows (the schedule jobs of
   * its triggers) take note before the workflow is deleted, and act once the deletion is committed.
   * The listener returns what to run after the commit.
   */
  onDelete(listener: WorkflowDeletionListener): void {
    this.deletionListeners.push(listener);
  }

  async delete(organizationId: string, id: string): Promise<void> {
    if (!isUuid(id)) throw new WorkflowNotFoundError();
    const afterwards = await Promise.all(this.deletionListeners.map((listener) => listener(organizationId, id)));
    const result = await this.workflows.delete({ id, organizationId });
    if (!result.affected) throw new WorkflowNotFoundError();
    for (const run of afterwards) await run();
  }

  /** Idempotent: activating an active workflow keeps its activated_at. */
  async activate(organizationId: string, id: string): Promise<Workflow> {
    return this.writing(async (manager) => {
      const workflow = await this.lockOwned(manager, organizationId, id);
      assertRunnable(workflow.configuration);
      if (workflow.status === 'active' && workflow.activatedAt) return workflow;
      workflow.status = 'active';
      workflow.activatedAt = new Date();
      return manager.getRepository(Workflow).save(workflow);
    });
  }

  /** Idempotent: deactivating an inactive workflow keeps its deactivated_at. */
  async deactivate(organizationId: string, id: string): Promise<Workflow> {
    return this.writing(async (manager) => {
      const workflow = await this.lockOwned(manager, organizationId, id);
      if (workflow.status === 'inactive' && workflow.deactivatedAt) return workflow;
      workflow.status = 'inactive';
      workflow.deactivatedAt = new Date();
      return manager.getRepository(Workflow).save(workflow);
    });
  }

  /** The configuration an execution pins. Versions are immutable, so they are cached once read. */
  async getVersion(workflowId: string, version: number): Promise<WorkflowConfiguration | null> {
    const key = `${workflowId}:${version}`;
    const cached = this.versionCache.get(key);
    if (cached) return cached;
    const row = await this.dataSource.getRepository(WorkflowVersion).findOne({ where: { workflowId, version } });
    if (!row) return null;
    if (this.versionCache.size >= VERSION_CACHE_SIZE) this.versionCache.delete(this.versionCache.keys().next().value as string);
    this.versionCache.set(key, row.configuration);
    return row.configuration;
  }

  /**
   * A workflow's versions, newest first, by `page` or by keyset cursor (`after`: the page after that
   * version, constant time however deep). 404 as the workflow route for another organization's.
   */
  async listVersions(organizationId: string, workflowId: string, query: CursorPageQuery): Promise<[WorkflowVersionSummaryRow[], number, string | null]> {
    if (!isUuid(workflowId)) throw new WorkflowNotFoundError();
    const before = query.after !== undefined ? versionCursor(query.after, workflowId) : NO_VERSION_CURSOR;
    const offset = query.after !== undefined ? 0 : query.offset;
    const page = await this.versions.page(organizationId, workflowId, before, query.limit, offset);
    if (!page) throw new WorkflowNotFoundError();
    const last = page.rows[page.rows.length - 1];
    const more = last !== undefined && page.rows.length === query.limit && last.version > 1;
    return [page.rows, page.total, more ? encodeCursor({ micros: String(last.version), id: workflowId.toLowerCase() }) : null];
  }

  /** One version of the caller's workflow: 404 WORKFLOW_NOT_FOUND as the workflow route, 404 WORKFLOW_VERSION_NOT_FOUND, 400 on `version` when it is no version number. */
  async getVersionOwned(organizationId: string, workflowId: string, version: string): Promise<WorkflowVersionRow> {
    if (!isUuid(workflowId)) throw new WorkflowNotFoundError();
    const n = /^[1-9][0-9]{0,9}$/.test(version) ? Number(version) : NaN;
    if (!(n <= MAX_VERSION)) throw new InvalidRequestError(`version must be an integer from 1 to ${MAX_VERSION}`, 'version');
    const row = await this.versions.one(organizationId, workflowId, n);
    if (row === undefined) throw new WorkflowNotFoundError();
    if (row === null) throw new WorkflowVersionNotFoundError();
    return row;
  }

  /** The workflow's current version as a row of its history: its configuration, name, description and channel, and who wrote it. */
  private async saveVersion(manager: EntityManager, workflow: Workflow, author: VersionAuthor) {
    const versions = manager.getRepository(WorkflowVersion);
    await versions.save(
      versions.create({
        organizationId: workflow.organizationId,
        workflowId: workflow.id,
        version: workflow.version,
        configuration: workflow.configuration,
        name: workflow.name,
        description: workflow.description,
        channel: workflow.channel,
        createdByType: author.credentialType,
        createdById: author.credentialId,
        createdByUserId: author.userId ?? null,
      }),
    );
  }

  /** Runs a write in a transaction and turns a name collision into 409 WORKFLOW_ALREADY_EXISTS. */
  private async writing<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    try {
      return await this.dataSource.transaction(work);
    } catch (error) {
      if (isUniqueViolation(error, 'uq_workflows_org_name')) throw new WorkflowAlreadyExistsError();
      throw error;
    }
  }
}

/** The version a history cursor continues below; 400 on `after` for a cursor of another list or workflow. */
function versionCursor(after: string, workflowId: string): number {
  const cursor = decodeCursor(after);
  const version = Number(cursor.micros);
  if (cursor.id !== workflowId.toLowerCase() || !Number.isInteger(version) || version < 2 || version > MAX_VERSION) {
    throw new InvalidRequestError("after must be a pagination.next_cursor of this workflow's versions", 'after');
  }
  return version;
}

function assertRunnable(configuration: WorkflowConfiguration): void {
  if (configuration.nodes.length === 0) {
    throw new InvalidWorkflowConfigError('A workflow needs at least one node to be active', 'configuration.nodes');
  }
}
