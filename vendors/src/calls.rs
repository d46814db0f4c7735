//! One-off calls the service makes at a vendor with a user's token or the app's credentials:
//! registering a user after OAuth (Polar), subscribing to notifications (Fitbit, Withings),
//! revoking at disconnect. A vendor describes them as data ([`Call`]); [`send`] makes them.

use serde_json::Value;

use crate::Endpoints;

/// How a call proves who makes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallAuth {
    /// The user's access token, `Authorization: Bearer`.
    Bearer(String),
    /// The app's client id and secret, HTTP Basic.
    Basic,
    /// Nothing (what proves it is in the URL or the body).
    None,
}

/// One HTTP call at a vendor.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub method: reqwest::Method,
    pub url: url::Url,
    pub auth: CallAuth,
    /// A form body, when not empty.
    pub form: Vec<(String, String)>,
    /// A JSON body.
    pub json: Option<Value>,
    /// Statuses besides 2xx that mean the call did what it was for (Polar's 409 "already
    /// registered" on a reconnection).
    pub also_ok: &'static [u16],
    /// Whether the connection cannot work without it (a user Polar does not know gives no
    /// data); a subscription that fails is logged and the scheduled pulls still run.
    pub required: bool,
}

impl Call {
    /// A call with no body that is not required.
    pub fn new(method: reqwest::Method, url: url::Url, auth: CallAuth) -> Call {
        Call { method, url, auth, form: Vec::new(), json: None, also_ok: &[], required: false }
    }

    pub fn form(mut self, pairs: &[(&str, &str)]) -> Call {
        self.form = pairs.iter().map(|(k, v)| ((*k).to_string(), (*v).to_string())).collect();
        self
    }
}

/// `base` (a configured URL) joined with `path`, as a URL.
pub(crate) fn at(base: &str, path: &str) -> Option<url::Url> {
    url::Url::parse(&format!("{}/{}", base.trim_end_matches('/'), path.trim_start_matches('/')))
        .ok()
}

/// Makes the call; `Err` says what the vendor answered (never the URL: it may carry a token).
pub(crate) async fn send(
    http: &reqwest::Client,
    ends: &Endpoints,
    call: Call,
) -> Result<Value, String> {
    let mut request =
        http.request(call.method, call.url).timeout(std::time::Duration::from_secs(20));
    request = match &call.auth {
        CallAuth::Bearer(token) => request.bearer_auth(token),
        CallAuth::Basic => request.basic_auth(&ends.client_id, Some(&ends.client_secret)),
        CallAuth::None => request,
    };
    if let Some(json) = &call.json {
        request = request.json(json);
    } else if !call.form.is_empty() {
        request = request.form(&call.form);
    }
    let response = request.send().await.map_err(|e| format!("not reached: {}", e.without_url()))?;
    let status = response.status();
    let body = response.bytes().await.unwrap_or_default();
    if status.is_success() || call.also_ok.contains(&status.as_u16()) {
        return Ok(serde_json::from_slice(&body).unwrap_or(Value::Null));
    }
    let text: String = String::from_utf8_lossy(&body).chars().take(300).collect();
    Err(format!("answered {status}: {text}"))
}
