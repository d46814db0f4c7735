//! `/api/v1/oauth/providers`: the providers wearhouse takes data from. Public.

use axum::Json;
use schema::catalogue::providers::{PROVIDERS, Provider};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::{ApiResult, ValidationBody};
use crate::extract::Query;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_providers))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ProviderOut {
    /// Lowercase identifier.
    pub provider: String,
    pub name: String,
    pub has_cloud_api: bool,
    pub is_enabled: bool,
    /// Relative URL.
    pub icon_url: String,
    /// `pull` or `webhook`; null for SDK-only providers.
    pub live_sync_mode: Option<String>,
    pub live_sync_configurable: bool,
    /// `daily`, `hourly` or `raw`; null means the provider's default.
    pub data_granularity: Option<String>,
}

impl From<&Provider> for ProviderOut {
    fn from(p: &Provider) -> ProviderOut {
        ProviderOut {
            provider: p.slug.to_string(),
            name: p.name.to_string(),
            has_cloud_api: p.has_cloud_api,
            // Every listed provider is enabled until admin settings for providers exist.
            is_enabled: true,
            icon_url: p.icon_url(),
            live_sync_mode: p.live_sync_mode.map(|m| m.as_str().to_string()),
            live_sync_configurable: p.live_sync_configurable,
            data_granularity: None,
        }
    }
}

#[utoipa::path(get, path = "/oauth/providers", tag = "providers",
    params(
        ("enabled_only" = Option<bool>, Query, description = "Only enabled providers (default false)"),
        ("cloud_only" = Option<bool>, Query, description = "Only cloud OAuth providers (default false)"),
    ),
    responses((status = 200, body = Vec<ProviderOut>), (status = 422, body = ValidationBody)))]
async fn list_providers(Query(mut params): Query) -> ApiResult<Json<Vec<ProviderOut>>> {
    let enabled_only = params.bool("enabled_only", false);
    let cloud_only = params.bool("cloud_only", false);
    params.finish()?;
    let list = PROVIDERS
        .iter()
        .map(ProviderOut::from)
        .filter(|p| (!enabled_only || p.is_enabled) && (!cloud_only || p.has_cloud_api))
        .collect();
    Ok(Json(list))
}
