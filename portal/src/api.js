// Talks to the service's public API (the same origin) with the developer's session token, and
// turns every failure into words a person can act on.

const SESSION = "wearhouse.session";
const listeners = new Set();

/** The session: {token, expiresAt} or null. Kept for the browser tab (sessionStorage). */
export function session() {
  try {
    return JSON.parse(sessionStorage.getItem(SESSION) || "null");
  } catch {
    return null;
  }
}

function keep(answer) {
  const s = { token: answer.access_token, expiresAt: Date.now() + answer.expires_in * 1000 };
  sessionStorage.setItem(SESSION, JSON.stringify(s));
  schedule();
  return s;
}

/** Calls `f(state)` when the session changes: "in", "out" or "expired". */
export function onSession(f) {
  listeners.add(f);
  return () => listeners.delete(f);
}

function tell(state) {
  for (const f of listeners) f(state);
}

export function logout(state = "out") {
  forget(state);
  // Logged out by hand: every tab is.
  if (state === "out" && tabs) tabs.postMessage({ kind: "out" });
}

function forget(state) {
  sessionStorage.removeItem(SESSION);
  clearTimeout(timer);
  // Logged out by hand: the next login opens on the overview, not the last page.
  if (state === "out") history.replaceState(null, "", location.pathname);
  tell(state);
}

/** An error the API answered: its status and its message in plain words. */
export class ApiError extends Error {
  constructor(status, message, body) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

/** The message of an error body: the contract's `detail` string, or each invalid field. */
export function describe(status, body) {
  const detail = body && body.detail;
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) {
    return detail
      .map((e) => {
        const where = (e.loc || []).filter((p) => p !== "body" && p !== "query").join(".");
        return where ? `${where}: ${e.msg}` : e.msg;
      })
      .join("; ");
  }
  if (status === 0) return "The service could not be reached.";
  return `The service answered ${status}.`;
}

/**
 * `fetch` against `/api/v1` + `path`. `options.json` is sent as JSON, `options.form` as a
 * form, `options.multipart` (FormData) as multipart/form-data; the answer's JSON is returned
 * (null for no content). Throws ApiError.
 */
export async function api(path, options = {}) {
  const headers = { Accept: "application/json", ...(options.headers || {}) };
  const s = session();
  if (s && !options.anonymous) headers.Authorization = `Bearer ${s.token}`;
  let body;
  if (options.json !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(options.json);
  } else if (options.form) {
    headers["Content-Type"] = "application/x-www-form-urlencoded";
    body = new URLSearchParams(options.form).toString();
  } else if (options.multipart) {
    // The browser writes the multipart boundary into the content type itself.
    body = options.multipart;
  }
  let response;
  try {
    response = await fetch(`/api/v1${path}`, { method: options.method || "GET", headers, body });
  } catch {
    throw new ApiError(0, describe(0, null), null);
  }
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!response.ok) {
    if (response.status === 401 && s && !options.anonymous) logout("expired");
    throw new ApiError(response.status, describe(response.status, data), data);
  }
  return data;
}

export async function login(email, password) {
  const answer = await api("/auth/login", {
    method: "POST",
    form: { username: email, password },
    anonymous: true,
  });
  keep(answer);
  tell("in");
}

/** Accepts an invitation to the team: the new developer's session begins. */
export async function join(token, password) {
  keep(await api("/team/join", { method: "POST", json: { token, password }, anonymous: true }));
  tell("in");
  // The link is spent: the portal opens on the overview (and the link leaves the history).
  location.replace("#/");
}

/** Changes the password; the answer is this session's new token (every other session ends). */
export async function changePassword(current, next) {
  keep(await api("/auth/password", { method: "POST", json: { current_password: current, new_password: next } }));
}

let timer;

/** Renews the token five minutes before it expires (the session lasts 12 h from its login). */
function schedule() {
  clearTimeout(timer);
  const s = session();
  if (!s) return;
  const wait = Math.max(5_000, s.expiresAt - Date.now() - 5 * 60_000);
  timer = setTimeout(async () => {
    try {
      keep(await api("/auth/refresh", { method: "POST" }));
    } catch {
      logout("expired");
    }
  }, wait);
}

schedule();

// The session lives in one tab (sessionStorage): a tab opened from it (a user in a new tab)
// asks the open tabs for theirs instead of showing the login. A tab takes a session only in
// answer to its own question (a random nonce, for two seconds), and logging out in one tab
// logs out every tab: none hands a session back afterwards.
const tabs = typeof BroadcastChannel === "function" ? new BroadcastChannel("wearhouse.session") : null;
let asking = null;
if (tabs) {
  tabs.onmessage = (e) => {
    const m = e.data || {};
    const mine = session();
    if (m.kind === "ask" && mine && mine.expiresAt > Date.now()) {
      tabs.postMessage({ kind: "session", to: m.nonce, session: mine });
    } else if (m.kind === "session" && asking && m.to === asking && !mine) {
      asking = null;
      sessionStorage.setItem(SESSION, JSON.stringify(m.session));
      schedule();
      tell("in");
    } else if (m.kind === "out" && mine) {
      forget("out");
    }
  };
  if (!session()) {
    asking = crypto.randomUUID();
    tabs.postMessage({ kind: "ask", nonce: asking });
    setTimeout(() => (asking = null), 2000);
  }
}

/** Reads a streamed answer (`text/event-stream`) with the session's token, calling `onEvent`
 * with each event's name and parsed data; returns a function that stops it. */
export function stream(path, onEvent) {
  const controller = new AbortController();
  const s = session();
  (async () => {
    try {
      const response = await fetch(`/api/v1${path}`, {
        headers: { Accept: "text/event-stream", Authorization: `Bearer ${s && s.token}` },
        signal: controller.signal,
      });
      if (!response.ok || !response.body) return;
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const chunk = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let name = "message";
          let data = "";
          for (const line of chunk.split("\n")) {
            if (line.startsWith("event:")) name = line.slice(6).trim();
            else if (line.startsWith("data:")) data += line.slice(5).trim();
          }
          if (data) {
            try {
              onEvent(name, JSON.parse(data));
            } catch {
              /* a line that is not JSON: a comment or a keep-alive */
            }
          }
        }
      }
    } catch {
      /* stopped, or the connection dropped */
    }
  })();
  return () => controller.abort();
}
