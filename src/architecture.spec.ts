import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  allSourceFiles,
  entityTables,
  importTarget,
  migrationTables,
  moduleOf,
  relativeImports,
  sourceFiles,
  tablesTouched,
  withoutComments,
  type Access,
} from '../test/architecture/source-scan.js';

/**
 * docs/ARCHITECTURE.md, "Table ownership", kept true by the code itself: each table belongs to one module, a route lives in the
 * controller of the folder its path names, and timestamps are formatted in one place.
 */
const SRC = dirname(fileURLToPath(import.meta.url));
const MIGRATIONS = join(SRC, '..', 'migrations');
const files = sourceFiles(SRC);
const read = (file: string) => readFileSync(file, 'utf8');
const where = (file: string) => relative(SRC, file);

/**
 * Tables without an entity: created by migrations and kept by their row triggers. The execution
 * rollups are the executions module's (folded from the change logs, which the rollups module owns;
 * the execution-metrics module reads them), the customer sketches the execution-metrics module's
 * (it alone folds and reads them); the analytics rollups and the report and export files are analytics';
 * message bursts are the customers module's, with the messages they hold; an organization's rate-limit
 * overrides are the rate-limits module's.
 */
const OWNERS_WITHOUT_ENTITY: Record<string, string> = {
  workflow_execution_hours: 'executions',
  workflow_execution_days: 'executions',
  workflow_customer_hours: 'executions',
  trigger_execution_hours: 'executions',
  trigger_execution_days: 'executions',
  trigger_customer_hours: 'executions',
  workflow_customer_sketches: 'execution-metrics',
  trigger_customer_sketches: 'execution-metrics',
  workflow_duration_days: 'analytics',
  workflow_duration_months: 'analytics',
  workflow_error_days: 'analytics',
  workflow_node_days: 'analytics',
  workflow_outcome_days: 'analytics',
  workflow_answer_days: 'analytics',
  customer_channels: 'analytics',
  customer_sessions: 'analytics',
  engagement_day_sets: 'analytics',
  execution_answers: 'analytics',
  analytics_files: 'analytics',
  analytics_file_chunks: 'analytics',
  service_keys: 'common',
  workflow_execution_changes: 'rollups',
  trigger_execution_changes: 'rollups',
  workflow_outcome_changes: 'rollups',
  execution_step_changes: 'rollups',
  message_changes: 'rollups',
  message_delivery_changes: 'rollups',
  channel_webhook_payloads: 'channels',
  message_deliveries: 'channels',
  workflow_delivery_hours: 'channels',
  // A customer's open burst of held messages (the receive statement and a burst's turn).
  message_bursts: 'customers',
  voice_calls: 'channels',
  voice_call_turns: 'channels',
  // An organization's overrides of the request limits (the CLI's org:limits), held in memory by the throttler.
  organization_limits: 'rate-limits',
  // The DEFAULT partition of trigger_executions (migration ExecutionRetention; its monthly partitions are made at run time).
  trigger_executions_default: 'executions',
  // The DEFAULT partitions of the executions, their steps and answers (migration ExecutionsPartitioned).
  workflow_executions_default: 'executions',
  execution_steps_default: 'executions',
  execution_answers_default: 'analytics',
  // One retry per execution: the retry's statement claims the original's key (migration ExecutionsPartitioned).
  workflow_execution_retries: 'executions',
  // The DEFAULT partitions of the messages and their deliveries, and the provider's message ids of an
  // account: written with the inbound message (the dedupe) and by the sender (migration MessagesPartitioned).
  messages_default: 'customers',
  message_deliveries_default: 'channels',
  message_provider_ids: 'customers',
  // The DEFAULT partitions of the webhook deliveries and their attempts (migration WebhookDeliveriesPartitioned).
  webhook_deliveries_default: 'webhooks',
  webhook_delivery_attempts_default: 'webhooks',
};

/**
 * Today's accesses of a module to another module's table, each with its reason; the module
 * READMEs name them. A new one fails the spec: read through the owner's service, or compose the
 * statement from a fragment the owner exports (src/triggers/triggers.sql.ts, src/workflows/workflows.sql.ts,
 * src/events/outbox.sql.ts, src/webhooks/webhooks.sql.ts, src/auth/organizations/organizations.sql.ts), or add it here with its reason.
 */
const ALLOWED: { module: string; table: string; access: Access; why: string }[] = [
  ...['customers', 'messages', 'execution_steps', 'workflow_executions', 'trigger_executions', 'workflow_execution_hours', 'workflow_execution_days', 'workflows',
    'workflow_versions', 'triggers', 'webhooks', 'webhook_delivery_attempts', 'organizations', 'channel_accounts', 'message_deliveries', 'workflow_delivery_hours',
    'workflow_customer_hours'].map((table) => ({
    module: 'analytics',
    table,
    access: 'read' as const,
    why: 'analytics, reports and exports are SQL over what every module recorded (src/analytics/README.md); reads only',
  })),
  ...['messages', 'message_deliveries', 'message_provider_ids', 'webhook_deliveries', 'webhook_delivery_attempts'].map((table) => ({
    module: 'executions',
    table,
    access: 'write' as const,
    why: 'execution retention drops or trims the months of messages and their deliveries (with their provider ids), and of webhook deliveries and their attempts (src/executions/README.md)',
  })),
  {
    module: 'channels',
    table: 'message_provider_ids',
    access: 'write',
    why: "the sender records the provider's message id of a send there too; statuses find their message through it (src/channels/README.md)",
  },
  {
    module: 'executions',
    table: 'execution_answers',
    access: 'write',
    why: 'execution retention drops or trims the answers\' partitions with their executions\' months (src/executions/README.md)',
  },
  { module: 'webhooks', table: 'outbox_events', access: 'write', why: 'the outbox relay: reads new events, marks them published, deletes old ones (src/webhooks/README.md)' },
  ...['customers', 'messages'].map((table) => ({
    module: 'executions',
    table,
    access: 'write' as const,
    why: 'the engine\'s single statements: a firing upserts its customer, a run commit stores the messages it sent, consumes the replies it read and merges form answers into the customer (src/executions/README.md)',
  })),
  {
    module: 'customers',
    table: 'workflow_executions',
    access: 'write',
    why: 'the inbound statement claims the customer\'s running execution for a reply in the statement that stores it (src/customers/README.md)',
  },
  ...['workflow_executions', 'trigger_executions', 'messages', 'workflow_execution_hours', 'workflow_execution_days', 'workflow_customer_hours',
    'trigger_execution_hours', 'trigger_execution_days', 'trigger_customer_hours'].map((table) => ({
    module: 'execution-metrics',
    table,
    access: 'read' as const,
    why: 'execution metrics are SQL over the executions\' rows and their rollups (src/execution-metrics/README.md); reads only',
  })),
  {
    module: 'channels',
    table: 'messages',
    access: 'write',
    why: "the sender records the provider's message id on the message it sent; statuses find their message by it, and an inbound payload its duplicates (src/channels/README.md)",
  },
  {
    module: 'channels',
    table: 'customers',
    access: 'read',
    why: "a send reads the customer's address at the provider, a status event its external id (src/channels/README.md)",
  },
  {
    module: 'channels',
    table: 'workflows',
    access: 'read',
    why: "an account's settings.workflow_id must be a workflow of the organization (src/channels/README.md)",
  },
  {
    module: 'rate-limits',
    table: 'triggers',
    access: 'read',
    why: 'an api trigger\'s own rate_limit, read (and cached) by the request throttler before the route runs; the triggers module depends on this one (src/rate-limits/README.md)',
  },
];

const tables = new Set<string>();
for (const file of sourceFiles(MIGRATIONS)) for (const table of migrationTables(read(file))) tables.add(table);

const entities = new Map<string, string>();
const owners = new Map<string, string>(Object.entries(OWNERS_WITHOUT_ENTITY));
for (const file of files) {
  for (const [entity, table] of entityTables(read(file))) {
    entities.set(entity, table);
    owners.set(table, moduleOf(SRC, file));
  }
}

/** Every access of a module to a table it does not own: `module table access file`. */
function crossModuleAccesses(): { module: string; table: string; access: Access; file: string }[] {
  const found = [];
  for (const file of files) {
    const module = moduleOf(SRC, file);
    for (const [table, access] of tablesTouched(read(file), tables, entities)) {
      if (owners.get(table) !== module) found.push({ module, table, access, file: where(file) });
    }
  }
  return found;
}

const allows = (a: { module: string; table: string; access: Access }) =>
  ALLOWED.some((x) => x.module === a.module && x.table === a.table && (x.access === 'write' || a.access === 'read'));

describe('table ownership (docs/ARCHITECTURE.md)', () => {
  it('knows the owner of every table the migrations create', () => {
    expect([...tables].filter((t) => !owners.has(t) && t !== 'migrations').sort()).toEqual([]);
  });

  it('finds no access to another module\'s table beyond the listed exceptions', () => {
    const offending = crossModuleAccesses().filter((a) => !allows(a));
    expect(offending.map((a) => `${a.module} ${a.access}s ${a.table} (${owners.get(a.table)}'s) in ${a.file}`)).toEqual([]);
  });

  it('lists no exception that the code no longer needs', () => {
    const used = crossModuleAccesses();
    const stale = ALLOWED.filter((x) => !used.some((a) => a.module === x.module && a.table === x.table && (a.access === x.access || x.access === 'read')));
    expect(stale.map((x) => `${x.module} ${x.table} ${x.access}`)).toEqual([]);
  });
});

describe('the table scanner', () => {
  const known = new Set(['triggers', 'workflows', 'outbox_events']);
  const classes = new Map([['Trigger', 'triggers']]);

  it('finds tables named by SQL, reads and writes apart, and entity repositories', () => {
    const offending = `
      const SQL = \`SELECT t.id FROM triggers t JOIN workflows w ON w.id = t.workflow_id\`;
      await db.query(\`INSERT INTO outbox_events (type) VALUES ($1)\`);`;
    expect(tablesTouched(offending, known, classes)).toEqual(new Map([['triggers', 'read'], ['workflows', 'read'], ['outbox_events', 'write']]));
    expect(tablesTouched('UPDATE workflows SET name = $1', known, classes)).toEqual(new Map([['workflows', 'write']]));
    expect(tablesTouched('DELETE FROM triggers WHERE id = $1', known, classes)).toEqual(new Map([['triggers', 'write']]));
    expect(tablesTouched('constructor(@InjectRepository(Trigger) private readonly r: Repository<Trigger>) {}', known, classes)).toEqual(new Map([['triggers', 'write']]));
    expect(tablesTouched('await manager.findOne(Trigger, { where: { id } })', known, classes)).toEqual(new Map([['triggers', 'read']]));
  });

  it('sees tables named through templates and string constants', () => {
    const rollups = new Set(['workflow_execution_hours', 'workflow_execution_days', 'trigger_execution_days', 'workflow_customer_sketches']);
    const templated = `
      const T = { days: 'workflow_execution_days', sketches: 'workflow_customer_sketches' };
      const U = { days: 'trigger_execution_days' };
      await q(\`SELECT * FROM \${t.days} d WHERE d.x = 1\`);
      await q(\`INSERT INTO \${t.sketches} AS s (a) VALUES (1)\`);`;
    expect(tablesTouched(templated, rollups, classes)).toEqual(
      new Map([['workflow_execution_days', 'read'], ['trigger_execution_days', 'read'], ['workflow_customer_sketches', 'write']]),
    );
    // A constant holding a table's name is a read at least, even where no SQL keyword precedes its use.
    expect(tablesTouched("const ROWS = 'workflow_execution_hours';", rollups, classes)).toEqual(new Map([['workflow_execution_hours', 'read']]));
    // Derived names, as a migration builds them.
    expect(tablesTouched("const r = { hours: 'workflow_execution_hours' };\nconst d = { table: r.hours.replace('_hours', '_days') };\nq(`UPDATE ${d.table} SET x = 1`);", rollups, classes))
      .toEqual(new Map([['workflow_execution_hours', 'read'], ['workflow_execution_days', 'write']]));
    // A call argument is not a constant bound to a name: @RequireAccess('workflows', 'read') names a resource.
    expect(tablesTouched("@RequireAccess('workflows', 'read')", known, classes)).toEqual(new Map());
    expect(migrationTables("for (const table of ['a_days']) q(`ANALYZE ${table}`);\nq(`CREATE TABLE ${day.table} (LIKE x)`);\nq(`CREATE TABLE b_rows (id int)`);"))
      .toEqual(new Set(['b_rows', 'a_days']));
  });

  it('would have flagged analytics reading the executions\' day rows', () => {
    const days = new Set(['workflow_execution_days']);
    const snippet = 'const WORKFLOW_COUNTS = new SqlStatement(`SELECT d.day FROM workflow_execution_days d WHERE d.workflow_id = $2`);';
    const access = { module: 'analytics', table: 'workflow_execution_days', access: tablesTouched(snippet, days, classes).get('workflow_execution_days')! };
    expect(access.access).toBe('read');
    expect(owners.get('workflow_execution_days')).toBe('executions');
    expect(tables.has('workflow_execution_days')).toBe(true);
  });

  it('ignores comments, unknown names and aliases, and keeps strings whole', () => {
    expect(tablesTouched('// reads FROM triggers\n/* UPDATE workflows */ const x = 1;', known, classes)).toEqual(new Map());
    expect(tablesTouched('SELECT * FROM firing f JOIN customer c ON true', known, classes)).toEqual(new Map());
    expect(withoutComments("const url = 'http://host/x'; // note")).toBe("const url = 'http://host/x'; ");
  });

  it('would flag a new cross-module access', () => {
    const snippet = 'const S = `SELECT id FROM triggers WHERE organization_id = $1`;';
    const access = { module: 'webhooks', table: 'triggers', access: tablesTouched(snippet, known, classes).get('triggers')! };
    expect(access.access).toBe('read');
    expect(allows(access)).toBe(false);
    expect(allows({ module: 'analytics', table: 'triggers', access: 'read' })).toBe(true);
    expect(allows({ module: 'analytics', table: 'triggers', access: 'write' })).toBe(false);
  });
});

/** The first segment of a route path after `v1`, singular: `v1/triggers/:id` → `trigger`, `.well-known` → `well-known`. */
function resource(path: string): string {
  const segments = path.split('/').filter((s) => s !== '' && s !== 'v1');
  return (segments[0] ?? '').replace(/^\./, '').replace(/s$/, '');
}

/** Each controller's class-level path, from `@Controller('...')`. */
function controllerPaths(): { file: string; path: string }[] {
  return files
    .filter((f) => f.endsWith('.controller.ts'))
    .flatMap((file) => [...read(file).matchAll(/@Controller\('([^']*)'\)/g)].map((m) => ({ file: where(file), path: m[1] })));
}

describe('finding a route (docs/ARCHITECTURE.md)', () => {
  it('names the resource in every controller path, and that resource in the controller\'s folder or file name', () => {
    const paths = controllerPaths();
    expect(paths.length).toBeGreaterThan(15);
    const misplaced = paths.filter(({ file, path }) => resource(path) === '' || !file.includes(resource(path)));
    expect(misplaced.map(({ file, path }) => `@Controller('${path}') in ${file}`)).toEqual([]);
  });

  it('would flag an inbound controller holding several resources under v1', () => {
    expect(resource('v1')).toBe('');
    expect(resource('v1/messages')).toBe('message');
    expect('triggers/inbound.controller.ts'.includes(resource('v1/hooks'))).toBe(false);
    expect('triggers/hooks.controller.ts'.includes(resource('v1/hooks'))).toBe(true);
  });
});

describe('timestamps (one formatter, src/common/iso-time.ts)', () => {
  it('are formatted by common/iso-time.ts only', () => {
    const elsewhere = files.filter((f) => where(f) !== join('common', 'iso-time.ts') && withoutComments(read(f)).includes('.toISOString('));
    expect(elsewhere.map(where)).toEqual([]);
  });
});

/**
 * The folders `common/` may import from: itself and the infrastructure every module stands on
 * (typed config, the database and Redis connections). Everything else under src/ is a domain module.
 */
const COMMON_MAY_IMPORT = new Set(['common', 'config', 'database', 'redis']);

/** The imports of a src/ file that leave `COMMON_MAY_IMPORT`: `file → target`. */
function domainImports(file: string, code: string): string[] {
  return relativeImports(code)
    .map((specifier) => importTarget(SRC, file, specifier))
    .filter((target) => !COMMON_MAY_IMPORT.has(target.split(/[\\/]/)[0]))
    .map((target) => `${where(file)} → ${target}`);
}

describe('common/ stands on no domain module', () => {
  it('imports nothing from a domain module', () => {
    const common = allSourceFiles(join(SRC, 'common'));
    expect(common.length).toBeGreaterThan(20);
    expect(common.flatMap((file) => domainImports(file, read(file)))).toEqual([]);
  });

  it('would flag an import from a domain folder, and not one from config or common', () => {
    const file = join(SRC, 'common', 'errors', 'x.ts');
    expect(domainImports(file, "import { A } from '../../auth/guards/a.js';\nexport { B } from '../../rate-limits/b.js';")).toEqual([
      `${join('common', 'errors', 'x.ts')} → ${join('auth', 'guards', 'a.js')}`,
      `${join('common', 'errors', 'x.ts')} → ${join('rate-limits', 'b.js')}`,
    ]);
    expect(domainImports(file, "import { C } from '../../config/app-config.js';\nimport { D } from '../http/d.js';\n// from '../../auth/x.js'")).toEqual([]);
  });
});

describe('migrations (frozen)', () => {
  const ROOT = join(SRC, '..');
  /** The imports of a migration that reach into src/: a migration must not change when the code does. */
  const intoSrc = (file: string, code: string) =>
    relativeImports(code)
      .map((specifier) => importTarget(ROOT, file, specifier))
      .filter((target) => target.split(/[\\/]/)[0] !== 'migrations')
      .map((target) => `${relative(ROOT, file)} → ${target}`);

  it('import nothing from src/ (what one needs is copied into it as it was)', () => {
    const migrations = allSourceFiles(MIGRATIONS);
    expect(migrations.length).toBeGreaterThan(20);
    expect(migrations.flatMap((file) => intoSrc(file, read(file)))).toEqual([]);
  });

  it('would flag an import from src/, and not one from another migration', () => {
    const file = join(MIGRATIONS, '1-X.ts');
    expect(intoSrc(file, "import { f } from '../src/analytics/journey-facts.js';\nimport { g } from './0-Y.js';")).toEqual([
      `${join('migrations', '1-X.ts')} → ${join('src', 'analytics', 'journey-facts.js')}`,
    ]);
  });
});
