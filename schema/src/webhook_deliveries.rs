//! The delivery state of each (message, endpoint) pair and its attempts: claimed for sending,
//! then recorded as a success, a retry due later, or a failure for good.
//!
//! The states are Svix's numbers, stored and shown as they are. Partial indexes name the
//! `pending` (1) and `sending` (3) rows, so the queries that use those indexes write the
//! numbers in their SQL; everything else binds a [`DeliveryStatus`].

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use serde_json::Value;

use crate::ids::{EndpointId, MessageId};
use crate::smallint_enum::smallint_enum;
use crate::{Db, Result};

/// Where a delivery (or, `success` and `failed` only, one attempt) stands:
/// `pending` → `sending` (claimed by a sender) → `success`, `pending` again (a retry is due
/// later) or `failed` (the schedule ran out, or the endpoint was disabled). `resend` and
/// `recover` make a delivery `pending` again; a sender that died leaves `sending`, which the
/// sweep makes `pending` again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i16)]
pub enum DeliveryStatus {
    Success = 0,
    Pending = 1,
    Failed = 2,
    Sending = 3,
}

smallint_enum!(DeliveryStatus { Success, Pending, Failed, Sending });

impl DeliveryStatus {
    /// The state after an attempt: its own outcome, and whether the schedule has a retry left.
    pub(crate) fn after_attempt(ok: bool, retry_left: bool) -> DeliveryStatus {
        match (ok, retry_left) {
            (true, _) => DeliveryStatus::Success,
            (false, true) => DeliveryStatus::Pending,
            (false, false) => DeliveryStatus::Failed,
        }
    }

    /// An attempt's own status: `success` or `failed`.
    pub(crate) fn of_attempt(ok: bool) -> DeliveryStatus {
        if ok { DeliveryStatus::Success } else { DeliveryStatus::Failed }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryStatus::Success => "success",
            DeliveryStatus::Pending => "pending",
            DeliveryStatus::Failed => "failed",
            DeliveryStatus::Sending => "sending",
        }
    }
}

/// What made an attempt: the schedule, or a person (a test event, a resend).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i16)]
pub enum TriggerType {
    Scheduled = 0,
    Manual = 1,
}

smallint_enum!(TriggerType { Scheduled, Manual });

/// A pending delivery of `message_id` to each endpoint, due now.
pub async fn insert_pending(
    client: &impl GenericClient,
    message_id: &MessageId,
    endpoint_ids: &[EndpointId],
) -> Result<()> {
    let statement = client
        .prepare_cached(
            "insert into webhook_deliveries (message_id, endpoint_id, status, next_attempt_at)
             select $1, e, $3, now() from unnest($2::text[]) e on conflict do nothing",
        )
        .await?;
    client.execute(&statement, &[&message_id, &endpoint_ids, &DeliveryStatus::Pending]).await?;
    Ok(())
}

/// A delivery: one message to one endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Delivery {
    pub message: MessageId,
    pub endpoint: EndpointId,
}

/// Claims due pending deliveries. Here and in [`RESET_STUCK`] the state a row is looked up by is
/// written out (`1` pending, `3` sending): it is the partial indexes' predicate
/// (`webhook_deliveries_due_idx`, `…_sending_idx`), which a bound state would not match;
/// `index_predicates_name_the_states_they_mean` ties the numbers to [`DeliveryStatus`].
const CLAIM_DUE: &str = "update webhook_deliveries d set status = $2, next_attempt_at = now()
    from (select message_id, endpoint_id from webhook_deliveries
          where status = 1 and next_attempt_at <= now()
          order by next_attempt_at limit $1 for update skip locked) due
    where d.message_id = due.message_id and d.endpoint_id = due.endpoint_id
    returning d.message_id, d.endpoint_id";

/// Sending deliveries whose sender is gone become pending again.
const RESET_STUCK: &str = "update webhook_deliveries set status = $2
    where status = 3 and next_attempt_at < now() - make_interval(secs => $1)";

/// Marks up to `limit` due pending deliveries as sending and returns them, oldest due first.
pub async fn claim_due(db: &Db, limit: i64) -> Result<Vec<Delivery>> {
    let client = db.client().await?;
    let statement = client.prepare_cached(CLAIM_DUE).await?;
    let rows = client.query(&statement, &[&limit, &DeliveryStatus::Sending]).await?;
    rows.iter().map(|r| Ok(Delivery { message: r.try_get(0)?, endpoint: r.try_get(1)? })).collect()
}

/// Deliveries left sending for longer than `stale_seconds` (their sender died, or their
/// announcement was lost) become pending again.
pub async fn reset_stuck(db: &Db, stale_seconds: f64) -> Result<u64> {
    let client = db.client().await?;
    Ok(client.execute(RESET_STUCK, &[&stale_seconds, &DeliveryStatus::Pending]).await?)
}

/// What a sender needs to make an attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct Due {
    pub status: DeliveryStatus,
    pub attempts: i32,
    pub message_id: MessageId,
    pub event_type: String,
    pub payload: Value,
    pub endpoint_id: EndpointId,
    pub url: String,
    /// Current first, then the rotated-out one while it still signs; sealed, as stored (open
    /// with [`Due::secrets`]).
    pub sealed_secrets: Vec<String>,
    pub disabled: bool,
}

pub async fn load(db: &Db, d: &Delivery) -> Result<Option<Due>> {
    let (message_id, endpoint_id) = (&d.message, &d.endpoint);
    let client = db.client().await?;
    let statement = client
        .prepare_cached(
            "select d.status, d.attempts, m.id, m.event_type, m.payload, e.id, e.url, e.secret,
                    case when e.previous_expires_at > now() then e.previous_secret end,
                    e.disabled_at is not null
             from webhook_deliveries d
             join webhook_messages m on m.id = d.message_id
             join webhook_endpoints e on e.id = d.endpoint_id
             where d.message_id = $1 and d.endpoint_id = $2",
        )
        .await?;
    let Some(r) = client.query_opt(&statement, &[&message_id, &endpoint_id]).await? else {
        return Ok(None);
    };
    let previous: Option<String> = r.try_get(8)?;
    let mut secrets = vec![r.try_get::<_, String>(7)?];
    secrets.extend(previous);
    Ok(Some(Due {
        status: r.try_get(0)?,
        attempts: r.try_get(1)?,
        message_id: r.try_get(2)?,
        event_type: r.try_get(3)?,
        payload: r.try_get(4)?,
        endpoint_id: r.try_get(5)?,
        url: r.try_get(6)?,
        sealed_secrets: secrets,
        disabled: r.try_get(9)?,
    }))
}

impl Due {
    /// The endpoint's signing secrets, opened.
    pub fn secrets(&self, keys: &crate::sealed::MasterKeys) -> Result<Vec<String>> {
        let open =
            |s: &String| crate::webhook_endpoints::open_secret(keys, self.endpoint_id.as_str(), s);
        self.sealed_secrets.iter().map(open).collect()
    }
}

/// One attempt's result.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    pub url: String,
    pub response: String,
    pub status_code: i32,
    pub duration_ms: i32,
    pub ok: bool,
}

/// Records an attempt and what follows: success; a retry at `retry_at`; or (`retry_at` none)
/// failure for good. A failing endpoint is disabled once it has failed for `disable_after`
/// seconds without a success.
///
/// One statement, committed without waiting for the disk (`synchronous_commit` off for this
/// transaction only): a crash can lose the record of the last few attempts, and then their
/// deliveries, still `sending`, are sent again by the sweep. Delivery is at least once either
/// way, and this doubles the rate.
pub async fn record(
    db: &Db,
    due: &Due,
    attempt: &Attempt,
    retry_at: Option<DateTime<Utc>>,
    disable_after_seconds: f64,
) -> Result<DeliveryStatus> {
    let status = DeliveryStatus::after_attempt(attempt.ok, retry_at.is_some());
    let id = format!("atmpt_{}", uuid::Uuid::now_v7().simple());
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    let statement = tx
        .prepare_cached(
            "with attempt as (
                 insert into webhook_attempts (id, message_id, endpoint_id, url, response,
                     response_status_code, response_duration_ms, status)
                 values ($1, $2, $3, $4, $5, $6, $7, $12)
             ),
             delivery as (
                 update webhook_deliveries set status = $9, attempts = attempts + 1,
                     next_attempt_at = $10
                 where message_id = $2 and endpoint_id = $3
             ),
             healthy as (
                 update webhook_endpoints set failing_since = null
                 where $8 and id = $3 and failing_since is not null
             )
             update webhook_endpoints set failing_since = coalesce(failing_since, now()),
                 disabled_at = case when disabled_at is null
                     and coalesce(failing_since, now()) < now() - make_interval(secs => $11)
                     then now() else disabled_at end,
                 disabled_reason = case when disabled_at is null
                     and coalesce(failing_since, now()) < now() - make_interval(secs => $11)
                     then 'every delivery failed for 5 days' else disabled_reason end
             where not $8 and id = $3",
        )
        .await?;
    tx.batch_execute("set local synchronous_commit = off").await?;
    tx.execute(
        &statement,
        &[
            &id,
            &due.message_id,
            &due.endpoint_id,
            &attempt.url,
            &attempt.response,
            &attempt.status_code,
            &attempt.duration_ms,
            &attempt.ok,
            &status,
            &retry_at,
            &disable_after_seconds,
            &DeliveryStatus::of_attempt(attempt.ok),
        ],
    )
    .await?;
    tx.commit().await?;
    Ok(status)
}

/// Every delivery of a disabled or deleted endpoint is dropped from the queue as failed.
pub async fn give_up(db: &Db, d: &Delivery) -> Result<()> {
    let client = db.client().await?;
    client
        .execute(
            "update webhook_deliveries set status = $3 where message_id = $1 and endpoint_id = $2",
            &[&d.message, &d.endpoint, &DeliveryStatus::Failed],
        )
        .await?;
    Ok(())
}

/// An attempt with its message, for the attempt history.
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptRow {
    pub id: String,
    pub endpoint_id: String,
    pub url: String,
    pub response: String,
    pub status_code: i32,
    pub duration_ms: i32,
    pub status: DeliveryStatus,
    pub trigger_type: TriggerType,
    pub created_at: DateTime<Utc>,
    pub message_id: String,
    pub event_type: String,
    pub event_id: String,
    pub user_id: Option<crate::ids::UserId>,
    pub message_created_at: DateTime<Utc>,
    pub payload: Value,
}

/// Filters of a history page. `after_id`/`before_id` page by id (ids are time-ordered).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AttemptFilter {
    pub before: Option<DateTime<Utc>>,
    pub after: Option<DateTime<Utc>>,
    pub status: Option<DeliveryStatus>,
    pub event_types: Option<Vec<String>>,
    /// Older than this id (the next page), or newer (`newer` true: the previous page).
    pub cursor: Option<String>,
    pub newer: bool,
}

/// One page of an endpoint's attempts, newest first (`limit + 1` rows, to know if there is more).
pub async fn attempts(
    db: &Db,
    endpoint_id: &EndpointId,
    f: &AttemptFilter,
    limit: i64,
) -> Result<Vec<AttemptRow>> {
    let client = db.client().await?;
    let (cmp, dir) = if f.newer { (">", "asc") } else { ("<", "desc") };
    let sql = format!(
        "select a.id, a.endpoint_id, a.url, a.response, a.response_status_code, a.response_duration_ms,
                a.status, a.trigger_type, a.created_at, m.id, m.event_type, m.event_id, m.user_id,
                m.created_at, m.payload
         from webhook_attempts a join webhook_messages m on m.id = a.message_id
         where a.endpoint_id = $1
           and ($2::timestamptz is null or a.created_at < $2)
           and ($3::timestamptz is null or a.created_at > $3)
           and ($4::smallint is null or a.status = $4)
           and ($5::text[] is null or m.event_type = any($5))
           and ($6::text is null or a.id {cmp} $6)
         order by a.id {dir} limit $7"
    );
    let rows = client
        .query(
            &sql,
            &[
                &endpoint_id,
                &f.before,
                &f.after,
                &f.status,
                &f.event_types,
                &f.cursor,
                &(limit + 1),
            ],
        )
        .await?;
    let mut out = rows
        .iter()
        .map(|r| {
            Ok(AttemptRow {
                id: r.try_get(0)?,
                endpoint_id: r.try_get(1)?,
                url: r.try_get(2)?,
                response: r.try_get(3)?,
                status_code: r.try_get(4)?,
                duration_ms: r.try_get(5)?,
                status: r.try_get(6)?,
                trigger_type: r.try_get(7)?,
                created_at: r.try_get(8)?,
                message_id: r.try_get(9)?,
                event_type: r.try_get(10)?,
                event_id: r.try_get(11)?,
                user_id: r.try_get(12)?,
                message_created_at: r.try_get(13)?,
                payload: r.try_get(14)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    if f.newer {
        out.reverse();
    }
    Ok(out)
}

/// Sends a message to an endpoint again (beyond the contract): a new pending delivery with a
/// fresh schedule. `false` when the endpoint never had that message.
pub async fn resend(db: &Db, endpoint_id: &EndpointId, message_id: &MessageId) -> Result<bool> {
    let client = db.client().await?;
    let n = client
        .execute(
            "update webhook_deliveries set status = $3, attempts = 0, next_attempt_at = now()
             where endpoint_id = $1 and message_id = $2 and status <> $4",
            &[&endpoint_id, &message_id, &DeliveryStatus::Pending, &DeliveryStatus::Sending],
        )
        .await?;
    Ok(n > 0)
}

/// Sends again every message that failed for good to an endpoint since `since` (beyond the
/// contract); returns how many.
pub async fn recover(db: &Db, endpoint_id: &EndpointId, since: DateTime<Utc>) -> Result<u64> {
    let client = db.client().await?;
    Ok(client
        .execute(
            "update webhook_deliveries d set status = $3, attempts = 0, next_attempt_at = now()
             from webhook_messages m
             where d.message_id = m.id and d.endpoint_id = $1 and d.status = $4 and m.created_at >= $2",
            &[&endpoint_id, &since, &DeliveryStatus::Pending, &DeliveryStatus::Failed],
        )
        .await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_predicates_name_the_states_they_mean() {
        let pending = format!("where status = {}", DeliveryStatus::Pending.code());
        let sending = format!("where status = {}", DeliveryStatus::Sending.code());
        assert!(CLAIM_DUE.contains(&pending));
        assert!(RESET_STUCK.contains(&sending));
        assert!(include_str!("../migrations/V5__webhooks.sql").contains(&pending));
        assert!(include_str!("../migrations/V6__webhook_sending_idx.sql").contains(&sending));
    }
}
