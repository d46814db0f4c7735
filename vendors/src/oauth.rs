//! The OAuth 2 authorization-code flow every vendor shares, with the `oauth2` crate: the
//! authorize URL (scopes, state, PKCE where the vendor takes it), the code exchange and the
//! refresh. What differs per vendor is data ([`OAuthSpec`]); where a vendor's URLs live is
//! configuration ([`Endpoints`]), so tests point them at a local server.

use std::sync::Mutex;

use chrono::{DateTime, Utc};
use oauth2::basic::BasicClient;
use oauth2::{
    AuthType, AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, EndpointNotSet,
    EndpointSet, PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, RefreshToken, Scope,
    TokenResponse, TokenUrl,
};
use serde_json::Value;

/// How a vendor's OAuth works.
#[derive(Debug, Clone, Copy)]
pub struct OAuthSpec {
    pub authorize_url: &'static str,
    pub token_url: &'static str,
    pub scopes: &'static [&'static str],
    /// Whether the vendor takes PKCE (S256).
    pub pkce: bool,
    /// How the client authenticates at the token endpoint.
    pub client_auth: ClientAuth,
    /// Form fields the token endpoint wants besides OAuth's own (Withings: `action`).
    pub token_params: &'static [(&'static str, &'static str)],
    /// Unwraps a token answer the vendor wraps in an envelope of its own: the OAuth 2 body, or
    /// the OAuth 2 error code the envelope means.
    pub token_envelope: Option<TokenEnvelope>,
}

/// Unwraps a vendor's token envelope: the OAuth 2 body, or the OAuth 2 error code it means.
pub(crate) type TokenEnvelope = fn(&Value) -> Result<Value, &'static str>;

impl OAuthSpec {
    /// A standard authorization-code flow.
    pub const fn standard(
        authorize_url: &'static str,
        token_url: &'static str,
        scopes: &'static [&'static str],
        pkce: bool,
        client_auth: ClientAuth,
    ) -> OAuthSpec {
        OAuthSpec {
            authorize_url,
            token_url,
            scopes,
            pkce,
            client_auth,
            token_params: &[],
            token_envelope: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientAuth {
    /// HTTP Basic with the client id and secret.
    Basic,
    /// `client_id` and `client_secret` in the form body.
    Body,
}

/// A vendor app's credentials and where its endpoints are (the documented ones unless
/// configured otherwise).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Endpoints {
    pub client_id: String,
    pub client_secret: String,
    pub authorize_url: String,
    pub token_url: String,
    /// The vendor's data API, for pulls.
    pub api_url: String,
    /// The token the vendor echoes when a webhook subscription is verified.
    pub webhook_token: Option<String>,
    /// The key the vendor signs notifications with, where it is not the client secret.
    pub webhook_secret: Option<String>,
    /// The vendor's further settings, by name ([`crate::Info::settings`]).
    pub settings: std::collections::BTreeMap<&'static str, String>,
}

impl Endpoints {
    /// One of the vendor's further settings (present once configured).
    pub fn setting(&self, name: &str) -> &str {
        self.settings.get(name).map_or("", String::as_str)
    }
}

/// Tokens from an exchange or a refresh.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tokens {
    pub access_token: String,
    pub refresh_token: Option<String>,
    pub expires_at: Option<DateTime<Utc>>,
    pub scope: Option<String>,
    /// The token response as the vendor sent it (unwrapped): some vendors name the user in it.
    pub raw: Value,
}

/// What the caller keeps between the authorize URL and the callback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Started {
    pub url: String,
    pub state: String,
    /// The PKCE verifier, when the vendor takes PKCE.
    pub verifier: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    #[error("a configured URL is not valid: {0}")]
    Url(#[from] oauth2::url::ParseError),
    /// The vendor answered the exchange or refresh with an OAuth error (`invalid_grant`, …):
    /// the grant is no good, retrying will not help.
    #[error("the vendor refused: {0}")]
    Refused(String),
    /// The vendor could not be reached or answered something else: worth a retry.
    #[error("the vendor could not be reached or answered unexpectedly: {0}")]
    Unavailable(String),
}

fn client(
    spec: &OAuthSpec,
    ends: &Endpoints,
    redirect: &str,
) -> Result<
    BasicClient<EndpointSet, EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointSet>,
    OAuthError,
> {
    Ok(BasicClient::new(ClientId::new(ends.client_id.clone()))
        .set_client_secret(ClientSecret::new(ends.client_secret.clone()))
        .set_auth_uri(AuthUrl::new(ends.authorize_url.clone())?)
        .set_token_uri(TokenUrl::new(ends.token_url.clone())?)
        .set_redirect_uri(RedirectUrl::new(redirect.to_string())?)
        .set_auth_type(match spec.client_auth {
            ClientAuth::Basic => AuthType::BasicAuth,
            ClientAuth::Body => AuthType::RequestBody,
        }))
}

/// The URL to send the user to, with a fresh random state (and PKCE verifier).
pub fn start(spec: &OAuthSpec, ends: &Endpoints, redirect: &str) -> Result<Started, OAuthError> {
    let client = client(spec, ends, redirect)?;
    let mut request = client
        .authorize_url(CsrfToken::new_random)
        .add_scopes(spec.scopes.iter().map(|s| Scope::new((*s).to_string())));
    let mut verifier = None;
    if spec.pkce {
        let (challenge, v) = PkceCodeChallenge::new_random_sha256();
        request = request.set_pkce_challenge(challenge);
        verifier = Some(v.secret().clone());
    }
    let (url, state) = request.url();
    Ok(Started { url: url.to_string(), state: state.secret().clone(), verifier })
}

fn tokens(response: &oauth2::basic::BasicTokenResponse, raw: Value) -> Tokens {
    let expires_at = response
        .expires_in()
        .and_then(|d| chrono::Duration::from_std(d).ok())
        .map(|d| Utc::now() + d);
    let scope =
        response.scopes().map(|s| s.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" "));
    Tokens {
        access_token: response.access_token().secret().clone(),
        refresh_token: response.refresh_token().map(|t| t.secret().clone()),
        expires_at,
        scope,
        raw,
    }
}

/// The HTTP client of token calls: reqwest, through the vendor's quirks ([`token_call`]).
struct Quirks {
    http: reqwest::Client,
    spec: OAuthSpec,
    seen: Mutex<Value>,
}

impl Quirks {
    fn new(http: &reqwest::Client, spec: &OAuthSpec) -> Quirks {
        Quirks { http: http.clone(), spec: *spec, seen: Mutex::new(Value::Null) }
    }

    /// The token answer as the vendor sent it.
    fn seen(self) -> Value {
        self.seen.into_inner().unwrap_or_default()
    }
}

type TokenFuture<'c> = std::pin::Pin<
    Box<
        dyn std::future::Future<
                Output = Result<oauth2::HttpResponse, oauth2::HttpClientError<reqwest::Error>>,
            > + Send
            + 'c,
    >,
>;

impl<'c> oauth2::AsyncHttpClient<'c> for Quirks {
    type Error = oauth2::HttpClientError<reqwest::Error>;
    type Future = TokenFuture<'c>;

    fn call(&'c self, request: oauth2::HttpRequest) -> Self::Future {
        Box::pin(token_call(&self.http, &self.spec, &self.seen, request))
    }
}

/// One call at the token endpoint, through the vendor's quirks: its extra form fields added,
/// its envelope unwrapped, a missing `token_type` taken as `bearer` (RFC 6750's only one), and
/// the JSON answer kept in `seen`.
async fn token_call(
    http: &reqwest::Client,
    spec: &OAuthSpec,
    seen: &Mutex<Value>,
    mut request: oauth2::HttpRequest,
) -> Result<oauth2::HttpResponse, oauth2::HttpClientError<reqwest::Error>> {
    if !spec.token_params.is_empty() {
        let mut form = url::form_urlencoded::Serializer::new(String::new());
        form.extend_pairs(spec.token_params.iter().copied());
        let body = request.body_mut();
        if !body.is_empty() {
            body.push(b'&');
        }
        body.extend_from_slice(form.finish().as_bytes());
    }
    let mut response = oauth2::AsyncHttpClient::call(http, request).await?;
    let Ok(mut json) = serde_json::from_slice::<Value>(response.body()) else {
        return Ok(response);
    };
    if let Some(unwrap) = spec.token_envelope {
        let (status, inner) = match unwrap(&json) {
            Ok(inner) => (oauth2::http::StatusCode::OK, inner),
            Err(code) => {
                (oauth2::http::StatusCode::BAD_REQUEST, serde_json::json!({ "error": code }))
            }
        };
        *response.status_mut() = status;
        json = inner;
    }
    if let Some(o) = json.as_object_mut()
        && o.contains_key("access_token")
        && !o.contains_key("token_type")
    {
        o.insert("token_type".into(), "bearer".into());
    }
    *response.body_mut() = serde_json::to_vec(&json).unwrap_or_default();
    response.headers_mut().insert(
        oauth2::http::header::CONTENT_TYPE,
        oauth2::http::HeaderValue::from_static("application/json"),
    );
    if let Ok(mut s) = seen.lock() {
        *s = json;
    }
    Ok(response)
}

fn classify<RE: std::error::Error + 'static>(
    e: oauth2::RequestTokenError<RE, oauth2::basic::BasicErrorResponse>,
) -> OAuthError {
    use oauth2::basic::BasicErrorResponseType as Kind;
    match e {
        // Only a grant or client the vendor says is no good ends a connection; its
        // `temporarily_unavailable`, `server_error` and the like are worth a retry.
        oauth2::RequestTokenError::ServerResponse(r)
            if matches!(
                r.error(),
                Kind::InvalidGrant | Kind::UnauthorizedClient | Kind::InvalidClient
            ) =>
        {
            OAuthError::Refused(r.to_string())
        }
        other => OAuthError::Unavailable(other.to_string()),
    }
}

/// Exchanges the code the vendor sent back for tokens.
pub async fn exchange(
    http: &reqwest::Client,
    spec: &OAuthSpec,
    ends: &Endpoints,
    redirect: &str,
    code: &str,
    verifier: Option<&str>,
) -> Result<Tokens, OAuthError> {
    let client = client(spec, ends, redirect)?;
    let mut request = client.exchange_code(AuthorizationCode::new(code.to_string()));
    if let Some(v) = verifier {
        request = request.set_pkce_verifier(PkceCodeVerifier::new(v.to_string()));
    }
    let quirks = Quirks::new(http, spec);
    let response = request.request_async(&quirks).await.map_err(classify)?;
    Ok(tokens(&response, quirks.seen()))
}

/// A new access token for a refresh token. Vendors that rotate refresh tokens send a new one;
/// the others keep the old one valid (returned as it was).
pub async fn refresh(
    http: &reqwest::Client,
    spec: &OAuthSpec,
    ends: &Endpoints,
    redirect: &str,
    refresh_token: &str,
) -> Result<Tokens, OAuthError> {
    let client = client(spec, ends, redirect)?;
    let token = RefreshToken::new(refresh_token.to_string());
    let quirks = Quirks::new(http, spec);
    let response =
        client.exchange_refresh_token(&token).request_async(&quirks).await.map_err(classify)?;
    let mut out = tokens(&response, quirks.seen());
    out.refresh_token.get_or_insert_with(|| refresh_token.to_string());
    Ok(out)
}

/// The HTTP client for token calls: no redirects (a redirect could send a code or a secret
/// elsewhere), bounded time.
pub fn http_client() -> reqwest::Result<reqwest::Client> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(std::time::Duration::from_secs(20))
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: OAuthSpec = OAuthSpec::standard(
        "https://vendor.example/oauth/authorize",
        "https://vendor.example/oauth/token",
        &["daily", "heartrate"],
        true,
        ClientAuth::Basic,
    );

    fn ends() -> Endpoints {
        Endpoints {
            client_id: "app".into(),
            client_secret: "secret".into(),
            authorize_url: SPEC.authorize_url.into(),
            token_url: SPEC.token_url.into(),
            api_url: "https://api.vendor.example".into(),
            ..Endpoints::default()
        }
    }

    #[test]
    fn the_authorize_url_carries_scopes_state_and_a_pkce_challenge() {
        let s = start(&SPEC, &ends(), "https://wh.example/api/v1/oauth/oura/callback")
            .unwrap_or_else(|e| panic!("{e}"));
        let url = url::Url::parse(&s.url).unwrap_or_else(|e| panic!("{e}"));
        let q: std::collections::HashMap<_, _> = url.query_pairs().into_owned().collect();
        assert_eq!(q.get("response_type").map(String::as_str), Some("code"));
        assert_eq!(q.get("client_id").map(String::as_str), Some("app"));
        assert_eq!(q.get("scope").map(String::as_str), Some("daily heartrate"));
        assert_eq!(q.get("state"), Some(&s.state));
        assert_eq!(q.get("code_challenge_method").map(String::as_str), Some("S256"));
        assert!(s.verifier.is_some() && s.state.len() >= 16);
        let again =
            start(&SPEC, &ends(), "https://wh.example/cb").unwrap_or_else(|e| panic!("{e}"));
        assert_ne!(again.state, s.state);
    }
}
