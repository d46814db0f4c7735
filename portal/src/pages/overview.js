import { html } from "htm/preact";
import { useEffect } from "preact/hooks";

import { api } from "../api.js";
import { Failure, Status, useLoad, when } from "../ui.js";

function Figure({ label, value, hint }) {
  return html`<div class="figure"><span class="value">${value ?? "—"}</span><span class="label">${label}</span>
    ${hint && html`<span class="hint">${hint}</span>`}</div>`;
}

export function Overview() {
  const [o, error, reload] = useLoad(() => api("/developer/overview"), []);
  // Figures of a running service: read again every 10 s.
  useEffect(() => {
    const t = setInterval(reload, 10_000);
    return () => clearInterval(t);
  }, []);
  return html`<section>
    <h1>Overview</h1>
    <${Failure} error=${error} />
    ${o && html`<div class="figures">
        <${Figure} label="samples stored in the last hour" value=${o.samples_last_hour.toLocaleString()}
          hint=${`${o.runs_last_hour} runs`} />
        <${Figure} label="SDK batches waiting" value=${o.batches_queued} />
        <${Figure} label="imports waiting or running" value=${o.imports_pending} />
        <${Figure} label="vendor pulls waiting" value=${o.pulls_queued} />
        <${Figure} label="webhook deliveries waiting" value=${o.deliveries_pending} />
        <${Figure} label="failed deliveries (24 h)" value=${o.delivery_failures_24h} />
      </div>
      <h2>Recent sync runs</h2>
      ${o.recent_runs.length === 0
        ? html`<p>No runs yet.</p>`
        : html`<div class="scroll"><table>
            <thead><tr><th scope="col">When</th><th scope="col">User</th><th scope="col">Provider</th>
              <th scope="col">Kind</th><th scope="col">Status</th><th scope="col">Message</th></tr></thead>
            <tbody>${o.recent_runs.map(
              (r) => html`<tr>
                <td>${when(r.updated_at)}</td>
                <td><a href=${`#/users/${r.user_id}`}>${r.user_id.slice(0, 8)}</a></td>
                <td>${r.provider}</td><td>${r.source}</td><td><${Status} value=${r.status} /></td>
                <td>${r.error || r.message || ""}</td></tr>`,
            )}</tbody></table></div>`}`}
  </section>`;
}
