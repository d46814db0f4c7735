//! `GET /api/v1/developer/audit`: the audit trail (owners and admins), newest first, filtered
//! by user, actor, operation and time, in cursor pages.

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use schema::audit::{ActorKind, AuditEvent, Filter};
use schema::ids::UserId;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::AppState;
use crate::error::{ApiResult, ErrorBody, ValidationBody};
use crate::extract::{DeveloperAuth, Query};
use crate::pagination::{Cursor, CursorPagination};

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_audit))
}

/// One request on record.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct AuditEventOut {
    pub id: Uuid,
    /// When the request came.
    pub at: DateTime<Utc>,
    /// `developer`, `api_key`, `user` (an end user's SDK token) or `anonymous`.
    pub actor_type: &'static str,
    /// The developer's, key's or user's id (never a secret).
    pub actor_id: Option<Uuid>,
    /// The operation's id in the OpenAPI document.
    pub operation: String,
    /// The user whose data it read or changed.
    #[schema(value_type = Option<uuid::Uuid>)]
    pub user_id: Option<UserId>,
    /// What else it named (an endpoint, a key, a workout, a provider...).
    pub resource_id: Option<String>,
    /// The HTTP status answered.
    pub status: i16,
    pub client_address: Option<String>,
}

impl From<AuditEvent> for AuditEventOut {
    fn from(e: AuditEvent) -> AuditEventOut {
        AuditEventOut {
            id: e.id,
            at: e.at,
            actor_type: e.actor_kind.as_str(),
            actor_id: e.actor_id,
            operation: e.operation,
            user_id: e.user_id,
            resource_id: e.resource_id,
            status: e.status,
            client_address: e.client_addr,
        }
    }
}

/// `{data, pagination}`: `pagination.next_cursor` continues to older events.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct AuditPage {
    pub data: Vec<AuditEventOut>,
    pub pagination: CursorPagination,
}

/// The audit trail, newest first: every request that read or changed a user's data and every
/// developer action, with who made it (a developer, an API key, an end user's SDK token) and
/// what it answered. Kept `AUDIT_RETENTION_DAYS` (400 by default).
#[utoipa::path(get, path = "/developer/audit", tag = "audit",
    params(
        ("user_id" = Option<Uuid>, Query, description = "Requests about this user"),
        ("actor_id" = Option<Uuid>, Query, description = "Requests by this developer, key or user"),
        ("actor_type" = Option<String>, Query, description = "`developer`, `api_key`, `user` or `anonymous`"),
        ("operation" = Option<String>, Query, description = "An operation id, e.g. `timeseries_list`"),
        ("start_time" = Option<String>, Query, description = "From this time (inclusive)"),
        ("end_time" = Option<String>, Query, description = "Up to this time (exclusive)"),
        ("cursor" = Option<String>, Query, description = "`pagination.next_cursor` of the page before"),
        ("limit" = Option<i64>, Query, description = "1 to 500, default 50"),
    ),
    responses((status = 200, body = AuditPage), (status = 400, body = ErrorBody),
              (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
              (status = 422, body = ValidationBody)),
    security(("bearer" = [])))]
async fn list_audit(
    _auth: DeveloperAuth,
    State(state): State<AppState>,
    Query(mut params): Query,
) -> ApiResult<Json<AuditPage>> {
    let user_id = params.uuid("user_id", false).map(UserId);
    let actor_id = params.uuid("actor_id", false);
    let named = params.raw("actor_type").is_some();
    let kinds = ActorKind::ALL.map(ActorKind::as_str);
    let kind = named.then(|| params.choice("actor_type", &kinds, ""));
    let operation = params.string("operation");
    let from = params.time("start_time", false).map(|t| t.at);
    let to = params.time("end_time", false).map(crate::dates::end_bound);
    let limit = params.limit(50, 500);
    let raw_cursor = params.string("cursor");
    params.finish()?;
    let after = match &raw_cursor {
        Some(raw) => {
            let cursor = Cursor::decode(raw)?;
            Some((cursor.at, cursor.id(raw)?))
        }
        None => None,
    };
    let filter = Filter {
        user_id,
        actor_id,
        actor_kind: kind.and_then(ActorKind::parse),
        operation,
        from,
        to,
    };
    let mut events = schema::audit::list(&state.db, &filter, after, limit + 1).await?;
    let has_more = events.len() as i64 > limit;
    events.truncate(limit as usize);
    let next_cursor =
        events.last().filter(|_| has_more).map(|e| Cursor::new(e.at, e.id, false).encode());
    Ok(Json(AuditPage {
        data: events.into_iter().map(Into::into).collect(),
        pagination: CursorPagination {
            next_cursor,
            previous_cursor: None,
            has_more,
            total_count: None,
        },
    }))
}
