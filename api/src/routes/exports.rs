//! `/api/v1/users/{user_id}/exports`: a user's whole record in one archive, for portability and
//! right-of-access requests (GDPR articles 15 and 20). `POST` starts the export (202; its
//! progress is the sync run `task_id`); `GET …/{export_id}` answers, once it is done, a
//! presigned download URL valid for an hour (never past the export's expiry).

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use schema::exports::{Export, ExportStatus, Queued};
use schema::ids::ExportId;
use schema::ids::UserId;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::AppState;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::extract::{ApiAuth, path_user, path_uuid};
use crate::routes::existing_user;

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(create_export, list_exports)).routes(routes!(get_export))
}

/// How long a download URL works.
const DOWNLOAD_FOR: std::time::Duration = std::time::Duration::from_secs(3600);

/// What an archive holds.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ExportCountsOut {
    pub samples: i64,
    pub workouts: i64,
    pub sleep_sessions: i64,
    pub menstrual_cycles: i64,
    /// Lines of `fhir.ndjson`: the Patient and every Observation.
    pub fhir_resources: i64,
}

/// An export of a user's record.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ExportOut {
    pub id: Uuid,
    #[schema(value_type = uuid::Uuid)]
    pub user_id: UserId,
    /// `queued`, `processing`, `done` or `failed`.
    #[schema(value_type = String)]
    pub status: ExportStatus,
    /// The sync run that reports its progress (`GET /users/{user_id}/sync/runs`, the
    /// `/sync/stream` events); the same id.
    pub task_id: Uuid,
    pub created_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    /// When the archive is deleted (`EXPORT_RETENTION_DAYS` after it was asked for).
    pub expires_at: DateTime<Utc>,
    /// The archive's size in bytes, once done.
    pub bytes: Option<i64>,
    pub counts: Option<ExportCountsOut>,
    pub error: Option<String>,
    /// Once done (`GET …/exports/{export_id}` only): the zip, presigned, valid until
    /// `download_expires_at`; ask again for a fresh one.
    pub download_url: Option<String>,
    pub download_expires_at: Option<DateTime<Utc>>,
}

fn out(e: Export) -> ExportOut {
    ExportOut {
        id: e.id.0,
        user_id: e.user_id,
        status: e.status,
        task_id: e.id.0,
        created_at: e.created_at,
        finished_at: e.finished_at,
        expires_at: e.expires_at,
        bytes: e.bytes,
        counts: e.counts.map(|c| ExportCountsOut {
            samples: c.samples,
            workouts: c.workouts,
            sleep_sessions: c.sleep_sessions,
            menstrual_cycles: c.menstrual_cycles,
            fhir_resources: c.fhir_resources,
        }),
        error: e.error,
        download_url: None,
        download_expires_at: None,
    }
}

/// Starts an export of everything held about the user: samples, workouts with their routes,
/// sleep, menstrual cycles, connections and sources in the API's own shapes (JSON lines), and
/// the same as FHIR R4 resources (`fhir.ndjson`), in one zip. At most two exports of a user are
/// made at once (409 past that).
#[utoipa::path(post, path = "/users/{user_id}/exports", tag = "users",
    params(("user_id" = String, Path, description = "The user's UUID")),
    responses(
        (status = 202, body = ExportOut), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "Two exports of this user are being made already"),
        (status = 503, body = ErrorBody, description = "Object storage is not configured"),
    ),
    security(("api_key" = []), ("bearer" = [])))]
async fn create_export(
    _auth: ApiAuth,
    State(state): State<AppState>,
    Path(user_id): Path<String>,
) -> ApiResult<(StatusCode, Json<ExportOut>)> {
    let id = path_user(&user_id)?;
    match crate::exports::ask(&state, id).await? {
        Queued::Export(e) => Ok((StatusCode::ACCEPTED, Json(out(e)))),
        Queued::NoUser => Err(ApiError::user_not_found(id)),
        Queued::Busy => Err(ApiError::client(
            StatusCode::CONFLICT,
            "Two exports of this user are being made already; wait for one to finish",
        )),
    }
}

/// A user's exports, newest first (the last 50).
#[utoipa::path(get, path = "/users/{user_id}/exports", tag = "users",
    params(("user_id" = String, Path, description = "The user's UUID")),
    responses(
        (status = 200, body = Vec<ExportOut>), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
    ),
    security(("api_key" = []), ("bearer" = [])))]
async fn list_exports(
    _auth: ApiAuth,
    State(state): State<AppState>,
    Path(user_id): Path<String>,
) -> ApiResult<Json<Vec<ExportOut>>> {
    let id = existing_user(&state, &user_id).await?;
    let list = schema::exports::list(&state.db, id, 50).await?;
    Ok(Json(list.into_iter().map(out).collect()))
}

/// One export; once done, with a download URL.
#[utoipa::path(get, path = "/users/{user_id}/exports/{export_id}", tag = "users",
    params(("user_id" = String, Path, description = "The user's UUID"),
        ("export_id" = String, Path, description = "The export's id")),
    responses(
        (status = 200, body = ExportOut), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
    ),
    security(("api_key" = []), ("bearer" = [])))]
async fn get_export(
    _auth: ApiAuth,
    State(state): State<AppState>,
    Path((user_id, export_id)): Path<(String, String)>,
) -> ApiResult<Json<ExportOut>> {
    let user = path_user(&user_id)?;
    let id = ExportId(path_uuid(&export_id)?);
    let export = schema::exports::get(&state.db, user, id)
        .await?
        .ok_or_else(|| ApiError::not_found("Export not found"))?;
    let link = crate::exports::download(&state, &export, DOWNLOAD_FOR).await?;
    let mut answer = out(export);
    if let Some((url, until)) = link {
        answer.download_url = Some(url);
        answer.download_expires_at = Some(until);
    }
    Ok(Json(answer))
}
