import { html } from "htm/preact";
import { useState } from "preact/hooks";

import { api } from "../api.js";
import { Failure, useAction, useLoad, useManage, when } from "../ui.js";

const LIMIT = 20;

export function Users() {
  const [search, setSearch] = useState("");
  const [query, setQuery] = useState("");
  const [page, setPage] = useState(1);
  const [list, error, reload] = useLoad(() => {
    const q = new URLSearchParams({ page: String(page), limit: String(LIMIT) });
    if (query) q.set("search", query);
    return api(`/users?${q}`);
  }, [page, query]);
  const manage = useManage();
  const [fields, setFields] = useState({ email: "", first_name: "", last_name: "", external_user_id: "" });
  const [create, creating, createError] = useAction();
  const add = async (e) => {
    e.preventDefault();
    // Only what was typed: the API takes each field or none.
    const body = Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v.trim()]).filter(([, v]) => v));
    const user = await create(() => api("/users", { method: "POST", json: body }));
    if (user) location.hash = `#/users/${user.id}`;
  };
  const field = (name) => (e) => setFields({ ...fields, [name]: e.target.value });
  const find = (e) => {
    e.preventDefault();
    setPage(1);
    setQuery(search.trim());
  };
  return html`<section>
    <h1>Users</h1>
    <div class="bar">
      <form onSubmit=${find} role="search" aria-label="Find users">
        <label>Search <input type="search" value=${search} placeholder="email, name, your id or ours"
          onInput=${(e) => setSearch(e.target.value)} /></label>
        <button type="submit" class="secondary">Search</button>
      </form>
      ${manage && html`<form onSubmit=${add} aria-label="Create a user">
        <label>New user's email <input type="email" value=${fields.email} onInput=${field("email")} /></label>
        <label>First name <input value=${fields.first_name} maxlength="100" onInput=${field("first_name")} /></label>
        <label>Last name <input value=${fields.last_name} maxlength="100" onInput=${field("last_name")} /></label>
        <label>Your id for them <input value=${fields.external_user_id} maxlength="255" placeholder="external_user_id"
          onInput=${field("external_user_id")} /></label>
        <button type="submit" disabled=${creating}>Create user</button>
      </form>`}
    </div>
    <${Failure} error=${createError || error} />
    ${list && list.total === 0 && html`<p class="empty">${query ? `No user matches “${query}”.` : manage ? "No users yet: create the first above." : "No users yet."}</p>`}
    ${list && list.total > 0 && html`<p>${list.total} user${list.total === 1 ? "" : "s"}</p>
      <div class="scroll"><table>
        <thead><tr><th scope="col">Email</th><th scope="col">Created</th><th scope="col">Last sync</th>
          <th scope="col">Connected</th></tr></thead>
        <tbody>${list.items.map(
          (u) => html`<tr>
            <td><a href=${`#/users/${u.id}`}>${u.email || u.id}</a></td>
            <td>${when(u.created_at)}</td>
            <td>${u.last_synced_at ? `${when(u.last_synced_at)} (${u.last_synced_provider})` : "—"}</td>
            <td>${u.has_active_connection ? "yes" : "no"}</td></tr>`,
        )}</tbody></table></div>
      <nav class="pager" aria-label="Pages">
        <button type="button" class="secondary" disabled=${!list.has_prev} onClick=${() => setPage(page - 1)}>Previous</button>
        <span>Page ${list.page} of ${Math.max(list.pages, 1)}</span>
        <button type="button" class="secondary" disabled=${!list.has_next} onClick=${() => setPage(page + 1)}>Next</button>
      </nav>`}
    <button type="button" class="link" onClick=${reload}>Refresh</button>
  </section>`;
}
