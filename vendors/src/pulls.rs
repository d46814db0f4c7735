//! Pulls: a user's data over a window, read from a vendor and written through the SDK path's
//! storage (dedup, rollups, events, source priority). A pull is a `vendor_pulls` row announced
//! on the worker's pull lane, so a worker that dies mid-pull loses nothing: the entry is taken
//! over, or the sweeper announces the still-queued row again. Everything is written in one
//! transaction with the pull marked done, so a pull is stored once.
//!
//! A pull's kind says where its data comes from: fetched from the vendor's API (in steps of the
//! vendor's longest window), pushed by the vendor in a notification (its page kept when the
//! notification was taken), or asked of the vendor to be pushed later (a backfill, which
//! stores nothing itself).
//!
//! A vendor that answers 429 (or says so in a page) is waited for (`rate_limit_wait`) and the pull
//! resumes then, from the start: pages already read are read again and store nothing twice.
//! Other failures back off (2^attempts minutes, at most an hour) up to `MAX_ATTEMPTS`.

use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use futures::future::BoxFuture;
use ingest::Normalised;
use ingest::jobs::JobQueue;
use schema::Db;
use schema::catalogue::providers::LiveSyncMode;
use schema::ids::PullId;
use schema::ids::UserId;
use schema::sealed::MasterKeys;
use schema::sync_runs::{Finish, RunSource, RunStatus};
use schema::vendor_pulls::{Pull, PullKind, PullStatus};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::tokens::{self, TokenError};
use crate::{Endpoints, PageError, Vendor, VendorConfig, Window};

/// Attempts before a pull that keeps failing is marked failed (waits for a rate limit are no
/// failures, but count too, so a vendor that never lets us in ends the pull).
pub const MAX_ATTEMPTS: i32 = 8;
/// Pages read of one collection in one pull, at most.
const MAX_PAGES: i32 = 500;
/// Bytes of one page, at most.
const MAX_PAGE_BYTES: usize = 32 << 20;
/// Bytes one pull reads in all, at most (it holds them until it writes): a longer window is
/// to be pulled in parts.
const MAX_PULL_BYTES: usize = 256 << 20;

/// What the pull worker needs.
#[derive(Clone)]
pub struct Puller {
    pub db: Db,
    pub keys: Arc<MasterKeys>,
    pub http: reqwest::Client,
    pub vendors: VendorConfig,
    /// Where vendors send users back (the redirect URI is part of some token calls).
    pub public_url: String,
    pub queue: JobQueue,
    /// Write outbox events.
    pub outbox: bool,
    /// How long a queued pull may stay unannounced before the sweeper announces it again.
    pub sweep_grace: Duration,
    /// How often each connection of a pulling vendor is pulled.
    pub every: Duration,
}

/// What a scheduled pull reads: the last two days (a day's data can change until it ends in
/// every zone, and vendors post sleep after the user opens their app).
const SCHEDULED_WINDOW: Duration = Duration::from_secs(2 * 24 * 3600);

impl std::fmt::Debug for Puller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Puller").field("vendors", &self.vendors).finish_non_exhaustive()
    }
}

/// How one pull attempt ended.
enum Outcome {
    Done(Box<Normalised>, Vec<(&'static str, i32, Vec<u8>)>),
    /// Try again at this time: a failure worth retrying (counted as an attempt).
    Later(chrono::DateTime<Utc>, String),
    /// Wait for a vendor's rate limit (not counted: waiting is not failing).
    RateLimited(chrono::DateTime<Utc>, String),
    /// Give up, with this reason.
    Fail(String),
}

impl ingest::worker::PullHandler for Puller {
    fn run(&self, id: PullId) -> BoxFuture<'_, bool> {
        Box::pin(async move {
            use futures::FutureExt;
            // A vendor answer no mapping foresaw must not take the worker down with it: the
            // pull fails and says so.
            let ran = std::panic::AssertUnwindSafe(self.run_pull(id)).catch_unwind().await;
            let ran = match ran {
                Ok(ran) => ran,
                Err(_) => {
                    tracing::error!(pull = %id, "a pull panicked");
                    self.fail_by_id(id, "a vendor answer could not be read (the pull panicked)")
                        .await
                }
            };
            match ran {
                Ok(()) => true,
                Err(e) => {
                    // Counted and put off, so a failure that repeats ends the pull after
                    // MAX_ATTEMPTS instead of being taken over forever; when even that cannot
                    // be written, the entry stays pending and is claimed again.
                    tracing::warn!(error = %e, pull = %id, "a pull failed; it will be tried again");
                    let why = e.to_string();
                    let at = Utc::now() + backoff(1);
                    match self.db.client().await {
                        Ok(client) => {
                            schema::vendor_pulls::defer(&client, id, at, Some(&why), true)
                                .await
                                .is_ok()
                        }
                        Err(_) => false,
                    }
                }
            }
        })
    }

    fn due(&self) -> BoxFuture<'_, Vec<PullId>> {
        Box::pin(async move {
            let pulling: Vec<(&str, LiveSyncMode)> = crate::VENDORS
                .iter()
                .map(|v| v.provider())
                .filter(|p| self.vendors.is_configured(p.slug))
                .map(|p| (p.slug, p.live_sync_mode.unwrap_or(LiveSyncMode::Pull)))
                .collect();
            match schema::vendor_pulls::schedule(
                &self.db,
                &pulling,
                self.every,
                SCHEDULED_WINDOW,
                500,
            )
            .await
            {
                Ok(n) if n > 0 => tracing::info!(pulls = n, "scheduled pulls"),
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "scheduling pulls failed"),
            }
            schema::vendor_pulls::take_due(&self.db, self.sweep_grace, 500).await.unwrap_or_else(
                |e| {
                    tracing::warn!(error = %e, "looking for due pulls failed");
                    Vec::new()
                },
            )
        })
    }

    fn wake(&self) -> BoxFuture<'_, Vec<PullId>> {
        Box::pin(async move {
            schema::vendor_pulls::wake_due(&self.db, 500).await.unwrap_or_else(|e| {
                tracing::debug!(error = %e, "looking for pulls whose wait ended failed");
                Vec::new()
            })
        })
    }
}

/// How a vendor's history is read: pulled, or asked for to be sent by notification.
pub fn history_kind(vendor: &dyn Vendor) -> PullKind {
    match vendor.info().history {
        crate::History::Pull => PullKind::Fetch,
        crate::History::Backfill => PullKind::Backfill,
    }
}

/// Queues a pull over `window` and announces it; returns its id (the task id).
pub async fn enqueue(
    db: &Db,
    queue: &JobQueue,
    user_id: UserId,
    provider: &str,
    window: Window,
    kind: PullKind,
) -> Result<PullId, schema::Error> {
    let id = {
        let client = db.client().await?;
        schema::vendor_pulls::insert(&client, user_id, provider, window, kind).await?
    };
    announce(queue, id).await;
    Ok(id)
}

/// Queues data a vendor pushed (kept as the pull's page before this returns) and announces it.
pub async fn enqueue_pushed(
    db: &Db,
    queue: &JobQueue,
    user_id: UserId,
    provider: &str,
    collection: &str,
    page: &Value,
) -> Result<PullId, schema::Error> {
    // A page that cannot be kept is refused (the vendor sends it again), never acknowledged
    // and lost.
    let body = serde_json::to_vec(page)
        .map_err(|source| schema::Error::Payload { what: "pushed vendor page", source })?;
    let packed = zstd::encode_all(&body[..], 3)
        .map_err(|_| schema::Error::Inconsistent("a pushed vendor page could not be compressed"))?;
    let now = Utc::now();
    let id =
        schema::vendor_pulls::insert_pushed(db, user_id, provider, (now, now), collection, &packed)
            .await?;
    announce(queue, id).await;
    Ok(id)
}

/// Best effort: the row is the record, and the sweeper announces what Redis did not take.
async fn announce(queue: &JobQueue, id: PullId) {
    if let Err(e) = queue.announce(&[id]).await {
        tracing::warn!(error = %e, pull = %id, "announcing a pull failed; the sweeper will");
    }
}

/// The longest window a notification may ask to pull, and how far in the future it may end.
const NOTIFIED_DAYS: i64 = 31;

/// A notification's window, bounded: it ends by tomorrow and spans at most `NOTIFIED_DAYS`
/// (a notice naming years, forged or not, costs no more than a month of requests).
fn notified_window((start, end): Window, now: chrono::DateTime<Utc>) -> Window {
    let end = end.min(now + chrono::Duration::days(1));
    let start = start.max(end - chrono::Duration::days(NOTIFIED_DAYS)).min(end);
    (start, end)
}

/// Queues a pull for a vendor's notification, or widens the one queued for the user and
/// vendor to take it in (merged windows span at most `NOTIFIED_DAYS`); whether a pull was
/// added. A pull added with a `delay` waits that long (the sweeper announces it when due).
pub async fn enqueue_notified(
    db: &Db,
    queue: &JobQueue,
    (user_id, provider): (UserId, &str),
    window: Window,
    delay: Option<std::time::Duration>,
) -> Result<bool, schema::Error> {
    let now = Utc::now();
    let window = notified_window(window, now);
    let span = chrono::Duration::days(NOTIFIED_DAYS);
    let not_before = delay.and_then(|d| chrono::Duration::from_std(d).ok()).map(|d| now + d);
    let Some(id) =
        schema::vendor_pulls::notified(db, user_id, provider, window, span, not_before).await?
    else {
        return Ok(false);
    };
    if not_before.is_none() {
        announce(queue, id).await;
    }
    Ok(true)
}

/// Queues the check of a vendor's notice that the user removed the app, unless one is queued
/// already; whether one was added.
pub async fn enqueue_deregistration(
    db: &Db,
    queue: &JobQueue,
    user_id: UserId,
    provider: &str,
) -> Result<bool, schema::Error> {
    let Some(id) = schema::vendor_pulls::deregistration(db, user_id, provider).await? else {
        return Ok(false);
    };
    announce(queue, id).await;
    Ok(true)
}

/// `window` in consecutive parts of at most `step` (the whole window when there is none).
fn steps(window: Window, step: Option<chrono::Duration>) -> Vec<Window> {
    let Some(step) = step.filter(|s| *s > chrono::Duration::zero()) else { return vec![window] };
    let mut out = Vec::new();
    let mut from = window.0;
    while from < window.1 {
        let to = from.checked_add_signed(step).map_or(window.1, |t| t.min(window.1));
        out.push((from, to));
        from = to;
    }
    out
}

/// Waits `wait` seconds (1 s to a day: a daily limit resets at its day's end) for a vendor's
/// rate limit.
fn rate_limited(slug: &str, wait: i64) -> Outcome {
    let wait = wait.clamp(1, 86_400);
    let at = Utc::now() + chrono::Duration::seconds(wait);
    Outcome::RateLimited(at, format!("{slug} asked to wait {wait} s (rate limit)"))
}

fn backoff(attempts: i32) -> chrono::Duration {
    chrono::Duration::minutes(1_i64 << attempts.clamp(0, 6)).min(chrono::Duration::hours(1))
}

impl Puller {
    fn redirect(&self, slug: &str) -> String {
        crate::callback_url(&self.public_url, slug)
    }

    async fn run_pull(&self, id: PullId) -> Result<(), schema::Error> {
        let Some(pull) = schema::vendor_pulls::get(&self.db, id).await? else { return Ok(()) };
        // A second's grace for the clocks of this process and of the database, which woke it.
        let due = pull.not_before <= Utc::now() + chrono::Duration::seconds(1);
        if pull.status != PullStatus::Queued || !due {
            // Done, or not yet due: the sweeper announces it when it is.
            return Ok(());
        }
        let started = Utc::now();
        let outcome = match (crate::by_slug(&pull.provider), pull.kind) {
            (None, _) => Outcome::Fail(format!("no adapter for {}", pull.provider)),
            (Some(vendor), PullKind::Fetch) => self.fetch(vendor, &pull).await?,
            (Some(vendor), PullKind::Push) => {
                Outcome::Done(Box::new(map_kept(&self.db, vendor, pull.id).await?), Vec::new())
            }
            (Some(vendor), PullKind::Backfill) => self.backfill(vendor, &pull).await?,
            (Some(vendor), PullKind::Deregistration) => self.deregistration(vendor, &pull).await?,
        };
        match outcome {
            Outcome::Done(n, pages) => self.store(&pull, *n, pages, started).await,
            Outcome::RateLimited(at, why) => {
                let client = self.db.client().await?;
                schema::vendor_pulls::defer(&client, id, at, Some(&why), false).await?;
                tracing::info!(pull = %id, why, until = %at, "pull waits for a rate limit");
                Ok(())
            }
            Outcome::Later(at, why) => {
                let client = self.db.client().await?;
                let attempts =
                    schema::vendor_pulls::defer(&client, id, at, Some(&why), true).await?;
                if attempts >= MAX_ATTEMPTS {
                    return self
                        .fail(&pull, &format!("{why} (after {attempts} attempts)"), started)
                        .await;
                }
                tracing::info!(pull = %id, why, until = %at, "pull deferred");
                Ok(())
            }
            Outcome::Fail(why) => self.fail(&pull, &why, started).await,
        }
    }

    /// The vendor's endpoints and a usable access token of the pull's user, or how the pull
    /// ends for now.
    async fn connection(
        &self,
        vendor: &dyn Vendor,
        pull: &Pull,
    ) -> Result<Result<(&Endpoints, String), Outcome>, schema::Error> {
        let slug = vendor.provider().slug;
        let Some(ends) = self.vendors.endpoints(slug) else {
            return Ok(Err(Outcome::Fail(format!("{slug} is not configured"))));
        };
        let redirect = self.redirect(slug);
        let client = tokens::Client {
            db: &self.db,
            keys: &self.keys,
            http: &self.http,
            redirect: &redirect,
            events: self.outbox,
        };
        Ok(match tokens::access_token(&client, vendor, ends, pull.user_id).await {
            Ok(t) => Ok((ends, t)),
            Err(TokenError::Db(e)) => return Err(e),
            Err(e @ TokenError::Unavailable(..)) => {
                Err(Outcome::Later(Utc::now() + backoff(pull.attempts), e.to_string()))
            }
            Err(e) => Err(Outcome::Fail(e.to_string())),
        })
    }

    /// One request at the vendor: its body (`None` when the vendor does not give it to this
    /// user: a 403, a scope or permission the user did not grant), or how the pull ends for now.
    async fn get(
        &self,
        vendor: &dyn Vendor,
        ends: &Endpoints,
        token: &str,
        url: url::Url,
        attempts: i32,
    ) -> Result<Option<Vec<u8>>, Outcome> {
        let slug = vendor.provider().slug;
        let request = vendor.authorize(self.http.get(url), ends, token);
        let response = match request.timeout(Duration::from_secs(60)).send().await {
            Ok(r) => r,
            Err(e) => {
                let at = Utc::now() + backoff(attempts);
                let e = e.without_url();
                return Err(Outcome::Later(at, format!("{slug} could not be reached: {e}")));
            }
        };
        let status = response.status();
        if status == reqwest::StatusCode::TOO_MANY_REQUESTS {
            let wait = vendor
                .rate_limit_wait(response.headers())
                .unwrap_or_else(|| rate_limit_wait(response.headers()));
            return Err(rate_limited(slug, wait));
        }
        if status == reqwest::StatusCode::FORBIDDEN {
            return Ok(None);
        }
        if !status.is_success() {
            let at = Utc::now() + backoff(attempts);
            return Err(Outcome::Later(at, format!("{slug} answered {status}")));
        }
        read_bounded(response)
            .await
            .map(Some)
            .map_err(|why| Outcome::Later(Utc::now() + backoff(attempts), why))
    }

    /// Reads every page of every collection, in steps of the vendor's longest window; nothing
    /// is written yet.
    async fn fetch(&self, vendor: &dyn Vendor, pull: &Pull) -> Result<Outcome, schema::Error> {
        let slug = vendor.provider().slug;
        let (ends, token) = match self.connection(vendor, pull).await? {
            Ok(c) => c,
            Err(outcome) => return Ok(outcome),
        };
        let mut n = Normalised { provider: slug, ..Normalised::default() };
        let mut pages = Vec::new();
        let mut read = 0;
        for &collection in vendor.collections() {
            let mut seq = 0;
            for window in
                steps((pull.window_start, pull.window_end), vendor.window_step(collection))
            {
                let mut next: Option<String> = None;
                loop {
                    if seq >= MAX_PAGES {
                        // A vendor that never ends a collection (a repeated page token): no
                        // partial window is stored as if it were whole.
                        return Ok(Outcome::Fail(format!(
                            "{slug} gave more than {MAX_PAGES} pages of {collection}"
                        )));
                    }
                    let Ok(url) =
                        vendor.page_url(&ends.api_url, collection, window, next.as_deref())
                    else {
                        return Ok(Outcome::Fail(format!("{slug}_API_URL is not a URL")));
                    };
                    let body = match self.get(vendor, ends, &token, url, pull.attempts).await {
                        Ok(Some(b)) => b,
                        Ok(None) => {
                            // The rest of the pull goes on: one collection the user did not
                            // grant does not keep the others from being stored.
                            let why = "a collection the vendor does not give this user (403)";
                            n.report.warn(why, Some(collection.to_string()));
                            break;
                        }
                        Err(Outcome::Later(at, why)) => {
                            return Ok(Outcome::Later(at, format!("{why} for {collection}")));
                        }
                        Err(outcome) => return Ok(outcome),
                    };
                    read += body.len();
                    if read > MAX_PULL_BYTES {
                        let why = format!(
                            "{slug} gave more than {MAX_PULL_BYTES} bytes in one pull; pull shorter windows"
                        );
                        return Ok(Outcome::Fail(why));
                    }
                    // A 2xx without a body (Polar's 204) is a page with nothing in it.
                    let page = if body.iter().all(|b| b.is_ascii_whitespace()) {
                        Value::Null
                    } else {
                        match serde_json::from_slice::<Value>(&body) {
                            Ok(page) => page,
                            Err(_) => {
                                let why = format!("{slug} answered {collection} with no JSON");
                                return Ok(Outcome::Fail(why));
                            }
                        }
                    };
                    match vendor.page_error(&page) {
                        Some(PageError::RateLimited(wait)) => return Ok(rate_limited(slug, wait)),
                        Some(e @ (PageError::Failed(_) | PageError::TokenRefused)) => {
                            let why = match e {
                                PageError::Failed(why) => why,
                                _ => "refused the token (401)".into(),
                            };
                            let at = Utc::now() + backoff(pull.attempts);
                            return Ok(Outcome::Later(
                                at,
                                format!("{slug} {why} for {collection}"),
                            ));
                        }
                        None => {}
                    }
                    vendor.map_page(collection, &page, &mut n);
                    next = vendor.next_page(&page, next.as_deref(), window);
                    let packed = zstd::encode_all(&body[..], 3).unwrap_or_default();
                    pages.push((collection, seq, packed));
                    seq += 1;
                    if next.is_none() {
                        break;
                    }
                }
            }
        }
        Ok(Outcome::Done(Box::new(n), pages))
    }

    /// Checks a vendor's notice that the user removed the app: the connection ends
    /// (`deregistration`) when the vendor refuses a fresh token where it says who the user is
    /// (401 or 403, or its refusal in a page). A refresh the vendor refuses ends it too
    /// (`refresh_failed`).
    async fn deregistration(
        &self,
        vendor: &dyn Vendor,
        pull: &Pull,
    ) -> Result<Outcome, schema::Error> {
        let slug = vendor.provider().slug;
        let done = || {
            Outcome::Done(
                Box::new(Normalised { provider: slug, ..Normalised::default() }),
                Vec::new(),
            )
        };
        let (ends, token) = match self.connection(vendor, pull).await? {
            Ok(c) => c,
            Err(later @ Outcome::Later(..)) => return Ok(later),
            // No token, or a refresh the vendor refused: the connection is over already.
            Err(_) => return Ok(done()),
        };
        let refused = match vendor.user_url(&ends.api_url) {
            None => true,
            Some(url) => {
                let request = vendor.authorize(self.http.get(url), ends, &token);
                match request.timeout(Duration::from_secs(20)).send().await {
                    Ok(r) if matches!(r.status().as_u16(), 401 | 403) => true,
                    Ok(r) if r.status().is_success() => {
                        let body: Value = r.json().await.unwrap_or_default();
                        vendor.page_error(&body) == Some(PageError::TokenRefused)
                    }
                    Ok(r) => {
                        let at = Utc::now() + backoff(pull.attempts);
                        return Ok(Outcome::Later(at, format!("{slug} answered {}", r.status())));
                    }
                    Err(e) => {
                        let at = Utc::now() + backoff(pull.attempts);
                        let e = e.without_url();
                        return Ok(Outcome::Later(at, format!("{slug} could not be reached: {e}")));
                    }
                }
            }
        };
        if refused {
            let reason = schema::connections::RevokeReason::Deregistration;
            schema::connections::revoke(&self.db, pull.user_id, slug, reason, self.outbox).await?;
        } else {
            tracing::info!(pull = %pull.id, provider = slug, "a deregistration notice, but the vendor still takes the token");
        }
        Ok(done())
    }

    /// Asks the vendor to send the window's data by notification, every collection in steps of
    /// its longest window; what it sends later is stored as pushed pulls.
    async fn backfill(&self, vendor: &dyn Vendor, pull: &Pull) -> Result<Outcome, schema::Error> {
        let slug = vendor.provider().slug;
        let (ends, token) = match self.connection(vendor, pull).await? {
            Ok(c) => c,
            Err(outcome) => return Ok(outcome),
        };
        for &collection in vendor.collections() {
            for window in steps((pull.window_start, pull.window_end), vendor.backfill_step()) {
                let Some(url) = vendor.backfill_url(&ends.api_url, collection, window) else {
                    continue;
                };
                let request = vendor.authorize(self.http.get(url), ends, &token);
                let status = match request.timeout(Duration::from_secs(60)).send().await {
                    Ok(r) if r.status() == reqwest::StatusCode::TOO_MANY_REQUESTS => {
                        let wait = vendor
                            .rate_limit_wait(r.headers())
                            .unwrap_or_else(|| rate_limit_wait(r.headers()));
                        return Ok(rate_limited(slug, wait));
                    }
                    Ok(r) => r.status(),
                    Err(e) => {
                        let at = Utc::now() + backoff(pull.attempts);
                        let e = e.without_url();
                        return Ok(Outcome::Later(at, format!("{slug} could not be reached: {e}")));
                    }
                };
                // 409: this window was asked for already, which is as good (a retried pull);
                // 403: the user did not grant history, 400: this type is not kept that far
                // back: the other types are asked for still.
                if matches!(status.as_u16(), 400 | 403) {
                    tracing::warn!(pull = %pull.id, provider = slug, collection, %status, "a backfill was refused");
                    continue;
                }
                if !(status.is_success() || status == reqwest::StatusCode::CONFLICT) {
                    let at = Utc::now() + backoff(pull.attempts);
                    let why = format!("{slug} answered {status} to the backfill of {collection}");
                    return Ok(Outcome::Later(at, why));
                }
            }
        }
        let n = Normalised { provider: slug, ..Normalised::default() };
        Ok(Outcome::Done(Box::new(n), Vec::new()))
    }

    /// Writes the pulled data, the pages, the run and the pull's end in one transaction.
    async fn store(
        &self,
        pull: &Pull,
        n: Normalised,
        pages: Vec<(&'static str, i32, Vec<u8>)>,
        started: chrono::DateTime<Utc>,
    ) -> Result<(), schema::Error> {
        let mut client = self.db.client().await?;
        let tx = client.transaction().await?;
        let locked = match schema::vendor_pulls::lock(&tx, pull.id).await? {
            Some(p) if p.status == PullStatus::Queued => p,
            // Done by another worker meanwhile, or held by one.
            _ => return Ok(()),
        };
        // A notification that widened the window while it was read: what was read is stored
        // here, the widened window pulled next.
        let read = (pull.window_start, pull.window_end);
        let widened = schema::vendor_pulls::split_widened(&tx, &locked, read).await?;
        for (collection, seq, body) in &pages {
            schema::vendor_pulls::keep_page(&tx, pull.id, collection, *seq, body).await?;
        }
        let (_, counts) =
            ingest::process::write_pulled(&tx, pull.user_id, pull.id.0, &n, self.outbox).await?;
        let finish = Finish {
            status: RunStatus::completed(n.report.problem_count()),
            message: match pull.kind {
                PullKind::Backfill => {
                    format!("{} history requested; it arrives by notification", pull.provider)
                }
                PullKind::Deregistration => {
                    format!("{} deregistration checked", pull.provider)
                }
                PullKind::Fetch | PullKind::Push => format!("{} pull saved", pull.provider),
            },
            counts: Some(counts),
            dropped: n.report.dropped_json(),
            error: None,
            started_at: started,
        };
        let run = record_run(&tx, pull, &finish).await?;
        schema::vendor_pulls::finish(&tx, pull.id, PullStatus::Done, None).await?;
        // Data came: the connection synced (a backfill request or a deregistration check
        // brings none).
        if matches!(pull.kind, PullKind::Fetch | PullKind::Push) {
            schema::connections::mark_synced(&tx, pull.user_id, &pull.provider).await?;
        }
        tx.commit().await?;
        if let Some(next) = widened {
            announce(&self.queue, next).await;
        }
        self.queue.publish_sync(pull.user_id, &ingest::process::status_event(&run)).await;
        Ok(())
    }

    async fn fail_by_id(&self, id: PullId, why: &str) -> Result<(), schema::Error> {
        match schema::vendor_pulls::get(&self.db, id).await? {
            Some(pull) => self.fail(&pull, why, Utc::now()).await,
            None => Ok(()),
        }
    }

    async fn fail(
        &self,
        pull: &Pull,
        why: &str,
        started: chrono::DateTime<Utc>,
    ) -> Result<(), schema::Error> {
        let mut client = self.db.client().await?;
        let tx = client.transaction().await?;
        let locked = match schema::vendor_pulls::lock(&tx, pull.id).await? {
            Some(p) if p.status == PullStatus::Queued => p,
            // Ended meanwhile by another worker: its run stands.
            _ => return Ok(()),
        };
        // What a notification added while this window was read is not lost with it.
        let read = (pull.window_start, pull.window_end);
        let widened = schema::vendor_pulls::split_widened(&tx, &locked, read).await?;
        schema::vendor_pulls::finish(&tx, pull.id, PullStatus::Failed, Some(why)).await?;
        let finish = Finish {
            status: RunStatus::Failed,
            message: format!("{} pull failed", pull.provider),
            counts: None,
            dropped: json!({}),
            error: Some(why.to_string()),
            started_at: started,
        };
        let run = record_run(&tx, pull, &finish).await?;
        tx.commit().await?;
        if let Some(next) = widened {
            announce(&self.queue, next).await;
        }
        tracing::warn!(pull = %pull.id, why, "pull failed");
        self.queue.publish_sync(pull.user_id, &ingest::process::status_event(&run)).await;
        Ok(())
    }
}

/// How long a vendor's 429 asks to wait, in seconds (1 s to an hour): its `Retry-After`, else
/// the seconds until its window resets (`X-RateLimit-Reset`, as WHOOP sends it), else a minute.
fn rate_limit_wait(headers: &reqwest::header::HeaderMap) -> i64 {
    let seconds = |name: &str| {
        headers.get(name).and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse::<i64>().ok())
    };
    seconds("retry-after").or_else(|| seconds("x-ratelimit-reset")).unwrap_or(60).clamp(1, 3600)
}

/// Records how a pull's run ended.
async fn record_run(
    tx: &deadpool_postgres::Transaction<'_>,
    pull: &Pull,
    finish: &Finish,
) -> Result<schema::sync_runs::SyncRun, schema::Error> {
    schema::sync_runs::finish(tx, pull.id.0, pull.user_id, &pull.provider, RunSource::Pull, finish)
        .await
}

/// The pages a pull kept, mapped in the order the pull read them.
async fn map_kept(db: &Db, vendor: &dyn Vendor, id: PullId) -> Result<Normalised, schema::Error> {
    let mut pages = schema::vendor_pulls::pages(db, id).await?;
    let order = |c: &str| vendor.collections().iter().position(|x| *x == c).unwrap_or(usize::MAX);
    pages.sort_by_key(|(c, seq, _)| (order(c), *seq));
    let mut n = Normalised { provider: vendor.provider().slug, ..Normalised::default() };
    for (collection, _, body) in &pages {
        let Some(page) =
            zstd::decode_all(&body[..]).ok().and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        else {
            tracing::warn!(pull = %id, collection, "a kept page does not read; skipped");
            continue;
        };
        vendor.map_page(collection, &page, &mut n);
    }
    Ok(n)
}

/// The body, refused past `MAX_PAGE_BYTES`.
async fn read_bounded(mut response: reqwest::Response) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| format!("reading a page: {e}"))? {
        if body.len() + chunk.len() > MAX_PAGE_BYTES {
            return Err(format!("a page is larger than {MAX_PAGE_BYTES} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// What re-deriving a user's vendor data did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reprocessed {
    pub pulls: usize,
    pub samples_deleted: u64,
    pub workouts_deleted: u64,
}

/// Re-derives a user's vendor data from the pages their pulls kept, after a mapping or unit
/// fix: what the pulls stored is deleted and the pages mapped and written again, oldest pull
/// first (sleep sessions are merged in place; no webhook events). The caller rebuilds the
/// user's rollups after.
pub async fn reprocess_user(
    db: &Db,
    user_id: UserId,
    since: Option<chrono::DateTime<Utc>>,
) -> Result<Reprocessed, schema::Error> {
    let pulls = schema::vendor_pulls::done_for_user(db, user_id, since).await?;
    let ids: Vec<Uuid> = pulls.iter().map(|(id, _)| id.0).collect();
    let cleared = schema::replay::clear(db, user_id, &ids).await?;
    let out = Reprocessed {
        pulls: pulls.len(),
        samples_deleted: cleared.samples,
        workouts_deleted: cleared.workouts,
    };
    for (id, provider) in pulls {
        let Some(vendor) = crate::by_slug(&provider) else { continue };
        let n = map_kept(db, vendor, id).await?;
        let mut client = db.client().await?;
        let tx = client.transaction().await?;
        ingest::process::write_pulled(&tx, user_id, id.0, &n, false).await?;
        tx.commit().await?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use reqwest::header::{HeaderMap, HeaderValue};

    use super::*;

    #[test]
    fn a_notifications_window_is_bounded() {
        let t = |s: &str| crate::normal::at(s);
        let now = t("2026-03-10T12:00:00Z");
        assert_eq!(
            notified_window((t("1970-01-01T00:00:00Z"), t("2100-01-01T00:00:00Z")), now),
            (t("2026-02-08T12:00:00Z"), t("2026-03-11T12:00:00Z"))
        );
        let fine = (t("2026-03-09T00:00:00Z"), t("2026-03-10T00:00:00Z"));
        assert_eq!(notified_window(fine, now), fine);
        assert_eq!(
            steps(
                (t("2026-03-01T00:00:00Z"), t("2026-03-03T12:00:00Z")),
                Some(chrono::Duration::days(1))
            ),
            [
                (t("2026-03-01T00:00:00Z"), t("2026-03-02T00:00:00Z")),
                (t("2026-03-02T00:00:00Z"), t("2026-03-03T00:00:00Z")),
                (t("2026-03-03T00:00:00Z"), t("2026-03-03T12:00:00Z")),
            ]
        );
    }

    #[test]
    fn a_429_is_waited_out_as_the_vendor_says() {
        let mut h = HeaderMap::new();
        assert_eq!(rate_limit_wait(&h), 60, "nothing said: a minute");
        h.insert("x-ratelimit-reset", HeaderValue::from_static("17"));
        assert_eq!(rate_limit_wait(&h), 17);
        h.insert("retry-after", HeaderValue::from_static("5"));
        assert_eq!(rate_limit_wait(&h), 5, "Retry-After first");
        h.insert("retry-after", HeaderValue::from_static("999999"));
        assert_eq!(rate_limit_wait(&h), 3600, "at most an hour");
    }
}
