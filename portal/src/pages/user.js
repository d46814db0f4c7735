import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";

import { api, stream } from "../api.js";
import { Confirm, Copy, Failure, Status, useAction, useLoad, useManage, when } from "../ui.js";
import { Data } from "./data.js";
import { Sources } from "./sources.js";
import { Upload } from "./upload.js";

function Connections({ userId, version }) {
  const [list, error, reload] = useLoad(() => api(`/users/${userId}/connections`), [userId, version]);
  const [providers] = useLoad(() => api("/oauth/providers"), []);
  // A viewer sees the connections, and no vendor to connect or disconnect.
  const manage = useManage();
  const vendors = manage && providers && providers.filter((p) => p.has_cloud_api && p.is_enabled);
  // Providers by their names ("Apple Health"), not their identifiers ("phonehealth").
  const named = (slug) => (providers && (providers.find((p) => p.provider === slug) || {}).name) || slug;
  const [run, busy, actionError] = useAction();
  const connect = (provider) =>
    run(async () => {
      const { authorization_url } = await api(
        `/oauth/${provider}/authorize?${new URLSearchParams({ user_id: userId, redirect_uri: location.origin + "/" })}`,
      );
      location.assign(authorization_url);
    });
  const disconnect = (provider) =>
    run(async () => {
      await api(`/users/${userId}/connections/${provider}`, { method: "DELETE" });
      reload();
    });
  const active = new Set((list || []).filter((c) => c.status === "active").map((c) => c.provider));
  return html`<section aria-labelledby="connections">
    <h2 id="connections">Connections</h2>
    <${Failure} error=${error || actionError} />
    ${list && list.length === 0 && html`<p>No connections yet.</p>`}
    ${list && list.length > 0 && html`<div class="scroll"><table>
      <thead><tr><th scope="col">Provider</th><th scope="col">Status</th><th scope="col">Last sync</th>
        <th scope="col">Last error</th><th scope="col">Next pull</th><th scope="col"><span class="sr">Actions</span></th></tr></thead>
      <tbody>${list.map((c) => html`<tr>
        <td>${named(c.provider)}</td><td><${Status} value=${c.status} /></td><td>${when(c.last_synced_at)}</td>
        <td>${c.last_pull_error || "—"}</td><td>${when(c.next_pull_at)}</td>
        <td>${c.status === "active" && c.rest_pull !== undefined && vendors && vendors.some((v) => v.provider === c.provider)
          ? html`<${Confirm} label="Disconnect" question=${`Disconnect ${named(c.provider)}?`} busy=${busy}
              onConfirm=${() => disconnect(c.provider)} />`
          : null}</td></tr>`)}</tbody></table></div>`}
    ${vendors && vendors.length > 0 && html`<p class="actions">Connect:
      ${vendors.filter((v) => !active.has(v.provider)).map((v) => html`<button type="button" class="secondary"
        disabled=${busy} onClick=${() => connect(v.provider)}>${v.name}</button>`)}</p>`}
  </section>`;
}

/** A connect link to send the user: a page where they connect their wearables themselves. */
function ConnectLinks({ userId }) {
  const [links, error, reload] = useLoad(() => api(`/users/${userId}/connect-links?limit=20`), [userId]);
  const [run, busy, actionError] = useAction();
  const [made, setMade] = useState(null);
  const make = () =>
    run(async () => {
      setMade(await api(`/users/${userId}/connect-links`, { method: "POST", json: {} }));
      reload();
    });
  const revoke = (id) =>
    run(async () => {
      await api(`/users/${userId}/connect-links/${id}`, { method: "DELETE" });
      if (made && made.id === id) setMade(null);
      reload();
    });
  const live = (links || []).filter((l) => l.status === "active");
  const manage = useManage();
  return html`<section aria-labelledby="connect-links">
    <h2 id="connect-links">Connect link</h2>
    <p class="muted">A page the user opens to connect their wearables, without a login. It works in the first
      browser that opens it, until it expires.</p>
    <${Failure} error=${error || actionError} />
    ${manage && html`<p><button type="button" disabled=${busy} onClick=${make}>Make a connect link</button></p>`}
    ${made && html`<div class="secret" role="status"><p>Send this link to the user:</p>
      <p><code data-connect-link>${made.url}</code></p>
      <p class="actions"><${Copy} text=${made.url} label="Copy link" /> <span class="muted">until ${when(made.expires_at)}</span></p></div>`}
    ${live.length > 0 && html`<div class="scroll"><table>
      <thead><tr><th scope="col">Made</th><th scope="col">Expires</th><th scope="col">Opened</th>
        <th scope="col"><span class="sr">Actions</span></th></tr></thead>
      <tbody>${live.map((l) => html`<tr><td>${when(l.created_at)}</td><td>${when(l.expires_at)}</td>
        <td>${l.opened_at ? when(l.opened_at) : "not yet"}</td>
        <td>${manage && html`<${Confirm} label="Revoke" question="Revoke this link?" busy=${busy} onConfirm=${() => revoke(l.id)} />`}</td>
      </tr>`)}</tbody></table></div>`}
  </section>`;
}

/** Runs that are over. */
const SETTLED = new Set(["success", "partial", "failed"]);

/** Drop reasons in words; the code itself for the rest. */
const REASONS = { "record.unknown_type": "types not kept here (skipped)" };

/** What a run dropped, by reason, with examples: opened on demand. */
function Dropped({ dropped }) {
  const reasons = Object.entries(dropped || {}).filter(([k]) => k !== "warnings");
  if (reasons.length === 0) return null;
  const total = reasons.reduce((n, [, t]) => n + t.count, 0);
  return html`<details class="dropped"><summary>${total} item${total === 1 ? "" : "s"} not stored</summary><ul>
    ${reasons.map(([reason, t]) => html`<li><strong>${REASONS[reason] || reason}</strong>: ${t.count}
      ${t.examples && t.examples.length ? html` <span class="muted">(e.g. ${t.examples.join(", ")})</span>` : ""}</li>`)}
  </ul></details>`;
}

function Runs({ userId, follow, onSettled }) {
  const [runs, setRuns] = useState([]);
  const [error, setError] = useState(null);
  const [turn, setTurn] = useState(0);
  useEffect(() => {
    let live = true;
    api(`/users/${userId}/sync/runs?limit=20`).then((r) => live && setRuns(r), (e) => live && setError(e));
    return () => {
      live = false;
    };
  }, [userId, turn]);
  useEffect(() => {
    // Live: every run's change as it happens (the stream's events lack the dropped items,
    // which the list read again once the followed run ends brings).
    const stop = stream(`/users/${userId}/sync/stream?replay=0`, (name, run) => {
      if (name !== "sync.status") return;
      setRuns((rs) => {
        const old = rs.find((r) => r.run_id === run.run_id);
        return [{ ...old, ...run, last_update: run.timestamp }, ...rs.filter((r) => r.run_id !== run.run_id)];
      });
    });
    return stop;
  }, [userId]);
  const followed = follow && runs.find((r) => r.run_id === follow);
  // The followed import is over: what it stored shows everywhere on the page.
  const settled = followed && SETTLED.has(followed.status);
  useEffect(() => {
    if (!settled) return;
    onSettled();
    setTurn((t) => t + 1);
  }, [follow, settled]);
  return html`<section aria-labelledby="runs">
    <h2 id="runs">Sync runs (last 24 h, live)</h2>
    <${Failure} error=${error} />
    ${follow && html`<p role="status" class="notice" data-run=${follow}>
      Import ${followed ? html`<${Status} value=${followed.status} />` : "queued"}
      ${followed && followed.message ? ` — ${followed.message}` : ""}${followed && followed.error ? ` — ${followed.error}` : ""}</p>`}
    ${runs.length === 0 ? html`<p>No runs in the last 24 hours.</p>` : html`<div class="scroll"><table>
      <thead><tr><th scope="col">Updated</th><th scope="col">Provider</th><th scope="col">Kind</th>
        <th scope="col">Status</th><th scope="col">Stored</th><th scope="col">Message</th></tr></thead>
      <tbody>${runs.map((r) => html`<tr data-run=${r.run_id}>
        <td>${when(r.last_update || r.ended_at || r.created_at)}</td><td>${r.provider}</td><td>${r.source}</td>
        <td><${Status} value=${r.status} /></td>
        <td>${r.counts && r.counts.samples_inserted !== undefined ? `${r.counts.samples_inserted} samples` : ""}</td>
        <td>${r.error || r.message || ""}<${Dropped} dropped=${r.dropped} /></td></tr>`)}</tbody></table></div>`}
  </section>`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function User({ id }) {
  if (!UUID.test(id)) {
    return html`<section><p><a href="#/users">← Users</a></p>
      <p class="failure" role="alert">“${id}” is not a user id (a UUID).</p></section>`;
  }
  return html`<${UserPage} id=${id} />`;
}

function UserPage({ id }) {
  const [user, error] = useLoad(() => api(`/users/${id}`), [id]);
  const [remove, removing, removeError] = useAction();
  const manage = useManage();
  const [followed, setFollowed] = useState(null);
  // Counts the imports that ended here: the sections showing stored data load again.
  const [version, setVersion] = useState(0);
  const del = async () => {
    const gone = await remove(() => api(`/users/${id}`, { method: "DELETE" }));
    if (gone) location.hash = "#/users";
  };
  return html`<section>
    <p><a href="#/users">← Users</a></p>
    <${Failure} error=${error || removeError} />
    ${user && html`<header class="user">
      <div><h1>${user.email || "A user"}</h1>
        <p class="muted">${user.id} · created ${when(user.created_at)}</p></div>
      ${manage && html`<${Confirm} label="Delete user" question="Delete this user and all their data?" busy=${removing} onConfirm=${del} />`}
    </header>
    <${Connections} userId=${id} version=${version} />
    <${ConnectLinks} userId=${id} />
    <${Sources} userId=${id} version=${version} />
    ${manage && html`<${Upload} userId=${id} onQueued=${setFollowed} />`}
    <${Runs} userId=${id} follow=${followed} onSettled=${() => setVersion((v) => v + 1)} />
    <${Data} userId=${id} version=${version} />`}
  </section>`;
}
