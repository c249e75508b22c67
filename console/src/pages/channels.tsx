import { useState } from 'preact/hooks';
import { api } from '../api';
import { askFor, hasScope } from '../auth';
import { Action, Show, useLoad } from '../ui';

type Provider = 'whatsapp_cloud' | 'instagram' | 'twilio';
const PROVIDERS: Record<Provider, { channel: 'whatsapp' | 'instagram' | 'voice'; label: string; fields: string[] }> = {
  whatsapp_cloud: { channel: 'whatsapp', label: 'WhatsApp (Cloud API)', fields: ['phone_number_id', 'access_token', 'app_secret'] },
  instagram: { channel: 'instagram', label: 'Instagram', fields: ['account_id', 'access_token', 'app_secret'] },
  twilio: { channel: 'voice', label: 'Phone calls (Twilio)', fields: ['account_sid', 'auth_token', 'phone_number'] },
};

export function Channels() {
  const list = useLoad(() => api.get('/v1/channel-accounts', { query: { limit: 50 } }), []);
  const [provider, setProvider] = useState<Provider>('whatsapp_cloud');
  const [name, setName] = useState('');
  const [verify, setVerify] = useState('');
  const [credentials, setCredentials] = useState<Record<string, string>>({});
  const [created, setCreated] = useState<{ webhook_url: string; verify_token?: string; name: string }>();
  const def = PROVIDERS[provider];
  return (
    <section>
      <h1>Channel accounts</h1>
      <Show loaded={list}>
        {(page) => (
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Provider</th>
                <th scope="col">Webhook URL</th>
              </tr>
            </thead>
            <tbody>
              {page.data.map((a) => (
                <tr key={a.id}>
                  <td>{a.name}</td>
                  <td>{a.provider}</td>
                  <td>
                    <code>{a.webhook_url}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Show>
      <h2>Connect an account</h2>
      {!hasScope('channels:write') && (
        // Asked before the form is filled: the consent page is a navigation, which would lose what was typed.
        <p class="notice">
          Connecting an account needs permission to change channel accounts (channels:write).{' '}
          <button type="button" onClick={() => void askFor('channels:write')}>
            Allow changes
          </button>
        </p>
      )}
      <form class="stack" onSubmit={(e) => e.preventDefault()}>
        <label>
          Provider{' '}
          <select name="provider" value={provider} onChange={(e) => setProvider(e.currentTarget.value as Provider)}>
            {Object.entries(PROVIDERS).map(([k, p]) => (
              <option key={k} value={k}>
                {p.label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Name <input name="name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        {def.fields.map((f) => (
          <label key={`${provider}-${f}`}>
            {f}{' '}
            {/token|secret/.test(f) ? (
              <input name={f} type="password" autoComplete="off" value={credentials[f] ?? ''} onInput={(e) => setCredentials({ ...credentials, [f]: e.currentTarget.value })} />
            ) : (
              <input name={f} type="text" autoComplete="off" value={credentials[f] ?? ''} onInput={(e) => setCredentials({ ...credentials, [f]: e.currentTarget.value })} />
            )}
          </label>
        ))}
        {provider !== 'twilio' && (
          <label>
            Verify token (optional: one is made for you) <input name="verify_token" value={verify} onInput={(e) => setVerify(e.currentTarget.value)} />
          </label>
        )}
        <Action
          scope="channels:write"
          label="Connect"
          run={async () => {
            const r = await api.post('/v1/channel-accounts', {
              body: { name, channel: def.channel, provider, credentials: Object.fromEntries(def.fields.map((f) => [f, credentials[f] ?? ''])), ...(verify && provider !== 'twilio' ? { verify_token: verify } : {}) },
            });
            setCreated({ webhook_url: r.data.webhook_url, verify_token: r.data.verify_token, name: r.data.name });
          }}
          done={list.reload}
        />
      </form>
      {created && (
        <div role="status" class="notice">
          <p>
            {created.name} is connected. Paste into the provider's console:
          </p>
          <dl class="facts">
            <dt>Webhook URL</dt>
            <dd>
              <code data-field="webhook_url">{created.webhook_url}</code>
            </dd>
            {created.verify_token && (
              <>
                <dt>Verify token</dt>
                <dd>
                  <code data-field="verify_token">{created.verify_token}</code>
                </dd>
              </>
            )}
          </dl>
        </div>
      )}
    </section>
  );
}
