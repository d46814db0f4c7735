//! The OpenAPI 3.1 document, assembled from the handlers' annotations, and the docs page.

use axum::Router;
use utoipa::openapi::OpenApi as OpenApiDoc;
use utoipa::openapi::security::{
    ApiKey, ApiKeyValue, Flow, Http, HttpAuthScheme, OAuth2, Password, Scopes, SecurityScheme,
};
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::OpenApiRouter;
use utoipa_swagger_ui::SwaggerUi;

use crate::AppState;
use crate::routes;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "wearhouse",
        version = "0.2.0",
        description = "Health data of an application's end users: time series, workouts, sleep, \
                       menstrual cycles and activity, from mobile SDKs, Apple Health exports and \
                       cloud wearables. Assistants read the same data through MCP at `/mcp` \
                       (Streamable HTTP, the same API keys; see the README)."
    ),
    modifiers(&SecuritySchemes),
    tags(
        (name = "auth", description = "Developer login"),
        (name = "api-keys", description = "API keys (developer token required) and their scopes"),
        (name = "team", description = "Developers, their roles, and invitations to join"),
        (name = "audit", description = "Who read or changed whose data"),
        (name = "sdk-tokens", description = "User-scoped tokens for the mobile SDK"),
        (name = "users", description = "End users and their connections and data sources"),
        (name = "providers", description = "Where data comes from"),
        (name = "connect-links", description = "Pages end users open to connect their cloud wearables, without a login"),
        (name = "webhooks", description = "Outgoing webhooks"),
        (name = "sdk", description = "Mobile SDK sync"),
        (name = "sync", description = "Sync runs and their live status"),
        (name = "import", description = "Apple Health export uploads"),
        (name = "health", description = "Service health and metrics"),
    )
)]
struct ApiDoc;

struct SecuritySchemes;

impl Modify for SecuritySchemes {
    fn modify(&self, openapi: &mut OpenApiDoc) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "api_key",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::new("X-Service-API-Key"))),
        );
        // The object store's event notifications carry the shared `BUCKET_EVENTS_SECRET`.
        components.add_security_scheme(
            "storage_events",
            SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)),
        );
        components.add_security_scheme(
            "bearer",
            SecurityScheme::OAuth2(OAuth2::new([Flow::Password(Password::new(
                "/api/v1/auth/login",
                Scopes::new(),
            ))])),
        );
    }
}

/// Every documented route: `/api/v1/...` plus `/health`.
pub(crate) fn router(direct_upload_max_bytes: usize) -> OpenApiRouter<AppState> {
    let v1 = OpenApiRouter::new()
        .merge(routes::auth::router())
        .merge(routes::overview::router())
        .merge(routes::api_keys::router())
        .merge(routes::team::router())
        .merge(routes::audit::router())
        .merge(routes::sdk_tokens::router())
        .merge(routes::invitation_codes::router())
        .merge(routes::connect_links::router())
        .merge(routes::connect_page::router())
        .merge(routes::users::router())
        .merge(routes::connections::router())
        .merge(routes::data_sources::router())
        .merge(routes::coverage::router())
        .merge(routes::providers::router())
        .merge(routes::oauth::router())
        .merge(routes::vendor_sync::router())
        .merge(routes::vendor_webhooks::router())
        .merge(routes::event_types::router())
        .merge(routes::sdk_sync::router())
        .merge(routes::sync_status::router())
        .merge(routes::timeseries::router())
        .merge(routes::events::router())
        .merge(routes::exports::router())
        .merge(routes::summaries::router())
        .merge(routes::health_scores::router())
        .merge(routes::webhook_endpoints::router())
        .merge(routes::webhook_history::router())
        .merge(routes::priorities::router())
        .merge(routes::xml_import::router(direct_upload_max_bytes))
        .merge(routes::bucket_events::router());
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .nest("/api/v1", v1)
        .merge(routes::health::router())
        .merge(routes::metrics::router())
}

/// An operation that names no security scheme is public (login, token refresh, OAuth callbacks,
/// vendor notifications verified by their signatures, catalogues, health): it says so with
/// `security: []`, so generated clients send no credentials there and no reader has to guess.
pub(crate) fn mark_public(doc: &mut OpenApiDoc) {
    for (_, _, op) in crate::operations::operations(doc) {
        op.security.get_or_insert_with(Vec::new);
    }
}

/// `/openapi.json` and the interactive docs at `/docs` (Swagger UI, served from the binary),
/// under a content security policy: the page runs only its own scripts (no inline ones) and
/// talks only to this service, so nothing injected into a document it shows can run or send
/// anything elsewhere.
pub(crate) fn docs(doc: OpenApiDoc) -> Router<AppState> {
    Router::new()
        .merge(SwaggerUi::new("/docs").url("/openapi.json", doc))
        .layer(axum::middleware::map_response(docs_headers))
}

async fn docs_headers(mut response: axum::response::Response) -> axum::response::Response {
    use axum::http::{HeaderValue, header};
    let h = response.headers_mut();
    // Swagger UI sets styles from its scripts, hence inline styles; scripts are files only.
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; \
             script-src 'self'; connect-src 'self'; object-src 'none'; frame-ancestors 'none'; \
             base-uri 'none'; form-action 'self'",
        ),
    );
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}
