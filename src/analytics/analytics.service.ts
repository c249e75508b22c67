import type { Granularity } from '../common/date-range.js';
import { ExecutionMetricsService } from '../execution-metrics/execution-metrics.service.js';
import { RollupFolder } from '../rollups/rollup-folder.js';
import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { isUuid } from '../common/ids/uuid.js';
import { HealthService } from '../health/health.service.js';
import { RedisService } from '../redis/redis.service.js';
import { WorkflowsService } from '../workflows/workflows.service.js';
import { InvalidMetricsError, WorkflowNotFoundError } from './analytics.errors.js';
import { hourSplit, type HourSplit } from '../common/period-split.js';
import { resolveAnalyticsPeriod, resolveTimezone, toZonedIso, wholeHourOffsets, type AnalyticsPeriod, type AnalyticsPeriodInput } from './analytics-period.js';
import { EngagementRepository } from './engagement.repository.js';
import { JourneysRepository, type JourneyNodeRow, type OutcomeRow } from './journeys.repository.js';
import { PerformanceRepository } from './performance.repository.js';
import { RealtimeRepository } from './realtime.repository.js';
import { HANDED_OFF_CODE, type DeliveryCounts } from './workflow-analytics.repository.js';
import { WorkflowAnalyticsRepository, type GroupRow } from './workflow-analytics.repository.js';
import {
  WORKFLOW_METRICS,
  type EngagementQuery,
  type JourneyQuery,
  type PerformanceQuery,
  type RealtimeQuery,
  type WorkflowAnalyticsQuery,
  type WorkflowListQuery,
  type WorkflowMetricName,
} from './dto/analytics.query.js';
import type {
  AnalyticsPeriodResponse,
  ChannelEngagementResponse,
  DropOffResponse,
  EngagementResponse,
  GroupFigures,
  HealthState,
  JourneyResponse,
  PerformanceResponse,
  RealtimeResponse,
  Trend,
  WorkflowAnalyticsBucket,
  WorkflowAnalyticsMetrics,
  WorkflowAnalyticsResponse,
  WorkflowSummaryAnalytics,
} from './dto/analytics.response.js';
import { RecentReading, SystemReadings } from './system-readings.js';
import { isoTime } from '../common/iso-time.js';

const HOUR_MS = 3_600_000;
/** Jobs waiting in the execution queue beyond which the system is `degraded`. */
export const QUEUE_BACKLOG_THRESHOLD = 1000;
/**
 * How old a system-health check realtime may report: requests within a second share one check
 * (readiness's database and Redis checks, then the queue's length) instead of making three round
 * trips each (docs/DECISIONS.md "Analytics", "Realtime").
 */
export const SYSTEM_HEALTH_MAX_AGE_MS = 1000;
const TIMEOUT_REASON = 'no reply before the conversation expired';
/** Drop-off reasons in words; other codes are shown as they are. A person's takeover is `handed_off`. */
const REASON_TEXT: Record<string, string> = { CONVERSATION_TIMEOUT: TIMEOUT_REASON, [HANDED_OFF_CODE]: 'handed_off' };

/** docs/DECISIONS.md "Analytics", "Definitions": the second half against the first, beyond ±5% is a trend. No data in either half: stable. */
export function trendOf(first: number | null, second: number | null): Trend {
  if (first === null || second === null) return 'stable';
  if (first === 0) return second > 0 ? 'increasing' : second < 0 ? 'decreasing' : 'stable';
  const change = (second - first) / Math.abs(first);
  return change > 0.05 ? 'increasing' : change < -0.05 ? 'decreasing' : 'stable';
}

function groupFigures(row: GroupRow): GroupFigures {
  return {
    executions: row.executions,
    successful_executions: row.successful,
    failed_executions: row.failed,
    success_rate: row.success_rate,
    average_duration_ms: row.average_duration_ms,
    unique_customers: row.unique_customers,
  };
}

const EMPTY_ROW: Omit<GroupRow, 'kind' | 'key'> = {
  executions: 0, successful: 0, failed: 0, success_rate: null, average_duration_ms: null, messages_sent: 0, messages_received: 0, unique_customers: 0,
};

const DELIVERY_METRICS = ['messages_delivered', 'messages_read', 'delivery_rate', 'read_rate'] as const;

/** Delivery figures from the counts: null where no send through a provider has settled (or they were not asked for). */
export function deliveryFigures(d: DeliveryCounts | null): Pick<Required<WorkflowAnalyticsMetrics>, (typeof DELIVERY_METRICS)[number]> {
  if (!d || d.concluded === 0) return { messages_delivered: null, messages_read: null, delivery_rate: null, read_rate: null };
  return {
    messages_delivered: d.delivered,
    messages_read: d.read,
    delivery_rate: d.delivered / d.concluded,
    read_rate: d.delivered === 0 ? null : d.read / d.delivered,
  };
}

/** Where trends split a period: its middle, down to the hour (so that rollup hours fall wholly in one half). */
export function halfway(p: { start: Date; end: Date }): Date {
  const middle = p.start.getTime() + Math.floor((p.end.getTime() - p.start.getTime()) / 2);
  return new Date(Math.floor(middle / HOUR_MS) * HOUR_MS);
}

/** No rollup hours: the whole period from the executions. */
function rawOnly(p: { start: Date; end: Date }): HourSplit {
  return { rawFrom: p.start, rawTo: p.start, rawFrom2: p.start, rawTo2: p.end, hoursFrom: p.start, hoursTo: p.start };
}

/** The requested metric names (default all); unknown ones are 400 INVALID_METRICS. */
export function selectMetrics(requested: string[] | undefined): WorkflowMetricName[] {
  if (!requested || requested.length === 0) return [...WORKFLOW_METRICS];
  const unknown = requested.filter((m) => !(WORKFLOW_METRICS as readonly string[]).includes(m));
  if (unknown.length > 0) throw new InvalidMetricsError([...new Set(unknown)], WORKFLOW_METRICS);
  return [...new Set(requested)] as WorkflowMetricName[];
}

/**
 * Analytics over recorded executions, steps, messages and form answers, never invented: no source data is null. Each method
 * resolves the zone, then ownership, then the period, so a request reports faults in that order.
 */
@Injectable()
export class AnalyticsService implements OnApplicationBootstrap {
  private zones?: Promise<Map<string, string>>;
  private readonly readings = new SystemReadings();
  private readonly recentHealth = new RecentReading(() => this.systemHealth(), SYSTEM_HEALTH_MAX_AGE_MS);

  constructor(
    private readonly workflowAnalytics: WorkflowAnalyticsRepository,
    private readonly performanceFigures: PerformanceRepository,
    private readonly engagementFigures: EngagementRepository,
    private readonly journeys: JourneysRepository,
    private readonly realtimeFigures: RealtimeRepository,
    private readonly workflows: WorkflowsService,
    private readonly health: HealthService,
    private readonly redis: RedisService,
    private readonly executionMetrics: ExecutionMetricsService,
    private readonly rollups: RollupFolder,
    private readonly config: AppConfig,
  ) {}

  /**
   * An API process reads PostgreSQL's zone names as it starts (about 0.1 s, PostgreSQL reads them from its
   * files), not during the first analytics request. A failure is retried by that request.
   */
  onApplicationBootstrap(): void {
    if (this.config.servesHttp) this.knownZones().catch(() => undefined);
  }

  /** An IANA zone known to both PostgreSQL and Intl, canonically spelled; 400 INVALID_REQUEST (timezone) otherwise. */
  async timezone(value: string | undefined): Promise<string> {
    if (value === undefined) return 'UTC';
    return resolveTimezone(value, await this.knownZones());
  }

  private knownZones(): Promise<Map<string, string>> {
    this.zones ??= this.workflowAnalytics.timezones().catch((error: unknown) => {
      this.zones = undefined;
      throw error;
    });
    return this.zones;
  }

  private async period(input: AnalyticsPeriodInput, now: Date, withGranularity = false): Promise<AnalyticsPeriod> {
    return resolveAnalyticsPeriod(input, await this.timezone(input.timezone), now, withGranularity);
  }

  private periodOf(p: AnalyticsPeriod): AnalyticsPeriodResponse {
    return { start_date: toZonedIso(p.start, p.timezone), end_date: toZonedIso(p.end, p.timezone), timezone: p.timezone };
  }

  async workflow(org: string, workflowId: string, query: WorkflowAnalyticsQuery, now = new Date()): Promise<WorkflowAnalyticsResponse> {
    const timezone = await this.timezone(query.timezone);
    const workflow = await this.workflows.getOwned(org, workflowId);
    const p = resolveAnalyticsPeriod(query, timezone, now, true);
    await this.rollups.catchUp();
    const selected = selectMetrics(query.metrics);
    const middle = halfway(p);
    const split = wholeHourOffsets(p.timezone, p.start, p.end) ? hourSplit(p.start, p.end) : rawOnly(p);
    const wantsDeliveries = selected.some((m) => (DELIVERY_METRICS as readonly string[]).includes(m));
    const [rows, customers, satisfaction, groups, buckets, deliveries, handedOff] = await Promise.all([
      this.workflowAnalytics.workflowCounts(org, workflow.id, split, p.timezone, p.granularity, middle),
      this.workflowCustomers(org, workflow.id, p),
      selected.includes('customer_satisfaction') ? this.workflowAnalytics.workflowSatisfaction(org, workflow.id, p.start, p.end) : null,
      query.group_by && query.group_by.length > 0 ? this.workflowAnalytics.workflowGroups(org, workflow.id, p.start, p.end) : [],
      this.workflowAnalytics.buckets(p.start, p.end, p.timezone, p.granularity),
      wantsDeliveries ? this.workflowAnalytics.workflowDeliveries(org, workflow.id, p.start, p.end) : null,
      selected.includes('handoff_rate') ? this.workflowAnalytics.workflowHandoffs(org, workflow.id, p.start, p.end) : null,
    ]);
    const customersIn = new Map(customers.map((c) => [c.kind === 'total' ? null : c.key, c.unique_customers]));
    const total = rows.find((r) => r.kind === 'total') ?? { kind: 'total', key: null, ...EMPTY_ROW };
    const byKind = (kind: GroupRow['kind']) => rows.filter((r) => r.kind === kind);
    const channels = Object.fromEntries(byKind('channel').map((r) => [r.key ?? 'unknown', r.executions]));
    const all: Required<WorkflowAnalyticsMetrics> = {
      total_executions: total.executions,
      successful_executions: total.successful,
      failed_executions: total.failed,
      success_rate: total.success_rate,
      average_duration_ms: total.average_duration_ms,
      total_messages_sent: total.messages_sent,
      total_messages_received: total.messages_received,
      unique_customers: customersIn.get(null) ?? 0,
      customer_satisfaction: satisfaction,
      channel_breakdown: channels,
      ...deliveryFigures(deliveries),
      handoff_rate: handedOff === null || total.executions === 0 ? null : handedOff / total.executions,
    };
    const metrics: WorkflowAnalyticsMetrics = {};
    for (const name of selected) (metrics as Record<string, unknown>)[name] = all[name];

    const half = (key: '1' | '2') => byKind('half').find((r) => r.key === key) ?? { kind: 'half' as const, key, ...EMPTY_ROW };
    const [first, second] = [half('1'), half('2')];
    const bucketRows = new Map(byKind('bucket').map((r) => [r.key, r]));
    const daily: WorkflowAnalyticsBucket[] = buckets.map((b) => {
      const r = bucketRows.get(b.key) ?? { kind: 'bucket' as const, key: b.key, ...EMPTY_ROW };
      return {
        date: toZonedIso(b.start, p.timezone),
        executions: r.executions,
        success_rate: r.success_rate,
        average_duration_ms: r.average_duration_ms,
        messages_sent: r.messages_sent,
        messages_received: r.messages_received,
        unique_customers: customersIn.get(b.key) ?? 0,
      };
    });
    const response: WorkflowAnalyticsResponse = {
      workflow_id: workflow.id,
      period: this.periodOf(p),
      metrics,
      trends: {
        execution_trend: trendOf(first.executions, second.executions),
        success_rate_trend: trendOf(first.success_rate, second.success_rate),
        duration_trend: trendOf(first.average_duration_ms, second.average_duration_ms),
      },
      daily_metrics: daily,
    };
    if (query.group_by && query.group_by.length > 0) {
      response.groups = {};
      for (const g of new Set(query.group_by)) {
        const fallback = g === 'trigger' ? 'none' : 'unknown';
        response.groups[g] = Object.fromEntries(groups.filter((r) => r.kind === g).map((r) => [r.key ?? fallback, groupFigures(r)]));
      }
    }
    return response;
  }

  async performance(org: string, workflowId: string, query: PerformanceQuery, now = new Date()): Promise<PerformanceResponse> {
    const timezone = await this.timezone(query.timezone);
    const workflow = await this.workflows.getOwned(org, workflowId);
    const p = resolveAnalyticsPeriod(query, timezone, now, false);
    await this.rollups.catchUp();
    const [{ row, channels }, nodes] = await Promise.all([
      this.performanceFigures.performance(org, workflow.id, p.start, p.end, p.timezone, wholeHourOffsets(p.timezone, p.start, p.end)),
      query.include_nodes ? this.performanceFigures.nodes(org, workflow.id, p.start, p.end) : undefined,
    ]);
    const hours = (p.end.getTime() - p.start.getTime() + 1) / HOUR_MS;
    const byType: Record<string, number> = {};
    for (const [code, n] of Object.entries(row.errors ?? {})) byType[code] = n / row.finished;
    const response: PerformanceResponse = {
      workflow_id: workflow.id,
      period: this.periodOf(p),
      performance: {
        execution_time: { average_ms: row.average_ms, median_ms: row.median_ms, p95_ms: row.p95_ms, p99_ms: row.p99_ms },
        throughput: {
          executions_per_hour: row.executions / hours,
          peak_executions_per_hour: row.peak_executions ?? 0,
          peak_hour: row.peak_hour,
        },
        error_rate: { overall: row.finished > 0 ? row.failed / row.finished : null, by_error_type: byType },
      },
    };
    if (nodes) response.performance.node_performance = nodes;
    if (query.include_channels) {
      response.performance.channel_performance = Object.fromEntries(
        channels.map((c) => [c.channel, { executions: c.executions, success_rate: c.success_rate, average_duration_ms: c.average_duration_ms }]),
      );
    }
    return response;
  }

  async engagement(org: string, query: EngagementQuery, now = new Date()): Promise<EngagementResponse> {
    const p = await this.period(query, now);
    const filter = { channel: query.channel ?? null, segment: query.customer_segment ?? 'all' };
    const middle = halfway(p);
    const [rows, total] = await Promise.all([
      this.engagementFigures.engagement(org, p.start, p.end, filter, middle),
      this.engagementFigures.totalCustomers(org, p.start, p.end, filter),
    ]);
    const all = rows.find((r) => r.scope === 'all')!;
    const half = (key: string) => rows.find((r) => r.scope === 'half' && r.key === key);
    const [first, second] = [half('1'), half('2')];
    const byChannel: Record<string, ChannelEngagementResponse> = {};
    for (const r of rows.filter((x) => x.scope === 'channel' && x.key !== null)) {
      byChannel[r.key!] = { customers: r.active_customers, average_session_duration: r.average_session_duration, satisfaction: r.satisfaction };
    }
    return {
      period: this.periodOf(p),
      engagement: {
        total_customers: total,
        active_customers: all.active_customers,
        new_customers: all.new_customers,
        returning_customers: all.returning_customers,
        average_session_duration: all.average_session_duration,
        average_messages_per_session: all.average_messages_per_session,
        customer_satisfaction: all.satisfaction,
        net_promoter_score: all.nps_answers > 0 ? ((all.promoters - all.detractors) * 100) / all.nps_answers : null,
        engagement_by_channel: byChannel,
      },
      trends: {
        customer_growth: trendOf(first?.active_customers ?? 0, second?.active_customers ?? 0),
        engagement_trend: trendOf(first?.messages ?? 0, second?.messages ?? 0),
        satisfaction_trend: trendOf(first?.satisfaction ?? null, second?.satisfaction ?? null),
      },
    };
  }

  async journey(org: string, query: JourneyQuery, now = new Date()): Promise<JourneyResponse> {
    const timezone = await this.timezone(query.timezone);
    const type = query.journey_type ?? 'all';
    if (type !== 'all' && !isUuid(type)) throw new WorkflowNotFoundError();
    const explicit = type === 'all' ? undefined : await this.workflows.getOwned(org, type);
    const p = resolveAnalyticsPeriod(query, timezone, now, false);
    const workflowId = explicit?.id ?? (await this.journeys.topWorkflow(org, p.start, p.end));
    const includeDrops = query.include_dropoffs ?? true;
    if (!workflowId) {
      return {
        period: this.periodOf(p),
        journey: {
          workflow_id: null, total_journeys: 0, completed_journeys: 0, completion_rate: null, average_journey_duration: null, journey_steps: [],
          ...(includeDrops ? { drop_off_points: [] } : {}),
        },
      };
    }
    const workflow = explicit ?? (await this.workflows.getOwned(org, workflowId));
    const order = journeyOrder(workflow.configuration?.nodes ?? []);
    const { outcomes, nodes } = await this.journeys.journey(org, workflow.id, p.start, p.end);
    const figures = journeyFigures(order, outcomes, nodes);
    const journeySteps = order.map((node, i) => {
      const f = figures.steps.get(node);
      return {
        step: i + 1,
        name: node,
        customers: f?.reached ?? 0,
        completion_rate: f && f.reached > 0 ? f.completed / f.reached : null,
        average_duration_ms: f?.average_duration_ms ?? null,
      };
    });
    const journey: JourneyResponse['journey'] = {
      workflow_id: workflow.id,
      total_journeys: figures.total,
      completed_journeys: figures.completed,
      completion_rate: figures.total > 0 ? figures.completed / figures.total : null,
      average_journey_duration: figures.average_duration_ms,
      journey_steps: journeySteps,
    };
    if (includeDrops) {
      const points: DropOffResponse[] = [];
      order.forEach((node, i) => {
        const here = [...(figures.drops.get(node) ?? new Map<string, number>())]
          .map(([code, n]) => ({ code, n }))
          .sort((a, b) => b.n - a.n || a.code.localeCompare(b.code));
        if (here.length === 0) return;
        const count = here.reduce((sum, d) => sum + d.n, 0);
        const reached = figures.steps.get(node)?.reached ?? count;
        points.push({
          step: i + 1,
          name: node,
          drop_off_count: count,
          drop_off_rate: reached > 0 ? count / reached : 0,
          common_reasons: here.slice(0, 3).map((d) => REASON_TEXT[d.code] ?? d.code),
        });
      });
      journey.drop_off_points = points;
    }
    return { period: this.periodOf(p), journey };
  }

  /**
   * Distinct customers per bucket and overall. In UTC, from the rollups' customer sketches (exact up
   * to 2,048 customers, a HyperLogLog estimate with 0.81% standard error beyond: what keeps a year
   * fast); in any other zone the sketches' UTC days do not line up with the buckets, so they are
   * counted exactly from the executions.
   */
  private async workflowCustomers(org: string, workflowId: string, p: { start: Date; end: Date; timezone: string; granularity: Granularity }) {
    if (p.timezone !== 'UTC') return this.workflowAnalytics.workflowCustomers(org, workflowId, p.start, p.end, p.timezone, p.granularity);
    const { total, buckets } = await this.executionMetrics.workflowCustomers(org, workflowId, { start: p.start, end: p.end, granularity: p.granularity });
    return [
      { kind: 'total' as const, key: null, unique_customers: total },
      ...buckets.map((b) => ({ kind: 'bucket' as const, key: isoTime(b.date).slice(0, 19), unique_customers: b.unique_customers })),
    ];
  }

  async realtime(org: string, query: RealtimeQuery, now = new Date()): Promise<RealtimeResponse> {
    await this.timezone(query.timezone);
    const includeSystem = query.include_system ?? true;
    const [data, activeWorkflows, health, accounts] = await Promise.all([
      this.realtimeFigures.realtime(org, query.workflow_id ?? null, query.channel ?? null, now),
      this.workflows.countActive(org, query.workflow_id),
      this.recentHealth.get(),
      this.realtimeFigures.accountBacklogs(org, query.channel ?? null),
    ]);
    const response: RealtimeResponse = {
      timestamp: isoTime(now),
      current_metrics: {
        active_workflows: activeWorkflows,
        active_executions: data.active_executions,
        messages_in_last_hour: data.messages_in_last_hour,
        average_response_time_ms: data.average_response_time_ms,
        system_health: health,
      },
      workflow_metrics: data.workflows,
      channel_metrics: Object.fromEntries(data.channels.map((c) => [c.channel, { active_conversations: c.active_conversations, messages_in_last_hour: c.messages_in_last_hour }])),
      channel_account_metrics: accounts.map((a) => ({
        channel_account_id: a.channel_account_id,
        name: a.name,
        channel: a.channel,
        send_backlog: a.send_backlog,
        oldest_queued_at: a.oldest_queued_at === null ? null : isoTime(a.oldest_queued_at),
      })),
    };
    if (includeSystem) {
      response.system_metrics = { cpu_usage: this.readings.cpuUsage(), memory_usage: this.readings.memoryUsage(), api_response_time_ms: this.readings.apiResponseTimeMs() };
    }
    return response;
  }

  async workflowList(org: string, query: WorkflowListQuery, now = new Date()) {
    const p = await this.period(query, now);
    await this.rollups.catchUp();
    const rows = await this.workflowAnalytics.workflowList(org, p.start, p.end, query.sort_by ?? 'executions', query.order ?? 'desc', query.limit, query.offset);
    const total = rows[0]?.total ?? (query.page > 1 ? await this.workflowAnalytics.countWorkflows(org) : 0);
    const items: WorkflowSummaryAnalytics[] = rows.map((r) => ({
      workflow_id: r.workflow_id,
      name: r.name,
      status: r.status,
      total_executions: r.executions,
      successful_executions: r.successful,
      failed_executions: r.failed,
      success_rate: r.success_rate,
      average_duration_ms: r.average_duration_ms,
      unique_customers: r.unique_customers,
    }));
    return { items, total, period: this.periodOf(p) };
  }

  /** unhealthy: PostgreSQL or Redis down; degraded: the execution queue's waiting jobs over the threshold. */
  private async systemHealth(): Promise<HealthState> {
    const readiness = await this.health.readiness();
    if (readiness.status !== 'ok') return 'unhealthy';
    try {
      const waiting = await this.redis.client.llen(this.redis.key('bull', 'executions', 'wait'));
      return waiting > QUEUE_BACKLOG_THRESHOLD ? 'degraded' : 'healthy';
    } catch {
      return 'degraded';
    }
  }
}

export interface JourneyFigures {
  total: number;
  completed: number;
  average_duration_ms: number | null;
  /** Per node: executions that reached it, completed steps there, mean step duration. */
  steps: Map<string, { reached: number; completed: number; average_duration_ms: number | null }>;
  /** Per node: failed executions that stopped there, by error code. */
  drops: Map<string, Map<string, number>>;
}

/**
 * The journey's figures from a period's outcomes and node figures (docs/DECISIONS.md "Analytics",
 * "Journeys and node figures"): an execution reached a node when it recorded a step
 * there, or waits there (or expired waiting there) without one; a failed execution drops off at
 * the node it stopped at (its error's node, else its cursor, else the entry `order[0]`).
 */
export function journeyFigures(order: readonly string[], outcomes: readonly OutcomeRow[], nodes: readonly JourneyNodeRow[]): JourneyFigures {
  const entry = order[0] ?? '';
  const at = (o: OutcomeRow) => o.stop_node || entry;
  let total = 0;
  let completed = 0;
  let successDuration = 0;
  let successTimed = 0;
  const waiting = new Map<string, number>();
  const drops = new Map<string, Map<string, number>>();
  for (const o of outcomes) {
    total += o.executions;
    if (o.status === 'success') {
      completed += o.executions;
      successDuration += o.duration_sum;
      successTimed += o.timed;
    }
    if (o.waits) waiting.set(at(o), (waiting.get(at(o)) ?? 0) + o.executions);
    if (o.status === 'failed' && o.executions !== 0) {
      const codes = drops.get(at(o)) ?? new Map<string, number>();
      codes.set(o.code, (codes.get(o.code) ?? 0) + o.executions);
      drops.set(at(o), codes);
    }
  }
  const steps: JourneyFigures['steps'] = new Map();
  for (const n of nodes) steps.set(n.node_id, { reached: n.steps, completed: n.completed, average_duration_ms: n.average_duration_ms });
  for (const [node, n] of waiting) {
    const s = steps.get(node) ?? { reached: 0, completed: 0, average_duration_ms: null };
    steps.set(node, { ...s, reached: s.reached + n });
  }
  return { total, completed, average_duration_ms: successTimed > 0 ? Math.round(successDuration / successTimed) : null, steps, drops };
}

/** A workflow's node ids from its entry (the first node) along `next`. */
export function journeyOrder(nodes: readonly { id: string; next?: string }[]): string[] {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const order: string[] = [];
  let node = nodes[0];
  while (node && !order.includes(node.id)) {
    order.push(node.id);
    const next = node.next === undefined ? undefined : byId.get(node.next);
    if (!next) break;
    node = next;
  }
  return order;
}
