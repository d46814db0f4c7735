// The connect page: what an end user sees when they open a connect link
// (`/connect/<token>`). No login: the link's token is the key, and the first browser to open it
// keeps it (a cookie the API sets). Each vendor the link offers, with the user's connection to
// it; connecting goes to the vendor and comes back here with `?provider=…&outcome=connected`
// or `&error=…`, which the page shows once.
import { html } from "htm/preact";
import { render } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";

import { api } from "./api.js";
import { useAction, useLoad } from "./ui.js";

const token = decodeURIComponent(location.pathname.replace(/^.*\/connect\//, "").split("/")[0] || "");
const call = (path, options = {}) => api(`/connect/${encodeURIComponent(token)}${path}`, { ...options, anonymous: true });

/** How the last connection attempt went, read from the URL once and then removed from it. */
function takeOutcome() {
  const q = new URLSearchParams(location.search);
  const provider = q.get("provider");
  if (!provider) return null;
  history.replaceState(null, "", location.pathname);
  return { provider, error: q.get("error"), connected: q.get("outcome") === "connected" };
}

function ago(t) {
  if (!t) return null;
  const minutes = Math.round((Date.now() - new Date(t).getTime()) / 60_000);
  if (Number.isNaN(minutes)) return null;
  if (minutes < 1) return "just now";
  if (minutes < 60) return `${minutes} min ago`;
  if (minutes < 48 * 60) return `${Math.round(minutes / 60)} h ago`;
  return new Date(t).toLocaleDateString();
}

const STATES = {
  connected: "Connected",
  not_connected: "Not connected",
  revoked: "Disconnected",
  expired: "Needs connecting again",
};

function Vendor({ v, busy, onConnect, onDisconnect }) {
  const [asking, setAsking] = useState(null);
  const cancel = useRef(null);
  const ask = useRef(null);
  // Focus follows the question: to Cancel when asked, back to Disconnect when cancelled.
  useEffect(() => {
    if (asking && cancel.current) cancel.current.focus();
    if (asking === false && ask.current) ask.current.focus();
  }, [asking]);
  const escape = (e) => e.key === "Escape" && setAsking(false);
  const synced = v.status === "connected" && ago(v.last_synced_at);
  return html`<li class="vendor" data-provider=${v.provider}>
    <img src=${v.icon_url} alt="" width="40" height="40" />
    <div class="what">
      <strong>${v.name}</strong>
      <span class=${`state state-${v.status}`}>${STATES[v.status] || v.status}${synced ? ` · last data ${synced}` : ""}</span>
    </div>
    <div class="actions">
      ${v.status === "connected"
        ? asking
          ? html`<span class="confirm" role="group" aria-label=${`Disconnect ${v.name}?`} onKeyDown=${escape}>
              <span>Stop sharing ${v.name} data?</span>
              <button type="button" class="danger" disabled=${busy} onClick=${() => { setAsking(false); onDisconnect(v); }}>Disconnect ${v.name}</button>
              <button type="button" class="secondary" ref=${cancel} onClick=${() => setAsking(false)}>Cancel</button>
            </span>`
          : html`<button type="button" class="secondary" ref=${ask} aria-label=${`Disconnect ${v.name}`} disabled=${busy}
              onClick=${() => setAsking(true)}>Disconnect</button>`
        : html`<button type="button" aria-label=${`Connect ${v.name}`} disabled=${busy} onClick=${() => onConnect(v)}>
            ${v.status === "not_connected" ? "Connect" : "Connect again"}</button>`}
    </div>
  </li>`;
}

/** The page for a link that does not work: expired, used, withdrawn, unknown. */
function Dead({ error }) {
  const title = error.status === 429 ? "Please wait" : error.status === 0 ? "No connection" : "This link does not work";
  return html`<main class="connect">
    <h1>${title}</h1>
    <p role="alert" class="failure">${error.message}</p>
  </main>`;
}

function Outcome({ outcome, vendors }) {
  if (!outcome) return null;
  const v = vendors.find((x) => x.provider === outcome.provider);
  const name = v ? v.name : outcome.provider;
  if (outcome.connected) return html`<p role="status" class="notice ok-notice">${name} is connected. Thank you!</p>`;
  return html`<p role="alert" class="failure">${name} was not connected: ${outcome.error || "the connection did not finish"}.</p>`;
}

function Page() {
  const [outcome] = useState(takeOutcome);
  const [page, error, reload] = useLoad(() => call(""), []);
  const [run, busy, actionError] = useAction();
  const [told, setTold] = useState(null);
  useEffect(() => {
    if (page) document.title = `Connect your devices · ${page.deployment}`;
  }, [page]);
  if (error) return html`<${Dead} error=${error} />`;
  if (!page) return html`<main class="connect"><p role="status">Loading…</p></main>`;
  const connect = (v) =>
    run(async () => {
      const { authorization_url } = await call(`/${v.provider}`, { method: "POST" });
      location.assign(authorization_url);
    });
  const disconnect = (v) =>
    run(async () => {
      await call(`/${v.provider}`, { method: "DELETE" });
      setTold(`${v.name} is disconnected. Data already shared stays with ${page.deployment}.`);
      reload();
    });
  const until = new Date(page.expires_at);
  return html`<main class="connect">
    <p class="deployment">${page.deployment}</p>
    <h1>Connect your devices</h1>
    <p>Choose the services whose health data you share with ${page.deployment}. You sign in at each
      service, never here.</p>
    <${Outcome} outcome=${outcome} vendors=${page.providers} />
    ${told && html`<p role="status" class="notice">${told}</p>`}
    ${actionError && html`<p role="alert" class="failure">${actionError.message}</p>`}
    ${page.providers.length === 0
      ? html`<p class="notice">No services can be connected right now.</p>`
      : html`<ul class="vendors" aria-label="Services">${page.providers.map(
          (v) => html`<${Vendor} key=${v.provider} v=${v} busy=${busy} onConnect=${connect} onDisconnect=${disconnect} />`,
        )}</ul>`}
    <footer>
      ${page.redirect_uri
        ? html`<a class="button" href=${page.redirect_uri}>Done</a>`
        : html`<p>When you are done, you can close this page.</p>`}
      <p class="muted">This link works until ${until.toLocaleString()}, in this browser only: if it opened inside
        another app, open it in the browser you use to sign in.</p>
    </footer>
  </main>`;
}

render(html`<${Page} />`, document.getElementById("app"));
