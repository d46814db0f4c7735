//! Pulls of cloud vendor data: durable jobs (queued → done or failed), each over a window of
//! one user's data at one vendor, with the pages the vendor answered kept as they came.

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use postgres_types::{FromSql, ToSql};
use uuid::Uuid;

use crate::ids::PullId;

use crate::ids::UserId;
use crate::{Db, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ToSql, FromSql)]
#[postgres(name = "pull_status", rename_all = "snake_case")]
pub enum PullStatus {
    Queued,
    Done,
    Failed,
}

/// How a pull gets its data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ToSql, FromSql)]
#[postgres(name = "pull_kind", rename_all = "snake_case")]
pub enum PullKind {
    /// Read from the vendor's API over the window.
    Fetch,
    /// Sent by the vendor in a notification: its page was kept when it arrived.
    Push,
    /// Asked of the vendor, which sends it later by notification.
    Backfill,
    /// No data: the vendor said the user removed the app; the connection ends once the vendor
    /// refuses a fresh token too.
    Deregistration,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Pull {
    pub id: PullId,
    pub user_id: UserId,
    pub provider: String,
    pub window_start: DateTime<Utc>,
    pub window_end: DateTime<Utc>,
    pub status: PullStatus,
    pub kind: PullKind,
    pub attempts: i32,
    pub not_before: DateTime<Utc>,
}

fn from_row(r: &tokio_postgres::Row) -> Result<Pull> {
    Ok(Pull {
        id: r.try_get("id")?,
        user_id: r.try_get("user_id")?,
        provider: r.try_get("provider")?,
        window_start: r.try_get("window_start")?,
        window_end: r.try_get("window_end")?,
        status: r.try_get("status")?,
        kind: r.try_get("kind")?,
        attempts: r.try_get("attempts")?,
        not_before: r.try_get("not_before")?,
    })
}

/// Queues pulls of the last `window` for active connections to `providers` (with their own
/// live sync mode, which a provider setting overrides) that pull, are not
/// disabled, and neither synced nor tried within `every` (a failing pull is tried again each
/// `every` too, with a new run that says why); returns how many. The scheduler:
/// no connection of a pulling vendor goes stale without a run that says why.
pub async fn schedule(
    db: &Db,
    providers: &[(&str, crate::catalogue::providers::LiveSyncMode)],
    every: std::time::Duration,
    window: std::time::Duration,
    limit: i64,
) -> Result<u64> {
    let (slugs, modes): (Vec<&str>, Vec<&str>) =
        providers.iter().map(|(p, m)| (*p, m.as_str())).unzip();
    let client = db.client().await?;
    Ok(client
        .execute(
            "insert into vendor_pulls (id, user_id, provider, window_start, window_end)
             select gen_random_uuid(), c.user_id, c.provider,
                    now() - make_interval(secs => $3), now()
             from connections c
             join unnest($1::text[], $5::text[]) as d(provider, mode) on d.provider = c.provider
             left join provider_settings s on s.provider = c.provider
             where c.status = $7
               and coalesce(s.is_enabled, true)
               and coalesce(s.live_sync_mode, d.mode) = $8
               and coalesce(c.last_synced_at, c.created_at) < now() - make_interval(secs => $2)
               and not exists (select 1 from vendor_pulls p
                               where p.user_id = c.user_id and p.provider = c.provider
                                 and (p.status = $6
                                      or p.created_at > now() - make_interval(secs => $2)))
             limit $4",
            &[
                &slugs,
                &every.as_secs_f64(),
                &window.as_secs_f64(),
                &limit,
                &modes,
                &PullStatus::Queued,
                &crate::connections::ConnectionStatus::Active,
                &crate::catalogue::providers::LiveSyncMode::Pull.as_str(),
            ],
        )
        .await?)
}

/// What a connection's pulls say: when the last one succeeded, the last error (of a pull that
/// failed or is waiting to retry) and when the next is due.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PullHealth {
    pub last_success_at: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    pub next_attempt_at: Option<DateTime<Utc>>,
}

/// The pull health of each of the user's providers.
pub async fn health(db: &Db, user_id: UserId) -> Result<Vec<(String, PullHealth)>> {
    let client = db.client().await?;
    let rows = client
        .query(
            "select provider,
                    max(updated_at) filter (where status = $2),
                    (array_agg(last_error order by updated_at desc)
                        filter (where last_error is not null and status <> $2))[1],
                    min(not_before) filter (where status = $3)
             from vendor_pulls where user_id = $1 group by provider",
            &[&user_id, &PullStatus::Done, &PullStatus::Queued],
        )
        .await?;
    rows.iter()
        .map(|r| {
            Ok((
                r.try_get(0)?,
                PullHealth {
                    last_success_at: r.try_get(1)?,
                    last_error: r.try_get(2)?,
                    next_attempt_at: r.try_get(3)?,
                },
            ))
        })
        .collect()
}

/// Holds, until the transaction ends, the right to queue notified pulls for the user and
/// provider: two notices at once make one pull.
async fn lock_notices(client: &impl GenericClient, user_id: UserId, provider: &str) -> Result<()> {
    client
        .execute(
            "select pg_advisory_xact_lock(hashtextextended($1::uuid::text || ':' || $2::text, 29))",
            &[&user_id, &provider],
        )
        .await?;
    Ok(())
}

/// Queues a pull for a vendor's notification over `window` (not to start before `not_before`,
/// when given), or merges it into the fetch already queued for the user and provider by
/// widening that pull's window, as long as the merged window spans at most `max_span` (a burst
/// of notices makes one pull however their windows differ, and a stream of forged ones cannot
/// grow a pull without bound). Returns the new pull's id, or `None` when the notice merged.
pub async fn notified(
    db: &Db,
    user_id: UserId,
    provider: &str,
    window: (DateTime<Utc>, DateTime<Utc>),
    max_span: chrono::Duration,
    not_before: Option<DateTime<Utc>>,
) -> Result<Option<PullId>> {
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    lock_notices(&tx, user_id, provider).await?;
    let span = max_span.num_seconds() as f64;
    // A pull a worker is storing right now is locked and skipped: its window was read already.
    let merged = tx
        .query_opt(
            "update vendor_pulls set window_start = least(window_start, $3),
                 window_end = greatest(window_end, $4), updated_at = now()
             where id = (select id from vendor_pulls
                         where user_id = $1 and provider = $2 and status = $6
                           and kind = $7
                           and greatest(window_end, $4) - least(window_start, $3)
                               <= make_interval(secs => $5)
                         order by created_at limit 1
                         for update skip locked)
             returning id",
            &[
                &user_id,
                &provider,
                &window.0,
                &window.1,
                &span,
                &PullStatus::Queued,
                &PullKind::Fetch,
            ],
        )
        .await?;
    let id = match merged {
        Some(_) => None,
        None => {
            let id = PullId(Uuid::now_v7());
            tx.execute(
                "insert into vendor_pulls (id, user_id, provider, window_start, window_end,
                     not_before)
                 values ($1, $2, $3, $4, $5, coalesce($6, now()))",
                &[&id, &user_id, &provider, &window.0, &window.1, &not_before],
            )
            .await?;
            Some(id)
        }
    };
    tx.commit().await?;
    Ok(id)
}

/// Queues a check of a vendor's notice that the user removed the app, unless one is queued
/// already for the user and provider; returns the new check's id.
pub async fn deregistration(db: &Db, user_id: UserId, provider: &str) -> Result<Option<PullId>> {
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    lock_notices(&tx, user_id, provider).await?;
    let queued = tx
        .query_opt(
            "select 1 from vendor_pulls where user_id = $1 and provider = $2
                 and status = $3 and kind = $4",
            &[&user_id, &provider, &PullStatus::Queued, &PullKind::Deregistration],
        )
        .await?;
    let id = match queued {
        Some(_) => None,
        None => {
            let now = Utc::now();
            Some(insert(&tx, user_id, provider, (now, now), PullKind::Deregistration).await?)
        }
    };
    tx.commit().await?;
    Ok(id)
}

/// A pull whose window a notification widened while it was being read (`read` is what was
/// read): the pull keeps the window it read, and the widened one is queued as a new pull, whose
/// id is returned. `None` when the window is the one read.
pub async fn split_widened(
    client: &impl GenericClient,
    locked: &Pull,
    read: (DateTime<Utc>, DateTime<Utc>),
) -> Result<Option<PullId>> {
    if (locked.window_start, locked.window_end) == read {
        return Ok(None);
    }
    client
        .execute(
            "update vendor_pulls set window_start = $2, window_end = $3 where id = $1",
            &[&locked.id, &read.0, &read.1],
        )
        .await?;
    let widened = (locked.window_start, locked.window_end);
    Ok(Some(insert(client, locked.user_id, &locked.provider, widened, locked.kind).await?))
}

/// Queues a pull; returns its id (its sync run's id).
pub async fn insert(
    client: &impl GenericClient,
    user_id: UserId,
    provider: &str,
    window: (DateTime<Utc>, DateTime<Utc>),
    kind: PullKind,
) -> Result<PullId> {
    let id = PullId(Uuid::now_v7());
    client
        .execute(
            "insert into vendor_pulls (id, user_id, provider, window_start, window_end, kind)
             values ($1, $2, $3, $4, $5, $6)",
            &[&id, &user_id, &provider, &window.0, &window.1, &kind],
        )
        .await?;
    Ok(id)
}

/// Queues data a vendor pushed: the pull and its one page (zstd JSON) in one transaction, so
/// the notification is durable before it is acknowledged.
pub async fn insert_pushed(
    db: &Db,
    user_id: UserId,
    provider: &str,
    window: (DateTime<Utc>, DateTime<Utc>),
    collection: &str,
    body: &[u8],
) -> Result<PullId> {
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    let id = insert(&tx, user_id, provider, window, PullKind::Push).await?;
    keep_page(&tx, id, collection, 0, body).await?;
    tx.commit().await?;
    Ok(id)
}

/// The pull, locked for this transaction, once whoever holds it lets go (a notice widening
/// it, for a moment; another worker storing it, which leaves it done); `None` when it is gone.
pub async fn lock(client: &impl GenericClient, id: PullId) -> Result<Option<Pull>> {
    let row =
        client.query_opt("select * from vendor_pulls where id = $1 for update", &[&id]).await?;
    row.as_ref().map(from_row).transpose()
}

pub async fn get(db: &Db, id: PullId) -> Result<Option<Pull>> {
    let client = db.client().await?;
    let row = client.query_opt("select * from vendor_pulls where id = $1", &[&id]).await?;
    row.as_ref().map(from_row).transpose()
}

/// Sets when a queued pull may start again (counting an attempt when `count`); returns the
/// attempts so far (0 when the pull is no longer queued: another worker ended it).
pub async fn defer(
    client: &impl GenericClient,
    id: PullId,
    until: DateTime<Utc>,
    error: Option<&str>,
    count: bool,
) -> Result<i32> {
    let row = client
        .query_opt(
            "update vendor_pulls set attempts = attempts + $4::int, not_before = $2,
                 last_error = coalesce($3, last_error), updated_at = now()
             where id = $1 and status = $5 returning attempts",
            &[&id, &until, &error, &i32::from(count), &PullStatus::Queued],
        )
        .await?;
    row.map_or(Ok(0), |r| Ok(r.try_get(0)?))
}

/// Ends a queued pull; false when it was not queued (another worker ended it first).
pub async fn finish(
    client: &impl GenericClient,
    id: PullId,
    status: PullStatus,
    error: Option<&str>,
) -> Result<bool> {
    let n = client
        .execute(
            "update vendor_pulls set status = $2, last_error = $3, updated_at = now()
             where id = $1 and status = $4",
            &[&id, &status, &error, &PullStatus::Queued],
        )
        .await?;
    Ok(n == 1)
}

/// Keeps one page as the vendor answered it.
pub async fn keep_page(
    client: &impl GenericClient,
    id: PullId,
    collection: &str,
    seq: i32,
    body: &[u8],
) -> Result<()> {
    client
        .execute(
            "insert into vendor_pages (pull_id, collection, seq, body) values ($1, $2, $3, $4)
             on conflict (pull_id, collection, seq) do update set body = excluded.body,
                 received_at = now()",
            &[&id, &collection, &seq, &body],
        )
        .await?;
    Ok(())
}

/// Queued pulls put off until a time that has come (`not_before` passed, and not announced
/// since it was set), marked announced now: a wait ends when it was meant to.
pub async fn wake_due(db: &Db, limit: i64) -> Result<Vec<PullId>> {
    let client = db.client().await?;
    // `'queued'` written out, here and in `take_due`: it is the partial indexes' predicate
    // (`vendor_pulls_wake_idx`, `vendor_pulls_queued_idx`), which a bound state would not match.
    let rows = client
        .query(
            &client
                .prepare_cached(
                    "update vendor_pulls set announced_at = now()
                     where id in (select id from vendor_pulls
                                  where status = 'queued' and not_before <= now()
                                    and announced_at < not_before
                                  order by not_before limit $1
                                  for update skip locked)
                     returning id",
                )
                .await?,
            &[&limit],
        )
        .await?;
    rows.iter().map(|r| Ok(r.try_get(0)?)).collect()
}

/// Queued pulls that are due and were not announced within `grace`, marked announced now.
pub async fn take_due(db: &Db, grace: std::time::Duration, limit: i64) -> Result<Vec<PullId>> {
    let client = db.client().await?;
    let rows = client
        .query(
            "update vendor_pulls set announced_at = now()
             where id in (select id from vendor_pulls
                          where status = 'queued' and not_before <= now()
                            and announced_at < now() - make_interval(secs => $1)
                          order by not_before limit $2
                          for update skip locked)
             returning id",
            &[&grace.as_secs_f64(), &limit],
        )
        .await?;
    rows.iter().map(|r| Ok(r.try_get(0)?)).collect()
}

/// A user's pulls that stored data (since `since`), oldest first: `(id, provider)`.
pub async fn done_for_user(
    db: &Db,
    user_id: UserId,
    since: Option<DateTime<Utc>>,
) -> Result<Vec<(PullId, String)>> {
    let client = db.client().await?;
    let rows = client
        .query(
            "select id, provider from vendor_pulls
             where user_id = $1 and status = $3 and ($2::timestamptz is null or created_at >= $2)
             order by created_at, id",
            &[&user_id, &since, &PullStatus::Done],
        )
        .await?;
    rows.iter().map(|r| Ok((r.try_get(0)?, r.try_get(1)?))).collect()
}

/// The pages a pull kept: `(collection, seq, zstd body)`.
pub async fn pages(db: &Db, id: PullId) -> Result<Vec<(String, i32, Vec<u8>)>> {
    let client = db.client().await?;
    let rows = client
        .query(
            "select collection, seq, body from vendor_pages where pull_id = $1 order by collection, seq",
            &[&id],
        )
        .await?;
    rows.iter().map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?))).collect()
}
