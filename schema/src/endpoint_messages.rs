//! The messages of one webhook endpoint, each with where its delivery stands: what an
//! integrator reads on the endpoint's page (not every message of the deployment).

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::webhook_deliveries::{AttemptFilter, DeliveryStatus};
use crate::{Db, Result};

/// A message as one endpoint got it.
#[derive(Debug, Clone)]
pub struct EndpointMessage {
    pub id: String,
    pub event_type: String,
    pub event_id: String,
    pub user_id: Option<crate::ids::UserId>,
    pub created_at: DateTime<Utc>,
    pub payload: Value,
    pub status: DeliveryStatus,
    /// Attempts made so far for this endpoint.
    pub attempts: i32,
    pub next_attempt_at: Option<DateTime<Utc>>,
}

/// One page of an endpoint's messages, newest first (`limit + 1` rows, to know if there is
/// more). The filter's `status` is the delivery's; its times bound the message's creation.
pub async fn list(
    db: &Db,
    endpoint_id: &crate::ids::EndpointId,
    f: &AttemptFilter,
    limit: i64,
) -> Result<Vec<EndpointMessage>> {
    let client = db.client().await?;
    let (cmp, dir) = if f.newer { (">", "asc") } else { ("<", "desc") };
    let sql = format!(
        "select m.id, m.event_type, m.event_id, m.user_id, m.created_at, m.payload,
                d.status, d.attempts, d.next_attempt_at
         from webhook_deliveries d join webhook_messages m on m.id = d.message_id
         where d.endpoint_id = $1
           and ($2::timestamptz is null or m.created_at < $2)
           and ($3::timestamptz is null or m.created_at > $3)
           and ($4::smallint is null or d.status = $4)
           and ($5::text[] is null or m.event_type = any($5))
           and ($6::text is null or d.message_id {cmp} $6)
         order by d.message_id {dir} limit $7"
    );
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 7] =
        [&endpoint_id, &f.before, &f.after, &f.status, &f.event_types, &f.cursor, &(limit + 1)];
    let rows = client.query(&sql, &params).await?;
    let mut out = rows
        .iter()
        .map(|r| {
            Ok(EndpointMessage {
                id: r.try_get(0)?,
                event_type: r.try_get(1)?,
                event_id: r.try_get(2)?,
                user_id: r.try_get(3)?,
                created_at: r.try_get(4)?,
                payload: r.try_get(5)?,
                status: r.try_get(6)?,
                attempts: r.try_get(7)?,
                next_attempt_at: r.try_get(8)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    if f.newer {
        out.reverse();
    }
    Ok(out)
}
