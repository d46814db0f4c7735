//! The wearhouse HTTP API: axum routers per resource, auth extractors, the contract's error and
//! envelope conventions, and the OpenAPI 3.1 document generated from the handlers; beside them
//! the MCP endpoint (`mcp`), the exports of a user's record (`exports`, made by the worker) and
//! the embedded portal.

mod access;
mod audit;
pub mod dates;
mod error;
mod exports;
mod extract;
pub mod mail;
mod mcp;
mod openapi;
mod operations;
mod pagination;
mod read_routing;
mod routes;
mod security;
mod sync_hub;
mod validate;
pub mod webhook_url;

// What the binary and the tests reach besides the modules above: the rest is this crate's.
pub use exports::Exporter;
pub use routes::xml_import::FORM_NEEDS_BUCKET_EVENTS;
pub use security::throttle::FailureLimits;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::trace::TraceLayer;

use security::hash_pool::HashPool;
use security::throttle::FailureThrottle;
use security::tokens::TokenKeys;

/// Settings of the HTTP API.
#[derive(Debug, Clone)]
pub struct ApiConfig {
    /// Signs access tokens. `None`: a key generated on first start and kept in the database,
    /// so that every process of the deployment shares it.
    pub secret_key: Option<String>,
    pub access_token_minutes: i64,
    /// How long an SDK refresh token lives unused (each refresh starts it again).
    pub refresh_token_lifetime: chrono::Duration,
    /// The first developer, created on first start when there is none.
    pub admin_email: String,
    /// `None`: a random password, logged once when the admin is created.
    pub admin_password: Option<String>,
    /// Largest SDK sync body accepted (after decompression).
    pub sdk_max_body_bytes: usize,
    /// Bytes of SDK batches one user may have waiting to be processed; more → 503.
    pub sdk_max_pending_bytes: i64,
    /// What starts processing an upload.
    pub completion_mode: CompletionMode,
    /// Part size handed to multipart uploads.
    pub part_size: u64,
    /// Shared secret of the bucket-event endpoint; `None`: off.
    pub bucket_events_secret: Option<String>,
    pub direct_upload_max_bytes: usize,
    /// Direct uploads taken at once (each is held in memory).
    pub direct_upload_concurrency: usize,
    /// `/sync/stream` subscribers at once (they share one Redis subscription).
    pub sync_stream_max_subscribers: usize,
    /// Whether webhook events are written (for imports the API queues itself), and outgoing
    /// webhooks are on.
    pub outbox: bool,
    /// Which webhook URLs are accepted.
    pub webhook_targets: webhook_url::TargetRules,
    /// Failed logins allowed per account and per address within a window.
    pub login_limits: security::throttle::FailureLimits,
    /// How long an invitation code can be redeemed.
    pub invitation_code_lifetime: chrono::Duration,
    /// Wrong invitation codes allowed per code prefix and per address within a window.
    pub redeem_limits: security::throttle::FailureLimits,
    /// Threads that hash passwords.
    pub password_hash_threads: usize,
    /// Take the client's address from `X-Forwarded-For` (behind a trusted reverse proxy).
    pub trust_forwarded_for: bool,
    /// Where this service is reached from outside (vendors send users back under it).
    pub public_url: String,
    /// The deployment's name as end users see it (connect pages).
    pub deployment_name: String,
    /// Host names `/mcp` answers to besides loopback and `public_url`'s host.
    pub mcp_allowed_hosts: Vec<String>,
    /// How long an export of a user's record is kept after it is asked for.
    pub export_retention: chrono::Duration,
    /// Where OAuth may send users at the end, besides under `public_url`.
    pub oauth_redirect_allowlist: Vec<String>,
    /// The cloud vendors this deployment has credentials for.
    pub vendors: vendors::VendorConfig,
    /// Whether requests are put on the audit trail (`AUDIT_TRAIL`).
    pub audit_trail: bool,
    /// How long an invitation to join the team can be accepted.
    pub team_invitation_lifetime: chrono::Duration,
    /// Sends invitations by mail (`SMTP_URL`); `None`: the link is only shown.
    pub mailer: Option<mail::Mailer>,
}

pub use ingest::uploads::CompletionMode;

/// What every handler can reach: cheap, cloneable handles.
#[derive(Clone)]
pub struct AppState {
    pub(crate) db: schema::Db,
    /// Where the read routes' queries go: a read replica within the allowed lag, or `db`.
    pub(crate) reads: schema::Reads,
    /// The short-lived entries in Redis: OAuth flows, replay marks, counters.
    pub(crate) guards: queue::Guards,
    pub(crate) queue: ingest::jobs::JobQueue,
    /// Object storage for exports; `None` when not configured.
    pub(crate) storage: Option<ingest::object_store::Storage>,
    pub(crate) tokens: Arc<TokenKeys>,
    /// Seal and open the secrets stored in the database.
    pub(crate) keys: Arc<schema::sealed::MasterKeys>,
    /// Password hashes run here, never on the blocking pool.
    pub(crate) hashes: Arc<HashPool>,
    pub(crate) logins: Arc<FailureThrottle>,
    pub(crate) redeems: Arc<FailureThrottle>,
    /// Connect-link tokens that match no link, per client address.
    pub(crate) connect_misses: Arc<FailureThrottle>,
    /// Places for direct uploads in progress.
    pub(crate) direct_uploads: Arc<tokio::sync::Semaphore>,
    /// Places for open `/sync/stream` subscriptions.
    pub(crate) sync_streams: Arc<tokio::sync::Semaphore>,
    /// KiB of vendor notification bodies being read at once, per vendor.
    pub(crate) notification_budgets: Arc<routes::vendor_webhooks::Budgets>,
    /// The one Redis subscription those streams share.
    pub(crate) sync_hub: Arc<sync_hub::SyncHub>,
    /// Talks to vendors' token endpoints (no redirects followed).
    pub(crate) vendor_http: reqwest::Client,
    /// Puts requests on the audit trail.
    pub(crate) trail: audit::Trail,
    pub(crate) config: Arc<ApiConfig>,
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Db(#[from] schema::Error),
    #[error("hashing the admin password: {0}")]
    Password(argon2::password_hash::Error),
    #[error("serving HTTP: {0}")]
    Io(#[from] std::io::Error),
    #[error("building the HTTP client for vendors: {0}")]
    Http(#[from] reqwest::Error),
    #[error("starting the password-hash threads: {0}")]
    HashPool(#[from] rayon::ThreadPoolBuildError),
}

/// Resolves the signing key and creates the first developer when there is none.
pub async fn build_state(
    db: schema::Db,
    reads: schema::Reads,
    guards: queue::Guards,
    queue: ingest::jobs::JobQueue,
    storage: Option<ingest::object_store::Storage>,
    keys: Arc<schema::sealed::MasterKeys>,
    config: ApiConfig,
) -> Result<AppState, StartError> {
    let secret = match &config.secret_key {
        Some(key) => {
            if key.len() < 32 {
                tracing::warn!("SECRET_KEY is shorter than 32 characters; use a long random value");
            }
            key.clone()
        }
        None => {
            schema::settings::secret(&db, &keys, "jwt_secret", || security::secrets::random_hex(32))
                .await?
        }
    };
    ensure_admin(&db, &config).await?;
    let tokens = Arc::new(TokenKeys::new(secret.as_bytes(), config.access_token_minutes * 60));
    routes::metrics::start();
    let hashes = Arc::new(HashPool::new(config.password_hash_threads, Duration::from_secs(2))?);
    let logins = Arc::new(FailureThrottle::new(
        guards.clone(),
        queue::Counted::Login,
        config.login_limits.clone(),
        secret.as_bytes(),
    ));
    let redeems = Arc::new(FailureThrottle::new(
        guards.clone(),
        queue::Counted::InvitationCode,
        config.redeem_limits.clone(),
        secret.as_bytes(),
    ));
    // Counted per address only: a token is 192 random bits, so no one guesses one; this bounds
    // what a caller trying tokens costs us. Same limits as wrong invitation codes.
    let misses =
        security::throttle::FailureLimits { per_account: u32::MAX, ..config.redeem_limits.clone() };
    let connect_misses = Arc::new(FailureThrottle::new(
        guards.clone(),
        queue::Counted::ConnectLink,
        misses,
        secret.as_bytes(),
    ));
    let direct_uploads = Arc::new(tokio::sync::Semaphore::new(config.direct_upload_concurrency));
    let sync_streams = Arc::new(tokio::sync::Semaphore::new(config.sync_stream_max_subscribers));
    let sync_hub = Arc::new(sync_hub::SyncHub::start(queue.sync_channels().clone()));
    if !sync_hub.wait_connected(Duration::from_secs(3)).await {
        tracing::warn!(
            "sync status hub: no Redis subscription yet; /sync/stream answers 503 until then"
        );
    }
    let trail = audit::Trail::start(db.clone(), config.audit_trail);
    Ok(AppState {
        db,
        reads,
        guards,
        queue,
        storage,
        tokens,
        keys,
        hashes,
        logins,
        redeems,
        connect_misses,
        direct_uploads,
        sync_streams,
        notification_budgets: Arc::new(routes::vendor_webhooks::Budgets::new()),
        sync_hub,
        vendor_http: vendors::oauth::http_client()?,
        trail,
        config: Arc::new(config),
    })
}

async fn ensure_admin(db: &schema::Db, config: &ApiConfig) -> Result<(), StartError> {
    if schema::developers::count(db).await? > 0 {
        return Ok(());
    }
    let generated = config.admin_password.is_none();
    let password =
        config.admin_password.clone().unwrap_or_else(|| security::secrets::random_hex(12));
    let hash = tokio::task::spawn_blocking(move || {
        security::passwords::hash(&password).map(|h| (h, password))
    })
    .await
    .map_err(|e| StartError::Io(std::io::Error::other(e)))?
    .map_err(StartError::Password)?;
    match schema::developers::insert(db, &config.admin_email, &hash.0).await {
        Ok(dev) if generated => tracing::warn!(
            email = %dev.email, password = %hash.1,
            "created the first developer with a generated password (set ADMIN_PASSWORD to choose it); \
             log in at POST /api/v1/auth/login and change it"
        ),
        Ok(dev) => tracing::info!(email = %dev.email, "created the first developer"),
        // Another process created it at the same moment.
        Err(schema::Error::Conflict(_)) => {}
        Err(e) => return Err(e.into()),
    }
    Ok(())
}

/// The whole HTTP application: the API, its documents and the portal, and the MCP endpoint
/// that reads through them.
pub fn router(state: AppState) -> Router {
    let rest = rest_router(state.clone());
    // A handler that panics (a bug) answers 500 in the contract's shape; the connection, the
    // MCP tool that called it and the process live on.
    let mcp = mcp::service(
        rest.clone().layer(CatchPanicLayer::custom(error::panic_response)),
        &state.config,
    );
    rest.nest_service("/mcp", mcp)
        .layer(CatchPanicLayer::custom(error::panic_response))
        // Spans name the path, not the query: vendors' URL tokens and OAuth states travel
        // there and stay out of the logs.
        .layer(TraceLayer::new_for_http().make_span_with(|request: &axum::http::Request<_>| {
            let path = logged_path(request.uri().path());
            tracing::debug_span!("request", method = %request.method(), path = %path)
        }))
}

/// The API's routes, its documents and the portal, with their state.
fn rest_router(state: AppState) -> Router {
    let (api, mut doc) = openapi::router(state.config.direct_upload_max_bytes).split_for_parts();
    operations::apply(&mut doc);
    openapi::mark_public(&mut doc);
    // `route_layer`: only matched routes are timed and recorded, after routing has named their
    // pattern.
    api.route_layer(axum::middleware::from_fn_with_state(state.clone(), audit::record))
        .route_layer(axum::middleware::from_fn(routes::metrics::track))
        .merge(openapi::docs(doc))
        .merge(routes::static_files::router())
        .merge(routes::portal::router())
        .layer(axum::Extension(state.reads.clone()))
        .with_state(state)
}

/// A path as logged: a connect link's token, a secret carried in the path, replaced by
/// `{token}`.
fn logged_path(path: &str) -> std::borrow::Cow<'_, str> {
    match path.split_once("/connect/") {
        Some((head, tail)) => {
            let rest = tail.find('/').map_or("", |i| &tail[i..]);
            format!("{head}/connect/{{token}}{rest}").into()
        }
        None => path.into(),
    }
}

/// Serves the API on `listener` until `shutdown` is cancelled, then finishes in-flight requests.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: CancellationToken,
) -> Result<(), StartError> {
    let addr = listener.local_addr()?;
    tracing::info!(%addr, "API listening");
    // Connection info: the login throttle counts failures per client address.
    let trail = state.trail.clone();
    read_routing::watch(state.reads.clone(), shutdown.clone());
    let app = router(state).into_make_service_with_connect_info::<std::net::SocketAddr>();
    axum::serve(listener, app).with_graceful_shutdown(shutdown.cancelled_owned()).await?;
    // What the last requests put on record is written before the process ends.
    if !trail.flush(Duration::from_secs(5)).await {
        tracing::error!("the audit trail's last records could not be written");
    }
    Ok(())
}

/// Serves only `/metrics` (for a worker-only process).
pub async fn serve_metrics(listener: TcpListener, db: schema::Db, shutdown: CancellationToken) {
    routes::metrics::start();
    let app = Router::new().route(
        "/metrics",
        axum::routing::get(move || {
            let db = db.clone();
            async move { routes::metrics::render(&db).await }
        }),
    );
    if let Err(e) =
        axum::serve(listener, app).with_graceful_shutdown(shutdown.cancelled_owned()).await
    {
        tracing::warn!(error = %e, "the metrics listener stopped");
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn connect_tokens_stay_out_of_the_logged_path() {
        let logged = super::logged_path;
        assert_eq!(logged("/connect/abc123"), "/connect/{token}");
        assert_eq!(logged("/api/v1/connect/abc123/oura"), "/api/v1/connect/{token}/oura");
        assert_eq!(logged("/api/v1/users/u/connect-links"), "/api/v1/users/u/connect-links");
        assert_eq!(logged("/api/v1/users"), "/api/v1/users");
    }
}
