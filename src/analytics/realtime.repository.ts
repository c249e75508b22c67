import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { SqlStatement } from '../database/sql-statement.js';

export interface RealtimeWorkflowRow {
  workflow_id: string;
  name: string;
  active_executions: number;
  messages_in_last_hour: number;
  average_response_time_ms: number | null;
}

export interface RealtimeRow {
  active_executions: number;
  messages_in_last_hour: number;
  average_response_time_ms: number | null;
  workflows: RealtimeWorkflowRow[];
  channels: { channel: string; active_conversations: number; messages_in_last_hour: number }[];
}

/**
 * The last hour (`$4` = now - 1 hour) of one organization, optionally one workflow (`$2`) and one
 * channel (`$3`), in one statement that reads each source once: the running executions (through
 * the partial index of running executions) grouped by workflow and channel, the messages of the
 * hour (a message belongs to a workflow through the execution that sent or received it), and the
 * executions started within the hour that have finished (response time = their mean duration).
 * The totals, the 100 busiest workflows and the channels are folded from those groups.
 */
const REALTIME = new SqlStatement<RealtimeRow>(`
  WITH r AS MATERIALIZED (
    SELECT we.workflow_id, we.channel, count(*)::int AS n
      FROM workflow_executions we
     WHERE we.organization_id = $1 AND we.status = 'running' AND ($2::uuid IS NULL OR we.workflow_id = $2)
       AND ($3::text IS NULL OR we.channel = $3)
     GROUP BY 1, 2
  ), m AS MATERIALIZED (
    SELECT m.channel, we.workflow_id, count(*)::int AS n
      FROM messages m LEFT JOIN workflow_executions we ON we.id = m.execution_id
     WHERE m.organization_id = $1 AND m.created_at >= $4 AND ($3::text IS NULL OR m.channel = $3)
       AND ($2::uuid IS NULL OR we.workflow_id = $2)
     GROUP BY 1, 2
  ), f AS MATERIALIZED (
    SELECT we.workflow_id, count(*)::int AS n, sum(we.duration_ms)::numeric AS ms
      FROM workflow_executions we
     WHERE we.organization_id = $1 AND we.started_at >= $4 AND we.status <> 'running'
       AND ($2::uuid IS NULL OR we.workflow_id = $2) AND ($3::text IS NULL OR we.channel = $3)
     GROUP BY 1
  ), per_workflow AS (
    SELECT ids.workflow_id, COALESCE(rw.n, 0) AS running, COALESCE(mw.n, 0) AS messages, round(f.ms / NULLIF(f.n, 0))::int AS ms
      FROM (SELECT workflow_id FROM r UNION SELECT workflow_id FROM m WHERE workflow_id IS NOT NULL UNION SELECT workflow_id FROM f) ids
      LEFT JOIN (SELECT workflow_id, sum(n)::int AS n FROM r GROUP BY 1) rw ON rw.workflow_id = ids.workflow_id
      LEFT JOIN (SELECT workflow_id, sum(n)::int AS n FROM m GROUP BY 1) mw ON mw.workflow_id = ids.workflow_id
      LEFT JOIN f ON f.workflow_id = ids.workflow_id
  ), top AS (
    SELECT w.id AS workflow_id, w.name, p.running, p.messages, p.ms
      FROM per_workflow p JOIN workflows w ON w.id = p.workflow_id AND w.organization_id = $1
     ORDER BY p.running DESC, p.messages DESC, w.id LIMIT 100
  ), channels AS (
    SELECT COALESCE(rc.channel, mc.channel) AS channel, COALESCE(rc.n, 0) AS running, COALESCE(mc.n, 0) AS messages
      FROM (SELECT COALESCE(channel, 'unknown') AS channel, sum(n)::int AS n FROM r GROUP BY 1) rc
      FULL JOIN (SELECT channel, sum(n)::int AS n FROM m GROUP BY 1) mc ON mc.channel = rc.channel
  )
  SELECT (SELECT COALESCE(sum(n), 0)::int FROM r) AS active_executions,
         (SELECT COALESCE(sum(n), 0)::int FROM m) AS messages_in_last_hour,
         (SELECT round(sum(ms) / NULLIF(sum(n), 0))::int FROM f) AS average_response_time_ms,
         COALESCE((SELECT json_agg(json_build_object('workflow_id', workflow_id, 'name', name, 'active_executions', running,
                                                       'messages_in_last_hour', messages, 'average_response_time_ms', ms)
                                    ORDER BY running DESC, messages DESC, workflow_id) FROM top), '[]'::json) AS workflows,
         COALESCE((SELECT json_agg(json_build_object('channel', channel, 'active_conversations', running, 'messages_in_last_hour', messages)
                                    ORDER BY channel) FROM channels), '[]'::json) AS channels`);

export interface AccountBacklogRow {
  channel_account_id: string;
  name: string;
  channel: string;
  send_backlog: number;
  oldest_queued_at: Date | null;
}

/**
 * Each channel account of the organization (`$2`: one channel, or all) with its sends not yet settled
 * (queued, or being sent) and the oldest of them: by the partial index of pending sends, so a year of
 * settled sends is never read. At most 100 accounts, the longest backlogs first.
 */
const ACCOUNT_BACKLOGS = new SqlStatement<AccountBacklogRow>(`
  SELECT a.id AS channel_account_id, a.name, a.channel, COALESCE(p.n, 0)::int AS send_backlog, p.oldest AS oldest_queued_at
    FROM channel_accounts a
    LEFT JOIN LATERAL (
      SELECT count(*) AS n, min(d.queued_at) AS oldest FROM message_deliveries d
       WHERE d.channel_account_id = a.id AND d.status IN ('queued', 'sending')
    ) p ON true
   WHERE a.organization_id = $1 AND ($2::text IS NULL OR a.channel = $2)
   ORDER BY send_backlog DESC, a.created_at, a.id
   LIMIT 100`);

/** The statements as sent, for EXPLAIN scripts. */
export const REALTIME_STATEMENTS = { REALTIME, ACCOUNT_BACKLOGS };

/** The statement of `GET /v1/analytics/realtime`. */
@Injectable()
export class RealtimeRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  accountBacklogs(org: string, channel: string | null): Promise<AccountBacklogRow[]> {
    return ACCOUNT_BACKLOGS.run(this.dataSource, [org, channel]);
  }

  async realtime(org: string, workflowId: string | null, channel: string | null, now: Date): Promise<RealtimeRow> {
    return (await REALTIME.run(this.dataSource, [org, workflowId, channel, new Date(now.getTime() - 3_600_000)]))[0];
  }
}
