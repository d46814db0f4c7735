//! `/api/v1/webhooks/event-types`: every event an endpoint can subscribe to. Public.

use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_event_types))
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct EventTypeOut {
    pub name: String,
    pub description: String,
    /// The per-series events a timeseries group event stands for.
    pub child_events: Vec<String>,
}

#[utoipa::path(get, path = "/webhooks/event-types", tag = "webhooks",
    responses((status = 200, body = Vec<EventTypeOut>)))]
async fn list_event_types() -> Json<Vec<EventTypeOut>> {
    Json(
        schema::catalogue::event_types::all()
            .into_iter()
            .map(|e| EventTypeOut {
                name: e.name.to_string(),
                description: e.description.to_string(),
                child_events: e.child_events,
            })
            .collect(),
    )
}
