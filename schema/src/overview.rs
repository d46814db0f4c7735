//! What the deployment is doing, at a glance (the portal's overview): work waiting, what was
//! stored in the last hour, webhook deliveries that failed, the latest sync runs, and what the
//! stored data costs on disk.

use chrono::{DateTime, Utc};
use serde::Serialize;
use uuid::Uuid;

use crate::ids::UserId;
use crate::imports::ImportStatus;
use crate::sdk_batches::BatchStatus;
use crate::vendor_pulls::PullStatus;
use crate::webhook_deliveries::DeliveryStatus;
use crate::{Db, Result};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Overview {
    /// SDK batches accepted and not yet processed.
    pub batches_queued: i64,
    /// Export imports waiting or running.
    pub imports_pending: i64,
    /// Vendor pulls waiting (due or waiting out a rate limit).
    pub pulls_queued: i64,
    /// Webhook deliveries waiting for their next attempt.
    pub deliveries_pending: i64,
    /// Delivery attempts that failed in the last 24 hours.
    pub delivery_failures_24h: i64,
    /// Samples stored by runs that ended in the last hour.
    pub samples_last_hour: i64,
    /// Runs that ended in the last hour.
    pub runs_last_hour: i64,
    /// Users of the deployment.
    pub users_total: i64,
    pub recent_runs: Vec<RecentRun>,
    /// Samples stored by the runs that ended in each of the last 24 hours, oldest first (hours
    /// without runs left out).
    pub ingest_by_hour: Vec<IngestHour>,
    /// What the stored data costs, per table and for the largest users.
    pub storage: crate::storage::Storage,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IngestHour {
    /// The hour's start.
    pub hour: DateTime<Utc>,
    pub samples: i64,
    pub runs: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecentRun {
    pub run_id: Uuid,
    pub user_id: UserId,
    /// The user's email, when they have one: ids alone look alike.
    pub user_email: Option<String>,
    pub provider: String,
    pub source: crate::sync_runs::RunSource,
    pub status: String,
    pub message: Option<String>,
    pub error: Option<String>,
    pub updated_at: DateTime<Utc>,
}

/// The overview, with the `recent` latest runs of any user and the `largest` users by storage.
pub async fn overview(db: &Db, recent: i64, largest: i64) -> Result<Overview> {
    let client = db.client().await?;
    let row = client
        .query_one(
            "select
               (select count(*) from sdk_batches where status = $1),
               (select count(*) from imports where status = any($2)),
               (select count(*) from vendor_pulls where status = $3),
               (select count(*) from webhook_deliveries where status = $4),
               (select count(*) from webhook_attempts
                where status = $5 and created_at > now() - interval '24 hours'),
               (select coalesce(sum((counts->>$6)::int8), 0)::int8 from sync_runs
                where ended_at > now() - interval '1 hour'),
               (select count(*) from sync_runs where ended_at > now() - interval '1 hour'),
               (select count(*) from users)",
            // Bound, not written out: each state is named by its enum. A statement prepared
            // once a call is planned with these values, so the partial indexes on the waiting
            // states still serve.
            &[
                &BatchStatus::Queued,
                &[ImportStatus::Queued, ImportStatus::Processing].as_slice(),
                &PullStatus::Queued,
                &DeliveryStatus::Pending,
                &DeliveryStatus::Failed,
                &crate::sync_runs::SAMPLES_INSERTED,
            ],
        )
        .await?;
    let recent_runs = client
        .query(
            "select r.id, r.user_id, r.provider, r.source, r.status::text, r.message, r.error,
                    r.updated_at, u.email
             from sync_runs r left join users u on u.id = r.user_id
             order by r.updated_at desc limit $1",
            &[&recent],
        )
        .await?
        .iter()
        .map(|r| {
            Ok(RecentRun {
                run_id: r.try_get(0)?,
                user_id: r.try_get(1)?,
                provider: r.try_get(2)?,
                source: r.try_get(3)?,
                status: r.try_get(4)?,
                message: r.try_get(5)?,
                error: r.try_get(6)?,
                updated_at: r.try_get(7)?,
                user_email: r.try_get(8)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let ingest_by_hour = client
        .query(
            "select date_trunc('hour', ended_at),
                    coalesce(sum((counts->>$1)::int8), 0)::int8, count(*)
             from sync_runs where ended_at > now() - interval '24 hours'
             group by 1 order by 1",
            &[&crate::sync_runs::SAMPLES_INSERTED],
        )
        .await?
        .iter()
        .map(|r| {
            Ok(IngestHour { hour: r.try_get(0)?, samples: r.try_get(1)?, runs: r.try_get(2)? })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Overview {
        batches_queued: row.try_get(0)?,
        imports_pending: row.try_get(1)?,
        pulls_queued: row.try_get(2)?,
        deliveries_pending: row.try_get(3)?,
        delivery_failures_24h: row.try_get(4)?,
        samples_last_hour: row.try_get(5)?,
        runs_last_hour: row.try_get(6)?,
        users_total: row.try_get(7)?,
        recent_runs,
        ingest_by_hour,
        storage: crate::storage::storage(db, largest).await?,
    })
}
