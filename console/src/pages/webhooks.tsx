import { useState } from 'preact/hooks';
import { api } from '../api';
import { Action, Choice, fmtDate, Link, ms, Show, StatusBadge, useLoad, usePages } from '../ui';

export function Webhooks() {
  const { page: n, Pager } = usePages([]);
  const loaded = useLoad(() => api.get('/v1/webhooks', { query: { limit: 20, page: n } }), [n]);
  return (
    <section>
      <h1>Webhooks</h1>
      <Show loaded={loaded}>
        {(page) => (
          <>
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">URL</th>
                  <th scope="col">Events</th>
                  <th scope="col">Active</th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((w) => (
                  <tr key={w.id}>
                    <td>
                      <Link href={`/console/webhooks/${w.id}`}>{w.name}</Link>
                    </td>
                    <td>{w.url}</td>
                    <td>{w.events.join(', ')}</td>
                    <td>{w.active ? 'yes' : 'no'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {page.data.length === 0 && <p class="muted">No webhook yet.</p>}
            <Pager pages={page.pagination.pages} />
          </>
        )}
      </Show>
    </section>
  );
}

type Status = 'delivered' | 'retrying' | 'failed';

export function WebhookDetail({ id }: { id: string }) {
  const webhook = useLoad(() => api.get('/v1/webhooks/{webhook_id}', { path: { webhook_id: id } }), [id]);
  const [status, setStatus] = useState<Status | ''>('');
  const { page: n, Pager: LogPager } = usePages([status]);
  const logs = useLoad(() => api.get('/v1/webhooks/{webhook_id}/logs', { path: { webhook_id: id }, query: { limit: 20, status: status || undefined, page: n } }), [id, status, n]);
  const [since, setSince] = useState('');
  const [note, setNote] = useState('');
  return (
    <section>
      <p>
        <Link href="/console/webhooks">← Webhooks</Link>
      </p>
      <Show loaded={webhook}>
        {({ data: w }) => (
          <>
            <h1>{w.name}</h1>
            <p>
              {w.url} · {w.events.join(', ')} · {w.active ? 'active' : 'disabled'}
            </p>
          </>
        )}
      </Show>
      <h2>Recover</h2>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Deliver again every event whose delivery failed since <input type="datetime-local" name="since" value={since} onChange={(e) => setSince(e.currentTarget.value)} />
        </label>
        <Action
          scope="webhooks:write"
          label="Recover"
          run={async () => {
            const r = await api.post('/v1/webhooks/{webhook_id}/recover', { path: { webhook_id: id }, body: { since: new Date(since).toISOString() } });
            setNote(`${r.data.count} deliveries queued`);
          }}
          done={logs.reload}
        />
      </form>
      {note && <p role="status">{note}</p>}
      <h2>Deliveries</h2>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <Choice<Status | ''> label="Status" name="delivery-status" value={status} choices={[['', 'any'], 'delivered', 'retrying', 'failed']} onChange={setStatus} />
      </form>
      <Show loaded={logs}>
        {(page) => (
          <>
            <table>
              <thead>
                <tr>
                  <th scope="col">Event</th>
                  <th scope="col">Status</th>
                  <th scope="col">Response</th>
                  <th scope="col">Time</th>
                  <th scope="col">Attempt</th>
                  <th scope="col">When</th>
                  <th scope="col">Action</th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((l) => (
                  <tr key={l.id} data-log={l.id}>
                    <td>{l.event_type}</td>
                    <td>
                      <StatusBadge status={l.status} />
                    </td>
                    <td class="response-code">{l.response_code ?? '—'}</td>
                    <td>{ms(l.response_time_ms)}</td>
                    <td>{l.attempt}</td>
                    <td>{fmtDate(l.delivered_at)}</td>
                    <td>
                      <Action
                        scope="webhooks:write"
                        label="Resend"
                        run={async () => {
                          const r = await api.post('/v1/webhooks/{webhook_id}/logs/{log_id}/resend', { path: { webhook_id: id, log_id: l.id } });
                          setNote(`Resent as delivery ${r.data.delivery_id}`);
                        }}
                        done={logs.reload}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            {page.data.length === 0 && <p class="muted">No delivery yet.</p>}
            <LogPager pages={page.pagination.pages} />
          </>
        )}
      </Show>
    </section>
  );
}
