//! `/api/v1/users/{user_id}/data-sources`: the devices and apps a user's data came from.

use axum::Json;
use axum::extract::{Path, State};
use schema::catalogue::providers;
use schema::data_sources::DataSource;
use schema::ids::UserId;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::AppState;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::ApiAuth;
use crate::routes::existing_user;

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_data_sources))
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct DataSourceOut {
    pub id: Uuid,
    #[schema(value_type = uuid::Uuid)]
    pub user_id: UserId,
    pub user_connection_id: Option<Uuid>,
    pub provider: String,
    pub device_model: Option<String>,
    pub software_version: Option<String>,
    pub source: Option<String>,
    pub device_type: Option<String>,
    pub original_source_name: Option<String>,
    /// `<Provider name> - <device model or source name>`.
    pub display_name: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct DataSourceList {
    pub items: Vec<DataSourceOut>,
    pub total: i64,
}

pub(crate) fn display_name(d: &DataSource) -> String {
    let provider = providers::by_slug(&d.provider).map(|p| p.name).unwrap_or(d.provider.as_str());
    match d.device_model.as_deref().or(d.original_source_name.as_deref()).or(d.source.as_deref()) {
        Some(what) => format!("{provider} - {what}"),
        None => provider.to_string(),
    }
}

impl From<DataSource> for DataSourceOut {
    fn from(d: DataSource) -> DataSourceOut {
        DataSourceOut {
            display_name: display_name(&d),
            id: d.id,
            user_id: d.user_id,
            user_connection_id: d.user_connection_id,
            provider: d.provider,
            device_model: d.device_model,
            software_version: d.software_version,
            source: d.source,
            device_type: d.device_type,
            original_source_name: d.original_source_name,
        }
    }
}

#[utoipa::path(get, path = "/users/{user_id}/data-sources", tag = "users",
    params(("user_id" = String, Path, description = "The user's UUID")),
    responses(
        (status = 200, body = DataSourceList), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
    ),
    security(("api_key" = []), ("bearer" = [])))]
async fn list_data_sources(
    _auth: ApiAuth,
    State(state): State<AppState>,
    Path(user_id): Path<String>,
) -> ApiResult<Json<DataSourceList>> {
    let id = existing_user(&state, &user_id).await?;
    let items: Vec<DataSourceOut> = schema::data_sources::list_for_user(&state.db, id)
        .await?
        .into_iter()
        .map(Into::into)
        .collect();
    Ok(Json(DataSourceList { total: items.len() as i64, items }))
}
