import { useState } from 'preact/hooks';
import { api } from '../api';
import { Action, Choice, fmtDate, Link, pct, Show, StatusBadge, useLoad, usePager } from '../ui';
import { Executions } from './executions';

type Status = 'draft' | 'active' | 'inactive';

export function WorkflowList() {
  const params = new URLSearchParams(location.search);
  const [search, setSearch] = useState(params.get('search') ?? '');
  const [status, setStatus] = useState<Status | ''>((params.get('status') as Status) ?? '');
  const { after, Pager } = usePager([search, status]);
  const loaded = useLoad(() => api.get('/v1/workflows', { query: { limit: 20, after, search: search || undefined, status: status || undefined } }), [after, search, status]);
  return (
    <section>
      <h1>Workflows</h1>
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <label>
          Search <input type="search" name="search" value={search} onChange={(e) => setSearch(e.currentTarget.value)} />
        </label>
        <Choice<Status | ''> label="Status" name="status" value={status} choices={[['', 'any'], 'active', 'inactive', 'draft']} onChange={setStatus} />
      </form>
      <Show loaded={loaded}>
        {(page) => (
          <>
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Status</th>
                  <th scope="col">Channel</th>
                  <th scope="col">Version</th>
                  <th scope="col">Executions</th>
                  <th scope="col">Success rate</th>
                  <th scope="col">Updated</th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((w) => (
                  <tr key={w.id}>
                    <td>
                      <Link href={`/console/workflows/${w.id}`}>{w.name}</Link>
                    </td>
                    <td>
                      <StatusBadge status={w.status} />
                    </td>
                    <td>{w.channel ?? '—'}</td>
                    <td>{w.version}</td>
                    <td>{w.execution_count}</td>
                    <td>{pct(w.success_rate)}</td>
                    <td>{fmtDate(w.updated_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {page.data.length === 0 && <p class="muted">No workflow matches.</p>}
            <Pager next={page.pagination.next_cursor} />
          </>
        )}
      </Show>
    </section>
  );
}

interface GraphNode {
  id: string;
  type: string;
  next?: string;
}

/** Columns by distance from the entry node (the first node), following each node's `next`. */
export function layout(nodes: GraphNode[]): Map<string, { col: number; row: number }> {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const depth = new Map<string, number>();
  const entry = nodes[0];
  if (entry) {
    let current: GraphNode | undefined = entry;
    let d = 0;
    while (current && !depth.has(current.id)) {
      depth.set(current.id, d++);
      current = current.next ? byId.get(current.next) : undefined;
    }
  }
  // Nodes the entry's chain does not reach: placed after their predecessor if it is placed, else in column 0.
  for (let changed = true; changed; ) {
    changed = false;
    for (const n of nodes) {
      if (depth.has(n.id)) continue;
      const before = nodes.find((m) => m.next === n.id && depth.has(m.id));
      if (before) {
        depth.set(n.id, (depth.get(before.id) as number) + 1);
        changed = true;
      }
    }
  }
  for (const n of nodes) if (!depth.has(n.id)) depth.set(n.id, 0);
  const rows = new Map<number, number>();
  const out = new Map<string, { col: number; row: number }>();
  for (const n of nodes) {
    const col = depth.get(n.id) as number;
    const row = rows.get(col) ?? 0;
    rows.set(col, row + 1);
    out.set(n.id, { col, row });
  }
  return out;
}

const W = 150;
const H = 52;
const GX = 60;
const GY = 24;

export function Graph({ nodes }: { nodes: GraphNode[] }) {
  const pos = layout(nodes);
  const cols = Math.max(1, ...[...pos.values()].map((p) => p.col + 1));
  const rows = Math.max(1, ...[...pos.values()].map((p) => p.row + 1));
  const width = cols * (W + GX);
  const height = rows * (H + GY) + GY;
  const at = (id: string) => {
    const p = pos.get(id) as { col: number; row: number };
    return { x: GX / 2 + p.col * (W + GX), y: GY + p.row * (H + GY) };
  };
  return (
    <figure class="graph">
      <svg role="img" aria-label={`Node graph: ${nodes.map((n) => `${n.id} (${n.type})${n.next ? ` then ${n.next}` : ''}`).join(', ')}`} viewBox={`0 0 ${width} ${height}`} width={width} height={height}>
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse">
            <path d="M 0 0 L 10 5 L 0 10 z" fill="#555" />
          </marker>
        </defs>
        {nodes
          .filter((n) => n.next && pos.has(n.next))
          .map((n) => {
            const a = at(n.id);
            const b = at(n.next as string);
            return <line key={`${n.id}->${n.next}`} class="edge" data-from={n.id} data-to={n.next} x1={a.x + W} y1={a.y + H / 2} x2={b.x} y2={b.y + H / 2} stroke="#555" marker-end="url(#arrow)" />;
          })}
        {nodes.map((n, i) => {
          const { x, y } = at(n.id);
          return (
            <g key={n.id} class="node" data-node={n.id} data-type={n.type}>
              <rect x={x} y={y} width={W} height={H} rx="6" fill={i === 0 ? '#dbeafe' : '#f3f4f6'} stroke={i === 0 ? '#1d4ed8' : '#6b7280'} stroke-width={i === 0 ? 2 : 1} />
              <text x={x + 8} y={y + 20} font-size="13" font-weight="600" fill="#111827">
                {n.id}
              </text>
              <text x={x + 8} y={y + 40} font-size="12" fill="#374151">
                {n.type}
                {i === 0 ? ' · entry' : ''}
              </text>
            </g>
          );
        })}
      </svg>
      <figcaption>Entry node: {nodes[0]?.id ?? '—'} (highlighted); arrows follow each node's next.</figcaption>
    </figure>
  );
}

export function WorkflowDetail({ id }: { id: string }) {
  const loaded = useLoad(() => api.get('/v1/workflows/{workflow_id}', { path: { workflow_id: id } }), [id]);
  return (
    <Show loaded={loaded}>
      {({ data: w }) => (
        <section>
          <h1>{w.name}</h1>
          <p>
            <StatusBadge status={w.status} /> {w.channel ?? 'no channel'} · version {w.version} · {w.execution_count} executions · success {pct(w.success_rate)}
          </p>
          {w.description && <p>{w.description}</p>}
          <p class="actions">
            {w.status === 'active' ? (
              <Action scope="workflows:write" label="Deactivate" run={() => api.post('/v1/workflows/{workflow_id}/deactivate', { path: { workflow_id: id } })} done={loaded.reload} />
            ) : (
              <Action scope="workflows:write" label="Activate" run={() => api.post('/v1/workflows/{workflow_id}/activate', { path: { workflow_id: id } })} done={loaded.reload} />
            )}{' '}
            <Link href={`/console/analytics?workflow=${id}`}>Analytics</Link>
          </p>
          <dl class="facts">
            <dt>Version</dt>
            <dd>
              {w.version} (each new configuration makes a new version; executions show the version they ran)
            </dd>
            <dt>Activated</dt>
            <dd>{fmtDate(w.activated_at)}</dd>
            <dt>Deactivated</dt>
            <dd>{fmtDate(w.deactivated_at)}</dd>
            <dt>Trigger</dt>
            <dd>{w.configuration.trigger ? `${w.configuration.trigger.type}${w.configuration.trigger.keywords ? `: ${w.configuration.trigger.keywords.join(', ')}` : ''}` : '—'}</dd>
          </dl>
          <h2>Graph</h2>
          <Graph nodes={w.configuration.nodes as GraphNode[]} />
          <h2>Versions</h2>
          <Versions workflowId={id} current={w.version} />
          <h2>Executions</h2>
          <Executions workflowId={id} />
        </section>
      )}
    </Show>
  );
}

/** Who wrote a version: the kind of credential and the start of its id (the user's for a sign-in). */
function author(by: { credential_type: string; credential_id: string; user_id: string | null } | null): string {
  if (!by) return '—';
  const kind = by.credential_type === 'api_key' ? 'API key' : by.credential_type === 'oauth' ? 'signed-in user' : 'JWT client';
  return `${kind} ${(by.user_id ?? by.credential_id).slice(0, 8)}`;
}

/** A workflow's versions, newest first, cursor pages of 20; each opens on a page of its own. */
export function Versions({ workflowId, current }: { workflowId: string; current: number }) {
  const { after, Pager } = usePager([workflowId, current]);
  const loaded = useLoad(() => api.get('/v1/workflows/{workflow_id}/versions', { path: { workflow_id: workflowId }, query: { limit: 20, after } }), [workflowId, current, after]);
  return (
    <Show loaded={loaded}>
      {(page) => (
        <>
          <table class="versions">
            <thead>
              <tr>
                <th scope="col">Version</th>
                <th scope="col">Written</th>
                <th scope="col">Name then</th>
                <th scope="col">By</th>
              </tr>
            </thead>
            <tbody>
              {page.data.map((v) => (
                <tr key={v.version} data-version={v.version}>
                  <td>
                    <Link href={`/console/workflows/${workflowId}/versions/${v.version}`}>Version {v.version}</Link>
                    {v.version === current && <span class="muted"> (current)</span>}
                  </td>
                  <td>{fmtDate(v.created_at)}</td>
                  <td>{v.name ?? '—'}</td>
                  <td>{author(v.created_by)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <Pager next={page.pagination.next_cursor} />
        </>
      )}
    </Show>
  );
}

/** One version of a workflow: when and by whom it was written, and its node graph. */
export function WorkflowVersion({ id, version }: { id: string; version: string }) {
  const loaded = useLoad(() => api.get('/v1/workflows/{workflow_id}/versions/{version}', { path: { workflow_id: id, version: Number(version) } }), [id, version]);
  return (
    <section>
      <p>
        <Link href={`/console/workflows/${id}`}>← Workflow</Link>
      </p>
      <Show loaded={loaded}>
        {({ data: v }) => (
          <>
            <h1>
              Version {v.version}
              {v.name ? ` of ${v.name}` : ''}
            </h1>
            <dl class="facts">
              <dt>Written</dt>
              <dd>{fmtDate(v.created_at)}</dd>
              <dt>By</dt>
              <dd>{author(v.created_by)}</dd>
              <dt>Channel</dt>
              <dd>{v.channel ?? '—'}</dd>
              <dt>Description</dt>
              <dd>{v.description ?? '—'}</dd>
              <dt>Trigger</dt>
              <dd>{v.configuration.trigger ? `${v.configuration.trigger.type}${v.configuration.trigger.keywords ? `: ${v.configuration.trigger.keywords.join(', ')}` : ''}` : '—'}</dd>
            </dl>
            <h2>Graph</h2>
            <Graph nodes={v.configuration.nodes as GraphNode[]} />
          </>
        )}
      </Show>
    </section>
  );
}
