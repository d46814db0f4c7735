//! `/api/v1/users/{user_id}/import/{platform}/xml/...`: uploading Apple Health exports.
//!
//! - `…/storage`: a presigned POST form (the file goes straight to the bucket);
//! - `…/storage/multipart/{create,sign,complete,abort}`: multipart uploads through presigned
//!   PUT URLs, for files up to 5 GiB;
//! - `…/direct`: the file sent to the API itself (small files).
//!
//! Processing is dispatched by the configured completion mode only: `client` (the complete
//! call) or `bucket_event` (the bucket's notification, `/api/v1/internal/storage/events`), so a
//! file is never processed twice. Object keys are `<user_id>/raw/<uuid>-<file name>`.

use std::time::Duration;

use axum::Json;
use axum::extract::{DefaultBodyLimit, Multipart, Path, State};
use axum::http::StatusCode;
use ingest::object_store::{Storage, StorageError};
use ingest::uploads::{Completed, Part, UploadError, Uploads};
use schema::ids::UserId;
use schema::imports::ImportOrigin;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::BTreeMap;
use utoipa::ToSchema;
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouterExt};
use utoipa_axum::routes;
use uuid::Uuid;

use crate::error::{ApiError, ApiResult, ErrorBody, FieldError, ValidationBody};
use crate::extract::{ApiJson, ImportAuth};
use crate::routes::existing_user;
use crate::validate::{Checks, body_loc};
use crate::{AppState, CompletionMode};

pub(crate) fn router(direct_upload_max_bytes: usize) -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(presign))
        .routes(routes!(create))
        .routes(routes!(sign))
        .routes(routes!(complete))
        .routes(routes!(abort))
        // Room for the multipart framing around the file.
        .routes(routes!(direct).layer(DefaultBodyLimit::max(direct_upload_max_bytes + 64 * 1024)))
}

const KIB: i64 = 1024;
const MIB: i64 = 1024 * KIB;
const GIB: i64 = 1024 * MIB;
/// S3 allows at most 10,000 parts.
const MAX_PARTS: i64 = 10_000;
/// Why the presigned form is refused in completion mode `client`.
pub const FORM_NEEDS_BUCKET_EVENTS: &str = "Presigned form uploads are processed only in \
     upload completion mode bucket_event; in mode client use the multipart flow \
     (multipart/create, sign, complete)";

/// Lifetime of presigned part URLs.
const PART_URL_LIFETIME: Duration = Duration::from_secs(3600);

fn ceil_div(a: i64, b: i64) -> i64 {
    if b <= 0 { a } else { (a + b - 1) / b }
}

fn storage(state: &AppState) -> ApiResult<&Storage> {
    state.storage.as_ref().ok_or_else(|| {
        ApiError::client(StatusCode::SERVICE_UNAVAILABLE, "Object storage is not configured")
    })
}

fn storage_failure(e: StorageError) -> ApiError {
    tracing::warn!(error = %e, "object storage failed");
    ApiError::client(StatusCode::BAD_GATEWAY, "Object storage failed; retry later")
}

/// The upload workflows, where object storage is configured.
pub(crate) fn uploads(state: &AppState) -> ApiResult<Uploads<'_>> {
    Ok(Uploads {
        db: &state.db,
        queue: &state.queue,
        storage: storage(state)?,
        mode: state.config.completion_mode,
    })
}

/// An upload workflow's failure, as the API answers it.
pub(crate) fn upload_failure(e: UploadError) -> ApiError {
    match e {
        UploadError::PartsMismatch | UploadError::SizeMismatch { .. } => {
            ApiError::bad_request(e.to_string())
        }
        UploadError::QueueUnavailable => {
            ApiError::client(StatusCode::SERVICE_UNAVAILABLE, e.to_string())
        }
        UploadError::NotFound | UploadError::ObjectGone => ApiError::not_found(e.to_string()),
        UploadError::Storage(e) => storage_failure(e),
        UploadError::Db(e) => e.into(),
        UploadError::Vanished => ApiError::Other(e.to_string()),
    }
}

/// Checks the path: the platform is `phonehealth`, the store `storage`; then the user.
async fn target(
    state: &AppState,
    auth: &ImportAuth,
    user_id: &str,
    platform: &str,
    store: Option<&str>,
) -> ApiResult<UserId> {
    auth.0.ensure_user(user_id)?;
    if platform != "phonehealth" {
        crate::validate::provider(vec![json!("path"), json!("platform")], platform)?;
        let e = FieldError::new(
            vec![json!("path"), json!("platform")],
            "enum",
            "Input should be 'phonehealth'",
            json!(platform),
        )
        .with_ctx(json!({ "expected": "'phonehealth'" }));
        return Err(ApiError::validation(e));
    }
    if store.is_some_and(|s| s != "storage") {
        return Err(ApiError::not_found("Not Found"));
    }
    existing_user(state, user_id).await
}

/// `<user>/raw/<uuid>-<name>`, the name reduced to safe characters.
fn object_key(user: UserId, filename: &str) -> String {
    let clean: String = filename
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or("")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') { c } else { '_' })
        .take(100)
        .collect();
    let name =
        if clean.trim_matches(['.', '_']).is_empty() { "export.xml".to_string() } else { clean };
    format!("{}raw/{}-{name}", schema::users::object_prefix(user), Uuid::now_v7())
}

fn owns(user: UserId, key: &str) -> ApiResult<()> {
    if key.starts_with(&schema::users::object_prefix(user)) {
        Ok(())
    } else {
        Err(ApiError::forbidden("The object key does not belong to this user"))
    }
}

#[derive(Debug, Default, Deserialize, ToSchema)]
pub(crate) struct PresignIn {
    /// At most 200 characters.
    #[serde(default)]
    pub filename: Option<String>,
    /// 60 to 3600; default 300.
    #[serde(default)]
    pub expiration_seconds: Option<i64>,
    /// Bytes, 1 KiB to 5 GiB; default 52428800 (50 MiB).
    #[serde(default)]
    pub max_file_size: Option<i64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct PresignOut {
    pub upload_url: String,
    /// Send every field first, then the file as the field `file`.
    pub form_fields: BTreeMap<String, String>,
    pub file_key: String,
    pub expires_in: i64,
    pub max_file_size: i64,
    pub bucket: String,
}

/// A presigned POST form for uploading an export straight to the bucket. Processing starts on
/// the bucket's notification (completion mode `bucket_event`). In mode `client` nothing would
/// ever process the file (a form upload has no `complete`), so the form is not offered: 400,
/// use the multipart flow.
#[utoipa::path(post, path = "/users/{user_id}/import/{platform}/xml/{store}", tag = "import",
    params(("user_id" = String, Path), ("platform" = String, Path, description = "`phonehealth`"),
           ("store" = String, Path, description = "`storage`")),
    request_body = PresignIn,
    responses((status = 200, body = PresignOut), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 422, body = ValidationBody), (status = 503, body = ErrorBody)),
    security(("api_key" = []), ("bearer" = [])))]
async fn presign(
    auth: ImportAuth,
    State(state): State<AppState>,
    Path((user_id, platform, store)): Path<(String, String, String)>,
    ApiJson(body): ApiJson<PresignIn>,
) -> ApiResult<Json<PresignOut>> {
    let user = target(&state, &auth, &user_id, &platform, Some(&store)).await?;
    let expires = body.expiration_seconds.unwrap_or(300);
    let max = body.max_file_size.unwrap_or(50 * MIB);
    let mut checks = Checks::default();
    checks.max_len("filename", body.filename.as_deref(), 200);
    checks.range(body_loc("expiration_seconds"), expires, 60, 3600);
    checks.range(body_loc("max_file_size"), max, KIB, 5 * GIB);
    checks.finish()?;
    let storage = storage(&state)?;
    if state.config.completion_mode == CompletionMode::Client {
        return Err(ApiError::bad_request(FORM_NEEDS_BUCKET_EVENTS));
    }
    let key = object_key(user, body.filename.as_deref().unwrap_or(""));
    let post = storage.presigned_post(&key, max as u64, Duration::from_secs(expires as u64));
    Ok(Json(PresignOut {
        upload_url: post.url,
        form_fields: post.fields.into_iter().collect(),
        file_key: key,
        expires_in: expires,
        max_file_size: max,
        bucket: storage.bucket().to_string(),
    }))
}

#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct CreateIn {
    /// Bytes, 5 MiB to 5 GiB.
    pub file_size: i64,
    #[serde(default)]
    pub filename: Option<String>,
    #[serde(default)]
    pub content_type: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct CreateOut {
    pub upload_id: String,
    pub key: String,
    pub bucket: String,
    /// Send parts of this size (the last may be smaller).
    pub part_size: i64,
}

/// Opens a multipart upload.
#[utoipa::path(post, path = "/users/{user_id}/import/{platform}/xml/{store}/multipart/create", tag = "import",
    params(("user_id" = String, Path), ("platform" = String, Path), ("store" = String, Path)),
    request_body = CreateIn,
    responses((status = 201, body = CreateOut), (status = 401, body = ErrorBody), (status = 422, body = ValidationBody),
              (status = 502, body = ErrorBody), (status = 503, body = ErrorBody)),
    security(("api_key" = []), ("bearer" = [])))]
async fn create(
    auth: ImportAuth,
    State(state): State<AppState>,
    Path((user_id, platform, store)): Path<(String, String, String)>,
    ApiJson(body): ApiJson<CreateIn>,
) -> ApiResult<(StatusCode, Json<CreateOut>)> {
    let user = target(&state, &auth, &user_id, &platform, Some(&store)).await?;
    let mut checks = Checks::default();
    checks.range(body_loc("file_size"), body.file_size, 5 * MIB, 5 * GIB);
    checks.max_len("filename", body.filename.as_deref(), 200);
    checks.finish()?;
    let storage = storage(&state)?;
    // Parts of the configured size, grown if needed to stay within S3's 10,000 parts.
    let part_size =
        (state.config.part_size as i64).max(5 * MIB).max(ceil_div(body.file_size, MAX_PARTS));
    let key = object_key(user, body.filename.as_deref().unwrap_or(""));
    let upload_id = storage
        .create_multipart(&key, body.content_type.as_deref())
        .await
        .map_err(storage_failure)?;
    schema::uploads::insert(&state.db, user, &key, &upload_id, body.file_size, part_size).await?;
    Ok((
        StatusCode::CREATED,
        Json(CreateOut { upload_id, key, bucket: storage.bucket().to_string(), part_size }),
    ))
}

#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct SignIn {
    pub key: String,
    pub upload_id: String,
    pub part_numbers: Vec<i64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct PartUrl {
    pub part_number: i64,
    /// Presigned PUT URL; the answer's `ETag` header is the part's ETag.
    pub url: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct SignOut {
    pub urls: Vec<PartUrl>,
}

/// The upload a key and id name, which must be the caller's.
async fn own_upload(
    state: &AppState,
    user: UserId,
    key: &str,
    upload_id: &str,
) -> ApiResult<schema::uploads::Upload> {
    owns(user, key)?;
    match schema::uploads::find(&state.db, key, upload_id).await? {
        Some(u) if u.user_id == user => Ok(u),
        Some(_) => Err(ApiError::forbidden("The object key does not belong to this user")),
        None => Err(ApiError::not_found("Multipart upload not found")),
    }
}

/// Part numbers from 1 to the upload's part count, each once.
fn check_parts(numbers: &[i64], max: i64, field: &str) -> ApiResult<()> {
    let mut checks = Checks::default();
    if numbers.is_empty() {
        checks.push(
            FieldError::new(
                body_loc(field),
                "too_short",
                "List should have at least 1 item",
                json!([]),
            )
            .with_ctx(json!({ "min_length": 1 })),
        );
    }
    let mut seen = std::collections::HashSet::new();
    for (i, n) in numbers.iter().enumerate() {
        let loc = vec![json!("body"), json!(field), json!(i)];
        checks.range(loc.clone(), *n, 1, max);
        if !seen.insert(*n) {
            checks.push(FieldError::new(
                loc,
                "value_error",
                "Part numbers must not repeat",
                json!(n),
            ));
        }
    }
    checks.finish()
}

/// Presigned PUT URLs for parts of an open upload.
#[utoipa::path(post, path = "/users/{user_id}/import/{platform}/xml/{store}/multipart/sign", tag = "import",
    params(("user_id" = String, Path), ("platform" = String, Path), ("store" = String, Path)),
    request_body = SignIn,
    responses((status = 200, body = SignOut), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 422, body = ValidationBody), (status = 502, body = ErrorBody)),
    security(("api_key" = []), ("bearer" = [])))]
async fn sign(
    auth: ImportAuth,
    State(state): State<AppState>,
    Path((user_id, platform, store)): Path<(String, String, String)>,
    ApiJson(body): ApiJson<SignIn>,
) -> ApiResult<Json<SignOut>> {
    let user = target(&state, &auth, &user_id, &platform, Some(&store)).await?;
    let upload = own_upload(&state, user, &body.key, &body.upload_id).await?;
    let parts = ceil_div(upload.file_size, upload.part_size).clamp(1, MAX_PARTS);
    check_parts(&body.part_numbers, parts, "part_numbers")?;
    let storage = storage(&state)?;
    let mut urls = Vec::with_capacity(body.part_numbers.len());
    for n in &body.part_numbers {
        // Every part is `part_size` long but the last, which holds the rest.
        let length = upload.part_size.min(upload.file_size - (n - 1) * upload.part_size);
        let url = storage
            .presign_part(&body.key, &body.upload_id, *n as i32, length, PART_URL_LIFETIME)
            .await
            .map_err(storage_failure)?;
        urls.push(PartUrl { part_number: *n, url });
    }
    Ok(Json(SignOut { urls }))
}

#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct CompletedPartIn {
    pub part_number: i64,
    pub etag: String,
}

#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct CompleteIn {
    pub key: String,
    pub upload_id: String,
    pub parts: Vec<CompletedPartIn>,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct CompleteOut {
    /// `processing` (mode `client`) or `completed` (mode `bucket_event`).
    pub status: &'static str,
    pub key: String,
    pub bucket: String,
    /// The import's id (mode `client`): the sync run's `run_id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<Uuid>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<&'static str>,
}

/// Completes a multipart upload. Mode `client`: queues the import (202 with its `task_id`);
/// mode `bucket_event`: the bucket's notification will (200).
#[utoipa::path(post, path = "/users/{user_id}/import/{platform}/xml/{store}/multipart/complete", tag = "import",
    params(("user_id" = String, Path), ("platform" = String, Path), ("store" = String, Path)),
    request_body = CompleteIn,
    responses((status = 200, body = CompleteOut), (status = 202, body = CompleteOut),
              (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 422, body = ValidationBody),
              (status = 502, body = ErrorBody), (status = 503, body = ErrorBody)),
    security(("api_key" = []), ("bearer" = [])))]
async fn complete(
    auth: ImportAuth,
    State(state): State<AppState>,
    Path((user_id, platform, store)): Path<(String, String, String)>,
    ApiJson(body): ApiJson<CompleteIn>,
) -> ApiResult<(StatusCode, Json<CompleteOut>)> {
    let user = target(&state, &auth, &user_id, &platform, Some(&store)).await?;
    let upload = own_upload(&state, user, &body.key, &body.upload_id).await?;
    let numbers: Vec<i64> = body.parts.iter().map(|p| p.part_number).collect();
    check_parts(&numbers, MAX_PARTS, "parts")?;
    let parts: Vec<Part> = body
        .parts
        .into_iter()
        .map(|p| Part { number: p.part_number as i32, etag: p.etag })
        .collect();
    let uploads = uploads(&state)?;
    let completed = uploads.complete(&upload, &parts).await.map_err(upload_failure)?;
    let (key, bucket) = (body.key, uploads.storage.bucket().to_string());
    Ok(match completed {
        Completed::Queued(id) => {
            let task_id = Some(id.0);
            let out = CompleteOut { status: "processing", key, bucket, task_id, message: None };
            (StatusCode::ACCEPTED, Json(out))
        }
        Completed::AwaitingEvent { repeated } => {
            let message =
                (!repeated).then_some("Processing starts when the bucket reports the new object");
            let out = CompleteOut { status: "completed", key, bucket, task_id: None, message };
            (StatusCode::OK, Json(out))
        }
    })
}

#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct AbortIn {
    pub key: String,
    pub upload_id: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct AbortOut {
    /// `aborted`.
    pub status: &'static str,
    pub key: String,
}

/// Aborts a multipart upload; also 200 when it is already gone.
#[utoipa::path(post, path = "/users/{user_id}/import/{platform}/xml/{store}/multipart/abort", tag = "import",
    params(("user_id" = String, Path), ("platform" = String, Path), ("store" = String, Path)),
    request_body = AbortIn,
    responses((status = 200, body = AbortOut), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
              (status = 502, body = ErrorBody), (status = 503, body = ErrorBody)),
    security(("api_key" = []), ("bearer" = [])))]
async fn abort(
    auth: ImportAuth,
    State(state): State<AppState>,
    Path((user_id, platform, store)): Path<(String, String, String)>,
    ApiJson(body): ApiJson<AbortIn>,
) -> ApiResult<Json<AbortOut>> {
    let user = target(&state, &auth, &user_id, &platform, Some(&store)).await?;
    owns(user, &body.key)?;
    let upload = schema::uploads::find(&state.db, &body.key, &body.upload_id).await?;
    if upload.as_ref().is_some_and(|u| u.user_id != user) {
        return Err(ApiError::forbidden("The object key does not belong to this user"));
    }
    storage(&state)?.abort(&body.key, &body.upload_id).await.map_err(storage_failure)?;
    if let Some(u) = upload {
        schema::uploads::abort(&state.db, u.id).await?;
    }
    Ok(Json(AbortOut { status: "aborted", key: body.key }))
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct DirectOut {
    /// `processing`.
    pub status: &'static str,
    pub task_id: Uuid,
    #[schema(value_type = uuid::Uuid)]
    pub user_id: UserId,
    pub key: String,
}

/// Uploads a small export (`multipart/form-data`, field `file`) through the API; it is stored
/// in the bucket and queued at once.
/// The direct upload's form, as documented: the handler reads the multipart stream itself.
#[derive(ToSchema)]
#[allow(dead_code)] // a schema only: never built
pub(crate) struct DirectUpload {
    /// The export: `export.xml` or the phone's `export.zip`.
    #[schema(value_type = String, format = Binary)]
    file: Vec<u8>,
}

#[utoipa::path(post, path = "/users/{user_id}/import/{platform}/xml/direct", tag = "import",
    params(("user_id" = String, Path), ("platform" = String, Path)),
    request_body(content = DirectUpload, content_type = "multipart/form-data", description = "Field `file`: export.xml or export.zip"),
    responses((status = 202, body = DirectOut), (status = 401, body = ErrorBody), (status = 413, body = ErrorBody),
              (status = 422, body = ValidationBody), (status = 502, body = ErrorBody), (status = 503, body = ErrorBody)),
    security(("api_key" = []), ("bearer" = [])))]
async fn direct(
    auth: ImportAuth,
    State(state): State<AppState>,
    Path((user_id, platform)): Path<(String, String)>,
    mut form: Multipart,
) -> ApiResult<(StatusCode, Json<DirectOut>)> {
    let user = target(&state, &auth, &user_id, &platform, None).await?;
    // Each upload in progress is held in memory: only so many at once.
    let _place = state.direct_uploads.clone().try_acquire_owned().map_err(|_| ApiError::Later {
        status: StatusCode::SERVICE_UNAVAILABLE,
        detail: "Too many direct uploads in progress; try again shortly, or use the multipart \
                 upload"
            .into(),
        retry_after: 5,
    })?;
    let limit = state.config.direct_upload_max_bytes;
    let too_large = || {
        ApiError::client(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("The file is larger than the limit of {limit} bytes"),
        )
    };
    let bad_form = |e: axum::extract::multipart::MultipartError| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            too_large()
        } else {
            ApiError::bad_request(format!("Could not read the form: {e}"))
        }
    };
    let mut file: Option<(String, Vec<u8>)> = None;
    while let Some(mut field) = form.next_field().await.map_err(bad_form)? {
        if field.name() != Some("file") {
            continue;
        }
        let name = field.file_name().unwrap_or("export.xml").to_string();
        let mut bytes = Vec::new();
        while let Some(chunk) = field.chunk().await.map_err(bad_form)? {
            if bytes.len() + chunk.len() > limit {
                return Err(too_large());
            }
            bytes.extend_from_slice(&chunk);
        }
        file = Some((name, bytes));
    }
    let Some((name, bytes)) = file else {
        return Err(ApiError::validation(crate::validate::missing(body_loc("file"))));
    };
    let uploads = uploads(&state)?;
    let key = object_key(user, &name);
    let size = bytes.len() as i64;
    let etag = uploads.storage.put(&key, bytes).await.map_err(storage_failure)?;
    let task_id = uploads
        .queue_import(user, &key, &etag, Some(size), ImportOrigin::Direct)
        .await
        .map_err(upload_failure)?;
    Ok((
        StatusCode::ACCEPTED,
        Json(DirectOut { status: "processing", task_id: task_id.0, user_id: user, key }),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_safe_and_scoped() {
        let user = UserId(Uuid::now_v7());
        let key = object_key(user, "../../etc/My Export (1).zip");
        assert!(key.starts_with(&format!("{user}/raw/")), "{key}");
        assert!(key.ends_with("-My_Export__1_.zip"), "{key}");
        assert!(object_key(user, "").ends_with("-export.xml"));
        assert!(owns(user, &key).is_ok());
        assert!(owns(UserId(Uuid::now_v7()), &key).is_err());
    }
}
