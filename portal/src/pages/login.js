import { html } from "htm/preact";
import { useState } from "preact/hooks";

import { login } from "../api.js";
import { Failure, useAction } from "../ui.js";

export function Login({ expired }) {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [run, busy, error] = useAction();
  const submit = (e) => {
    e.preventDefault();
    run(() => login(email.trim(), password));
  };
  return html`<main class="login">
    <h1>wearhouse</h1>
    ${expired && html`<p class="notice" role="status">Your session has expired. Log in again to go on.</p>`}
    <form onSubmit=${submit} aria-label="Log in">
      <label>Email <input type="email" name="email" autocomplete="username" required value=${email}
        onInput=${(e) => setEmail(e.target.value)} /></label>
      <label>Password <input type="password" name="password" autocomplete="current-password" required
        value=${password} onInput=${(e) => setPassword(e.target.value)} /></label>
      <${Failure} error=${error} />
      <button type="submit" disabled=${busy}>${busy ? "Logging in…" : "Log in"}</button>
    </form>
  </main>`;
}
