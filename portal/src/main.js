// The portal's shell: the session, the navigation and the pages, routed by the URL's hash
// (`#/users/…`) so the service serves one page.
import { html } from "htm/preact";
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";

import { api, logout, onSession, session } from "./api.js";
import { Me, useManage } from "./ui.js";
import { Account } from "./pages/account.js";
import { Audit } from "./pages/audit.js";
import { Endpoint } from "./pages/endpoint.js";
import { Join } from "./pages/join.js";
import { Login } from "./pages/login.js";
import { Overview } from "./pages/overview.js";
import { Settings } from "./pages/settings.js";
import { User } from "./pages/user.js";
import { Users } from "./pages/users.js";

function route() {
  const parts = (location.hash.replace(/^#\/?/, "") || "").split("/").filter(Boolean);
  return parts.map(decodeURIComponent);
}

function useRoute() {
  const [parts, setParts] = useState(route());
  useEffect(() => {
    const f = () => setParts(route());
    addEventListener("hashchange", f);
    return () => removeEventListener("hashchange", f);
  }, []);
  return parts;
}

function Page({ parts, me }) {
  const [first, second, third, fourth] = parts;
  if (first === "users" && second) return html`<${User} id=${second} />`;
  if (first === "users") return html`<${Users} />`;
  if (first === "settings" && second === "webhooks" && third) {
    return html`<${Endpoint} id=${third} tab=${fourth} />`;
  }
  if (first === "settings") return html`<${Settings} me=${me} />`;
  if (first === "audit") return html`<${Audit} />`;
  if (first === "account") return html`<${Account} />`;
  return html`<${Overview} />`;
}

function Nav({ parts }) {
  const here = parts[0] || "";
  const manage = useManage();
  const link = (to, label, key) =>
    html`<a href=${`#/${to}`} aria-current=${here === key ? "page" : undefined}>${label}</a>`;
  return html`<header class="top">
    <a class="brand" href="#/">wearhouse</a>
    <nav aria-label="Main">
      ${link("", "Overview", "")} ${link("users", "Users", "users")}
      ${link("settings", "Settings", "settings")}
      ${manage && link("audit", "Audit", "audit")} ${link("account", "Account", "account")}
      <a href="/docs" target="_blank" rel="noopener">API reference</a>
    </nav>
    <button type="button" class="secondary" onClick=${() => logout()}>Log out</button>
  </header>`;
}

function App() {
  const [state, setState] = useState(session() ? "in" : "out");
  const parts = useRoute();
  useEffect(() => {
    const off = onSession(setState);
    // A session another tab handed over before this listened.
    if (session()) setState("in");
    return off;
  }, []);
  // Who is logged in: their role decides what the pages offer (the API decides what they may).
  const [me, setMe] = useState(null);
  useEffect(() => {
    setMe(null);
    if (state === "in") api("/auth/me").then(setMe, () => setMe(null));
  }, [state]);
  if (parts[0] === "join" && parts[1]) return html`<${Join} token=${parts[1]} />`;
  if (state !== "in") return html`<${Login} expired=${state === "expired"} />`;
  return html`<${Me.Provider} value=${me}><div class="shell">
    <${Nav} parts=${parts} />
    <main id="main"><${Page} parts=${parts} me=${me} /></main>
  </div></${Me.Provider}>`;
}

const root = document.getElementById("app");
render(html`<${App} />`, root);

// At phone width tables stack into cards (style.css): each cell is labelled with its column's
// heading, kept up to date as pages render.
function labelCells() {
  for (const table of root.querySelectorAll("table")) {
    const heads = [...table.querySelectorAll("thead th")].map((th) => th.textContent.trim());
    if (heads[heads.length - 1] === "Actions") heads[heads.length - 1] = "";
    for (const row of table.querySelectorAll("tbody tr")) {
      [...row.children].forEach((cell, i) => {
        const label = heads[i] || "";
        if (cell.dataset.label !== label) cell.dataset.label = label;
      });
    }
  }
}
new MutationObserver(labelCells).observe(root, { childList: true, subtree: true });
