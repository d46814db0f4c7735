// The audit trail (`#/audit`, owners and admins): who read or changed whose data, filtered by
// user, actor, operation and time, newest first, a page at a time.
import { html } from "htm/preact";
import { useState } from "preact/hooks";

import { api } from "../api.js";
import { Failure, useLoad, when } from "../ui.js";

const EMPTY = { user_id: "", actor_id: "", actor_type: "", operation: "", start_time: "", end_time: "" };

/** The query of a filter (empty fields left out; dates from the browser's clock). */
function query(filter, cursor) {
  const q = new URLSearchParams({ limit: "50" });
  for (const [k, v] of Object.entries(filter)) {
    if (!v.trim()) continue;
    q.set(k, k.endsWith("_time") ? new Date(v).toISOString() : v.trim());
  }
  if (cursor) q.set("cursor", cursor);
  return q.toString();
}

export function Audit() {
  const [typed, setTyped] = useState(EMPTY);
  const [filter, setFilter] = useState(EMPTY);
  // The cursors of the pages before this one, to go back.
  const [cursors, setCursors] = useState([null]);
  const cursor = cursors[cursors.length - 1];
  const [page, error] = useLoad(() => api(`/developer/audit?${query(filter, cursor)}`), [filter, cursor]);
  const set = (k) => (e) => setTyped({ ...typed, [k]: e.target.value });
  const apply = (e) => {
    e.preventDefault();
    setFilter(typed);
    setCursors([null]);
  };
  // Who by name where the page knows it: the team's emails, the live keys' names. Ids are
  // time-ordered (their first digits are alike), so an unknown one shows its last digits.
  const [names] = useLoad(
    () => Promise.all([api("/developer/team"), api("/developer/api-keys")]).then(([team, keys]) =>
      new Map([...team.map((d) => [d.id, d.email]), ...keys.map((k) => [k.id, `key ${k.name}`])])),
    [],
  );
  const short = (id) => `…${id.slice(-8)}`;
  const by = (e) => {
    if (!e.actor_id) return e.actor_type;
    const known = names && names.get(e.actor_id);
    return known || `${e.actor_type} ${short(e.actor_id)}`;
  };
  return html`<section>
    <h1>Audit trail</h1>
    <p class="muted">Every request that read or changed a user's data, and every change to the deployment, with who made it.</p>
    <form onSubmit=${apply} aria-label="Filter the audit trail" class="filters">
      <label>User id <input value=${typed.user_id} onInput=${set("user_id")} /></label>
      <label>Actor id <input value=${typed.actor_id} onInput=${set("actor_id")} /></label>
      <label>Actor <select value=${typed.actor_type} onChange=${set("actor_type")}>
        <option value="">any</option><option value="developer">developer</option><option value="api_key">API key</option>
        <option value="user">end user (SDK)</option><option value="anonymous">anonymous</option></select></label>
      <label>Operation <input value=${typed.operation} placeholder="timeseries_list" onInput=${set("operation")} /></label>
      <label>From <input type="datetime-local" value=${typed.start_time} onInput=${set("start_time")} /></label>
      <label>To <input type="datetime-local" value=${typed.end_time} onInput=${set("end_time")} /></label>
      <button type="submit">Filter</button>
    </form>
    <${Failure} error=${error} />
    ${page && html`<div class="scroll"><table>
      <thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">Operation</th><th scope="col">User</th>
        <th scope="col">Resource</th><th scope="col">Status</th><th scope="col">Address</th></tr></thead>
      <tbody>${page.data.map((e) => html`<tr>
        <td>${when(e.at)}</td><td title=${e.actor_id || ""}>${by(e)}</td><td><code>${e.operation}</code></td>
        <td>${e.user_id ? html`<a href=${`#/users/${e.user_id}`} title=${e.user_id}>${short(e.user_id)}</a>` : "—"}</td>
        <td>${e.resource_id || "—"}</td><td>${e.status}</td><td>${e.client_address || "—"}</td></tr>`)}
      </tbody></table></div>
      ${page.data.length === 0 && html`<p class="muted">Nothing on record matches.</p>`}
      <nav class="pager" aria-label="Pages">
        <button type="button" class="secondary" disabled=${cursors.length === 1} onClick=${() => setCursors(cursors.slice(0, -1))}>Newer</button>
        <button type="button" class="secondary" disabled=${!page.pagination.next_cursor}
          onClick=${() => setCursors([...cursors, page.pagination.next_cursor])}>Older</button>
      </nav>`}
  </section>`;
}
