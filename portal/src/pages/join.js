// The page an invitation link opens (`#/join/<token>`), logged out: what the link invites to,
// and the password the colleague chooses. The token stays in the fragment and request bodies.
import { html } from "htm/preact";
import { useState } from "preact/hooks";

import { api, join } from "../api.js";
import { Failure, useAction, useLoad, when } from "../ui.js";

export function Join({ token }) {
  const [invitation, error] = useLoad(
    () => api("/team/invitation", { method: "POST", json: { token }, anonymous: true }),
    [token],
  );
  const [password, setPassword] = useState("");
  const [again, setAgain] = useState("");
  const [run, busy, joinError] = useAction();
  const [mismatch, setMismatch] = useState(false);
  const submit = (e) => {
    e.preventDefault();
    setMismatch(password !== again);
    if (password === again) run(() => join(token, password));
  };
  return html`<main class="login">
    <h1>wearhouse</h1>
    <${Failure} error=${error} />
    ${error && html`<p><a href="#/">Log in</a> if you already joined.</p>`}
    ${invitation && html`<form onSubmit=${submit} aria-label="Join the team">
      <p>You are invited to <strong>${invitation.deployment_name}</strong> as <strong>${invitation.role}</strong>
        (${invitation.email}). The invitation lasts until ${when(invitation.expires_at)}.</p>
      <label>Choose a password (10 characters or more)
        <input type="password" autocomplete="new-password" minlength="10" required value=${password}
          onInput=${(e) => setPassword(e.target.value)} /></label>
      <label>The same password again
        <input type="password" autocomplete="new-password" minlength="10" required value=${again}
          onInput=${(e) => setAgain(e.target.value)} /></label>
      ${mismatch && html`<p class="failure" role="alert">The two passwords differ.</p>`}
      <${Failure} error=${joinError} />
      <button type="submit" disabled=${busy}>${busy ? "Joining…" : "Join"}</button>
    </form>`}
  </main>`;
}
