//! A local server that answers as a cloud vendor documents its API: its token endpoint (with
//! the vendor's client authentication, answer shape and envelope), its data endpoints (behind
//! the user's token, and the app's key where the vendor wants one), a 429 with `Retry-After`
//! the first time one endpoint is asked, and whatever else the vendor is called on (revocation,
//! registration, subscriptions), each call logged for the test to check.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use serde_json::{Value, json};

/// One answer of the vendor's API.
#[derive(Debug, Clone)]
pub struct Page {
    pub method: Method,
    /// The path, or a prefix of it ending in `*` (paths with dates in them).
    pub path: String,
    /// Query pairs the request must carry to get this answer.
    pub query: Vec<(&'static str, String)>,
    pub status: u16,
    pub body: Value,
}

impl Page {
    pub fn get(path: &str, body: Value) -> Page {
        Page { method: Method::GET, path: path.into(), query: Vec::new(), status: 200, body }
    }

    pub fn post(path: &str, body: Value) -> Page {
        Page { method: Method::POST, ..Page::get(path, body) }
    }

    /// A `DELETE` answered 204.
    pub fn delete(path: &str) -> Page {
        Page { method: Method::DELETE, ..Page::get(path, Value::Null) }.status(204)
    }

    pub fn with(mut self, key: &'static str, value: &str) -> Page {
        self.query.push((key, value.into()));
        self
    }

    pub fn status(mut self, status: u16) -> Page {
        self.status = status;
        self
    }
}

/// How the vendor behaves.
#[derive(Debug, Clone)]
pub struct VendorApi {
    /// Where its token endpoint is.
    pub token_path: &'static str,
    /// Client credentials in HTTP Basic (else in the form).
    pub basic_auth: bool,
    /// Fields the vendor adds to its token answer (the user's id, …).
    pub token_fields: Value,
    /// Whether it gives refresh tokens.
    pub refreshes: bool,
    /// Withings' `{status, body}` around every answer, errors as statuses in a 200.
    pub envelope: bool,
    pub pages: Vec<Page>,
    /// The answer to any other call of the API.
    pub default_page: Value,
    /// The path answered 429 (`Retry-After: 1`) the first time it is asked.
    pub limited: &'static str,
    /// Paths answered 200 `{}` without a user token (revocations made otherwise).
    pub open: Vec<&'static str>,
    /// A header every data call must carry, and its value.
    pub key_header: Option<(&'static str, &'static str)>,
}

impl VendorApi {
    pub fn new(token_path: &'static str, pages: Vec<Page>, limited: &'static str) -> VendorApi {
        VendorApi {
            token_path,
            basic_auth: false,
            token_fields: json!({}),
            refreshes: true,
            envelope: false,
            pages,
            default_page: json!([]),
            limited,
            open: Vec::new(),
            key_header: None,
        }
    }
}

pub const CLIENT_ID: &str = "test-app";
pub const CLIENT_SECRET: &str = "test-app-secret";
pub const CODE: &str = "good-code";
/// Where the vendor's consent page is (`<VENDOR>_AUTHORIZE_URL`), for tests in a real browser.
pub const AUTHORIZE_PATH: &str = "/authorize";

pub struct Mock {
    pub base: String,
    state: Arc<MockState>,
}

struct MockState {
    api: VendorApi,
    log: Mutex<Vec<String>>,
    limited_calls: AtomicUsize,
    /// Every user token refused from now on (the user removed the app at the vendor).
    refusing: AtomicBool,
}

impl Mock {
    pub async fn start(api: VendorApi) -> Mock {
        let state = Arc::new(MockState {
            api,
            log: Mutex::default(),
            limited_calls: AtomicUsize::new(0),
            refusing: AtomicBool::new(false),
        });
        let app = axum::Router::new().fallback(answer).with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        tokio::spawn(async move { axum::serve(listener, app).await });
        Mock { base, state }
    }

    /// Every call so far: `METHOD /path?query [form]`.
    pub fn log(&self) -> Vec<String> {
        self.state.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// Whether a call starting with `prefix` was made.
    pub fn called(&self, prefix: &str) -> bool {
        self.log().iter().any(|l| l.starts_with(prefix))
    }

    /// From now on the user's tokens are refused, as after the user removed the app.
    pub fn refuse_tokens(&self) {
        self.state.refusing.store(true, Ordering::SeqCst);
    }

    /// How often the rate-limited path was asked.
    pub fn limited_calls(&self) -> usize {
        self.state.limited_calls.load(Ordering::SeqCst)
    }
}

fn form(body: &[u8]) -> Vec<(String, String)> {
    url::form_urlencoded::parse(body).into_owned().collect()
}

async fn answer(
    State(s): State<Arc<MockState>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path().to_string();
    let query: Vec<(String, String)> =
        url::form_urlencoded::parse(uri.query().unwrap_or("").as_bytes()).into_owned().collect();
    let fields = form(&body);
    let mut line = format!("{method} {path}");
    if let Some(q) = uri.query() {
        line.push('?');
        line.push_str(q);
    }
    if !fields.is_empty() {
        let f: Vec<String> = fields.iter().map(|(k, v)| format!("{k}={v}")).collect();
        line.push_str(&format!(" [{}]", f.join("&")));
    }
    let auth = headers.get("authorization").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    if let Ok(mut log) = s.log.lock() {
        log.push(format!("{line} auth={auth}"));
    }
    let api = &s.api;
    if path == AUTHORIZE_PATH {
        return authorize_page(&query);
    }
    if path == api.token_path {
        return token(api, &headers, &fields);
    }
    let has =
        |k: &str, v: &str| query.iter().chain(fields.iter()).any(|(qk, qv)| qk == k && qv == v);
    let page = api.pages.iter().find(|p| {
        p.method == method && matches(&p.path, &path) && p.query.iter().all(|(k, v)| has(k, v))
    });
    let found = |p: &Page| {
        (StatusCode::from_u16(p.status).unwrap_or(StatusCode::OK), axum::Json(p.body.clone()))
            .into_response()
    };
    if api.open.iter().any(|p| path == *p) {
        return page.map_or_else(|| axum::Json(wrap(api, json!({}))).into_response(), found);
    }
    let user = matches!(auth.as_str(), "Bearer access-1" | "Bearer access-2")
        && !s.refusing.load(Ordering::SeqCst);
    let key = api
        .key_header
        .is_none_or(|(name, value)| headers.get(name).and_then(|v| v.to_str().ok()) == Some(value));
    if !user || !key {
        if api.envelope {
            return axum::Json(json!({"status": 401, "error": "invalid_token"})).into_response();
        }
        return (StatusCode::UNAUTHORIZED, axum::Json(json!({"error": "invalid token"})))
            .into_response();
    }
    if matches(api.limited, &path) && s.limited_calls.fetch_add(1, Ordering::SeqCst) == 0 {
        if api.envelope {
            // Withings: its limit is a status in a 200.
            return axum::Json(json!({"status": 601, "error": "Too many request"})).into_response();
        }
        return (StatusCode::TOO_MANY_REQUESTS, [("retry-after", "1")], "slow down")
            .into_response();
    }
    page.map_or_else(|| axum::Json(api.default_page.clone()).into_response(), found)
}

/// The vendor's consent page: "Allow" sends the browser back to `redirect_uri` with the code,
/// "Deny" with `error=access_denied`, each with the `state`, as RFC 6749 §4.1.2 says.
fn authorize_page(query: &[(String, String)]) -> Response {
    let get = |k: &str| query.iter().find(|(qk, _)| qk == k).map(|(_, v)| v.as_str());
    let (Some(back), Some(state)) = (get("redirect_uri"), get("state")) else {
        return (StatusCode::BAD_REQUEST, "redirect_uri and state are required").into_response();
    };
    let link = |pairs: &[(&str, &str)]| {
        let mut url = url::Url::parse(back).expect("redirect_uri");
        url.query_pairs_mut().extend_pairs(pairs).append_pair("state", state);
        url.to_string().replace('&', "&amp;")
    };
    let allow = link(&[("code", CODE)]);
    let deny = link(&[("error", "access_denied"), ("error_description", "The user said no")]);
    let page = format!(
        "<!doctype html><html lang=\"en\"><title>Authorize</title><h1>Share your data?</h1>\
         <p><a href=\"{allow}\">Allow</a> <a href=\"{deny}\">Deny</a></p></html>"
    );
    ([(axum::http::header::CONTENT_TYPE, "text/html; charset=utf-8")], page).into_response()
}

fn matches(pattern: &str, path: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => path.starts_with(prefix),
        None => pattern == path,
    }
}

fn wrap(api: &VendorApi, body: Value) -> Value {
    if api.envelope { json!({"status": 0, "body": body}) } else { body }
}

/// The token endpoint: `good-code` once for `access-1`/`refresh-1`; `refresh-1` for
/// `access-2`/`refresh-2` (a rotation); anything else refused.
fn token(api: &VendorApi, headers: &HeaderMap, fields: &[(String, String)]) -> Response {
    let get = |k: &str| fields.iter().find(|(fk, _)| fk == k).map(|(_, v)| v.as_str());
    let basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{CLIENT_ID}:{CLIENT_SECRET}"))
    );
    let client = if api.basic_auth {
        headers.get("authorization").and_then(|v| v.to_str().ok()) == Some(basic.as_str())
    } else {
        get("client_id") == Some(CLIENT_ID) && get("client_secret") == Some(CLIENT_SECRET)
    };
    let refuse = |error: &str| {
        if api.envelope {
            axum::Json(json!({"status": 503, "error": error})).into_response()
        } else {
            (StatusCode::BAD_REQUEST, axum::Json(json!({"error": error}))).into_response()
        }
    };
    if get("action") == Some("revoke") && get("signature").is_some() {
        return axum::Json(wrap(api, json!({}))).into_response();
    }
    if !client {
        return refuse("invalid_client");
    }
    let issued = match (get("grant_type"), get("code"), get("refresh_token")) {
        (Some("authorization_code"), Some(CODE), _) => 1,
        (Some("refresh_token"), _, Some("refresh-1")) if api.refreshes => 2,
        _ => return refuse("invalid_grant"),
    };
    let mut answer = json!({"access_token": format!("access-{issued}"), "token_type": "Bearer",
        "expires_in": 3600});
    if api.refreshes {
        answer["refresh_token"] = json!(format!("refresh-{issued}"));
    }
    if let (Some(a), Some(extra)) = (answer.as_object_mut(), api.token_fields.as_object()) {
        a.extend(extra.clone());
    }
    axum::Json(wrap(api, answer)).into_response()
}
