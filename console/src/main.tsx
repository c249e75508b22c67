import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { setOnSignedOut } from './api';
import { accessToken, completeSignIn, signIn, signOut } from './auth';
import { Analytics, Engagement, Realtime } from './pages/analytics';
import { Channels } from './pages/channels';
import { CustomerDetail, Customers } from './pages/customers';
import { ExecutionDetail } from './pages/executions';
import { WebhookDetail, Webhooks } from './pages/webhooks';
import { WorkflowDetail, WorkflowList, WorkflowVersion } from './pages/workflows';
import { Link } from './ui';
import './styles.css';

const ROUTES: [RegExp, (m: string[]) => preact.JSX.Element][] = [
  [/^\/console\/(workflows\/?)?$/, () => <WorkflowList />],
  [/^\/console\/workflows\/([^/]+)$/, ([, id]) => <WorkflowDetail id={id as string} />],
  [/^\/console\/workflows\/([^/]+)\/versions\/([0-9]+)$/, ([, w, v]) => <WorkflowVersion id={w as string} version={v as string} />],
  [/^\/console\/workflows\/([^/]+)\/executions\/([^/]+)$/, ([, w, x]) => <ExecutionDetail workflowId={w as string} id={x as string} />],
  [/^\/console\/customers\/?$/, () => <Customers />],
  [/^\/console\/customers\/([^/]+)$/, ([, id]) => <CustomerDetail id={decodeURIComponent(id as string)} />],
  [/^\/console\/webhooks\/?$/, () => <Webhooks />],
  [/^\/console\/webhooks\/([^/]+)$/, ([, id]) => <WebhookDetail id={id as string} />],
  [/^\/console\/analytics\/?$/, () => <Analytics />],
  [/^\/console\/analytics\/engagement$/, () => <Engagement />],
  [/^\/console\/analytics\/realtime$/, () => <Realtime />],
  [/^\/console\/channels\/?$/, () => <Channels />],
];

function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const on = () => setPath(location.pathname);
    addEventListener('popstate', on);
    return () => removeEventListener('popstate', on);
  }, []);
  return path;
}

function Page({ path }: { path: string }) {
  for (const [pattern, view] of ROUTES) {
    const m = pattern.exec(path);
    if (m) return view([...m].map((s) => s ?? ''));
  }
  return (
    <section>
      <h1>Not found</h1>
      <p>
        <Link href="/console/">Workflows</Link>
      </p>
    </section>
  );
}

const NAV: [string, string][] = [
  ['/console/workflows', 'Workflows'],
  ['/console/customers', 'Conversations'],
  ['/console/webhooks', 'Webhooks'],
  ['/console/analytics', 'Analytics'],
  ['/console/channels', 'Channel accounts'],
];

function App() {
  const path = usePath();
  const [state, setState] = useState<'loading' | 'in' | 'out'>('loading');
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setOnSignedOut(() => setState('out'));
    void (async () => {
      const problem = await completeSignIn();
      // completeSignIn put back the page the user signed in from (history.replaceState fires no event).
      dispatchEvent(new PopStateEvent('popstate'));
      setError(problem);
      setState((await accessToken()) ? 'in' : 'out');
    })();
  }, []);
  if (state === 'loading') return <main id="main"><p class="muted">Loading…</p></main>;
  if (state === 'out') {
    return (
      <main id="main" class="signin">
        <h1>Console</h1>
        <p>Sign in with your account to see your organization's workflows, executions, conversations, webhooks and analytics.</p>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <button type="button" onClick={() => void signIn()}>
          Sign in
        </button>
      </main>
    );
  }
  return (
    <>
      <header>
        <nav aria-label="Sections">
          {NAV.map(([href, label]) => (
            <Link key={href} href={href} class={path.startsWith(href) ? 'current' : undefined}>
              {label}
            </Link>
          ))}
        </nav>
        <button
          type="button"
          onClick={async () => {
            await signOut();
            setState('out');
          }}
        >
          Sign out
        </button>
      </header>
      <main id="main">
        <Page path={path} />
      </main>
    </>
  );
}

render(<App />, document.getElementById('app') as HTMLElement);
