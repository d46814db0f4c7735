//! `/api/v1/oauth/{provider}/authorize`, `/start` and `/callback`: connecting a user to a cloud
//! vendor by OAuth 2. Unlike the reference, `authorize` needs credentials (an API key, a
//! developer token or the user's own SDK token): otherwise anyone could attach their vendor
//! account to any user id. The URL it hands out is `start`'s, which binds the flow to the
//! browser that opens it first ([`pending`]): a callback from another browser is refused, so an
//! opened link or a code cannot be carried to someone else's browser. With `completion=client`
//! (always for an end user's SDK token) the client that started the flow finishes it
//! ([`complete`]), so an unopened link passed on connects no one either. The state works once;
//! the tokens are stored sealed under the master key. A vendor account is connected to one user
//! at a time. A `redirect_uri` must be under `PUBLIC_URL` or an entry of
//! `OAUTH_REDIRECT_ALLOWLIST`, so the flow cannot be used as an open redirect. The connection
//! itself is made by [`vendors::connect`].

mod complete;
mod pending;

pub(crate) use pending::Completion;
pub(crate) use pending::cookie;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use schema::ids::UserId;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vendors::connect::{Connector, ExchangeError, Made};
use vendors::{Endpoints, Vendor};

use crate::AppState;
use crate::error::{ApiError, ApiResult, ErrorBody, ValidationBody};
use crate::extract::{Query, SdkAuth};
use crate::security::cookies;

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(authorize))
        .routes(routes!(start))
        .routes(routes!(callback))
        .routes(routes!(complete::complete))
        .routes(routes!(success))
        .routes(routes!(failure))
}

/// The vendor behind a path segment, usable here: 400 for a phone provider, an unknown name
/// (wrong case included) or a vendor this deployment has not enabled.
pub(crate) async fn usable(
    state: &AppState,
    raw: &str,
) -> ApiResult<(&'static dyn Vendor, &'static str, Endpoints)> {
    if schema::catalogue::providers::by_slug(raw).is_some() {
        return Err(ApiError::bad_request(format!("Provider '{raw}' does not support OAuth")));
    }
    let vendor = vendors::by_slug(raw)
        .ok_or_else(|| ApiError::bad_request(format!("Unknown provider: {raw}")))?;
    let slug = vendor.provider().slug;
    let enabled = schema::provider_settings::is_enabled(&state.db, slug).await?;
    match state.config.vendors.endpoints(slug) {
        Some(ends) if enabled => Ok((vendor, slug, ends.clone())),
        _ => Err(ApiError::bad_request(format!("Provider '{slug}' is not enabled"))),
    }
}

fn callback_url(state: &AppState, slug: &str) -> String {
    vendors::callback_url(&state.config.public_url, slug)
}

/// Whether the caller may be sent to `uri` at the end: under the service's own URL or an
/// allow-listed prefix, compared as parsed URLs (scheme, host, port, then path).
pub(crate) fn allowed_redirect(state: &AppState, uri: &str) -> bool {
    let Ok(target) = url::Url::parse(uri) else { return false };
    let under = |prefix: &str| {
        url::Url::parse(prefix)
            .is_ok_and(|p| p.origin() == target.origin() && target.path().starts_with(p.path()))
    };
    under(&state.config.public_url)
        || state.config.oauth_redirect_allowlist.iter().any(|p| under(p))
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct AuthorizeOut {
    /// Send the user's browser here, within five minutes: the service's own link, which works
    /// once and goes on to the vendor.
    pub authorization_url: String,
    pub state: String,
}

/// Starts connecting a user to a cloud vendor: the URL to send the user to. The user may have
/// five authorizations pending; starting a sixth forgets the oldest.
///
/// `completion=client` (always, when the caller is an end user's SDK token): the callback
/// connects nothing; it sends the browser to `redirect_uri` (then required) with a
/// `completion` code, which the client that called `authorize` gives back, with the same
/// credentials, to `POST /oauth/{provider}/complete`. A link passed on to someone else's
/// browser then connects no one: the code lands there, and only the caller can use it.
#[utoipa::path(get, path = "/oauth/{provider}/authorize", tag = "oauth",
    params(("provider" = String, Path, description = "Lowercase provider identifier"),
           ("user_id" = String, Query, description = "The user's UUID"),
           ("redirect_uri" = Option<String>, Query, description = "Where the user returns at the end"),
           ("completion" = Option<String>, Query, description = "`auto` or `client`: who finishes the connection: the callback (`auto`, the default for API keys and developer tokens) or the client with `POST /oauth/{provider}/complete` (`client`, always for SDK tokens)")),
    responses((status = 200, body = AuthorizeOut), (status = 400, body = ErrorBody),
              (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 422, body = ValidationBody)),
    security(("api_key" = []), ("bearer" = [])))]
async fn authorize(
    auth: SdkAuth,
    State(state): State<AppState>,
    Path(provider): Path<String>,
    Query(mut params): Query,
) -> ApiResult<Json<AuthorizeOut>> {
    let user = params.uuid("user_id", true).map(UserId);
    let redirect_uri = params.string("redirect_uri");
    let asked = params.choice("completion", &["auto", "client"], "auto");
    params.finish()?;
    // An end user's own token finishes what it starts: a link it passes on connects no one.
    let completion = match (auth, asked) {
        (SdkAuth::User(_), _) | (_, "client") => Completion::Client,
        _ => Completion::Auto,
    };
    let (vendor, slug, ends) = usable(&state, &provider).await?;
    let user_id = user.ok_or_else(|| ApiError::bad_request("user_id is required"))?;
    auth.ensure_user(&user_id.to_string())?;
    if !schema::users::exists(&state.db, user_id).await? {
        return Err(ApiError::user_not_found(user_id));
    }
    if let Some(uri) = &redirect_uri
        && !allowed_redirect(&state, uri)
    {
        return Err(ApiError::bad_request(
            "redirect_uri is neither under PUBLIC_URL nor in OAUTH_REDIRECT_ALLOWLIST",
        ));
    }
    if completion == Completion::Client && redirect_uri.is_none() {
        return Err(ApiError::validation(crate::validate::missing(crate::validate::Params::loc(
            "redirect_uri",
        ))));
    }
    let flow = Flow { vendor, slug, ends: &ends, user_id, redirect_uri, completion, page: None };
    Ok(Json(begin(&state, flow).await?))
}

/// A connection to start: for whom, with which vendor, and where it ends.
pub(crate) struct Flow<'a> {
    pub vendor: &'static dyn Vendor,
    pub slug: &'static str,
    pub ends: &'a Endpoints,
    pub user_id: UserId,
    pub redirect_uri: Option<String>,
    pub completion: Completion,
    /// A connect page's flow returns to this page, whatever the outcome.
    pub page: Option<String>,
}

/// Starts a flow: kept for `start` and `callback`, and the link that binds it to a browser.
pub(crate) async fn begin(state: &AppState, flow: Flow<'_>) -> ApiResult<AuthorizeOut> {
    let slug = flow.slug;
    let started = vendors::oauth::start(flow.vendor.oauth(), flow.ends, &callback_url(state, slug))
        .map_err(|e| ApiError::Other(format!("the {slug} OAuth settings: {e}")))?;
    let pending = pending::Pending {
        user_id: flow.user_id,
        provider: slug.to_string(),
        redirect_uri: flow.redirect_uri,
        verifier: started.verifier,
        vendor_url: started.url,
        created: chrono::Utc::now().timestamp(),
        completion: flow.completion,
        page: flow.page,
    };
    pending::keep(state, &started.state, &pending).await?;
    let query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("state", &started.state)
        .finish();
    let public = state.config.public_url.trim_end_matches('/');
    let authorization_url = format!("{public}/api/v1/oauth/{slug}/start?{query}");
    Ok(AuthorizeOut { authorization_url, state: started.state })
}

/// The cookie that binds flow `oauth_state` to this browser (`value`), or clears it (`None`):
/// one per flow (two flows in one browser keep theirs), sent back only to this provider's
/// OAuth pages, never read by scripts, sent on the vendor's redirect back (a top-level
/// navigation) but not on other sites' requests.
fn binding_cookie(
    state: &AppState,
    slug: &'static str,
    oauth_state: &str,
    value: Option<&str>,
) -> Option<HeaderValue> {
    let (value, max_age) = match value {
        Some(v) => (v, pending::STATE_SECONDS),
        None => ("", 0),
    };
    let cookie = cookies::Cookie {
        name: &pending::cookie_name(oauth_state),
        value,
        path: &format!("/api/v1/oauth/{slug}/"),
        max_age,
        same_site: "Lax",
    };
    cookies::set_cookie(&state.config.public_url, &cookie)
}

/// Starts a flow already bound to the calling browser (a connect page's): the vendor's URL to
/// send it to, and the binding cookie to set on the answer. Unlike `authorize`'s link, the URL
/// is worth nothing in another browser: the callback wants the cookie.
pub(crate) async fn begin_bound(
    state: &AppState,
    flow: Flow<'_>,
) -> ApiResult<(String, Option<HeaderValue>)> {
    let slug = flow.slug;
    let started = begin(state, flow).await?;
    match pending::bind(state, &started.state, slug).await? {
        Ok((secret, vendor_url)) => {
            Ok((vendor_url, binding_cookie(state, slug, &started.state, Some(&secret))))
        }
        Err(_) => Err(ApiError::Other("a flow just started could not be bound".into())),
    }
}

/// The link `authorize` hands out: binds the authorization to this browser, then sends it on
/// to the vendor (303). It works once, within five minutes of `authorize`; otherwise the
/// browser is sent to `/oauth/error`.
#[utoipa::path(get, path = "/oauth/{provider}/start", tag = "oauth",
    params(("provider" = String, Path), ("state" = String, Query)),
    responses((status = 303, description = "On to the vendor, with the binding cookie set; or to /oauth/error")))]
async fn start(
    State(state): State<AppState>,
    Path(provider): Path<String>,
    Query(params): Query,
) -> ApiResult<Response> {
    let oauth_state = params.string("state");
    params.finish()?;
    let Some(oauth_state) = oauth_state else {
        return Ok(to_error_page("Missing OAuth parameters"));
    };
    let Some(slug) = vendors::by_slug(&provider).map(|v| v.provider().slug) else {
        return Ok(to_error_page("This link has expired; start connecting again"));
    };
    let (secret, vendor_url) = match pending::bind(&state, &oauth_state, slug).await? {
        Ok(bound) => bound,
        Err(pending::Unbound::Expired) => {
            return Ok(to_error_page("This link has expired; start connecting again"));
        }
        Err(pending::Unbound::Used) => {
            return Ok(to_error_page("This link was opened already; start connecting again"));
        }
    };
    let mut response = Redirect::to(&vendor_url).into_response();
    if let Some(cookie) = binding_cookie(&state, slug, &oauth_state, Some(&secret)) {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    Ok(response)
}

fn to_error_page(message: &str) -> Response {
    let query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("message", message)
        .finish();
    Redirect::to(&format!("/api/v1/oauth/error?{query}")).into_response()
}

/// Where the vendor sends the user back: the code is exchanged, the connection stored, and the
/// user sent on (303) to the `redirect_uri` given to `authorize`, else to `/oauth/success`.
#[utoipa::path(get, path = "/oauth/{provider}/callback", tag = "oauth",
    params(("provider" = String, Path), ("code" = Option<String>, Query),
           ("state" = Option<String>, Query), ("error" = Option<String>, Query),
           ("error_description" = Option<String>, Query)),
    responses((status = 303, description = "On to the caller's page, or to /oauth/success or /oauth/error"),
              (status = 400, body = ErrorBody), (status = 502, body = ErrorBody)))]
async fn callback(
    State(state): State<AppState>,
    Path(provider): Path<String>,
    Query(params): Query,
    headers: HeaderMap,
) -> Response {
    let oauth_state = params.string("state");
    let mut response = match connect(&state, &provider, params, &headers).await {
        Ok(response) => response,
        Err(e) => e.into_response(),
    };
    // The binding has served, whatever the outcome.
    let slug = vendors::by_slug(&provider).map(|v| v.provider().slug);
    if let (Some(slug), Some(oauth_state)) = (slug, oauth_state)
        && let Some(cookie) = binding_cookie(&state, slug, &oauth_state, None)
    {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    response
}

/// How a flow the callback took ended.
enum Outcome {
    /// The connection is stored.
    Connected,
    /// The client finishes it: the browser carries this code back.
    Handed(String),
    /// Not connected, for this reason (the vendor account is taken, the vendor refused a call).
    Refused(String),
}

/// The callback's work: the flow taken, the code exchanged and the connection stored, and the
/// browser sent on. A connect page's flow returns to its page whatever the outcome.
async fn connect(
    state: &AppState,
    provider: &str,
    params: crate::validate::Params,
    headers: &HeaderMap,
) -> ApiResult<Response> {
    let code = params.string("code");
    let oauth_state = params.string("state");
    let error = params.string("error");
    let description = params.string("error_description");
    params.finish()?;
    if let Some(error) = error {
        let message = match description {
            Some(d) => format!("{error}: {d}"),
            None => error,
        };
        // A connect page's flow goes back to its page; any other is left to expire, as before.
        if let Some(s) = &oauth_state
            && let Some((page, slug)) = pending::abandon_page_flow(state, s, provider).await
        {
            return Ok(back_to_page(&page, &slug, Some(&message)));
        }
        return Ok(to_error_page(&message));
    }
    let (Some(code), Some(oauth_state)) = (code, oauth_state) else {
        return Ok(to_error_page("Missing OAuth parameters"));
    };
    // Taken and deleted at once: a state works once.
    let cookie = pending::cookie(headers, &pending::cookie_name(&oauth_state));
    let pending = match pending::take(state, &oauth_state, provider, cookie).await? {
        Ok(p) => p,
        Err(pending::Refused::Invalid) => {
            return Err(ApiError::bad_request("Invalid or expired state parameter"));
        }
        Err(pending::Refused::OtherBrowser(page)) => {
            const OTHER: &str =
                "This authorization was started in another browser; start connecting again";
            // A connect page's flow: back to the page, which says so (in an app's own browser
            // the vendor's app may send the user back to another one).
            return match page {
                Some(page) => Ok(back_to_page(&page, provider, Some(OTHER))),
                None => Err(ApiError::bad_request(OTHER)),
            };
        }
    };
    let outcome = exchange(state, provider, &pending, &code).await;
    if let Some(page) = &pending.page {
        let said = match outcome {
            Ok(Outcome::Refused(why)) => Some(why),
            Ok(_) => None,
            Err(e) => Some(public_detail(e)),
        };
        return Ok(back_to_page(page, &pending.provider, said.as_deref()));
    }
    Ok(match outcome? {
        Outcome::Handed(to) => Redirect::to(&to).into_response(),
        Outcome::Refused(why) => to_error_page(&why),
        Outcome::Connected => {
            let to = match &pending.redirect_uri {
                Some(uri) => uri.clone(),
                None => {
                    let query = url::form_urlencoded::Serializer::new(String::new())
                        .append_pair("provider", &pending.provider)
                        .append_pair("user_id", &pending.user_id.to_string())
                        .finish();
                    format!("/api/v1/oauth/success?{query}")
                }
            };
            Redirect::to(&to).into_response()
        }
    })
}

/// The workflow's reach, from the service's state.
pub(super) fn connector(state: &AppState) -> Connector<'_> {
    Connector {
        db: &state.db,
        keys: &state.keys,
        http: &state.vendor_http,
        queue: &state.queue,
        public_url: &state.config.public_url,
        outbox: state.config.outbox,
    }
}

/// The code exchanged for the vendor's tokens, and the connection made (or handed to the
/// client that finishes it).
async fn exchange(
    state: &AppState,
    provider: &str,
    pending: &pending::Pending,
    code: &str,
) -> ApiResult<Outcome> {
    let (vendor, slug, ends) = usable(state, provider).await?;
    let connector = connector(state);
    let verifier = pending.verifier.as_deref();
    let granted = match connector.exchange(vendor, &ends, pending.user_id, code, verifier).await {
        Ok(granted) => granted,
        Err(e @ ExchangeError::Refused { .. }) => return Err(ApiError::bad_request(e.to_string())),
        Err(e @ ExchangeError::Failed { .. }) => {
            return Err(ApiError::client(StatusCode::BAD_GATEWAY, e.to_string()));
        }
        Err(ExchangeError::UserGone(user)) => return Err(ApiError::user_not_found(user)),
        Err(ExchangeError::Db(e)) => return Err(e.into()),
    };
    if pending.completion == Completion::Client {
        // The client that started the flow finishes it: the browser only carries a code back.
        let Some(uri) = pending.redirect_uri.as_deref() else {
            return Err(ApiError::Other("a client completion without its redirect_uri".into()));
        };
        let handed =
            complete::Handed::new(state, pending, slug, &granted.tokens, granted.vendor_user);
        let code = complete::hand_back(state, &handed).await?;
        return Ok(Outcome::Handed(with_query(uri, "completion", &code)));
    }
    let made = Made {
        vendor,
        ends: &ends,
        user_id: pending.user_id,
        tokens: &granted.tokens,
        vendor_user: granted.vendor_user.as_deref(),
    };
    Ok(match connector.finish(made).await? {
        Ok(()) => Outcome::Connected,
        Err(refusal) => Outcome::Refused(refusal.message(vendor)),
    })
}

/// What an end user may read of an error: a client error's message; ours is logged and
/// summed up.
fn public_detail(e: ApiError) -> String {
    match e {
        ApiError::Client { detail, .. } | ApiError::Later { detail, .. } => detail,
        other => {
            let _logged = other.into_response();
            "Something went wrong on our side; try again".into()
        }
    }
}

/// Back to the connect page `page`, saying how connecting `provider` went: connected, or
/// `error`.
fn back_to_page(page: &str, provider: &str, error: Option<&str>) -> Response {
    let mut to = with_query(page, "provider", provider);
    to = match error {
        Some(why) => with_query(&to, "error", why),
        None => with_query(&to, "outcome", "connected"),
    };
    Redirect::to(&to).into_response()
}

/// `uri` with `name=value` added to its query.
fn with_query(uri: &str, name: &str, value: &str) -> String {
    match url::Url::parse(uri) {
        Ok(mut url) => {
            url.query_pairs_mut().append_pair(name, value);
            url.to_string()
        }
        Err(_) => uri.to_string(),
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct OutcomeOut {
    pub success: bool,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
}

/// Where a connection ends when the caller gave no `redirect_uri`.
#[utoipa::path(get, path = "/oauth/success", tag = "oauth",
    params(("provider" = Option<String>, Query), ("user_id" = Option<String>, Query)),
    responses((status = 200, body = OutcomeOut)))]
async fn success(Query(params): Query) -> ApiResult<Json<OutcomeOut>> {
    let provider = params.string("provider");
    let user_id = params.string("user_id");
    params.finish()?;
    Ok(Json(OutcomeOut {
        success: true,
        message: "Connected. You can close this page.".into(),
        user_id,
        provider,
    }))
}

/// Where a connection attempt that failed ends.
#[utoipa::path(get, path = "/oauth/error", tag = "oauth",
    params(("message" = Option<String>, Query)),
    responses((status = 200, body = OutcomeOut)))]
async fn failure(Query(params): Query) -> ApiResult<Json<OutcomeOut>> {
    let message = params.string("message").unwrap_or_else(|| "Authorization failed".into());
    params.finish()?;
    Ok(Json(OutcomeOut { success: false, message, user_id: None, provider: None }))
}
