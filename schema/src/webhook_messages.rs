//! Webhook messages: what the dispatcher makes of outbox events, and the deliveries each owes.

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use serde_json::Value;
use uuid::Uuid;

use crate::Result;
use crate::ids::SeriesId;
use crate::ids::UserId;

/// An outbox event not yet turned into messages.
#[derive(Debug, Clone, PartialEq)]
pub struct OutboxEvent {
    pub id: i64,
    pub event_type: String,
    pub user_id: UserId,
    pub payload: Value,
}

/// Up to `limit` undispatched events, oldest first, locked for this transaction (another
/// dispatcher skips them).
pub async fn claim_outbox(client: &impl GenericClient, limit: i64) -> Result<Vec<OutboxEvent>> {
    let statement = client
        .prepare_cached(
            "select id, event_type, user_id, payload from outbox where dispatched_at is null
             order by id limit $1 for update skip locked",
        )
        .await?;
    let rows = client.query(&statement, &[&limit]).await?;
    rows.iter()
        .map(|r| {
            Ok(OutboxEvent {
                id: r.try_get(0)?,
                event_type: r.try_get(1)?,
                user_id: r.try_get(2)?,
                payload: r.try_get(3)?,
            })
        })
        .collect()
}

pub async fn mark_dispatched(client: &impl GenericClient, ids: &[i64]) -> Result<()> {
    client.execute("update outbox set dispatched_at = now() where id = any($1)", &[&ids]).await?;
    Ok(())
}

/// A sample a timeseries event announces, with its source.
#[derive(Debug, Clone, PartialEq)]
pub struct EventSample {
    pub ts: DateTime<Utc>,
    pub zone_offset: Option<i16>,
    pub value: f64,
    pub is_daily_total: Option<bool>,
    pub provider: String,
    pub device: Option<String>,
}

/// The samples of one series a batch wrote between `from` and `to` (inclusive), in time order.
pub async fn event_samples(
    client: &impl GenericClient,
    user_id: UserId,
    series: SeriesId,
    batch_id: Uuid,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Result<Vec<EventSample>> {
    // A day sealed before the event went out: its block keeps each sample's batch.
    let scope = crate::blocks::Scope {
        user_id,
        series: Some(&[series]),
        sources: None,
        from,
        to: to + chrono::Duration::microseconds(1),
    };
    let sealed = crate::blocks::fetch(client, scope).await?;
    let statement = client
        .prepare_cached(&format!(
            "select s.ts, s.zone_offset, s.value, s.is_daily_total, d.provider,
                    coalesce(d.device_model, d.source)
             from {} s join data_sources d on d.id = s.data_source_id
             where s.user_id = $1 and s.series_type_id = $2 and s.ts >= $4 and s.ts <= $5
               and s.batch_id = $3
             order by s.ts, s.data_source_id",
            crate::blocks::samples_sql(6)
        ))
        .await?;
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 5] =
        [&user_id, &series, &batch_id, &from, &to];
    let rows = client.query(&statement, &[&params[..], &sealed.params()[..]].concat()).await?;
    rows.iter()
        .map(|r| {
            Ok(EventSample {
                ts: r.try_get(0)?,
                zone_offset: r.try_get(1)?,
                value: r.try_get(2)?,
                is_daily_total: r.try_get(3)?,
                provider: r.try_get(4)?,
                device: r.try_get(5)?,
            })
        })
        .collect()
}

/// Stores a message once per `event_id`; `None` when it already exists (a replay).
pub async fn insert_message(
    client: &impl GenericClient,
    event_type: &str,
    event_id: &str,
    user_id: Option<UserId>,
    payload: &Value,
) -> Result<Option<String>> {
    let id = format!("msg_{}", Uuid::now_v7().simple());
    let statement = client
        .prepare_cached(
            "insert into webhook_messages (id, event_type, event_id, user_id, payload)
             values ($1, $2, $3, $4, $5) on conflict (event_id) do nothing returning id",
        )
        .await?;
    let row =
        client.query_opt(&statement, &[&id, &event_type, &event_id, &user_id, payload]).await?;
    Ok(row.map(|r| r.try_get(0)).transpose()?)
}

/// A sent message, for the message list.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageRow {
    pub id: String,
    pub event_type: String,
    pub event_id: String,
    pub user_id: Option<UserId>,
    pub created_at: DateTime<Utc>,
}

/// One page of messages, newest first (`limit + 1` rows); the cursor as for attempts.
#[allow(clippy::too_many_arguments)]
pub async fn list(
    client: &impl GenericClient,
    before: Option<DateTime<Utc>>,
    after: Option<DateTime<Utc>>,
    event_types: Option<Vec<String>>,
    cursor: Option<String>,
    newer: bool,
    limit: i64,
) -> Result<Vec<MessageRow>> {
    let (cmp, dir) = if newer { (">", "asc") } else { ("<", "desc") };
    let sql = format!(
        "select id, event_type, event_id, user_id, created_at from webhook_messages
         where ($1::timestamptz is null or created_at < $1)
           and ($2::timestamptz is null or created_at > $2)
           and ($3::text[] is null or event_type = any($3))
           and ($4::text is null or id {cmp} $4)
         order by id {dir} limit $5"
    );
    let rows = client.query(&sql, &[&before, &after, &event_types, &cursor, &(limit + 1)]).await?;
    let mut out = rows
        .iter()
        .map(|r| {
            Ok(MessageRow {
                id: r.try_get(0)?,
                event_type: r.try_get(1)?,
                event_id: r.try_get(2)?,
                user_id: r.try_get(3)?,
                created_at: r.try_get(4)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    if newer {
        out.reverse();
    }
    Ok(out)
}
