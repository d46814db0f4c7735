//! The event outbox: rows written in the same transaction as the data they announce, picked up
//! by the webhook sender. The ingest pipeline and the sender share nothing else.

use deadpool_postgres::GenericClient;
use serde_json::Value;
use uuid::Uuid;

use crate::Result;

/// Writes one event. `payload` is the event's `data` object (the sender adds the envelope).
pub async fn insert(
    client: &impl GenericClient,
    event_type: &str,
    user_id: Uuid,
    payload: &Value,
) -> Result<()> {
    client
        .execute(
            &client
                .prepare_cached(
                    "insert into outbox (event_type, user_id, payload) values ($1, $2, $3)",
                )
                .await?,
            &[&event_type, &user_id, payload],
        )
        .await?;
    Ok(())
}
