import { Injectable } from '@nestjs/common';
import { resolvePeriod, type Period } from '../common/date-range.js';
import { RollupFolder } from '../rollups/rollup-folder.js';
import { WorkflowsService } from '../workflows/workflows.service.js';
import type { MetricsQuery } from './dto/metrics.query.js';
import type {
  MetricsPeriodResponse,
  TriggerMetricsBucket,
  TriggerMetricsResponse,
  TriggerMetricsTotals,
  WorkflowMetricsResponse,
} from './dto/metrics.response.js';
import { ExecutionMetricsRepository, type ExecutionSummary, type SummaryRow } from './execution-metrics.repository.js';
import { isoTime } from '../common/iso-time.js';

function periodOf(period: Period): MetricsPeriodResponse {
  return { start_date: isoTime(period.start), end_date: isoTime(period.end) };
}

function totals(summary: ExecutionSummary): TriggerMetricsTotals {
  const t = summary.totals;
  return {
    total_executions: t.executions,
    successful_executions: t.successful,
    failed_executions: t.failed,
    success_rate: t.success_rate,
    average_duration_ms: t.average_duration_ms,
    unique_customers: t.unique_customers,
    channel_breakdown: summary.channels,
  };
}

function bucket(row: SummaryRow & { date: Date }): TriggerMetricsBucket {
  return { date: isoTime(row.date), executions: row.executions, success_rate: row.success_rate, average_duration_ms: row.average_duration_ms };
}

/**
 * Execution metrics of one workflow or trigger over a period, per `granularity` bucket. Ownership
 * is checked first, then the period; the rollups are caught up with the change log before they
 * are read (RollupFolder). Triggers arrive owned (TriggersService.getOwned, called by the
 * triggers module, which depends on this one).
 */
@Injectable()
export class ExecutionMetricsService {
  constructor(
    private readonly repository: ExecutionMetricsRepository,
    private readonly workflows: WorkflowsService,
    private readonly rollups: RollupFolder,
  ) {}

  async forWorkflow(organizationId: string, workflowId: string, query: MetricsQuery, now = new Date()): Promise<WorkflowMetricsResponse> {
    const workflow = await this.workflows.getOwned(organizationId, workflowId);
    const period = resolvePeriod(query, now);
    await this.rollups.catchUp();
    const summary = await this.repository.workflow(organizationId, workflow.id, period);
    return {
      workflow_id: workflow.id,
      period: periodOf(period),
      metrics: {
        ...totals(summary),
        total_messages_sent: summary.totals.messages_sent ?? 0,
        total_messages_received: summary.totals.messages_received ?? 0,
      },
      daily_metrics: summary.buckets.map((row) => ({
        ...bucket(row),
        messages_sent: row.messages_sent ?? 0,
        messages_received: row.messages_received ?? 0,
        unique_customers: row.unique_customers,
      })),
    };
  }

  /**
   * Distinct customers of a workflow over a UTC period, overall and per UTC bucket (only buckets
   * with executions), from the rollups' customer sketches: exact up to 2,048 customers, a
   * HyperLogLog estimate (0.81% standard error) beyond. For analytics, which buckets in UTC alike.
   */
  async workflowCustomers(organizationId: string, workflowId: string, period: Period): Promise<{ total: number; buckets: { date: Date; unique_customers: number }[] }> {
    await this.rollups.catchUp();
    const summary = await this.repository.workflow(organizationId, workflowId, period);
    return { total: summary.totals.unique_customers, buckets: summary.buckets.map((b) => ({ date: b.date, unique_customers: b.unique_customers })) };
  }

  async forTrigger(organizationId: string, triggerId: string, query: MetricsQuery, now = new Date()): Promise<TriggerMetricsResponse> {
    const period = resolvePeriod(query, now);
    await this.rollups.catchUp();
    const summary = await this.repository.trigger(organizationId, triggerId, period);
    return { trigger_id: triggerId, period: periodOf(period), metrics: totals(summary), daily_metrics: summary.buckets.map(bucket) };
  }
}
