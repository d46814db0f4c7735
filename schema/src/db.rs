//! Connection pool, migrations and the TimescaleDB edition.
//!
//! Migrations are embedded in the binary (refinery) and applied by `wearhouse migrate` and at
//! every start-up. Two processes starting at once are serialised by a PostgreSQL advisory lock,
//! so each migration is applied exactly once.

use deadpool_postgres::{Hook, HookError, Manager, ManagerConfig, Object, Pool, RecyclingMethod};
use sha2::{Digest, Sha256};
use tokio_postgres::NoTls;

use crate::catalogue::series_types::SERIES_TYPES;
use crate::ids::SeriesId;
use crate::{Error, Result};

mod embedded {
    refinery::embed_migrations!("migrations");
}

/// Advisory-lock key that serialises migration runs ("wearhous" in ASCII).
const MIGRATION_LOCK: i64 = 0x7765_6172_686f_7573;

/// Which TimescaleDB build the server runs. The Apache edition has hypertables and
/// `time_bucket` but no continuous aggregates or compression; code must work on both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edition {
    Apache,
    Community,
}

/// What a pool's connections are for, as PostgreSQL sees them (`application_name`): bulk
/// writers look for the API's sessions there to yield to interactive reads
/// ([`crate::activity::api_sessions_active`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The HTTP API (`serve`, and the API half of `all`).
    Api,
    /// The background worker (`worker`, and the worker half of `all`).
    Worker,
    /// A command run by hand (`import`, `seal`, `migrate`, …) or a test.
    Tool,
}

impl Role {
    pub const fn application_name(self) -> &'static str {
        match self {
            Role::Api => "wearhouse api",
            Role::Worker => "wearhouse worker",
            Role::Tool => "wearhouse",
        }
    }

    /// The connection settings of `url` for sessions of this role: they carry the role's
    /// `application_name`, unless the URL names one.
    pub(crate) fn config(self, url: &str) -> Result<tokio_postgres::Config> {
        let mut config: tokio_postgres::Config = url.parse().map_err(Error::Url)?;
        if config.get_application_name().is_none() {
            config.application_name(self.application_name());
        }
        Ok(config)
    }
}

/// The database handle shared by the whole service: a pool plus what we learnt at start-up.
#[derive(Clone)]
pub struct Db {
    pool: Pool,
    edition: Edition,
}

impl Db {
    /// Opens a pool of at most `max_size` connections and checks that the server answers.
    pub async fn connect(url: &str, max_size: usize) -> Result<Db> {
        Db::connect_as(url, max_size, Role::Tool).await
    }

    /// [`Db::connect`] for `role`: its sessions carry the role's `application_name` (unless
    /// the URL names one).
    pub async fn connect_as(url: &str, max_size: usize, role: Role) -> Result<Db> {
        let config = role.config(url)?;
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig { recycling_method: RecyclingMethod::Fast },
        );
        // Every connection gets the per-session staging tables of the ingest path once, so
        // that writing a batch costs no round trip to create them.
        let pool = Pool::builder(manager)
            .max_size(max_size)
            .post_create(Hook::async_fn(|client, _| {
                Box::pin(async move {
                    client
                        .batch_execute(crate::sample_row::STAGING)
                        .await
                        .map_err(HookError::Backend)
                })
            }))
            .build()?;
        let client = pool.get().await?;
        let license: Option<String> = client
            .query_one("select current_setting('timescaledb.license', true)", &[])
            .await?
            .try_get(0)?;
        let edition = match license.as_deref() {
            Some("timescale") => Edition::Community,
            _ => Edition::Apache,
        };
        Ok(Db { pool, edition })
    }

    /// A handle over a pool built elsewhere (a read replica's).
    pub(crate) fn from_pool(pool: Pool, edition: Edition) -> Db {
        Db { pool, edition }
    }

    /// A connection from the pool. The wait is recorded (`wearhouse_db_pool_wait_seconds`): a
    /// pool too small for the load shows there before it shows as latency.
    pub async fn client(&self) -> Result<Object> {
        let asked = std::time::Instant::now();
        let client = self.pool.get().await?;
        metrics::histogram!("wearhouse_db_pool_wait_seconds").record(asked.elapsed().as_secs_f64());
        Ok(client)
    }

    pub fn edition(&self) -> Edition {
        self.edition
    }

    /// A cheap round trip, for health checks.
    pub async fn ping(&self) -> Result<()> {
        self.client().await?.simple_query("select 1").await?;
        Ok(())
    }

    /// Takes the session advisory lock named `name` on a connection of its own, kept until
    /// [`unlock`]; `None` when another session holds it. For work one process at a time does,
    /// whatever the workers running.
    pub async fn try_lock(&self, name: &str) -> Result<Option<Object>> {
        let client = self.client().await?;
        let locked: bool = client
            .query_one("select pg_try_advisory_lock(hashtext($1))", &[&name])
            .await?
            .try_get(0)?;
        Ok(locked.then_some(client))
    }
}

/// Releases the lock [`Db::try_lock`] took on `client`; should that fail, the connection is
/// closed (which releases it) rather than pooled with the lock held.
pub async fn unlock(client: Object, name: &str) {
    if client.execute("select pg_advisory_unlock(hashtext($1))", &[&name]).await.is_err() {
        drop(Object::take(client));
    }
}

/// Applies every pending migration and re-seeds the series-type catalogue.
/// Fails with a message saying what to do when TimescaleDB is missing.
pub async fn migrate(url: &str) -> Result<()> {
    let (mut client, connection) = tokio_postgres::connect(url, NoTls).await?;
    let conn_task = tokio::spawn(async move {
        if let Err(err) = connection.await {
            tracing::warn!(error = %err, "migration connection closed with an error");
        }
    });
    let result = migrate_locked(&mut client).await;
    drop(client);
    let _ = conn_task.await;
    result
}

/// A short digest of everything `migrate` puts in a database (the migrations and the seeded
/// catalogue). Test harnesses use it to know when a template database is stale.
pub fn fingerprint() -> String {
    let mut hash = Sha256::new();
    for m in embedded::migrations::runner().get_migrations() {
        hash.update(m.name().as_bytes());
        hash.update(m.checksum().to_le_bytes());
    }
    hash.update(format!("{SERIES_TYPES:?}").as_bytes());
    hex::encode(&hash.finalize()[..8])
}

async fn migrate_locked(client: &mut tokio_postgres::Client) -> Result<()> {
    check_timescale(client).await?;
    client.execute("select pg_advisory_lock($1)", &[&MIGRATION_LOCK]).await?;
    let outcome = async {
        let report = embedded::migrations::runner().run_async(client).await?;
        for m in report.applied_migrations() {
            tracing::info!(migration = %m, "applied migration");
        }
        seed_series_types(client).await
    }
    .await;
    // Unlock even when a migration failed; the session ends right after anyway.
    let unlock = client.execute("select pg_advisory_unlock($1)", &[&MIGRATION_LOCK]).await;
    outcome?;
    unlock?;
    Ok(())
}

async fn check_timescale(client: &tokio_postgres::Client) -> Result<()> {
    let row = client
        .query_one(
            "select exists (select 1 from pg_available_extensions where name = 'timescaledb'),
                    exists (select 1 from pg_extension where extname = 'timescaledb'),
                    current_setting('shared_preload_libraries')",
            &[],
        )
        .await?;
    let available: bool = row.try_get(0)?;
    let created: bool = row.try_get(1)?;
    let preload: String = row.try_get(2)?;
    if !available {
        return Err(Error::TimescaleMissing);
    }
    if !created && !preload.contains("timescaledb") {
        return Err(Error::TimescaleNotPreloaded);
    }
    Ok(())
}

async fn seed_series_types(client: &tokio_postgres::Client) -> Result<()> {
    let ids: Vec<SeriesId> = SERIES_TYPES.iter().map(|t| t.id).collect();
    let slugs: Vec<&str> = SERIES_TYPES.iter().map(|t| t.slug).collect();
    let units: Vec<&str> = SERIES_TYPES.iter().map(|t| t.unit).collect();
    let categories: Vec<&str> = SERIES_TYPES.iter().map(|t| t.category).collect();
    let aggregations: Vec<&str> = SERIES_TYPES.iter().map(|t| t.aggregation.as_str()).collect();
    let events: Vec<&str> = SERIES_TYPES.iter().map(|t| t.event).collect();
    client
        .execute(
            "insert into series_types (id, slug, unit, category, aggregation, event)
             select * from unnest($1::int2[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
             on conflict (id) do update set slug = excluded.slug, unit = excluded.unit,
                 category = excluded.category, aggregation = excluded.aggregation,
                 event = excluded.event",
            &[&ids, &slugs, &units, &categories, &aggregations, &events],
        )
        .await?;
    Ok(())
}

/// Runs `copy` (a COPY of rows that should all be new) under the savepoint `name`: `false` when
/// it met a stored key, and then nothing of it is written (the savepoint is rolled back).
pub(crate) async fn copied_if_new(
    tx: &deadpool_postgres::Transaction<'_>,
    name: &'static str,
    copy: impl Future<Output = Result<(), tokio_postgres::Error>>,
) -> Result<bool> {
    tx.batch_execute(&format!("savepoint {name}")).await?;
    match copy.await {
        Ok(()) => {
            tx.batch_execute(&format!("release savepoint {name}")).await?;
            Ok(true)
        }
        Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION) => {
            tx.batch_execute(&format!("rollback to savepoint {name}")).await?;
            Ok(false)
        }
        Err(e) => Err(e.into()),
    }
}
