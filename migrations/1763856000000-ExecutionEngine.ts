import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Triggers, customers and messages, executions with their steps, knowledge bases, the event outbox.
 * Messages and steps default to clock_timestamp(), not now(): several are written in one
 * transaction and must keep their order.
 */
export class ExecutionEngine1763856000000 implements MigrationInterface {
  name = 'ExecutionEngine1763856000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE triggers (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        workflow_id uuid NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
        name varchar(200) NOT NULL,
        type varchar(16) NOT NULL CHECK (type IN ('message', 'schedule', 'webhook', 'api')),
        status varchar(16) NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'inactive', 'paused')),
        channel varchar(32),
        configuration jsonb NOT NULL,
        secret_encrypted text,
        execution_count int NOT NULL DEFAULT 0,
        last_triggered timestamptz,
        activated_at timestamptz,
        deactivated_at timestamptz,
        paused_at timestamptz,
        resumed_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX uq_triggers_org_name ON triggers (organization_id, name)`);
    await q.query(`CREATE INDEX idx_triggers_org_created ON triggers (organization_id, created_at, id)`);
    await q.query(`CREATE INDEX idx_triggers_workflow ON triggers (workflow_id)`);
    await q.query(`CREATE INDEX idx_triggers_active_messages ON triggers (organization_id) WHERE type = 'message' AND status = 'active'`);

    await q.query(`
      CREATE TABLE customers (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        external_id varchar(200) NOT NULL,
        channel varchar(32),
        language varchar(16),
        attributes jsonb NOT NULL DEFAULT '{}'::jsonb,
        first_seen_at timestamptz NOT NULL,
        last_seen_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX uq_customers_org_external ON customers (organization_id, external_id)`);
    await q.query(`CREATE INDEX idx_customers_org_created ON customers (organization_id, created_at, id)`);

    await q.query(`
      CREATE TABLE workflow_executions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        workflow_id uuid NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
        workflow_version int NOT NULL,
        trigger_id uuid,
        trigger_execution_id uuid,
        customer_id uuid REFERENCES customers(id) ON DELETE SET NULL,
        customer_ref varchar(200),
        channel varchar(32),
        status varchar(16) NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'success', 'failed')),
        input jsonb NOT NULL DEFAULT '{}'::jsonb,
        output jsonb,
        error jsonb,
        state jsonb NOT NULL DEFAULT '{}'::jsonb,
        waiting boolean NOT NULL DEFAULT false,
        wait_expires_at timestamptz,
        started_at timestamptz NOT NULL,
        completed_at timestamptz,
        duration_ms int,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX idx_workflow_executions_workflow_started ON workflow_executions (workflow_id, started_at, id)`);
    await q.query(`CREATE INDEX idx_workflow_executions_org_started ON workflow_executions (organization_id, started_at)`);
    await q.query(`CREATE INDEX idx_workflow_executions_waiting ON workflow_executions (customer_id, channel) WHERE waiting`);
    await q.query(`CREATE INDEX idx_workflow_executions_running ON workflow_executions (updated_at) WHERE status = 'running'`);

    await q.query(`
      CREATE TABLE execution_steps (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        execution_id uuid NOT NULL REFERENCES workflow_executions(id) ON DELETE CASCADE,
        node_id varchar(64) NOT NULL,
        type varchar(32) NOT NULL,
        status varchar(16) NOT NULL CHECK (status IN ('completed', 'failed')),
        started_at timestamptz NOT NULL,
        completed_at timestamptz NOT NULL,
        duration_ms int NOT NULL,
        input jsonb NOT NULL DEFAULT '{}'::jsonb,
        output jsonb NOT NULL DEFAULT '{}'::jsonb,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await q.query(`CREATE UNIQUE INDEX uq_execution_steps_execution_node ON execution_steps (execution_id, node_id)`);

    await q.query(`
      CREATE TABLE trigger_executions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        trigger_id uuid NOT NULL REFERENCES triggers(id) ON DELETE CASCADE,
        workflow_id uuid NOT NULL,
        workflow_execution_id uuid REFERENCES workflow_executions(id) ON DELETE SET NULL,
        status varchar(16) NOT NULL CHECK (status IN ('running', 'success', 'failed')),
        input jsonb NOT NULL DEFAULT '{}'::jsonb,
        error jsonb,
        triggered_at timestamptz NOT NULL,
        completed_at timestamptz,
        duration_ms int,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX idx_trigger_executions_trigger_triggered ON trigger_executions (trigger_id, triggered_at, id)`);
    await q.query(`CREATE INDEX idx_trigger_executions_org_triggered ON trigger_executions (organization_id, triggered_at)`);
    await q.query(`CREATE INDEX idx_trigger_executions_workflow_execution ON trigger_executions (workflow_execution_id)`);

    await q.query(`
      CREATE TABLE messages (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        customer_id uuid NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
        channel varchar(32) NOT NULL,
        direction varchar(8) NOT NULL CHECK (direction IN ('inbound', 'outbound')),
        content text NOT NULL,
        language varchar(16),
        metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
        execution_id uuid REFERENCES workflow_executions(id) ON DELETE SET NULL,
        node_id varchar(64),
        consumed_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await q.query(`CREATE INDEX idx_messages_customer_created ON messages (customer_id, created_at, id)`);
    await q.query(`CREATE INDEX idx_messages_org_created ON messages (organization_id, created_at)`);
    await q.query(`CREATE INDEX idx_messages_execution ON messages (execution_id, created_at)`);

    await q.query(`
      CREATE TABLE knowledge_bases (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        name varchar(200) NOT NULL,
        entries jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX uq_knowledge_bases_org_name ON knowledge_bases (organization_id, name)`);

    await q.query(`
      CREATE TABLE outbox_events (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        type varchar(64) NOT NULL,
        data jsonb NOT NULL,
        occurred_at timestamptz NOT NULL DEFAULT now(),
        published_at timestamptz
      )`);
    await q.query(`CREATE INDEX idx_outbox_events_org_occurred ON outbox_events (organization_id, occurred_at)`);
    await q.query(`CREATE INDEX idx_outbox_events_unpublished ON outbox_events (occurred_at) WHERE published_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['outbox_events', 'knowledge_bases', 'messages', 'trigger_executions', 'execution_steps', 'workflow_executions', 'customers', 'triggers']) {
      await q.query(`DROP TABLE IF EXISTS ${table}`);
    }
  }
}
