import { html } from "htm/preact";
import { useEffect } from "preact/hooks";

import { api } from "../api.js";
import { Chart } from "../charts.js";
import { Failure, Status, useLoad, when } from "../ui.js";

function Figure({ label, value, hint }) {
  return html`<div class="figure"><span class="value">${value ?? "—"}</span><span class="label">${label}</span>
    ${hint && html`<span class="hint">${hint}</span>`}</div>`;
}

/** Bytes as people read them: 1.2 GB. */
function size(n) {
  const units = ["B", "kB", "MB", "GB", "TB"];
  let i = 0;
  while (n >= 1000 && i < units.length - 1) {
    n /= 1000;
    i += 1;
  }
  return `${i === 0 ? n : n.toFixed(1)} ${units[i]}`;
}

const perSample = (b) => (b == null ? "—" : b.toLocaleString());

/** What the stored data costs: the durable data's bytes a sample, each table, the largest users. */
function Storage({ s }) {
  return html`<h2>Storage</h2>
    <div class="figures">
      <${Figure} label="bytes a sample (durable data)" value=${perSample(s.durable_bytes_per_sample)}
        hint=${`${size(s.durable_bytes)} durable, ${size(s.database_bytes)} in all`} />
      <${Figure} label="samples stored" value=${s.samples.toLocaleString()}
        hint=${`as last measured for ${s.users_measured} users`} />
    </div>
    <div class="scroll"><table>
      <thead><tr><th scope="col">Table</th><th scope="col">Kind</th><th scope="col">Size</th>
        <th scope="col">Bytes a sample</th></tr></thead>
      <tbody>${s.tables.map(
        (t) => html`<tr><td>${t.table}</td><td>${t.kind}</td><td>${size(t.bytes)}</td>
          <td>${perSample(t.bytes_per_sample)}</td></tr>`,
      )}</tbody></table></div>
    <h3>Largest users</h3>
    ${s.largest_users.length === 0
      ? html`<p>No user measured yet.</p>`
      : html`<div class="scroll"><table>
          <thead><tr><th scope="col">User</th><th scope="col">Samples</th><th scope="col">Size</th>
            <th scope="col">Bytes a sample</th><th scope="col">Measured</th></tr></thead>
          <tbody>${s.largest_users.map(
            (u) => html`<tr>
              <td><a href=${`#/users/${u.user_id}`}><code>${u.user_id}</code></a></td>
              <td>${u.samples.toLocaleString()}</td><td>${size(u.bytes)}</td>
              <td>${perSample(u.bytes_per_sample)}</td><td>${when(u.measured_at)}</td></tr>`,
          )}</tbody></table></div>`}`;
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
        <${Figure} label="users" value=${o.users_total.toLocaleString()} hint=${html`<a href="#/users">all users</a>`} />
        <${Figure} label="samples stored in the last hour" value=${o.samples_last_hour.toLocaleString()}
          hint=${`${o.runs_last_hour} runs`} />
        <${Figure} label="SDK batches waiting" value=${o.batches_queued} />
        <${Figure} label="imports waiting or running" value=${o.imports_pending} />
        <${Figure} label="vendor pulls waiting" value=${o.pulls_queued} />
        <${Figure} label="webhook deliveries waiting" value=${o.deliveries_pending} />
        <${Figure} label="failed deliveries (24 h)" value=${o.delivery_failures_24h} />
      </div>
      <${Chart} title="Samples stored per hour (last 24 h)" bars=${true} step=${3600}
        span=${[Math.floor(Date.now() / 3_600_000) * 3600 - 23 * 3600, Math.floor(Date.now() / 3_600_000) * 3600 + 3600]}
        data=${[o.ingest_by_hour.map((h) => Date.parse(h.hour) / 1000 + 1800), o.ingest_by_hour.map((h) => h.samples)]}
        series=${[{ label: "samples", stroke: "#047857", fill: "#6ee7b7" }]} label="Samples stored per hour" />
      <h2>Recent sync runs</h2>
      ${o.recent_runs.length === 0
        ? html`<p>No runs yet.</p>`
        : html`<div class="scroll"><table>
            <thead><tr><th scope="col">When</th><th scope="col">User</th><th scope="col">Provider</th>
              <th scope="col">Kind</th><th scope="col">Status</th><th scope="col">Message</th></tr></thead>
            <tbody>${o.recent_runs.map(
              (r) => html`<tr>
                <td>${when(r.updated_at)}</td>
                <td><a href=${`#/users/${r.user_id}`}>${r.user_email || html`<code>${r.user_id}</code>`}</a></td>
                <td>${r.provider}</td><td>${r.source}</td><td><${Status} value=${r.status} /></td>
                <td>${r.error || r.message || ""}</td></tr>`,
            )}</tbody></table></div>`}
      <${Storage} s=${o.storage} />`}
  </section>`;
}
