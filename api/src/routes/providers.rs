//! `/api/v1/oauth/providers`: the providers wearhouse takes data from (public), and their
//! settings (developers): enabled or not, live sync mode where it can be switched, the
//! granularity of 24/7 data.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::{Path, State};
use schema::catalogue::providers::{DataGranularity, LiveSyncMode, PROVIDERS, Provider};
use schema::provider_settings::{ProviderSetting, SettingChange};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::{ApiError, ApiResult, ErrorBody, FieldError, ValidationBody};
use crate::extract::{ApiJson, DeveloperAuth, Query, double_option};
use crate::validate::body_loc;

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_providers, update_all))
        .routes(routes!(update_provider))
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ProviderOut {
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

impl ProviderOut {
    /// A provider as its setting (if any) makes it: the one place defaults apply.
    fn new(p: &Provider, setting: Option<&ProviderSetting>) -> ProviderOut {
        let mode = setting.and_then(|s| s.live_sync_mode).or(p.live_sync_mode);
        ProviderOut {
            provider: p.slug.to_string(),
            name: p.name.to_string(),
            has_cloud_api: p.has_cloud_api,
            is_enabled: schema::provider_settings::enabled(setting),
            icon_url: p.icon_url(),
            live_sync_mode: p.live_sync_mode.and(mode).map(|m| m.as_str().to_string()),
            live_sync_configurable: p.live_sync_configurable,
            data_granularity: setting
                .and_then(|s| s.data_granularity)
                .map(|g| g.as_str().to_string()),
        }
    }
}

/// The phone providers, then the cloud vendors this deployment has credentials for: a vendor
/// without them could not be connected, so it is not offered.
fn listed(state: &AppState) -> impl Iterator<Item = &'static Provider> + '_ {
    let cloud = vendors::VENDORS
        .iter()
        .map(|v| v.provider())
        .filter(|p| state.config.vendors.is_configured(p.slug));
    PROVIDERS.iter().chain(cloud)
}

/// Every listed provider, with its setting.
async fn all_providers(state: &AppState) -> ApiResult<Vec<ProviderOut>> {
    let settings = schema::provider_settings::all(&state.db).await?;
    Ok(listed(state)
        .map(|p| ProviderOut::new(p, schema::provider_settings::of(&settings, p.slug)))
        .collect())
}

fn known(state: &AppState, slug: &str) -> ApiResult<&'static Provider> {
    listed(state)
        .find(|p| p.slug == slug)
        .ok_or_else(|| ApiError::bad_request(format!("Unknown provider: {slug}")))
}

#[utoipa::path(get, path = "/oauth/providers", tag = "providers",
    params(
        ("enabled_only" = Option<bool>, Query, description = "Only enabled providers (default false)"),
        ("cloud_only" = Option<bool>, Query, description = "Only cloud OAuth providers (default false)"),
    ),
    responses((status = 200, body = Vec<ProviderOut>), (status = 422, body = ValidationBody)))]
async fn list_providers(
    State(state): State<AppState>,
    Query(mut params): Query,
) -> ApiResult<Json<Vec<ProviderOut>>> {
    let enabled_only = params.bool("enabled_only", false);
    let cloud_only = params.bool("cloud_only", false);
    params.finish()?;
    let list = all_providers(&state)
        .await?
        .into_iter()
        .filter(|p| (!enabled_only || p.is_enabled) && (!cloud_only || p.has_cloud_api))
        .collect();
    Ok(Json(list))
}

#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum LiveSyncModeIn {
    Pull,
    Webhook,
}

#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum GranularityIn {
    Daily,
    Hourly,
    Raw,
}

/// Fields left out stay as they are.
#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct SettingIn {
    pub is_enabled: Option<bool>,
    /// `pull` or `webhook`, for providers whose mode can be switched; not null.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<LiveSyncModeIn>)]
    pub live_sync_mode: Option<Option<LiveSyncModeIn>>,
    pub data_granularity: Option<GranularityIn>,
}

/// Changes one provider's setting (developers only).
#[utoipa::path(put, path = "/oauth/providers/{provider}", tag = "providers",
    params(("provider" = String, Path, description = "Lowercase provider identifier")),
    request_body = SettingIn,
    responses((status = 200, body = ProviderOut), (status = 400, body = ErrorBody),
              (status = 401, body = ErrorBody), (status = 422, body = ValidationBody)),
    security(("bearer" = [])))]
async fn update_provider(
    DeveloperAuth(dev): DeveloperAuth,
    State(state): State<AppState>,
    Path(slug): Path<String>,
    ApiJson(body): ApiJson<SettingIn>,
) -> ApiResult<Json<ProviderOut>> {
    let live_sync_mode = match body.live_sync_mode {
        Some(None) => {
            let msg = "Value error, live_sync_mode cannot be set to null; omit the field to \
                       leave it unchanged";
            let err = FieldError::new(
                body_loc("live_sync_mode"),
                "value_error",
                msg,
                serde_json::Value::Null,
            );
            return Err(ApiError::validation(err));
        }
        Some(Some(LiveSyncModeIn::Pull)) => Some(LiveSyncMode::Pull),
        Some(Some(LiveSyncModeIn::Webhook)) => Some(LiveSyncMode::Webhook),
        None => None,
    };
    let provider = known(&state, &slug)?;
    if live_sync_mode.is_some() && !provider.live_sync_configurable {
        return Err(ApiError::bad_request(format!(
            "Provider '{slug}' does not support live sync mode configuration"
        )));
    }
    let data_granularity = body.data_granularity.map(|g| match g {
        GranularityIn::Daily => DataGranularity::Daily,
        GranularityIn::Hourly => DataGranularity::Hourly,
        GranularityIn::Raw => DataGranularity::Raw,
    });
    let change = SettingChange { is_enabled: body.is_enabled, live_sync_mode, data_granularity };
    let setting = schema::provider_settings::update(&state.db, provider.slug, change).await?;
    tracing::info!(provider = slug, developer = %dev.id, "changed a provider setting");
    Ok(Json(ProviderOut::new(provider, Some(&setting))))
}

#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct BulkIn {
    /// Provider identifier → enabled.
    pub providers: BTreeMap<String, bool>,
}

/// Enables and disables providers at once (developers only); answers every provider.
#[utoipa::path(put, path = "/oauth/providers", tag = "providers", request_body = BulkIn,
    responses((status = 200, body = Vec<ProviderOut>), (status = 400, body = ErrorBody),
              (status = 401, body = ErrorBody), (status = 422, body = ValidationBody)),
    security(("bearer" = [])))]
async fn update_all(
    DeveloperAuth(dev): DeveloperAuth,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<BulkIn>,
) -> ApiResult<Json<Vec<ProviderOut>>> {
    // All known, or nothing changes.
    for slug in body.providers.keys() {
        known(&state, slug)?;
    }
    let changes: Vec<(String, bool)> = body.providers.into_iter().collect();
    schema::provider_settings::set_enabled(&state.db, &changes).await?;
    tracing::info!(developer = %dev.id, providers = changes.len(), "changed provider settings");
    Ok(Json(all_providers(&state).await?))
}
