// A user's data sources, best first: reordered by dragging or by the buttons (keyboard), then
// saved as the user's own ranking (`PUT /users/{id}/priorities`).
import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";

import { api } from "../api.js";
import { Failure, useAction, useLoad, useManage } from "../ui.js";

function name(ds) {
  return ds.display_name || [ds.provider, ds.device_model, ds.source].filter(Boolean).join(" · ");
}

export function Sources({ userId, version }) {
  const [priorities, error, reload] = useLoad(() => api(`/users/${userId}/priorities`), [userId, version]);
  const [order, setOrder] = useState([]);
  const [dragged, setDragged] = useState(null);
  const [save, saving, saveError] = useAction();
  const [saved, setSaved] = useState(false);
  // A viewer sees the order, and nothing to change it with.
  const manage = useManage();
  useEffect(() => {
    if (priorities) setOrder(priorities.ranking.map((r) => r.data_source));
  }, [priorities]);
  const move = (from, to) => {
    if (to < 0 || to >= order.length || from === to) return;
    const next = order.slice();
    const [item] = next.splice(from, 1);
    next.splice(to, 0, item);
    setOrder(next);
    setSaved(false);
  };
  const submit = async () => {
    const ok = await save(() =>
      api(`/users/${userId}/priorities`, { method: "PUT", json: { data_sources: order.map((d) => d.id) } }),
    );
    if (ok) {
      setSaved(true);
      reload();
    }
  };
  return html`<section aria-labelledby="sources">
    <h2 id="sources">Data sources, best first</h2>
    <${Failure} error=${error || saveError} />
    ${order.length === 0 && priorities ? html`<p>No data sources yet.</p>` : null}
    <ol class="sources">
      ${order.map(
        (ds, i) => html`<li draggable=${manage ? "true" : "false"} data-source=${ds.id}
            onDragStart=${() => setDragged(i)} onDragOver=${(e) => e.preventDefault()}
            onDrop=${(e) => { e.preventDefault(); if (dragged !== null) move(dragged, i); setDragged(null); }}>
          <span class="rank">${i + 1}</span>
          <span class="name">${name(ds)}</span>
          <span class="kind">${ds.device_type || ""}</span>
          ${manage && html`<button type="button" class="secondary" aria-label=${`Move ${name(ds)} up`} disabled=${i === 0}
            onClick=${() => move(i, i - 1)}>↑</button>
          <button type="button" class="secondary" aria-label=${`Move ${name(ds)} down`} disabled=${i === order.length - 1}
            onClick=${() => move(i, i + 1)}>↓</button>`}
        </li>`,
      )}
    </ol>
    ${manage && order.length > 1 && html`<button type="button" onClick=${submit} disabled=${saving}>Save order</button>`}
    ${saved && html`<span role="status" class="ok"> Saved.</span>`}
  </section>`;
}
