import { useState } from 'preact/hooks';
import { api } from '../api';
import { Action, Choice, fmtDate, Json, Link, ms, Show, StatusBadge, useLoad, usePager } from '../ui';

type Status = 'running' | 'success' | 'failed';

/** A workflow's executions, newest first, filtered by status and start date; cursor pages of 20. */
export function Executions({ workflowId }: { workflowId: string }) {
  const [status, setStatus] = useState<Status | ''>('');
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const { after, Pager } = usePager([status, from, to]);
  const loaded = useLoad(
    () =>
      api.get('/v1/workflows/{workflow_id}/executions', {
        path: { workflow_id: workflowId },
        query: { limit: 20, after, status: status || undefined, start_date: from ? new Date(from).toISOString() : undefined, end_date: to ? new Date(to).toISOString() : undefined },
      }),
    [workflowId, after, status, from, to],
  );
  return (
    <>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <Choice<Status | ''> label="Status" name="execution-status" value={status} choices={[['', 'any'], 'running', 'success', 'failed']} onChange={setStatus} />
        <label>
          From <input type="datetime-local" name="execution-from" value={from} onChange={(e) => setFrom(e.currentTarget.value)} />
        </label>
        <label>
          To <input type="datetime-local" name="execution-to" value={to} onChange={(e) => setTo(e.currentTarget.value)} />
        </label>
      </form>
      <Show loaded={loaded}>
        {(page) => (
          <>
            <table>
              <thead>
                <tr>
                  <th scope="col">Execution</th>
                  <th scope="col">Status</th>
                  <th scope="col">Started</th>
                  <th scope="col">Duration</th>
                  <th scope="col">Customer</th>
                  <th scope="col">Version</th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((x) => (
                  <tr key={x.id} data-execution={x.id}>
                    <td>
                      <Link href={`/console/workflows/${workflowId}/executions/${x.id}`}>{x.id.slice(0, 8)}</Link>
                      {x.retry_of && <span class="muted"> (retry)</span>}
                    </td>
                    <td>
                      <StatusBadge status={x.status} />
                    </td>
                    <td>{fmtDate(x.started_at)}</td>
                    <td>{ms(x.duration_ms)}</td>
                    <td>{x.customer_id ? <Link href={`/console/customers/${encodeURIComponent(x.customer_id)}`}>{x.customer_id}</Link> : '—'}</td>
                    <td>{x.workflow_version}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {page.data.length === 0 && <p class="muted">No execution matches.</p>}
            <Pager next={page.pagination.next_cursor} />
          </>
        )}
      </Show>
    </>
  );
}

interface Step {
  node_id: string;
  type: string;
  status: string;
  started_at: string;
  completed_at: string;
  duration_ms: number;
  attempt: number;
  input: unknown;
  output: unknown;
}

/** The steps as bars on one time axis from the execution's start (an SVG diagram: uPlot has no timeline). */
export function Timeline({ start, end, steps }: { start: string; end: string | null; steps: Step[] }) {
  const t0 = new Date(start).getTime();
  const t1 = Math.max(end ? new Date(end).getTime() : Date.now(), ...steps.map((s) => new Date(s.completed_at).getTime()), t0 + 1);
  const span = t1 - t0;
  const label = 170;
  const width = 760;
  const plot = width - label - 10;
  const row = 28;
  const height = steps.length * row + 30;
  const x = (t: number) => label + ((t - t0) / span) * plot;
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => ({ at: label + f * plot, text: `${Math.round(f * span)} ms` }));
  return (
    <svg class="timeline" role="img" aria-label={`Timeline of ${steps.length} steps over ${span} ms`} viewBox={`0 0 ${width} ${height}`} width={width} height={height}>
      {ticks.map((t) => (
        <g key={t.at}>
          <line x1={t.at} x2={t.at} y1={0} y2={height - 20} stroke="#d1d5db" />
          <text x={t.at} y={height - 6} font-size="11" text-anchor={t.at === label + plot ? 'end' : 'middle'} fill="#374151">
            {t.text}
          </text>
        </g>
      ))}
      {steps.map((s, i) => {
        const a = x(new Date(s.started_at).getTime());
        const b = Math.max(a + 2, x(new Date(s.completed_at).getTime()));
        return (
          <g key={i} class="step-bar" data-node={s.node_id} data-status={s.status}>
            <text x={4} y={i * row + 18} font-size="12" fill="#111827">
              {s.node_id}
              {s.attempt > 1 ? ` ×${s.attempt}` : ''}
            </text>
            <rect x={a} y={i * row + 6} width={b - a} height={row - 10} rx="3" fill={s.status === 'failed' ? '#b91c1c' : '#15803d'}>
              <title>{`${s.node_id} (${s.type}) ${s.status}, attempt ${s.attempt}, ${s.duration_ms} ms`}</title>
            </rect>
          </g>
        );
      })}
    </svg>
  );
}

export function ExecutionDetail({ workflowId, id }: { workflowId: string; id: string }) {
  const loaded = useLoad(() => api.get('/v1/workflows/{workflow_id}/executions/{execution_id}', { path: { workflow_id: workflowId, execution_id: id } }), [workflowId, id]);
  const [retried, setRetried] = useState<string>();
  return (
    <Show loaded={loaded}>
      {({ data: x }) => (
        <section>
          <p>
            <Link href={`/console/workflows/${workflowId}`}>← Workflow</Link>
          </p>
          <h1>Execution {x.id.slice(0, 8)}</h1>
          <p>
            <StatusBadge status={x.status} /> started {fmtDate(x.started_at)} · {ms(x.duration_ms)} · version {x.workflow_version}
            {x.retry_of && (
              <>
                {' '}
                · retry of <Link href={`/console/workflows/${workflowId}/executions/${x.retry_of}`}>{x.retry_of.slice(0, 8)}</Link>
              </>
            )}
          </p>
          {x.error && (
            <div class="error" role="alert">
              <strong>{x.error.code}</strong>: {x.error.message}
              {x.error.node_id && <> (node {x.error.node_id})</>}
            </div>
          )}
          <p class="actions">
            {x.status === 'failed' && (
              <Action
                scope="executions:write"
                label="Retry"
                run={async () => {
                  const r = await api.post('/v1/workflows/{workflow_id}/executions/{execution_id}/retry', { path: { workflow_id: workflowId, execution_id: id } });
                  setRetried(r.data.id);
                }}
              />
            )}
            {x.status === 'running' && (
              <Action scope="executions:write" label="Cancel" run={() => api.post('/v1/workflows/{workflow_id}/executions/{execution_id}/cancel', { path: { workflow_id: workflowId, execution_id: id } })} done={loaded.reload} />
            )}
          </p>
          {retried && (
            <p role="status" class="notice">
              Retried as <Link href={`/console/workflows/${workflowId}/executions/${retried}`}>{retried}</Link>
            </p>
          )}
          <h2>Timeline</h2>
          {x.steps.length ? <Timeline start={x.started_at} end={x.completed_at ?? null} steps={x.steps as Step[]} /> : <p class="muted">No step recorded.</p>}
          <h2>Steps</h2>
          <ol class="steps">
            {x.steps.map((s, i) => (
              <li key={i}>
                <details>
                  <summary>
                    {s.node_id} ({s.type}) <StatusBadge status={s.status} /> {s.duration_ms} ms{s.attempt > 1 ? `, attempt ${s.attempt}` : ''}
                  </summary>
                  <h3>Input</h3>
                  <Json value={s.input} />
                  <h3>Output</h3>
                  <Json value={s.output} />
                </details>
              </li>
            ))}
          </ol>
          <h2>Input and output</h2>
          <Json value={{ input: x.input, output: x.output }} />
        </section>
      )}
    </Show>
  );
}
