import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";

import { api } from "../api.js";
import { Confirm, Copy, Failure, useAction, useLoad, useManage, when } from "../ui.js";

const SCOPES = [
  ["read", "read users and their data"],
  ["write", "change users and their data, imports, syncs, connections"],
  ["sdk", "SDK tokens and invitation codes"],
];

function Keys() {
  const manage = useManage();
  const [keys, error, reload] = useLoad(() => api("/developer/api-keys"), []);
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState(SCOPES.map(([s]) => s));
  const toggle = (scope, on) =>
    setScopes(SCOPES.map(([s]) => s).filter((s) => (s === scope ? on : scopes.includes(s))));
  const [shown, setShown] = useState(null);
  const [run, busy, actionError] = useAction();
  const create = async (e) => {
    e.preventDefault();
    const key = await run(() => api("/developer/api-keys", { method: "POST", json: { name: name.trim() || "Default", scopes } }));
    if (key) {
      setShown(key);
      setName("");
      reload();
    }
  };
  // The key being renamed, and the name typed so far.
  const [renaming, setRenaming] = useState(null);
  const rename = (e) => {
    e.preventDefault();
    run(async () => {
      await api(`/developer/api-keys/${renaming.id}`, { method: "PATCH", json: { name: renaming.name.trim() } });
      setRenaming(null);
      reload();
    });
  };
  const rotate = (k) =>
    run(async () => {
      setShown(await api(`/developer/api-keys/${k.id}/rotate`, { method: "POST" }));
      reload();
    });
  const revoke = (k) =>
    run(async () => {
      await api(`/developer/api-keys/${k.id}`, { method: "DELETE" });
      if (shown && shown.id === k.id) setShown(null);
      reload();
    });
  return html`<section aria-labelledby="keys">
    <h2 id="keys">API keys</h2>
    ${manage && html`<form onSubmit=${create} aria-label="Create an API key" class="inline">
      <label>Name <input value=${name} maxlength="100" placeholder="backend" onInput=${(e) => setName(e.target.value)} /></label>
      <fieldset class="inline"><legend>May</legend>
        ${SCOPES.map(([scope, what]) => html`<label title=${what}><input type="checkbox" checked=${scopes.includes(scope)}
          onChange=${(e) => toggle(scope, e.target.checked)} /> ${scope}</label>`)}</fieldset>
      <button type="submit" disabled=${busy || scopes.length === 0}>Create key</button>
    </form>`}
    ${shown && html`<div class="secret" role="status">
      <p>The key <strong>${shown.name}</strong> (${shown.scopes.join(", ")}). It is shown this once: copy it now.</p>
      <code data-key>${shown.key}</code> <${Copy} text=${shown.key} />
      <p>Your backend sends it in the <code>X-Service-API-Key</code> header (not <code>Authorization</code>), e.g.:</p>
      <pre class="payload" data-curl>curl -H "X-Service-API-Key: ${shown.key}" ${location.origin}/api/v1/users</pre>
      <p>Every operation is in the <a href="/docs" target="_blank" rel="noopener">API reference</a>.</p>
      <button type="button" class="link" onClick=${() => setShown(null)}>Done</button></div>`}
    <${Failure} error=${error || actionError} />
    ${keys && html`<div class="scroll"><table>
      <thead><tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Scopes</th><th scope="col">Created</th>
        <th scope="col">Last used</th><th scope="col"><span class="sr">Actions</span></th></tr></thead>
      <tbody>${keys.map((k) => html`<tr>
        <td>${renaming && renaming.id === k.id
          ? html`<form class="inline" onSubmit=${rename} aria-label=${`Rename ${k.name}`}>
              <label>New name <input value=${renaming.name} maxlength="100" required
                onInput=${(e) => setRenaming({ ...renaming, name: e.target.value })} /></label>
              <button type="submit" disabled=${busy}>Save</button>
              <button type="button" class="secondary" onClick=${() => setRenaming(null)}>Cancel</button></form>`
          : k.name}</td><td><code>${k.prefix}…</code></td><td>${k.scopes.join(", ")}</td><td>${when(k.created_at)}</td>
        <td>${k.last_used_at ? when(k.last_used_at) : "never"}</td>
        <td class="actions">${manage && html`<button type="button" class="secondary" onClick=${() => setRenaming({ id: k.id, name: k.name })}>Rename</button>
          <button type="button" class="secondary" onClick=${() => rotate(k)}>Rotate</button>
          <${Confirm} label="Revoke" question=${`Revoke ${k.name}?`} busy=${busy} onConfirm=${() => revoke(k)} />`}</td></tr>`)}
      </tbody></table></div>`}
  </section>`;
}

function Ordered({ label, items, setItems, manage }) {
  const move = (i, j) => {
    if (j < 0 || j >= items.length) return;
    const next = items.slice();
    [next[i], next[j]] = [next[j], next[i]];
    setItems(next);
  };
  return html`<div><h3>${label}</h3><ol class="sources">
    ${items.map((p, i) => html`<li><span class="rank">${i + 1}</span><span class="name">${p}</span>
      ${manage && html`<button type="button" class="secondary" aria-label=${`Move ${p} up`} disabled=${i === 0} onClick=${() => move(i, i - 1)}>↑</button>
      <button type="button" class="secondary" aria-label=${`Move ${p} down`} disabled=${i === items.length - 1} onClick=${() => move(i, i + 1)}>↓</button>`}</li>`)}
  </ol></div>`;
}

/** The order in effect (the deployment's, else the defaults), then whatever else is known. */
function effective(set, defaults, known) {
  const first = set.length ? set : defaults;
  return [...first, ...known.filter((k) => !first.includes(k))];
}

function Priorities() {
  const [current, error] = useLoad(
    () => Promise.all([api("/priorities"), api("/oauth/providers")]),
    [],
  );
  const [providers, setProviders] = useState([]);
  const [types, setTypes] = useState([]);
  const [run, busy, saveError] = useAction();
  const [saved, setSaved] = useState(false);
  const manage = useManage();
  useEffect(() => {
    if (current) {
      const [p, listed] = current;
      setProviders(effective(p.providers, p.default_providers, listed.map((x) => x.provider)));
      setTypes(effective(p.device_types, p.default_device_types, []));
    }
  }, [current]);
  const save = async () => {
    setSaved(false);
    const ok = await run(() => api("/priorities", { method: "PUT", json: { providers, device_types: types } }));
    if (ok) setSaved(true);
  };
  return html`<section aria-labelledby="priorities">
    <h2 id="priorities">Source priorities of the deployment</h2>
    <p class="muted">Where sources overlap, data of the better-ranked one is read first. A user's own order wins.</p>
    <${Failure} error=${error || saveError} />
    <div class="columns"><${Ordered} label="Providers" items=${providers} setItems=${setProviders} manage=${manage} />
      <${Ordered} label="Device types" items=${types} setItems=${setTypes} manage=${manage} /></div>
    ${manage && html`<button type="button" onClick=${save} disabled=${busy || !current}>Save priorities</button>`}
    ${saved && html`<span role="status" class="ok"> Saved.</span>`}
  </section>`;
}

function Webhooks() {
  const [endpoints, error, reload] = useLoad(() => api("/webhooks/endpoints"), []);
  const [types] = useLoad(() => api("/webhooks/event-types"), []);
  const [url, setUrl] = useState("");
  const [description, setDescription] = useState("");
  const [filters, setFilters] = useState([]);
  const [userId, setUserId] = useState("");
  const [run, busy, actionError] = useAction();
  const manage = useManage();
  const create = async (e) => {
    e.preventDefault();
    const body = { url: url.trim(), description };
    if (filters.length) body.filter_types = filters;
    if (userId.trim()) body.user_id = userId.trim();
    const made = await run(() => api("/webhooks/endpoints", { method: "POST", json: body }));
    if (made) location.hash = `#/settings/webhooks/${made.id}`;
  };
  return html`<section aria-labelledby="webhooks">
    <h2 id="webhooks">Webhook endpoints</h2>
    <${Failure} error=${error || actionError} />
    ${endpoints && endpoints.length > 0 && html`<div class="scroll"><table>
      <thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">User</th><th scope="col">State</th></tr></thead>
      <tbody>${endpoints.map((ep) => html`<tr>
        <td><a href=${`#/settings/webhooks/${ep.id}`}>${ep.url}</a>${ep.description ? html`<br /><span class="muted">${ep.description}</span>` : ""}</td>
        <td>${ep.filter_types ? ep.filter_types.join(", ") : "all"}</td><td>${ep.user_id || "all"}</td>
        <td>${ep.disabled ? `disabled${ep.disabled_reason ? ` (${ep.disabled_reason})` : ""}` : "enabled"}</td></tr>`)}
      </tbody></table></div>`}
    ${manage && html`<h3>Add an endpoint</h3>
    <form onSubmit=${create} aria-label="Add a webhook endpoint" class="narrow">
      <label>URL <input type="url" required value=${url} placeholder="https://example.com/hooks" onInput=${(e) => setUrl(e.target.value)} /></label>
      <label>Description <input value=${description} maxlength="500" onInput=${(e) => setDescription(e.target.value)} /></label>
      <label>Only these events (none chosen: all)
        <select multiple size="6" onChange=${(e) => setFilters([...e.target.selectedOptions].map((o) => o.value))}>
          ${(types || []).map((t) => html`<option value=${t.name}>${t.name}</option>`)}
        </select></label>
      <label>Only this user's events (a user id; empty: all users)
        <input value=${userId} onInput=${(e) => setUserId(e.target.value)} /></label>
      <button type="submit" disabled=${busy}>Add endpoint</button>
    </form>`}
    <button type="button" class="link" onClick=${reload}>Refresh</button>
  </section>`;
}

const ROLES = [
  ["viewer", "reads, changes nothing"],
  ["admin", "everything but the team's owners"],
  ["owner", "everything"],
];

/** Whether a developer of role `by` may give someone of role `from` the role `to`: the API's
 * rule (`Role::may_manage`), so the page offers only what will be accepted. */
function mayManage(by, from, to) {
  if (by === "owner") return true;
  return by === "admin" && from !== "owner" && to !== "owner";
}

function Team({ me }) {
  const manage = useManage();
  const [members, error, reload] = useLoad(() => api("/developer/team"), []);
  const [pending, pendingError, reloadPending] = useLoad(
    () => (manage ? api("/developer/team/invitations") : Promise.resolve([])),
    [manage],
  );
  const [email, setEmail] = useState("");
  const [role, setRole] = useState("viewer");
  const [made, setMade] = useState(null);
  const [run, busy, actionError] = useAction();
  const invite = async (e) => {
    e.preventDefault();
    const answer = await run(() => api("/developer/team/invitations", { method: "POST", json: { email: email.trim(), role } }));
    if (answer) {
      setMade(answer);
      setEmail("");
      reloadPending();
    }
  };
  const change = (m, to) =>
    run(async () => {
      await api(`/developer/team/${m.id}`, { method: "PATCH", json: { role: to } });
      reload();
    });
  const remove = (m) =>
    run(async () => {
      await api(`/developer/team/${m.id}`, { method: "DELETE" });
      reload();
    });
  const withdraw = (i) =>
    run(async () => {
      await api(`/developer/team/invitations/${i.id}`, { method: "DELETE" });
      if (made && made.id === i.id) setMade(null);
      reloadPending();
    });
  const who = (m) => [m.first_name, m.last_name].filter(Boolean).join(" ");
  return html`<section aria-labelledby="team">
    <h2 id="team">Team</h2>
    <${Failure} error=${error || pendingError || actionError} />
    ${members && html`<div class="scroll"><table>
      <thead><tr><th scope="col">Email</th><th scope="col">Name</th><th scope="col">Role</th><th scope="col">Since</th>
        <th scope="col"><span class="sr">Actions</span></th></tr></thead>
      <tbody>${members.map((m) => html`<tr>
        <td>${m.email}${me && me.id === m.id ? " (you)" : ""}</td><td>${who(m) || "—"}</td>
        <td>${manage && mayManage(me.role, m.role, m.role)
          ? html`<select aria-label=${`Role of ${m.email}`} value=${m.role} disabled=${busy}
              onChange=${(e) => change(m, e.target.value)}>
              ${ROLES.filter(([r]) => mayManage(me.role, m.role, r)).map(([r]) => html`<option value=${r}>${r}</option>`)}
            </select>`
          : m.role}</td>
        <td>${when(m.created_at)}</td>
        <td class="actions">${manage && mayManage(me.role, m.role, null) && html`<${Confirm} label="Remove"
          question=${`Remove ${m.email} from the team?`} busy=${busy} onConfirm=${() => remove(m)} />`}</td></tr>`)}
      </tbody></table></div>`}
    ${manage && html`<h3>Invite a colleague</h3>
      <form onSubmit=${invite} aria-label="Invite a colleague" class="inline">
        <label>Email <input type="email" required value=${email} placeholder="colleague@example.com"
          onInput=${(e) => setEmail(e.target.value)} /></label>
        <label>Role <select value=${role} onChange=${(e) => setRole(e.target.value)}>
          ${ROLES.filter(([r]) => mayManage(me.role, r, r)).map(([r, what]) => html`<option value=${r}>${r}: ${what}</option>`)}
        </select></label>
        <button type="submit" disabled=${busy}>Invite</button>
      </form>`}
    ${made && html`<div class="secret" role="status">
      <p>${made.mailed ? html`A mail with this link went to <strong>${made.email}</strong>.` : html`Send this link to <strong>${made.email}</strong> yourself.`}${" "}
        It works once, until ${when(made.expires_at)}, and is shown only now.</p>
      <code data-invitation>${made.url}</code> <${Copy} text=${made.url} />
      <button type="button" class="link" onClick=${() => setMade(null)}>Done</button></div>`}
    ${pending && pending.length > 0 && html`<h3>Invitations not yet accepted</h3><div class="scroll"><table>
      <thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Until</th>
        <th scope="col"><span class="sr">Actions</span></th></tr></thead>
      <tbody>${pending.map((i) => html`<tr><td>${i.email}</td><td>${i.role}</td><td>${when(i.expires_at)}</td>
        <td class="actions">${mayManage(me.role, i.role, i.role) && html`<${Confirm} label="Withdraw"
          question=${`Withdraw the invitation of ${i.email}?`} busy=${busy} onConfirm=${() => withdraw(i)} />`}</td></tr>`)}
      </tbody></table></div>`}
  </section>`;
}

export function Settings({ me }) {
  return html`<section><h1>Settings</h1><${Team} me=${me} /><${Keys} /><${Priorities} />
    <${Webhooks} /></section>`;
}
