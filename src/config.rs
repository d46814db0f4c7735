//! Configuration: every setting from the environment (or a flag), with defaults that work on a
//! machine prepared by `scripts/stack.sh`. The README lists each variable.

use std::net::SocketAddr;
use std::time::Duration;

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct Settings {
    /// PostgreSQL with TimescaleDB.
    #[arg(
        long,
        env = "DATABASE_URL",
        global = true,
        default_value = "postgres://postgres:postgres@127.0.0.1:5432/wearhouse"
    )]
    pub database_url: String,

    /// Most database connections one process opens.
    #[arg(long, env = "DATABASE_POOL_SIZE", global = true, default_value_t = 16)]
    pub database_pool_size: usize,

    /// Redis: the job dispatcher (it keeps nothing PostgreSQL does not also hold).
    #[arg(long, env = "REDIS_URL", global = true, default_value = "redis://127.0.0.1:6379")]
    pub redis_url: String,

    /// Signs access tokens. When unset, a random key is generated on first start and kept in
    /// the database, so every process of the deployment shares it.
    #[arg(long, env = "SECRET_KEY", global = true, hide_env_values = true)]
    pub secret_key: Option<String>,

    /// Lifetime of developer and SDK access tokens.
    #[arg(long, env = "ACCESS_TOKEN_EXPIRE_MINUTES", global = true, default_value_t = 60)]
    pub access_token_expire_minutes: i64,

    /// The first developer, created on first start when there is none.
    #[arg(long, env = "ADMIN_EMAIL", global = true, default_value = "admin@wearhouse.local")]
    pub admin_email: String,

    /// The first developer's password. When unset, a random one is generated and logged once.
    #[arg(long, env = "ADMIN_PASSWORD", global = true, hide_env_values = true)]
    pub admin_password: Option<String>,

    /// Address and port the HTTP API listens on (`serve`, `all`).
    #[arg(long, env = "BIND", global = true, default_value = "127.0.0.1:8000")]
    pub bind: SocketAddr,

    /// Prefix of every Redis key (stream, channels), so deployments can share a Redis.
    #[arg(long, env = "REDIS_KEY_PREFIX", global = true, default_value = "wearhouse")]
    pub redis_key_prefix: String,

    /// Largest SDK sync body accepted, in bytes (after gzip decompression); larger → 413.
    #[arg(long, env = "SDK_MAX_BODY_BYTES", global = true, default_value_t = 50 * 1024 * 1024)]
    pub sdk_max_body_bytes: usize,

    /// Batches one worker process handles at once (each waits on its commit, so more than the
    /// cores helps with small batches).
    #[arg(long, env = "WORKER_CONCURRENCY", global = true, default_value_t = 4)]
    pub worker_concurrency: usize,

    /// A job left pending this long by a worker that died is taken over by another.
    #[arg(long, env = "WORKER_CLAIM_IDLE_SECONDS", global = true, default_value_t = 60)]
    pub worker_claim_idle_seconds: u64,

    /// How often each worker re-announces batches Redis lost (and deletes expired ones).
    #[arg(long, env = "WORKER_SWEEP_INTERVAL_SECONDS", global = true, default_value_t = 30)]
    pub worker_sweep_interval_seconds: u64,

    /// Accepted SDK batches are kept this many days, for `wearhouse reprocess`.
    #[arg(long, env = "BATCH_RETENTION_DAYS", global = true, default_value_t = 30)]
    pub batch_retention_days: i32,

    /// Write webhook events (the outbox) for every ingested batch.
    #[arg(long, env = "OUTGOING_WEBHOOKS_ENABLED", global = true, default_value_t = false, action = clap::ArgAction::Set)]
    pub outgoing_webhooks_enabled: bool,

    /// Where `wearhouse worker` serves /metrics (the API serves its own); unset: nowhere.
    #[arg(long, env = "METRICS_BIND", global = true)]
    pub metrics_bind: Option<SocketAddr>,

    /// Log format: `text` or `json`. Levels come from RUST_LOG (default `info`).
    #[arg(long, env = "LOG_FORMAT", global = true, default_value = "text")]
    pub log_format: LogFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

impl Settings {
    pub fn api(&self) -> api::ApiConfig {
        api::ApiConfig {
            secret_key: self.secret_key.clone().filter(|k| !k.is_empty()),
            access_token_minutes: self.access_token_expire_minutes,
            admin_email: self.admin_email.clone(),
            admin_password: self.admin_password.clone().filter(|p| !p.is_empty()),
            sdk_max_body_bytes: self.sdk_max_body_bytes,
        }
    }

    pub fn worker(&self) -> ingest::worker::WorkerConfig {
        let sweep = Duration::from_secs(self.worker_sweep_interval_seconds.max(1));
        ingest::worker::WorkerConfig {
            concurrency: self.worker_concurrency.max(1),
            claim_idle: Duration::from_secs(self.worker_claim_idle_seconds.max(1)),
            sweep_every: sweep,
            sweep_grace: sweep * 2,
            retention_days: self.batch_retention_days,
            events: self.outgoing_webhooks_enabled,
            max_attempts: 5,
        }
    }
}
