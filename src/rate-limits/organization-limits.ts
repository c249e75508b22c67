import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { RedisService } from '../redis/redis.service.js';
import { CREDENTIAL_POLICY, type PolicyName } from './rate-limit-policies.js';

/**
 * The limits an organization's plan may change: the per-credential limit and the eight route
 * classes, all per credential and per hour. Each has its column in `organization_limits`, its
 * `org:limits` flag and its deployment default (the env variable). The per-address limits
 * (RATE_LIMIT_PUBLIC_PER_IP, RATE_LIMIT_AUTH_FAILURES_PER_MINUTE) know no organization; the
 * inbound webhook and channel limits are per trigger and per channel account: none is overridable.
 */
export const ORGANIZATION_LIMITS = [
  { name: 'per_credential_per_hour', flag: 'per-credential', throttler: CREDENTIAL_POLICY, env: 'RATE_LIMIT_PER_CREDENTIAL' },
  { name: 'read_per_hour', flag: 'read', throttler: 'read', env: 'RATE_LIMIT_READ' },
  { name: 'write_per_hour', flag: 'write', throttler: 'write', env: 'RATE_LIMIT_WRITE' },
  { name: 'delete_per_hour', flag: 'delete', throttler: 'delete', env: 'RATE_LIMIT_DELETE' },
  { name: 'execution_per_hour', flag: 'execution', throttler: 'execution', env: 'RATE_LIMIT_EXECUTION' },
  { name: 'analytics_realtime_per_hour', flag: 'analytics-realtime', throttler: 'realtime', env: 'RATE_LIMIT_ANALYTICS_REALTIME' },
  { name: 'analytics_historical_per_hour', flag: 'analytics-historical', throttler: 'historical', env: 'RATE_LIMIT_ANALYTICS_HISTORICAL' },
  { name: 'analytics_reports_per_hour', flag: 'analytics-reports', throttler: 'reports', env: 'RATE_LIMIT_ANALYTICS_REPORTS' },
  { name: 'analytics_export_per_hour', flag: 'analytics-export', throttler: 'export', env: 'RATE_LIMIT_ANALYTICS_EXPORT' },
] as const satisfies readonly { name: string; flag: string; throttler: PolicyName; env: string }[];

export type OrganizationLimitName = (typeof ORGANIZATION_LIMITS)[number]['name'];

/** The largest figure an override may have: the env variables' maximum (src/config/env.schema.ts). */
export const MAX_ORGANIZATION_LIMIT = 100_000_000;

/** An organization's overrides by throttler name, as the request throttler reads them. */
export type LimitOverrides = Readonly<Partial<Record<PolicyName, number>>>;

/** One limit as `GET /v1/me` and `org:limits` show it. */
export interface EffectiveLimit {
  value: number;
  source: 'default' | 'override';
}

export type EffectiveLimits = Record<OrganizationLimitName, EffectiveLimit>;

/** Each limit's value for the organization: its override, else the deployment's figure. */
export function effectiveLimits(config: AppConfig, overrides: LimitOverrides | undefined): EffectiveLimits {
  const defaults: Record<OrganizationLimitName, number> = {
    per_credential_per_hour: config.rateLimits.perCredential,
    read_per_hour: config.rateLimits.read,
    write_per_hour: config.rateLimits.write,
    delete_per_hour: config.rateLimits.delete,
    execution_per_hour: config.rateLimits.execution,
    analytics_realtime_per_hour: config.rateLimits.analyticsRealtime,
    analytics_historical_per_hour: config.rateLimits.analyticsHistorical,
    analytics_reports_per_hour: config.rateLimits.analyticsReports,
    analytics_export_per_hour: config.rateLimits.analyticsExport,
  };
  const out = {} as EffectiveLimits;
  for (const l of ORGANIZATION_LIMITS) {
    const override = overrides?.[l.throttler];
    out[l.name] = override === undefined ? { value: defaults[l.name], source: 'default' } : { value: override, source: 'override' };
  }
  return out;
}

const COLUMNS = ORGANIZATION_LIMITS.map((l) => l.name);
const SELECT_ALL = `SELECT organization_id, ${COLUMNS.join(', ')} FROM organization_limits`;
const CHANGED_CHANNEL = 'rate-limits:organization-changed';
/**
 * How often every API process reads the whole table again, whatever it was told: the bound on
 * how late a change applies when its Redis message was lost (normally it applies as soon as the
 * message arrives).
 */
export const ORGANIZATION_LIMITS_REFRESH_MS = 5000;

type Row = { organization_id: string } & Record<OrganizationLimitName, number | null>;

function overridesOf(row: Row): LimitOverrides | undefined {
  const overrides: Partial<Record<PolicyName, number>> = {};
  let any = false;
  for (const l of ORGANIZATION_LIMITS) {
    const value = row[l.name];
    if (value !== null && value !== undefined) {
      overrides[l.throttler] = Number(value);
      any = true;
    }
  }
  return any ? overrides : undefined;
}

/**
 * Per-organization overrides of the request limits, for the request throttler without a round
 * trip: every API process holds the whole `organization_limits` table (one row per organization
 * with an override) in a Map, read at start, again as soon as `org:limits` publishes a change on
 * Redis, and every ORGANIZATION_LIMITS_REFRESH_MS whatever happens. A request's lookup is one Map
 * get; an organization without a row keeps the deployment's figures.
 */
@Injectable()
export class OrganizationLimits implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(OrganizationLimits.name);
  private overrides = new Map<string, LimitOverrides>();
  private timer?: NodeJS.Timeout;
  private loading?: Promise<void>;
  private again = false;
  private failing = false;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly redis: RedisService,
    private readonly config: AppConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    // Only the processes that count requests hold the table.
    if (!this.config.rateLimitsEnabled || !this.config.servesHttp) return;
    await this.redis.subscribe(CHANGED_CHANNEL, () => void this.refresh());
    await this.refresh();
    this.timer = setInterval(() => void this.refresh(), ORGANIZATION_LIMITS_REFRESH_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** The organization's overrides (the hot path: one Map get), undefined when it has none. */
  of(organizationId: string): LimitOverrides | undefined {
    return this.overrides.get(organizationId);
  }

  /** What this process applies to the organization: each limit's value and whether it is an override. */
  effective(organizationId: string): EffectiveLimits {
    return effectiveLimits(this.config, this.overrides.get(organizationId));
  }

  /** Reads the table again (one at a time: a refresh asked for meanwhile runs once after it). */
  refresh(): Promise<void> {
    if (this.loading) {
      this.again = true;
      return this.loading;
    }
    this.loading = this.load().finally(() => {
      this.loading = undefined;
      if (this.again) {
        this.again = false;
        void this.refresh();
      }
    });
    return this.loading;
  }

  private async load(): Promise<void> {
    try {
      const rows = (await this.dataSource.query(SELECT_ALL)) as Row[];
      const next = new Map<string, LimitOverrides>();
      for (const row of rows) {
        const overrides = overridesOf(row);
        if (overrides) next.set(row.organization_id, overrides);
      }
      this.overrides = next;
      if (this.failing) this.logger.log("The organizations' rate limits are read again");
      this.failing = false;
    } catch (error) {
      // The last table read stays in force; an outage is logged once.
      if (!this.failing) this.logger.warn(`Could not read the organizations' rate limits; the last ones read apply: ${(error as Error).message}`);
      this.failing = true;
    }
  }
}

/** A change for `org:limits`: a figure per limit to override, null to give it back its default. */
export type OrganizationLimitsChange = Partial<Record<OrganizationLimitName, number | null>>;

/**
 * Reads and writes `organization_limits` for the CLI (`org:limits`), then tells every API process
 * through Redis. A row whose every figure is back to its default is deleted.
 */
@Injectable()
export class OrganizationLimitsStore {
  private readonly logger = new Logger(OrganizationLimitsStore.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly redis: RedisService,
    private readonly config: AppConfig,
  ) {}

  async read(organizationId: string, manager: EntityManager = this.dataSource.manager): Promise<EffectiveLimits> {
    const [row] = (await manager.query(`${SELECT_ALL} WHERE organization_id = $1`, [organizationId])) as Row[];
    return effectiveLimits(this.config, row ? overridesOf(row) : undefined);
  }

  /**
   * `reset`: every override cleared first; then each figure of `change` set (null: back to the
   * default). Returns the limits now in force and whether every API process was told at once.
   */
  async change(organizationId: string, change: OrganizationLimitsChange, reset: boolean): Promise<{ limits: EffectiveLimits; published: boolean }> {
    const limits = await this.dataSource.transaction(async (manager) => {
      if (reset) await manager.query(`DELETE FROM organization_limits WHERE organization_id = $1`, [organizationId]);
      const names = COLUMNS.filter((name) => change[name] !== undefined);
      if (names.length > 0) {
        const values = names.map((name) => change[name] ?? null);
        await manager.query(
          `INSERT INTO organization_limits (organization_id, ${names.join(', ')}) VALUES ($1, ${names.map((_, i) => `$${i + 2}`).join(', ')})
           ON CONFLICT (organization_id) DO UPDATE SET ${names.map((name) => `${name} = EXCLUDED.${name}`).join(', ')}, updated_at = now()`,
          [organizationId, ...values],
        );
        await manager.query(`DELETE FROM organization_limits WHERE organization_id = $1 AND ${COLUMNS.map((name) => `${name} IS NULL`).join(' AND ')}`, [organizationId]);
      }
      return this.read(organizationId, manager);
    });
    try {
      await this.redis.publish(CHANGED_CHANNEL, organizationId);
      return { limits, published: true };
    } catch (error) {
      this.logger.warn(`Could not tell the API processes through Redis: ${(error as Error).message}`);
      return { limits, published: false };
    }
  }
}
