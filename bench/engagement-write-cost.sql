-- Server time of the engagement sessions trigger (customer_sessions_maintain) per message insert statement, on a
-- seeded history database after migration EngagementRollups: 600 statements of each kind, rolled back.
--   psql -h 127.0.0.1 -U postgres -d <database> -f bench/engagement-write-cost.sql
BEGIN;
SET LOCAL track_functions = 'pl';
DO $$
DECLARE
  t0 timestamptz; org uuid; wf uuid; c uuid[]; ex uuid[]; n int := 600; i int; r text := ''; f oid := 'customer_sessions_maintain'::regproc; ft float8; fc bigint;
BEGIN
  SELECT organization_id, id INTO org, wf FROM workflows WHERE name = 'history';
  c := ARRAY(SELECT id FROM customers WHERE organization_id = org ORDER BY external_id LIMIT n * 10);
  ex := ARRAY(SELECT id FROM workflow_executions WHERE workflow_id = wf AND status = 'running' ORDER BY started_at DESC LIMIT n);
  t0 := clock_timestamp(); ft := COALESCE(pg_stat_get_xact_function_total_time(f), 0); fc := COALESCE(pg_stat_get_xact_function_calls(f), 0);
  FOR i IN 1..n LOOP
    INSERT INTO messages (organization_id, customer_id, channel, direction, content, execution_id, created_at)
    VALUES (org, c[i], 'whatsapp', 'inbound', 'x', ex[i], now() + i * interval '1 second');
  END LOOP;
  r := r || ' one_new=' || round((extract(epoch FROM clock_timestamp() - t0) * 1000 / n)::numeric, 3) || '(trigger ' || round(((COALESCE(pg_stat_get_xact_function_total_time(f), 0) - ft) / GREATEST(1, COALESCE(pg_stat_get_xact_function_calls(f), 0) - fc))::numeric, 3) || ')';
  t0 := clock_timestamp(); ft := COALESCE(pg_stat_get_xact_function_total_time(f), 0); fc := COALESCE(pg_stat_get_xact_function_calls(f), 0);
  FOR i IN 1..n LOOP
    INSERT INTO messages (organization_id, customer_id, channel, direction, content, execution_id, created_at)
    VALUES (org, c[i], 'whatsapp', 'outbound', 'y', ex[i], now() + i * interval '1 second' + interval '2 seconds');
  END LOOP;
  r := r || ' one_extend=' || round((extract(epoch FROM clock_timestamp() - t0) * 1000 / n)::numeric, 3) || '(trigger ' || round(((COALESCE(pg_stat_get_xact_function_total_time(f), 0) - ft) / GREATEST(1, COALESCE(pg_stat_get_xact_function_calls(f), 0) - fc))::numeric, 3) || ')';
  t0 := clock_timestamp(); ft := COALESCE(pg_stat_get_xact_function_total_time(f), 0); fc := COALESCE(pg_stat_get_xact_function_calls(f), 0);
  FOR i IN 1..n LOOP
    INSERT INTO messages (organization_id, customer_id, channel, direction, content, execution_id, created_at)
    VALUES (org, c[i], 'whatsapp', 'outbound', 'a', ex[i], now() + i * interval '1 second' + interval '3 seconds'),
           (org, c[i], 'whatsapp', 'outbound', 'b', ex[i], now() + i * interval '1 second' + interval '4 seconds');
  END LOOP;
  r := r || ' two_rows_one_pair=' || round((extract(epoch FROM clock_timestamp() - t0) * 1000 / n)::numeric, 3) || '(trigger ' || round(((COALESCE(pg_stat_get_xact_function_total_time(f), 0) - ft) / GREATEST(1, COALESCE(pg_stat_get_xact_function_calls(f), 0) - fc))::numeric, 3) || ')';
  t0 := clock_timestamp(); ft := COALESCE(pg_stat_get_xact_function_total_time(f), 0); fc := COALESCE(pg_stat_get_xact_function_calls(f), 0);
  FOR i IN 0..(n / 10 - 1) LOOP
    INSERT INTO messages (organization_id, customer_id, channel, direction, content, created_at)
    SELECT org, c[n + i * 10 + k], 'instagram', 'outbound', 'z', now() + k * interval '1 ms' FROM generate_series(1, 10) k;
  END LOOP;
  r := r || ' ten_pairs_per_statement=' || round((extract(epoch FROM clock_timestamp() - t0) * 1000 / (n / 10))::numeric, 3) || '(trigger ' || round(((COALESCE(pg_stat_get_xact_function_total_time(f), 0) - ft) / GREATEST(1, COALESCE(pg_stat_get_xact_function_calls(f), 0) - fc))::numeric, 3) || ')';
  RAISE NOTICE '%', r;
END $$;
ROLLBACK;
