// A user's series: where each lies (`data-coverage`), and its raw samples over the chosen window
// as a table (the first page) or a CSV file (every page, up to a bound).
import { html } from "htm/preact";
import { useState } from "preact/hooks";

import { api } from "../api.js";
import { Failure, useAction, useLoad } from "../ui.js";

/** Samples one CSV download takes at most (1,000 pages). */
const CSV_MAX_PAGES = 1000;

const query = (type, from, to, extra = {}) =>
  new URLSearchParams({ types: type, start_time: from.toISOString(), end_time: to.toISOString(), limit: "100", ...extra });

/** A CSV cell: quoted when it holds a separator, and text a spreadsheet would run as a formula
 * (`=`, `+`, `-`, `@` first: device names come from phones) kept as text. Numbers stay numbers. */
function csvField(v) {
  if (typeof v === "number") return String(v);
  let s = v == null ? "" : String(v);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** Every sample of `type` in [from, to) as CSV text. */
async function csv(userId, type, from, to) {
  const lines = ["timestamp,type,value,unit,provider,device,is_daily_total"];
  let cursor = null;
  for (let i = 0; i < CSV_MAX_PAGES; i++) {
    const q = query(type, from, to, cursor ? { cursor } : {});
    const page = await api(`/users/${userId}/timeseries?${q}`);
    for (const p of page.data) {
      const src = p.source || {};
      lines.push([p.timestamp, p.type, p.value, p.unit, src.provider, src.device_name || src.device, p.is_daily_total]
        .map(csvField).join(","));
    }
    cursor = page.pagination.next_cursor;
    if (!page.pagination.has_more || !cursor) break;
  }
  return `${lines.join("\n")}\n`;
}

function download(name, text) {
  const url = URL.createObjectURL(new Blob([text], { type: "text/csv" }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

function Samples({ userId, type, from, to }) {
  const [page, error] = useLoad(() => api(`/users/${userId}/timeseries?${query(type, from, to)}`), [userId, type, from.getTime(), to.getTime()]);
  return html`<div data-samples=${type}>
    <${Failure} error=${error} />
    ${page && (page.data.length === 0 ? html`<p class="empty">No ${type} samples in this window.</p>` : html`<div class="scroll"><table>
      <caption class="muted">${type}, ${from.toISOString().slice(0, 10)} to ${to.toISOString().slice(0, 10)}: the first ${page.data.length}${page.pagination.has_more ? " (more in the CSV)" : ""}</caption>
      <thead><tr><th scope="col">Time</th><th scope="col">Value</th><th scope="col">Source</th></tr></thead>
      <tbody>${page.data.map((p) => html`<tr><td>${p.timestamp}</td><td>${p.value} ${p.unit}</td>
        <td>${p.source ? p.source.device_name || p.source.provider : ""}</td></tr>`)}</tbody></table></div>`)}
  </div>`;
}

export function Series({ userId, coverage, from, to }) {
  const [open, setOpen] = useState(null);
  const [run, busy, error] = useAction();
  if (!coverage || coverage.series.length === 0) return null;
  const save = (type) =>
    run(async () => download(`${type}-${from.toISOString().slice(0, 10)}-${to.toISOString().slice(0, 10)}.csv`, await csv(userId, type, from, to)));
  return html`<section aria-labelledby="series">
    <h3 id="series">Series</h3>
    <${Failure} error=${error} />
    <div class="scroll"><table>
      <thead><tr><th scope="col">Series</th><th scope="col">Unit</th><th scope="col">First day</th><th scope="col">Last day</th>
        <th scope="col">Samples</th><th scope="col">Sources</th><th scope="col"><span class="sr">Actions</span></th></tr></thead>
      <tbody>${coverage.series.map((s) => html`<tr data-series=${s.type}>
        <td>${s.type}</td><td>${s.unit}</td><td>${s.first_day}</td><td>${s.last_day}</td>
        <td>${s.samples.toLocaleString()}</td>
        <td>${s.sources.map((c) => html`<span class="source" title=${`${c.first_day} to ${c.last_day}`}>${c.display_name || "?"}: ${c.samples.toLocaleString()}</span>`)}</td>
        <td class="actions"><button type="button" class="secondary" aria-expanded=${open === s.type}
            aria-label=${`Samples of ${s.type}`} onClick=${() => setOpen(open === s.type ? null : s.type)}>Samples</button>
          <button type="button" class="secondary" disabled=${busy} aria-label=${`Download ${s.type} as CSV`}
            onClick=${() => save(s.type)}>CSV</button></td></tr>`)}</tbody></table></div>
    ${open && html`<${Samples} userId=${userId} type=${open} from=${from} to=${to} />`}
  </section>`;
}
