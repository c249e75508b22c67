import { useState } from 'preact/hooks';
import { api, download } from '../api';
import { Chart } from '../chart';
import { Action, Choice, fmtDate, Json, Link, ms, pct, Show, useLoad } from '../ui';

const day = 86_400_000;
const isoDay = (d: Date) => d.toISOString().slice(0, 10);

function timezones(): string[] {
  const intl = Intl as unknown as { supportedValuesOf?: (k: string) => string[] };
  const all = intl.supportedValuesOf?.('timeZone') ?? [];
  return ['UTC', ...all.filter((z) => z !== 'UTC')];
}

/** The period and timezone, kept in the URL so a page can be shared. */
function usePeriod() {
  const q = new URLSearchParams(location.search);
  const [start, setStart] = useState(q.get('start') ?? isoDay(new Date(Date.now() - 6 * day)));
  const [end, setEnd] = useState(q.get('end') ?? isoDay(new Date()));
  const [tz, setTz] = useState(q.get('tz') ?? 'UTC');
  const form = (
    <>
      <label>
        From <input type="date" name="start" value={start} onChange={(e) => setStart(e.currentTarget.value)} />
      </label>
      <label>
        To <input type="date" name="end" value={end} onChange={(e) => setEnd(e.currentTarget.value)} />
      </label>
      <label>
        Timezone{' '}
        <select name="timezone" value={tz} onChange={(e) => setTz(e.currentTarget.value)}>
          {timezones().map((z) => (
            <option key={z} value={z}>
              {z}
            </option>
          ))}
        </select>
      </label>
    </>
  );
  // Whole days in the chosen timezone, the end day included (local times: the API reads them in `timezone`).
  const query = { start_date: `${start}T00:00:00`, end_date: `${end}T23:59:59`, timezone: tz };
  return { start, end, tz, form, query };
}

function SubNav() {
  return (
    <p>
      <Link href="/console/analytics">Workflow</Link> · <Link href="/console/analytics/engagement">Engagement</Link> · <Link href="/console/analytics/realtime">Realtime</Link>
    </p>
  );
}

export function Analytics() {
  const q = new URLSearchParams(location.search);
  const [workflow, setWorkflow] = useState(q.get('workflow') ?? '');
  const period = usePeriod();
  // The first 100 workflows for the selector (bounded); a workflow's own page links here with its id.
  const workflows = useLoad(() => api.get('/v1/workflows', { query: { limit: 100 } }), []);
  const id = workflow || workflows.data?.data[0]?.id || '';
  const key = [id, period.query.start_date, period.query.end_date, period.tz];
  const figures = useLoad(async () => (id ? api.get('/v1/analytics/workflows/{workflow_id}', { path: { workflow_id: id }, query: { ...period.query, granularity: 'day' } }) : undefined), key);
  const performance = useLoad(async () => (id ? api.get('/v1/analytics/workflows/{workflow_id}/performance', { path: { workflow_id: id }, query: { ...period.query, include_channels: true } }) : undefined), key);
  const journey = useLoad(async () => (id ? api.get('/v1/analytics/customers/journey', { query: { ...period.query, journey_type: id, include_dropoffs: true } }) : undefined), key);
  return (
    <section>
      <h1>Analytics</h1>
      <SubNav />
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Workflow{' '}
          <select name="workflow" value={id} onChange={(e) => setWorkflow(e.currentTarget.value)}>
            {workflow && !workflows.data?.data.some((w) => w.id === workflow) && <option value={workflow}>{workflow}</option>}
            {workflows.data?.data.map((w) => (
              <option key={w.id} value={w.id}>
                {w.name}
              </option>
            ))}
          </select>
        </label>
        {period.form}
      </form>
      {!id && <p class="muted">No workflow yet.</p>}
      <Show loaded={figures}>
        {(f) =>
          f && (
            <>
              <h2>Executions per day</h2>
              <Chart
                title="Executions per day and success rate"
                x={f.data.daily_metrics.map((d) => new Date(d.date).getTime() / 1000)}
                series={[
                  { label: 'Executions', values: f.data.daily_metrics.map((d) => d.executions), bars: true, color: '#2563eb' },
                  { label: 'Success rate %', values: f.data.daily_metrics.map((d) => (d.success_rate === null ? null : Math.round(d.success_rate * 1000) / 10)), scale: '%', color: '#15803d' },
                ]}
              />
              <table class="daily">
                <caption>Per day ({f.data.period.timezone})</caption>
                <thead>
                  <tr>
                    <th scope="col">Day</th>
                    <th scope="col">Executions</th>
                    <th scope="col">Success rate</th>
                    <th scope="col">Average duration</th>
                  </tr>
                </thead>
                <tbody>
                  {f.data.daily_metrics.map((d) => (
                    <tr key={d.date} data-date={d.date}>
                      <td>{d.date.slice(0, 10)}</td>
                      <td class="executions">{d.executions}</td>
                      <td>{pct(d.success_rate)}</td>
                      <td>{ms(d.average_duration_ms)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              {[f.data.metrics].map((m, i) => (
                <div key={i}>
                  <h2>Totals</h2>
                  <div class="cards">
                    <div>
                      Executions <strong data-figure="total_executions">{m.total_executions ?? '—'}</strong>
                    </div>
                    <div>
                      Success rate <strong>{pct(m.success_rate)}</strong>
                    </div>
                    <div>
                      Delivery rate <strong data-figure="delivery_rate">{pct(m.delivery_rate)}</strong>
                    </div>
                    <div>
                      Read rate <strong data-figure="read_rate">{pct(m.read_rate)}</strong>
                    </div>
                    <div>
                      Handoff rate <strong>{pct(m.handoff_rate)}</strong>
                    </div>
                  </div>
                  <h2>Channels</h2>
                  <table>
                    <thead>
                      <tr>
                        <th scope="col">Channel</th>
                        <th scope="col">Figures</th>
                      </tr>
                    </thead>
                    <tbody>
                      {Object.entries(m.channel_breakdown ?? {}).map(([channel, v]) => (
                        <tr key={channel}>
                          <td>{channel}</td>
                          <td>{typeof v === 'object' ? Object.entries(v as Record<string, unknown>).map(([k, x]) => `${k}: ${String(x)}`).join(', ') : String(v)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              ))}
            </>
          )
        }
      </Show>
      <Show loaded={performance}>
        {(p) =>
          p && (
            <>
              <h2>Duration</h2>
              <div class="cards">
                <div>
                  p50 <strong data-figure="p50">{ms(p.data.performance.execution_time.median_ms)}</strong>
                </div>
                <div>
                  p95 <strong data-figure="p95">{ms(p.data.performance.execution_time.p95_ms)}</strong>
                </div>
                <div>
                  p99 <strong data-figure="p99">{ms(p.data.performance.execution_time.p99_ms)}</strong>
                </div>
              </div>
            </>
          )
        }
      </Show>
      <Show loaded={journey}>
        {(j) =>
          j && (
            <>
              <h2>Journey</h2>
              <p>
                {j.data.journey.completed_journeys} of {j.data.journey.total_journeys} journeys completed ({pct(j.data.journey.completion_rate)})
              </p>
              <table>
                <thead>
                  <tr>
                    <th scope="col">Step</th>
                    <th scope="col">Customers</th>
                    <th scope="col">Completion</th>
                    <th scope="col">Drop-offs</th>
                  </tr>
                </thead>
                <tbody>
                  {j.data.journey.journey_steps.map((s) => {
                    const drop = j.data.journey.drop_off_points?.find((d) => d.step === s.step);
                    return (
                      <tr key={s.step}>
                        <td>
                          {s.step}. {s.name}
                        </td>
                        <td>{s.customers}</td>
                        <td>{pct(s.completion_rate)}</td>
                        <td>{drop ? `${drop.drop_off_count} (${pct(drop.drop_off_rate)})${drop.common_reasons.length ? `: ${drop.common_reasons.join(', ')}` : ''}` : '—'}</td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </>
          )
        }
      </Show>
      {id && <Report workflowId={id} query={period.query} />}
    </section>
  );
}

function Report({ workflowId, query }: { workflowId: string; query: { start_date: string; end_date: string; timezone: string } }) {
  const [format, setFormat] = useState<'csv' | 'json' | 'pdf'>('csv');
  const [report, setReport] = useState<{ id: string; status: string; format: string }>();
  const poll = async (id: string) => {
    for (let i = 0; i < 60; i++) {
      const r = await api.get('/v1/analytics/reports/{report_id}', { path: { report_id: id } });
      setReport({ id, status: r.data.status, format: r.data.format });
      if (r.data.status !== 'generating') return;
      await new Promise((ok) => setTimeout(ok, 1000));
    }
  };
  return (
    <>
      <h2>Report</h2>
      <p>
        <Choice<'csv' | 'json' | 'pdf'> label="Format" name="format" value={format} choices={[['csv', 'CSV'], ['json', 'JSON'], ['pdf', 'PDF']]} onChange={setFormat} />
        <Action
          scope="analytics:write"
          label="Create report"
          run={async () => {
            const r = await api.post('/v1/analytics/reports', {
              body: { name: 'Console report', format, timezone: query.timezone, granularity: 'day', filters: { start_date: query.start_date, end_date: query.end_date, workflow_ids: [workflowId] } },
            });
            setReport({ id: r.data.report_id, status: r.data.status, format: r.data.format });
            await poll(r.data.report_id);
          }}
        />
      </p>
      {report && (
        <p role="status">
          Report {report.id.slice(0, 8)}: {report.status}{' '}
          {report.status === 'completed' && (
            <button type="button" onClick={() => void download(`/v1/analytics/reports/${report.id}/download`, `report-${report.id}.${report.format}`)}>
              Download
            </button>
          )}
        </p>
      )}
    </>
  );
}

export function Engagement() {
  const period = usePeriod();
  const [segment, setSegment] = useState<'all' | 'new' | 'returning'>('all');
  const loaded = useLoad(() => api.get('/v1/analytics/customers/engagement', { query: { ...period.query, customer_segment: segment } }), [period.query.start_date, period.query.end_date, period.tz, segment]);
  return (
    <section>
      <h1>Engagement</h1>
      <SubNav />
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        {period.form}
        <Choice<'all' | 'new' | 'returning'> label="Customers" name="segment" value={segment} choices={['all', 'new', 'returning']} onChange={setSegment} />
      </form>
      <Show loaded={loaded}>
        {({ data: { engagement: e, trends } }) => (
          <>
            <div class="cards">
              <div>
                Customers <strong>{e.total_customers}</strong>
              </div>
              <div>
                Active <strong>{e.active_customers}</strong>
              </div>
              <div>
                New <strong>{e.new_customers}</strong>
              </div>
              <div>
                Returning <strong>{e.returning_customers}</strong>
              </div>
              <div>
                Session <strong>{ms(e.average_session_duration)}</strong>
              </div>
              <div>
                Messages per session <strong>{e.average_messages_per_session?.toFixed(1) ?? '—'}</strong>
              </div>
              <div>
                Satisfaction <strong>{e.customer_satisfaction?.toFixed(2) ?? '—'}</strong>
              </div>
            </div>
            <p class="muted">
              Trends: customers {trends.customer_growth}, engagement {trends.engagement_trend}, satisfaction {trends.satisfaction_trend}
            </p>
            <h2>By channel</h2>
            <Json value={e.engagement_by_channel} />
          </>
        )}
      </Show>
    </section>
  );
}

export function Realtime() {
  const loaded = useLoad(() => api.get('/v1/analytics/realtime', {}), []);
  return (
    <section>
      <h1>Realtime</h1>
      <SubNav />
      <button type="button" onClick={loaded.reload}>
        Refresh
      </button>
      <Show loaded={loaded}>
        {({ data: r }) => (
          <>
            <p class="muted">As of {fmtDate(r.timestamp)}</p>
            <div class="cards">
              <div>
                Active workflows <strong>{r.current_metrics.active_workflows}</strong>
              </div>
              <div>
                Running executions <strong>{r.current_metrics.active_executions}</strong>
              </div>
              <div>
                Messages in the last hour <strong>{r.current_metrics.messages_in_last_hour}</strong>
              </div>
              <div>
                Response time <strong>{ms(r.current_metrics.average_response_time_ms)}</strong>
              </div>
              <div>
                Health <strong>{r.current_metrics.system_health}</strong>
              </div>
            </div>
            <h2>Workflows</h2>
            <table>
              <thead>
                <tr>
                  <th scope="col">Workflow</th>
                  <th scope="col">Running</th>
                  <th scope="col">Messages (1 h)</th>
                  <th scope="col">Response time</th>
                </tr>
              </thead>
              <tbody>
                {r.workflow_metrics.map((w) => (
                  <tr key={w.workflow_id}>
                    <td>
                      <Link href={`/console/workflows/${w.workflow_id}`}>{w.name}</Link>
                    </td>
                    <td>{w.active_executions}</td>
                    <td>{w.messages_in_last_hour}</td>
                    <td>{ms(w.average_response_time_ms)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <h2>Channel accounts' send backlog</h2>
            <table>
              <thead>
                <tr>
                  <th scope="col">Account</th>
                  <th scope="col">Channel</th>
                  <th scope="col">Queued sends</th>
                </tr>
              </thead>
              <tbody>
                {r.channel_account_metrics.map((a) => (
                  <tr key={a.channel_account_id}>
                    <td>{a.name}</td>
                    <td>{a.channel}</td>
                    <td>{a.send_backlog}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        )}
      </Show>
    </section>
  );
}
