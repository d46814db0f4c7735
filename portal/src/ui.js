// Small pieces every page uses: the failure banner, a table, a confirmation, copy to clipboard.
import { html } from "htm/preact";
import { createContext } from "preact";
import { useContext, useEffect, useState } from "preact/hooks";

/** Who is logged in (`/auth/me`); null while it loads. */
export const Me = createContext(null);

/** Whether the developer logged in may change things (any role but viewer): pages offer their
 * changes only then, so a viewer meets no form that can only fail (the API decides either way). */
export function useManage() {
  const me = useContext(Me);
  return Boolean(me && me.role !== "viewer");
}

/** A failure in plain words, announced to screen readers. */
export function Failure({ error }) {
  if (!error) return null;
  return html`<p class="failure" role="alert">${error.message || String(error)}</p>`;
}

/** Loads `f()` when `deps` change: [data, error, reload]. */
export function useLoad(f, deps) {
  const [state, setState] = useState({ data: null, error: null });
  const [turn, setTurn] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ data: s.data, error: null }));
    f().then(
      (data) => live && setState({ data, error: null }),
      (error) => live && setState({ data: null, error }),
    );
    return () => {
      live = false;
    };
  }, [...deps, turn]);
  return [state.data, state.error, () => setTurn((t) => t + 1)];
}

/** Runs an action, keeping its failure to show: [run, busy, error]. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const run = async (f) => {
    setBusy(true);
    setError(null);
    try {
      return await f();
    } catch (e) {
      setError(e);
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return [run, busy, error];
}

export function Copy({ text, label = "Copy" }) {
  const [done, setDone] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setDone(true);
      setTimeout(() => setDone(false), 1500);
    } catch {
      setDone(false);
    }
  };
  return html`<button type="button" class="secondary" onClick=${copy}>${done ? "Copied" : label}</button>`;
}

/** A button that asks first. */
export function Confirm({ label, question, onConfirm, busy }) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return html`<button type="button" class="danger" onClick=${() => setAsking(true)}>${label}</button>`;
  }
  return html`<span class="confirm" role="group" aria-label=${question}>
    <span>${question}</span>
    <button type="button" class="danger" disabled=${busy} onClick=${() => { setAsking(false); onConfirm(); }}>Yes, ${label.toLowerCase()}</button>
    <button type="button" class="secondary" onClick=${() => setAsking(false)}>Cancel</button>
  </span>`;
}

export function when(t) {
  if (!t) return "—";
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? String(t) : d.toLocaleString();
}

export function Status({ value }) {
  return html`<span class=${`status status-${value}`}>${value}</span>`;
}
