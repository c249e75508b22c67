import { useState } from 'preact/hooks';
import { api } from '../api';
import { Action, fmtDate, Link, Show, StatusBadge, useLoad, usePages } from '../ui';

export function Customers() {
  const { page: n, Pager } = usePages([]);
  const loaded = useLoad(() => api.get('/v1/customers', { query: { limit: 20, page: n } }), [n]);
  return (
    <section>
      <h1>Conversations</h1>
      <Show loaded={loaded}>
        {(page) => (
          <>
            <table>
              <thead>
                <tr>
                  <th scope="col">Customer</th>
                  <th scope="col">Channel</th>
                  <th scope="col">Last seen</th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((c) => (
                  <tr key={c.customer_id}>
                    <td>
                      <Link href={`/console/customers/${encodeURIComponent(c.customer_id)}`}>{c.customer_id}</Link>
                    </td>
                    <td>{c.channel ?? '—'}</td>
                    <td>{fmtDate(c.last_seen_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {page.data.length === 0 && <p class="muted">No customer yet.</p>}
            <Pager pages={page.pagination.pages} />
          </>
        )}
      </Show>
    </section>
  );
}

/** Each status's tick (decoration, hidden from screen readers) and its words. */
const DELIVERY: Record<string, [string, string]> = {
  queued: ['◷', 'Queued'],
  sending: ['◷', 'Sending'],
  sent: ['✓', 'Sent'],
  delivered: ['✓✓', 'Delivered'],
  read: ['✓✓', 'Read'],
  failed: ['✗', 'Failed'],
};

/** Where an outbound message's send stands, in words beside its tick; a failure with the provider's error. */
function Delivery({ status, error }: { status: string; error: { code: string | null; title: string | null } | null }) {
  const [tick, words] = DELIVERY[status] ?? ['', status];
  const reason = status === 'failed' && error ? [error.code, error.title].filter(Boolean).join(' ') : '';
  return (
    <p class={`delivery delivery-${status}`} data-delivery={status}>
      <span aria-hidden="true">{tick}</span> {words}
      {reason && `: ${reason}`}
    </p>
  );
}

export function CustomerDetail({ id }: { id: string }) {
  const customer = useLoad(() => api.get('/v1/customers/{customer_id}', { path: { customer_id: id } }), [id]);
  // The latest 100 messages (the API lists newest first), shown oldest first.
  const messages = useLoad(() => api.get('/v1/customers/{customer_id}/messages', { path: { customer_id: id }, query: { limit: 100 } }), [id]);
  const [text, setText] = useState('');
  const reload = () => {
    customer.reload();
    messages.reload();
  };
  return (
    <section>
      <p>
        <Link href="/console/customers">← Conversations</Link>
      </p>
      <h1>Conversation with {id}</h1>
      <Show loaded={customer}>
        {({ data: c }) => (
          <>
            <p>
              {c.channel ?? 'no channel'} · first seen {fmtDate(c.first_seen_at)} · handoff:{' '}
              <strong data-handoff={c.handoff.active ? 'active' : 'off'}>{c.handoff.active ? `taken over until ${fmtDate(c.handoff.ends_at)}` : 'automated'}</strong>
              {c.handoff.reason && ` (${c.handoff.reason})`}
            </p>
            <p class="actions">
              {c.handoff.active ? (
                <Action scope="executions:write" label="Hand back" run={() => api.delete('/v1/customers/{customer_id}/handoff', { path: { customer_id: id } })} done={reload} />
              ) : (
                <Action scope="executions:write" label="Take over" run={() => api.post('/v1/customers/{customer_id}/handoff', { path: { customer_id: id }, body: { reason: 'taken over from the console' } })} done={reload} />
              )}
            </p>
          </>
        )}
      </Show>
      <h2>Messages</h2>
      <Show loaded={messages}>
        {(page) => (
          <ol class="messages">
            {[...page.data].reverse().map((m) => (
              <li key={m.id} class={m.direction} data-direction={m.direction} data-at={m.created_at}>
                <span class="muted">
                  {m.author} · {fmtDate(m.created_at)} <StatusBadge status={m.direction} />
                </span>
                <div>{m.content}</div>
                {m.delivery_status && <Delivery status={m.delivery_status} error={m.delivery_error} />}
              </li>
            ))}
          </ol>
        )}
      </Show>
      <form
        class="stack"
        onSubmit={(e) => {
          e.preventDefault();
        }}
      >
        <label>
          Agent's message <textarea name="message" rows={3} cols={60} value={text} onInput={(e) => setText(e.currentTarget.value)} />
        </label>
        <Action
          scope="executions:write"
          label="Send"
          run={async () => {
            await api.post('/v1/customers/{customer_id}/messages', { path: { customer_id: id }, body: { content: text } });
            setText('');
          }}
          done={reload}
        />
      </form>
    </section>
  );
}
