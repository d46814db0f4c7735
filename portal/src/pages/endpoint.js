// One webhook endpoint: its settings, its secret, a test event, and what was delivered.
import { html } from "htm/preact";
import { useState } from "preact/hooks";

import { api } from "../api.js";
import { Confirm, Copy, Failure, useAction, useLoad, useManage, when } from "../ui.js";

const STATUS = ["success", "pending", "failed", "sending"];

/** Pages of a Svix-style list (`{data, done, iterator, prevIterator}`): [page, error, reload, pager]. */
function usePages(path, deps) {
  const [at, setAt] = useState("");
  const [page, error, reload] = useLoad(() => api(`${path}${at ? `&iterator=${encodeURIComponent(at)}` : ""}`), [...deps, at]);
  // `done` says there is nothing further in the direction the page was asked in: older going
  // forward, newer going back ("-" iterators).
  const back = at.startsWith("-");
  const newer = page && (back ? !page.done : Boolean(at));
  const older = page && (back ? page.data.length > 0 : !page.done);
  const pager = page && (newer || older) && html`<nav class="pager" aria-label="Pages">
    <button type="button" class="secondary" disabled=${!newer} onClick=${() => setAt(page.prevIterator || "")}>Newer</button>
    <button type="button" class="secondary" disabled=${!older} onClick=${() => setAt(page.iterator)}>Older</button>
  </nav>`;
  return [page, error, reload, pager];
}

/** A payload or a response body, opened on demand. */
function Shown({ label, text }) {
  if (!text) return "—";
  return html`<details><summary>${label}</summary><pre class="payload">${text}</pre></details>`;
}

function Attempts({ id, turn }) {
  const [page, error, reload, pager] = usePages(`/webhooks/endpoints/${id}/attempts?limit=20`, [id, turn]);
  return html`<section aria-labelledby="attempts">
    <h2 id="attempts">Delivery attempts</h2>
    <button type="button" class="link" onClick=${reload}>Refresh</button>
    <${Failure} error=${error} />
    ${page && (page.data.length === 0 ? html`<p>No attempts yet.</p>` : html`<div class="scroll"><table>
      <thead><tr><th scope="col">When</th><th scope="col">Event</th><th scope="col">Status</th>
        <th scope="col">Response</th><th scope="col">Took</th></tr></thead>
      <tbody>${page.data.map((a) => html`<tr data-attempt=${a.id}>
        <td>${when(a.timestamp)}</td><td>${a.msg ? a.msg.eventType : ""}</td>
        <td><span class=${`status status-${STATUS[a.status]}`}>${STATUS[a.status] || a.status}</span></td>
        <td>${a.responseStatusCode || "—"} <${Shown} label="Body" text=${a.response} /></td><td>${a.responseDurationMs} ms</td></tr>`)}</tbody></table></div>`)}
    ${pager}
  </section>`;
}

/** This endpoint's own messages, each with its payload and where its delivery stands. */
function Messages({ id, turn, onResent }) {
  const [page, error, reload, pager] = usePages(`/webhooks/endpoints/${id}/messages?limit=20`, [id, turn]);
  const [run, busy, actionError] = useAction();
  const [since, setSince] = useState("");
  const [recovered, setRecovered] = useState(null);
  const manage = useManage();
  const resend = (m) =>
    run(async () => {
      await api(`/webhooks/endpoints/${id}/messages/${m.id}/resend`, { method: "POST" });
      onResent();
    });
  const recover = (e) => {
    e.preventDefault();
    run(async () => {
      const r = await api(`/webhooks/endpoints/${id}/recover`, { method: "POST", json: { since: new Date(since).toISOString() } });
      setRecovered(r.recovered);
      onResent();
    });
  };
  return html`<section aria-labelledby="messages">
    <h2 id="messages">Messages to this endpoint</h2>
    <${Failure} error=${error || actionError} />
    ${page && (page.data.length === 0 ? html`<p>No messages yet.</p>` : html`<div class="scroll"><table>
      <thead><tr><th scope="col">When</th><th scope="col">Event</th><th scope="col">Delivery</th>
        <th scope="col">Payload</th><th scope="col"><span class="sr">Actions</span></th></tr></thead>
      <tbody>${page.data.map((m) => html`<tr data-message=${m.id}><td>${when(m.timestamp)}</td><td>${m.eventType}</td>
        <td><span class=${`status status-${m.statusText}`}>${m.statusText}</span> · ${m.attempts} attempt${m.attempts === 1 ? "" : "s"}</td>
        <td><${Shown} label="Payload" text=${m.payload && JSON.stringify(m.payload, null, 2)} /></td>
        <td>${manage && html`<button type="button" class="secondary" disabled=${busy} onClick=${() => resend(m)}>Resend</button>`}</td></tr>`)}</tbody>
    </table></div>`)}
    ${pager}
    ${manage && html`<form onSubmit=${recover} class="inline" aria-label="Recover failed messages">
      <label>Send again every failed message since <input type="datetime-local" required value=${since}
        onInput=${(e) => setSince(e.target.value)} /></label>
      <button type="submit" class="secondary" disabled=${busy}>Recover</button>
    </form>`}
    ${recovered !== null && html`<p role="status" class="ok">${recovered} messages queued again.</p>`}
    <button type="button" class="link" onClick=${reload}>Refresh</button>
  </section>`;
}

export function Endpoint({ id }) {
  const [ep, error, reload] = useLoad(() => api(`/webhooks/endpoints/${id}`), [id]);
  const [types] = useLoad(() => api("/webhooks/event-types"), []);
  const [secret, setSecret] = useState(null);
  const [eventType, setEventType] = useState("workout.created");
  const [sent, setSent] = useState(null);
  const [turn, setTurn] = useState(0);
  const [run, busy, actionError] = useAction();
  const manage = useManage();
  const toggle = () =>
    run(async () => {
      await api(`/webhooks/endpoints/${id}`, { method: "PATCH", json: { disabled: !ep.disabled } });
      reload();
    });
  const showSecret = () => run(async () => setSecret((await api(`/webhooks/endpoints/${id}/secret`)).key));
  const rotate = () => run(async () => setSecret((await api(`/webhooks/endpoints/${id}/secret/rotate`, { method: "POST" })).key));
  const test = () =>
    run(async () => {
      const r = await api(`/webhooks/endpoints/${id}/test`, { method: "POST", json: { event_type: eventType } });
      setSent(r.message_id);
      setTimeout(() => setTurn((t) => t + 1), 1500);
    });
  const remove = () =>
    run(async () => {
      await api(`/webhooks/endpoints/${id}`, { method: "DELETE" });
      location.hash = "#/settings";
    });
  return html`<section>
    <p><a href="#/settings">← Settings</a></p>
    <${Failure} error=${error || actionError} />
    ${ep && html`<header class="user"><div><h1>${ep.url}</h1>
        <p class="muted">${ep.id} · ${ep.disabled ? "disabled" : "enabled"} · events: ${ep.filter_types ? ep.filter_types.join(", ") : "all"} · user: ${ep.user_id || "all"}</p></div>
        ${manage && html`<${Confirm} label="Delete endpoint" question="Delete this endpoint?" busy=${busy} onConfirm=${remove} />`}</header>
      ${manage && html`<p class="actions">
        <button type="button" class="secondary" onClick=${toggle} disabled=${busy}>${ep.disabled ? "Enable" : "Disable"}</button>
        <button type="button" class="secondary" onClick=${showSecret} disabled=${busy}>Show secret</button>
        <button type="button" class="secondary" onClick=${rotate} disabled=${busy}>Rotate secret</button></p>
      ${secret && html`<p class="secret"><code>${secret}</code> <${Copy} text=${secret} /></p>`}
      <div class="inline">
        <label>Test event <select value=${eventType} onChange=${(e) => setEventType(e.target.value)}>
          ${(types || [{ name: "workout.created" }]).map((t) => html`<option value=${t.name}>${t.name}</option>`)}</select></label>
        <button type="button" onClick=${test} disabled=${busy}>Send a test event</button>
      </div>`}
      ${sent && html`<p role="status" class="ok">Test event sent (${sent}).</p>`}
      <${Attempts} id=${id} turn=${turn} />
      <${Messages} id=${id} turn=${turn} onResent=${() => setTurn((t) => t + 1)} />`}
  </section>`;
}
