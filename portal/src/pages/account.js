import { html } from "htm/preact";
import { useState } from "preact/hooks";

import { api, changePassword } from "../api.js";
import { Failure, useAction, useLoad } from "../ui.js";

export function Account() {
  const [me, loadError] = useLoad(() => api("/auth/me"), []);
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [done, setDone] = useState(false);
  const [run, busy, error] = useAction();
  const submit = async (e) => {
    e.preventDefault();
    setDone(false);
    const ok = await run(async () => {
      await changePassword(current, next);
      return true;
    });
    if (ok !== undefined) {
      setDone(true);
      setCurrent("");
      setNext("");
    }
  };
  return html`<section>
    <h1>Account</h1>
    <${Failure} error=${loadError} />
    ${me && html`<p>Logged in as <strong>${me.email}</strong>.</p>`}
    <h2>Change password</h2>
    <form onSubmit=${submit} class="narrow" aria-label="Change password">
      <label>Current password <input type="password" autocomplete="current-password" required
        value=${current} onInput=${(e) => setCurrent(e.target.value)} /></label>
      <label>New password (10 characters or more) <input type="password" autocomplete="new-password"
        required minlength="10" value=${next} onInput=${(e) => setNext(e.target.value)} /></label>
      <${Failure} error=${error} />
      ${done && html`<p role="status" class="ok">The password was changed.</p>`}
      <button type="submit" disabled=${busy}>Change password</button>
    </form>
  </section>`;
}
