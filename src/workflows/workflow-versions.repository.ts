import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { CredentialType } from '../auth/access.js';
import { isoTimeSql } from '../common/iso-time.js';
import { SqlStatement } from '../database/sql-statement.js';
import type { WorkflowConfiguration } from './workflow-graph.validator.js';

/** A version as the history lists it (timestamps already ISO-8601 text), without its configuration. */
export interface WorkflowVersionSummaryRow {
  version: number;
  name: string | null;
  description: string | null;
  channel: string | null;
  createdByType: CredentialType | null;
  createdById: string | null;
  createdByUserId: string | null;
  createdAt: string;
}

export interface WorkflowVersionRow extends WorkflowVersionSummaryRow {
  workflowId: string;
  configuration: WorkflowConfiguration;
}

const SUMMARY_COLUMNS = `v.version, v.name, v.description, v.channel, v.created_by_type AS "createdByType", v.created_by_id AS "createdById",
  v.created_by_user_id AS "createdByUserId", ${isoTimeSql('v.created_at')} AS "createdAt"`;

/**
 * One page of a workflow's versions, newest first, and how many it has, in one round trip: the
 * workflow's row (by primary key, in the caller's organization) carries the total (an index-only count
 * of the workflow's own entries, once: the CTE is materialized, or it would run for each row of the
 * page; a workflow's versions are all of its organization), and the page is
 * joined to it, so an owned workflow always answers one row (a page past the end: the total and a
 * NULL version) and another organization's, or none, answers none. The page walks
 * uq_workflow_versions_workflow_version (workflow_id, version) backwards from `$3` (exclusive:
 * a cursor's version, else 2^31), so a deep cursor costs what the first page costs. `$1` workflow,
 * `$2` organization, `$4` LIMIT, `$5` OFFSET.
 */
const PAGE = new SqlStatement<Partial<WorkflowVersionSummaryRow> & { total: number }>(
  `WITH w AS MATERIALIZED (
     SELECT w.id, w.organization_id, (SELECT count(*)::int FROM workflow_versions c WHERE c.workflow_id = w.id) AS total
       FROM workflows w WHERE w.id = $1 AND w.organization_id = $2)
   SELECT w.total, p.*
     FROM w
     LEFT JOIN LATERAL (
       SELECT ${SUMMARY_COLUMNS} FROM workflow_versions v
        WHERE v.workflow_id = w.id AND v.organization_id = w.organization_id AND v.version < $3::bigint
        ORDER BY v.version DESC LIMIT $4 OFFSET $5) p ON true
    ORDER BY p.version DESC`,
  { prepareAs: 'workflow-versions.page' },
);

/** One version of an owned workflow; `found` false when the workflow is another organization's or absent, `version` null when the version is. */
const ONE = new SqlStatement<Partial<WorkflowVersionRow>>(
  `SELECT w.id AS "workflowId", p.*
     FROM workflows w
     LEFT JOIN LATERAL (
       SELECT ${SUMMARY_COLUMNS}, v.configuration FROM workflow_versions v
        WHERE v.workflow_id = w.id AND v.organization_id = w.organization_id AND v.version = $3) p ON true
    WHERE w.id = $1 AND w.organization_id = $2`,
  { prepareAs: 'workflow-versions.one' },
);

/** Above every version a workflow can reach (an int). */
export const NO_VERSION_CURSOR = 2 ** 31;

export const WORKFLOW_VERSIONS_PAGE = PAGE;

/** The reads of a workflow's history, in SQL (writes are WorkflowsService's, in the change's transaction). */
@Injectable()
export class WorkflowVersionsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** null: no such workflow in the organization. */
  async page(
    organizationId: string,
    workflowId: string,
    before: number,
    limit: number,
    offset: number,
  ): Promise<{ rows: WorkflowVersionSummaryRow[]; total: number } | null> {
    const rows = await PAGE.run(this.dataSource, [workflowId, organizationId, before, limit, offset]);
    if (rows.length === 0) return null;
    const total = rows[0]!.total;
    return { rows: rows.filter((r) => r.version !== null && r.version !== undefined) as WorkflowVersionSummaryRow[], total };
  }

  /** undefined: no such workflow in the organization; null: the workflow has no such version. */
  async one(organizationId: string, workflowId: string, version: number): Promise<WorkflowVersionRow | null | undefined> {
    const [row] = await ONE.run(this.dataSource, [workflowId, organizationId, version]);
    if (!row) return undefined;
    return row.version === null || row.version === undefined ? null : (row as WorkflowVersionRow);
  }
}
