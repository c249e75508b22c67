import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { SqlStatement } from '../database/sql-statement.js';
import { foldRollups } from '../rollups/rollup-folder.js';
import { journeySplit, NODE_FACTS, rawExecutions, splitValues, type JourneySplit } from './analytics-sql.js';
import { outcomeFacts } from './journey-facts.js';

/**
 * The organization's most-executed workflow of the period (ties: the oldest id): whole UTC days
 * from workflow_outcome_days (through its organization and day index), the raw ranges from the
 * executions (organization and time index). Values: `$1` organization, `$2..$9` a JourneySplit.
 */
const TOP_WORKFLOW = new SqlStatement<{ workflow_id: string }>(`
  WITH facts AS (
    SELECT workflow_id, $4::int AS n FROM workflow_executions
     WHERE organization_id = $1 AND started_at >= $2::timestamptz AND started_at < $3::timestamptz
    UNION ALL
    SELECT workflow_id, $7::int FROM workflow_executions
     WHERE organization_id = $1 AND started_at >= $5::timestamptz AND started_at < $6::timestamptz
    UNION ALL
    SELECT workflow_id, executions FROM workflow_outcome_days WHERE organization_id = $1 AND day >= $8::timestamptz AND day < $9::timestamptz
  )
  SELECT workflow_id FROM facts GROUP BY workflow_id HAVING sum(n) > 0 ORDER BY sum(n) DESC, workflow_id LIMIT 1`);

export interface OutcomeRow {
  status: 'running' | 'success' | 'failed';
  /** Where it stopped or waits; '' = none known (the entry node). */
  stop_node: string;
  code: string;
  waits: boolean;
  executions: number;
  duration_sum: number;
  timed: number;
}

/**
 * A workflow's executions of the period by outcome (src/analytics/journey-facts.ts): whole UTC days
 * `[$9, $10)` from workflow_outcome_days, the raw ranges `$3..$8` from the executions.
 */
const JOURNEY_OUTCOMES = new SqlStatement<OutcomeRow>(`
  WITH edge AS (${rawExecutions(`we.duration_ms, ${outcomeFacts('we')}`)}),
  facts AS (
    SELECT status, stop_node, code, waits, sign AS executions, sign * COALESCE(duration_ms, 0)::bigint AS duration_sum,
           CASE WHEN duration_ms IS NULL THEN 0 ELSE sign END AS timed
      FROM edge
    UNION ALL
    SELECT o.status, o.stop_node, o.code, o.waits, o.executions, o.duration_sum, o.timed
      FROM workflow_outcome_days o WHERE o.workflow_id = $2 AND o.organization_id = $1 AND o.day >= $9::timestamptz AND o.day < $10::timestamptz
  )
  SELECT status, stop_node, code, waits, sum(executions)::int AS executions, sum(duration_sum)::float8 AS duration_sum, sum(timed)::int AS timed
    FROM facts GROUP BY status, stop_node, code, waits HAVING sum(executions) <> 0 OR sum(timed) <> 0`);

export interface JourneyNodeRow {
  node_id: string;
  steps: number;
  completed: number;
  average_duration_ms: number | null;
}

/** Steps per node (all its types) of the period's executions. */
const JOURNEY_NODES = new SqlStatement<JourneyNodeRow>(`${NODE_FACTS}
  SELECT node_id, sum(steps)::int AS steps, sum(completed)::int AS completed,
         round(sum(duration_sum)::numeric / NULLIF(sum(steps), 0))::int AS average_duration_ms
    FROM facts GROUP BY node_id HAVING sum(steps) <> 0`);

/** The statements as sent, for EXPLAIN scripts. */
export const JOURNEY_STATEMENTS = { TOP_WORKFLOW, JOURNEY_OUTCOMES, JOURNEY_NODES };

/** The statements of `GET /v1/analytics/customers/journey`. */
@Injectable()
export class JourneysRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async topWorkflow(org: string, start: Date, end: Date, split = journeySplit(start, end)): Promise<string | undefined> {
    // The outcome and node rollups are folded from change logs: everything logged so far first (RollupFolder).
    await foldRollups(this.dataSource);
    const [a, b] = split.ranges;
    const values = [org, a.from, a.to, a.sign, b.from, b.to, b.sign, split.daysFrom, split.daysTo];
    return (await TOP_WORKFLOW.run(this.dataSource, values))[0]?.workflow_id;
  }

  /** A workflow's outcomes and node figures of the period (`split` defaults to journeySplit; rawJourneySplit reads only rows). */
  async journey(org: string, workflowId: string, start: Date, end: Date, split = journeySplit(start, end)) {
    await foldRollups(this.dataSource);
    const values = [org, workflowId, ...splitValues(split)];
    const [outcomes, nodes] = await Promise.all([JOURNEY_OUTCOMES.run(this.dataSource, values), JOURNEY_NODES.run(this.dataSource, values)]);
    return { outcomes, nodes };
  }
}
