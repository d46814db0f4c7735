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

    /// Comma-separated URLs of PostgreSQL streaming replicas of DATABASE_URL. The read routes
    /// (timeseries, events, summaries, health scores, overview) go to one that is at most
    /// REPLICA_MAX_LAG behind; everything else, and any read a replica cannot answer, goes to
    /// the primary.
    #[arg(long, env = "DATABASE_REPLICA_URLS", global = true, value_delimiter = ',')]
    pub database_replica_urls: Vec<String>,

    /// How far behind the primary a replica may be and still be read from: `500ms`, `2s`.
    #[arg(long, env = "REPLICA_MAX_LAG", global = true, default_value = "1s",
          value_parser = parse_lag)]
    pub replica_max_lag: Duration,

    /// Redis: the job dispatcher (it keeps nothing PostgreSQL does not also hold).
    #[arg(long, env = "REDIS_URL", global = true, default_value = "redis://127.0.0.1:6379")]
    pub redis_url: String,

    /// Signs access tokens. When unset, a random key is generated on first start and kept in
    /// the database, so every process of the deployment shares it.
    #[arg(long, env = "SECRET_KEY", global = true, hide_env_values = true)]
    pub secret_key: Option<String>,

    /// Seals the secrets the service stores (its generated token-signing key, webhook signing
    /// secrets): 32 random bytes as 64 hex digits or base64 (`openssl rand -hex 32`). Required
    /// by `serve`, `worker` and `all`; `scripts/run.sh` keeps one in ~/.cache/wearhouse.
    #[arg(long, env = "MASTER_KEY", global = true, hide_env_values = true)]
    pub master_key: Option<String>,

    /// The master key before a rotation: values sealed under it still open and are sealed
    /// again under MASTER_KEY at start.
    #[arg(long, env = "MASTER_KEY_PREVIOUS", global = true, hide_env_values = true)]
    pub master_key_previous: Option<String>,

    /// Lifetime of developer and SDK access tokens.
    #[arg(long, env = "ACCESS_TOKEN_EXPIRE_MINUTES", global = true, default_value_t = 60)]
    pub access_token_expire_minutes: i64,

    /// Days an SDK refresh token lives unused; each refresh starts the count again.
    #[arg(long, env = "SDK_REFRESH_TOKEN_DAYS", global = true, default_value_t = 90,
          value_parser = clap::value_parser!(u32).range(1..=3650))]
    pub sdk_refresh_token_days: u32,

    /// The first developer, created on first start when there is none.
    #[arg(long, env = "ADMIN_EMAIL", global = true, default_value = "admin@wearhouse.local")]
    pub admin_email: String,

    /// The first developer's password. When unset, a random one is generated and logged once.
    #[arg(long, env = "ADMIN_PASSWORD", global = true, hide_env_values = true)]
    pub admin_password: Option<String>,

    /// Address and port the HTTP API listens on (`serve`, `all`).
    #[arg(long, env = "BIND", global = true, default_value = "127.0.0.1:8000")]
    pub bind: SocketAddr,

    /// Where this service is reached from outside: vendors send users back to
    /// `<PUBLIC_URL>/api/v1/oauth/<provider>/callback` (register that URL at each vendor).
    #[arg(long, env = "PUBLIC_URL", global = true, default_value = "http://127.0.0.1:8000")]
    pub public_url: String,

    /// The deployment's name as end users see it, on the connect pages
    /// (`POST /users/{id}/connect-links`).
    #[arg(long, env = "DEPLOYMENT_NAME", global = true, default_value = "wearhouse")]
    pub deployment_name: String,

    /// Days an export of a user's record (`POST /users/{id}/exports`) is kept after it is
    /// asked for; then its archive is deleted.
    #[arg(long, env = "EXPORT_RETENTION_DAYS", global = true, default_value_t = 7)]
    pub export_retention_days: u32,

    /// Comma-separated host names (or `host:port`) the MCP endpoint `/mcp` answers to besides
    /// loopback and PUBLIC_URL's host (requests naming another host are refused: DNS rebinding).
    #[arg(long, env = "MCP_ALLOWED_HOSTS", global = true, value_delimiter = ',')]
    pub mcp_allowed_hosts: Vec<String>,

    /// Comma-separated URL prefixes OAuth may send users back to at the end (besides
    /// PUBLIC_URL), e.g. `https://app.example.com/connected`.
    #[arg(long, env = "OAUTH_REDIRECT_ALLOWLIST", global = true, value_delimiter = ',')]
    pub oauth_redirect_allowlist: Vec<String>,

    /// How often each connection of a pulling cloud vendor is pulled (the last two days), in
    /// seconds.
    #[arg(long, env = "VENDOR_PULL_INTERVAL_SECONDS", global = true, default_value_t = 3600)]
    pub vendor_pull_interval_seconds: u64,

    /// The vendors' variables (`<VENDOR>_CLIENT_ID`, …) when not read from the environment
    /// (tests).
    #[arg(skip)]
    pub vendor_variables: Option<std::collections::BTreeMap<String, String>>,

    /// Prefix of every Redis key (stream, channels), so deployments can share a Redis.
    #[arg(long, env = "REDIS_KEY_PREFIX", global = true, default_value = "wearhouse")]
    pub redis_key_prefix: String,

    /// Largest SDK sync body accepted, in bytes (after gzip decompression); larger → 413.
    #[arg(long, env = "SDK_MAX_BODY_BYTES", global = true, default_value_t = 50 * 1024 * 1024)]
    pub sdk_max_body_bytes: usize,

    /// Bytes of SDK batches (as sent) one user may have waiting to be processed; a batch sent
    /// beyond that is answered 503 with `Retry-After`, which the SDKs retry later.
    #[arg(long, env = "SDK_MAX_PENDING_BYTES_PER_USER", global = true, default_value_t = 256 * 1024 * 1024)]
    pub sdk_max_pending_bytes_per_user: i64,

    /// Batches one worker process handles at once (each waits on its commit, so more than the
    /// cores helps with small batches).
    #[arg(long, env = "WORKER_CONCURRENCY", global = true, default_value_t = 4)]
    pub worker_concurrency: usize,

    /// Failed developer logins allowed per account within `LOGIN_FAILURE_WINDOW_SECONDS`; more
    /// are answered 429 with `Retry-After` until the window ends.
    #[arg(long, env = "LOGIN_MAX_FAILURES_PER_ACCOUNT", global = true, default_value_t = 10)]
    pub login_max_failures_per_account: u32,

    /// Failed developer logins allowed per client address within the window.
    #[arg(long, env = "LOGIN_MAX_FAILURES_PER_ADDRESS", global = true, default_value_t = 50)]
    pub login_max_failures_per_address: u32,

    /// The window failed logins are counted over, from the first failure.
    #[arg(long, env = "LOGIN_FAILURE_WINDOW_SECONDS", global = true, default_value_t = 900)]
    pub login_failure_window_seconds: u64,

    /// How long an invitation code (`POST /users/{id}/invitation-code`) can be redeemed, in
    /// minutes (5 to 43,200).
    #[arg(long, env = "INVITATION_CODE_MINUTES", global = true, default_value_t = 1440,
          value_parser = clap::value_parser!(u32).range(5..=43_200))]
    pub invitation_code_minutes: u32,

    /// Wrong invitation codes allowed per client address within
    /// `REDEEM_FAILURE_WINDOW_SECONDS`; more are answered 429 with `Retry-After`.
    #[arg(long, env = "REDEEM_MAX_FAILURES_PER_ADDRESS", global = true, default_value_t = 10)]
    pub redeem_max_failures_per_address: u32,

    /// Wrong invitation codes allowed per code prefix (its first two characters, 1,024 of
    /// them) within the window, whatever the address: guessing from many addresses stays slow.
    #[arg(long, env = "REDEEM_MAX_FAILURES_PER_PREFIX", global = true, default_value_t = 20)]
    pub redeem_max_failures_per_prefix: u32,

    /// The window wrong invitation codes are counted over, from the first.
    #[arg(long, env = "REDEEM_FAILURE_WINDOW_SECONDS", global = true, default_value_t = 900)]
    pub redeem_failure_window_seconds: u64,

    /// Threads that hash passwords (Argon2), apart from every other work; up to four logins
    /// per thread wait for one, more are answered 503.
    #[arg(long, env = "PASSWORD_HASH_THREADS", global = true, default_value_t = 2)]
    pub password_hash_threads: usize,

    /// Behind a reverse proxy you trust: take the client's address from the last
    /// `X-Forwarded-For` entry (for the per-address login throttle).
    #[arg(long, env = "TRUST_FORWARDED_FOR", global = true, default_value_t = false, action = clap::ArgAction::Set)]
    pub trust_forwarded_for: bool,

    /// `/sync/stream` subscribers one API process serves at once (they share one Redis
    /// subscription; each holds a socket); more are answered 503 with `Retry-After`.
    #[arg(long, env = "SYNC_STREAM_MAX_SUBSCRIBERS", global = true, default_value_t = 256)]
    pub sync_stream_max_subscribers: usize,

    /// Export imports (and exports of users' records, on the same lane) one worker process runs
    /// at once, beside the batches (an import keeps a core busy for minutes; its own budget
    /// keeps SDK batches flowing meanwhile).
    #[arg(long, env = "WORKER_IMPORT_CONCURRENCY", global = true, default_value_t = 1)]
    pub worker_import_concurrency: usize,

    /// Vendor pulls one worker process runs at once, in their own lane (a pull waits on a
    /// vendor's API for most of its time, and vendors limit calls per user and per app).
    #[arg(long, env = "WORKER_PULL_CONCURRENCY", global = true, default_value_t = 2)]
    pub worker_pull_concurrency: usize,

    /// A job left pending this long by a worker that died is taken over by another.
    #[arg(long, env = "WORKER_CLAIM_IDLE_SECONDS", global = true, default_value_t = 60)]
    pub worker_claim_idle_seconds: u64,

    /// How often each worker re-announces the jobs Redis lost and the pulls due (and deletes
    /// expired rows).
    #[arg(long, env = "WORKER_SWEEP_INTERVAL_SECONDS", global = true, default_value_t = 30)]
    pub worker_sweep_interval_seconds: u64,

    /// Accepted SDK batches are kept this many days, for `wearhouse reprocess`.
    #[arg(long, env = "BATCH_RETENTION_DAYS", global = true, default_value_t = 30)]
    pub batch_retention_days: i32,

    /// A UTC day of samples is sealed into a compressed block once it ended this many hours
    /// ago and no sample came to it for SEAL_QUIET_MINUTES; 0: samples are never sealed.
    #[arg(long, env = "SEAL_AFTER_HOURS", global = true, default_value_t = 48)]
    pub seal_after_hours: u64,

    /// See SEAL_AFTER_HOURS.
    #[arg(long, env = "SEAL_QUIET_MINUTES", global = true, default_value_t = 60)]
    pub seal_quiet_minutes: u64,

    /// Sealers each worker (and `wearhouse seal`) runs side by side, each with a share of the
    /// users: more seal a backlog faster, each holding a database connection.
    #[arg(long, env = "SEAL_JOBS", global = true, default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=64))]
    pub seal_jobs: u32,

    /// Health data (samples, rollups, sessions) whose time lies wholly before the UTC midnight
    /// this many days ago is deleted, whole blocks and chunks at a time, by a pass an hour;
    /// 0 (the default): kept for ever.
    #[arg(long, env = "DELETE_AFTER_DAYS", global = true, default_value_t = 0)]
    pub delete_after_days: u32,

    /// Put every request that reads or changes a user's data, and every developer action, on
    /// the audit trail (`GET /api/v1/developer/audit`). Off only to measure what it costs.
    #[arg(long, env = "AUDIT_TRAIL", global = true, default_value_t = true, action = clap::ArgAction::Set)]
    pub audit_trail: bool,

    /// Days the audit trail is kept (30 to 36,500).
    #[arg(long, env = "AUDIT_RETENTION_DAYS", global = true, default_value_t = 400,
          value_parser = clap::value_parser!(u32).range(30..=36_500))]
    pub audit_retention_days: u32,

    /// Hours an invitation to join the team can be accepted (1 to 720).
    #[arg(long, env = "TEAM_INVITATION_HOURS", global = true, default_value_t = 72,
          value_parser = clap::value_parser!(u32).range(1..=720))]
    pub team_invitation_hours: u32,

    /// Mail server that sends team invitations, e.g. `smtps://user:pass@smtp.example.com` or
    /// `smtp://localhost:25` (plain, for a relay on the same host). Unset: the invitation link
    /// is only shown to the developer who made it.
    #[arg(long, env = "SMTP_URL", global = true)]
    pub smtp_url: Option<String>,

    /// The sender of invitation mails.
    #[arg(
        long,
        env = "SMTP_FROM",
        global = true,
        default_value = "wearhouse <wearhouse@localhost>"
    )]
    pub smtp_from: String,

    /// Write webhook events (the outbox) for every ingested batch.
    #[arg(long, env = "OUTGOING_WEBHOOKS_ENABLED", global = true, default_value_t = false, action = clap::ArgAction::Set)]
    pub outgoing_webhooks_enabled: bool,

    /// Seconds between webhook delivery attempts after each failure, comma-separated
    /// (default: the Svix schedule 5,300,1800,7200,18000,36000,36000), each ±20 % jitter.
    #[arg(long, env = "WEBHOOK_RETRY_SCHEDULE", global = true)]
    pub webhook_retry_schedule: Option<String>,

    /// Seconds a webhook receiver has to answer.
    #[arg(long, env = "WEBHOOK_TIMEOUT_SECONDS", global = true, default_value_t = 15)]
    pub webhook_timeout_seconds: u64,

    /// A PEM file of extra root certificates the webhook sender trusts (an internal CA).
    #[arg(long, env = "WEBHOOK_CA_FILE", global = true)]
    pub webhook_ca_file: Option<std::path::PathBuf>,

    /// An HTTP(S) proxy for webhook deliveries. Unset: no proxy, whatever `HTTPS_PROXY` says
    /// (a proxy resolves the receiver's name itself, out of the reach of the address guard;
    /// the proxy must refuse internal targets on its own).
    #[arg(long, env = "WEBHOOK_PROXY", global = true)]
    pub webhook_proxy: Option<String>,

    /// Development only: allow plain-http webhook URLs to loopback addresses.
    #[arg(long, env = "WEBHOOKS_ALLOW_HTTP_LOOPBACK", global = true, default_value_t = false, action = clap::ArgAction::Set)]
    pub webhooks_allow_http_loopback: bool,

    /// Allow webhook targets at private, loopback or link-local addresses.
    #[arg(long, env = "WEBHOOKS_ALLOW_PRIVATE_TARGETS", global = true, default_value_t = false, action = clap::ArgAction::Set)]
    pub webhooks_allow_private_targets: bool,

    /// Where `wearhouse worker` serves /metrics (the API serves its own); unset: nowhere.
    #[arg(long, env = "METRICS_BIND", global = true)]
    pub metrics_bind: Option<SocketAddr>,

    #[command(flatten)]
    pub s3: S3Settings,

    /// Log format: `text` or `json`. Levels come from RUST_LOG (default `info`).
    #[arg(long, env = "LOG_FORMAT", global = true, default_value = "text")]
    pub log_format: LogFormat,
}

/// Object storage for Apple Health exports. Storage is configured when the bucket and both
/// keys are set; otherwise the upload endpoints answer 503.
#[derive(Debug, Clone, Args)]
pub struct S3Settings {
    /// The S3 API the service calls; unset: AWS.
    #[arg(long, env = "S3_ENDPOINT", global = true)]
    pub s3_endpoint: Option<String>,
    /// The endpoint put in presigned URLs, when clients reach the store at another address.
    #[arg(long, env = "S3_PUBLIC_ENDPOINT", global = true)]
    pub s3_public_endpoint: Option<String>,
    #[arg(long, env = "S3_REGION", global = true, default_value = "us-east-1")]
    pub s3_region: String,
    #[arg(long, env = "S3_BUCKET", global = true)]
    pub s3_bucket: Option<String>,
    #[arg(long, env = "S3_ACCESS_KEY_ID", global = true)]
    pub s3_access_key_id: Option<String>,
    #[arg(long, env = "S3_SECRET_ACCESS_KEY", global = true, hide_env_values = true)]
    pub s3_secret_access_key: Option<String>,
    /// Path-style URLs (`host/bucket/key`), as Garage and MinIO need.
    #[arg(long, env = "S3_FORCE_PATH_STYLE", global = true, default_value_t = false, action = clap::ArgAction::Set)]
    pub s3_force_path_style: bool,
    /// Which event starts processing an upload: `client` (the multipart complete call) or
    /// `bucket_event` (the bucket's object-created notification).
    #[arg(long, env = "UPLOAD_COMPLETION_MODE", global = true, default_value = "client")]
    pub upload_completion_mode: CompletionMode,
    /// Part size clients are told to use for multipart uploads.
    #[arg(long, env = "MULTIPART_PART_SIZE", global = true, default_value_t = 100 * 1024 * 1024)]
    pub multipart_part_size: u64,
    /// Shared secret of the bucket-event endpoint; unset: the endpoint is off.
    #[arg(long, env = "BUCKET_EVENTS_SECRET", global = true, hide_env_values = true)]
    pub bucket_events_secret: Option<String>,
    /// Largest export accepted by the direct (non-S3-presigned) upload.
    #[arg(long, env = "DIRECT_UPLOAD_MAX_BYTES", global = true, default_value_t = 64 * 1024 * 1024)]
    pub direct_upload_max_bytes: usize,
    /// Direct uploads one API process takes at once (each is held in memory, up to
    /// `DIRECT_UPLOAD_MAX_BYTES`); more are answered 503 with `Retry-After`.
    #[arg(long, env = "DIRECT_UPLOAD_CONCURRENCY", global = true, default_value_t = 2)]
    pub direct_upload_concurrency: usize,
}

pub use api::CompletionMode;

impl S3Settings {
    pub fn storage(&self) -> Option<ingest::object_store::Storage> {
        let nonempty = |v: &Option<String>| v.clone().filter(|s| !s.is_empty());
        let config = ingest::object_store::StorageConfig {
            endpoint: nonempty(&self.s3_endpoint),
            public_endpoint: nonempty(&self.s3_public_endpoint),
            region: self.s3_region.clone(),
            bucket: nonempty(&self.s3_bucket)?,
            access_key_id: nonempty(&self.s3_access_key_id)?,
            secret_access_key: nonempty(&self.s3_secret_access_key)?,
            force_path_style: self.s3_force_path_style,
        };
        Some(ingest::object_store::Storage::new(config))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

impl Settings {
    /// The master keys; the service does not start without one.
    pub fn master_keys(&self) -> anyhow::Result<std::sync::Arc<schema::sealed::MasterKeys>> {
        let Some(current) = self.master_key.as_deref().filter(|k| !k.trim().is_empty()) else {
            anyhow::bail!(
                "MASTER_KEY is not set. wearhouse stores its token-signing key and webhook \
                 secrets sealed under it: set MASTER_KEY to 32 random bytes \
                 (`openssl rand -hex 32`) and keep it safe; losing it loses those secrets. \
                 scripts/run.sh makes one in ~/.cache/wearhouse/master.key"
            );
        };
        let keys = schema::sealed::MasterKeys::new(current, self.master_key_previous.as_deref())?;
        Ok(std::sync::Arc::new(keys))
    }

    pub fn api(&self) -> anyhow::Result<api::ApiConfig> {
        let mailer = match self.smtp_url.as_deref().filter(|u| !u.trim().is_empty()) {
            Some(url) => Some(
                api::mail::Mailer::new(url.trim(), &self.smtp_from)
                    .map_err(|e| anyhow::anyhow!("SMTP_URL or SMTP_FROM: {e}"))?,
            ),
            None => None,
        };
        Ok(api::ApiConfig {
            secret_key: self.secret_key.clone().filter(|k| !k.is_empty()),
            access_token_minutes: self.access_token_expire_minutes,
            refresh_token_lifetime: chrono::Duration::days(self.sdk_refresh_token_days.into()),
            admin_email: self.admin_email.clone(),
            admin_password: self.admin_password.clone().filter(|p| !p.is_empty()),
            sdk_max_body_bytes: self.sdk_max_body_bytes,
            sdk_max_pending_bytes: self.sdk_max_pending_bytes_per_user,
            login_limits: api::FailureLimits {
                per_account: self.login_max_failures_per_account,
                per_address: self.login_max_failures_per_address,
                window: Duration::from_secs(self.login_failure_window_seconds),
            },
            invitation_code_lifetime: chrono::Duration::minutes(
                self.invitation_code_minutes.into(),
            ),
            redeem_limits: api::FailureLimits {
                per_account: self.redeem_max_failures_per_prefix,
                per_address: self.redeem_max_failures_per_address,
                window: Duration::from_secs(self.redeem_failure_window_seconds),
            },
            password_hash_threads: self.password_hash_threads,
            trust_forwarded_for: self.trust_forwarded_for,
            sync_stream_max_subscribers: self.sync_stream_max_subscribers.max(1),
            public_url: self.public_url.clone(),
            deployment_name: self.deployment_name.trim().to_string(),
            export_retention: chrono::Duration::days(i64::from(self.export_retention_days.max(1))),
            mcp_allowed_hosts: self
                .mcp_allowed_hosts
                .iter()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect(),
            oauth_redirect_allowlist: self
                .oauth_redirect_allowlist
                .iter()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect(),
            vendors: self.vendors(),
            completion_mode: self.s3.upload_completion_mode,
            part_size: self.s3.multipart_part_size,
            bucket_events_secret: self.s3.bucket_events_secret.clone().filter(|s| !s.is_empty()),
            direct_upload_max_bytes: self.s3.direct_upload_max_bytes,
            direct_upload_concurrency: self.s3.direct_upload_concurrency.max(1),
            outbox: self.outgoing_webhooks_enabled,
            webhook_targets: api::webhook_url::TargetRules {
                allow_http_loopback: self.webhooks_allow_http_loopback,
                allow_private: self.webhooks_allow_private_targets,
            },
            audit_trail: self.audit_trail,
            team_invitation_lifetime: chrono::Duration::hours(self.team_invitation_hours.into()),
            mailer,
        })
    }

    /// The webhook sender's settings; an unreadable schedule is refused at start.
    pub fn sender(&self) -> anyhow::Result<webhooks::sender::SenderConfig> {
        let mut config = webhooks::sender::SenderConfig::default();
        if let Some(list) = self.webhook_retry_schedule.as_deref().filter(|l| !l.trim().is_empty())
        {
            config.schedule = webhooks::schedule::Schedule::parse(list).ok_or_else(|| {
                anyhow::anyhow!(
                    "WEBHOOK_RETRY_SCHEDULE must be comma-separated seconds, got {list:?}"
                )
            })?;
        }
        config.timeout = Duration::from_secs(self.webhook_timeout_seconds.max(1));
        // A delivery whose sender died is taken over as an abandoned ingest job is.
        config.claim_idle = Duration::from_secs(self.worker_claim_idle_seconds.max(1));
        config.allow_private = self.webhooks_allow_private_targets;
        config.proxy = self.webhook_proxy.clone().filter(|p| !p.is_empty());
        if let Some(path) = self.webhook_ca_file.as_ref().filter(|p| !p.as_os_str().is_empty()) {
            let pem = std::fs::read(path)
                .map_err(|e| anyhow::anyhow!("reading WEBHOOK_CA_FILE {}: {e}", path.display()))?;
            config.extra_roots_pem = Some(pem);
        }
        Ok(config)
    }

    /// The vendors this deployment has credentials for.
    pub fn vendors(&self) -> vendors::VendorConfig {
        match &self.vendor_variables {
            Some(vars) => vendors::VendorConfig::read(|k| vars.get(k).cloned()),
            None => vendors::VendorConfig::read(|k| std::env::var(k).ok()),
        }
    }

    /// How long an import or export may go without its heartbeat before another worker takes
    /// it over: as an abandoned batch is, a little later (its heartbeat runs at an eighth of
    /// this): 120 s by default.
    pub fn job_stale_after(&self) -> Duration {
        Duration::from_secs(self.worker_claim_idle_seconds.max(1) * 2)
    }

    /// How long a queued job (batch, import, export, pull) may wait before the sweeper
    /// announces it again: two sweeps.
    pub fn sweep_grace(&self) -> Duration {
        Duration::from_secs(self.worker_sweep_interval_seconds.max(1)) * 2
    }

    /// The worker's settings; `pulls` runs vendor pulls and `exports` makes exports of users'
    /// records (none: this worker takes none).
    pub fn worker(
        &self,
        pulls: Option<std::sync::Arc<dyn ingest::worker::PullHandler>>,
        exports: Option<std::sync::Arc<dyn ingest::worker::ExportHandler>>,
    ) -> ingest::worker::WorkerConfig {
        ingest::worker::WorkerConfig {
            concurrency: self.worker_concurrency.max(1),
            import_concurrency: self.worker_import_concurrency.max(1),
            import_stale_after: self.job_stale_after(),
            claim_idle: Duration::from_secs(self.worker_claim_idle_seconds.max(1)),
            sweep_every: Duration::from_secs(self.worker_sweep_interval_seconds.max(1)),
            sweep_grace: self.sweep_grace(),
            retention_days: self.batch_retention_days,
            outbox: self.outgoing_webhooks_enabled,
            max_attempts: 5,
            storage: self.s3.storage(),
            // The caller's, who holds the primary's pool (`app::worker_reads`).
            api_reads: None,
            pulls,
            pull_concurrency: self.worker_pull_concurrency.max(1),
            exports,
            seal: self.seal(),
            audit_retention_days: i32::try_from(self.audit_retention_days).unwrap_or(i32::MAX),
            lifecycle: (self.delete_after_days > 0).then(|| ingest::lifecycle::LifecycleConfig {
                days: self.delete_after_days,
                every: Duration::from_secs(3600),
            }),
        }
    }

    /// When days of samples are sealed; `None`: never (`SEAL_AFTER_HOURS=0`).
    pub fn seal(&self) -> Option<ingest::sealer::SealConfig> {
        (self.seal_after_hours > 0).then(|| ingest::sealer::SealConfig {
            after: Duration::from_secs(self.seal_after_hours * 3600),
            quiet: Duration::from_secs(self.seal_quiet_minutes * 60),
            jobs: self.seal_jobs,
            ..Default::default()
        })
    }
}

/// A lag: a number of seconds or milliseconds (`2s`, `500ms`, `1.5s`; a bare number is seconds),
/// at most an hour.
fn parse_lag(raw: &str) -> Result<Duration, String> {
    let raw = raw.trim();
    let (number, per_second) = match raw.strip_suffix("ms") {
        Some(ms) => (ms, 1000.0),
        None => (raw.strip_suffix('s').unwrap_or(raw), 1.0),
    };
    let value: f64 =
        number.trim().parse().map_err(|_| format!("not a duration: '{raw}' (e.g. 500ms, 2s)"))?;
    let seconds = value / per_second;
    if !(0.0..=3600.0).contains(&seconds) {
        return Err(format!("'{raw}' is outside 0s..=3600s"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lag_reads_in_seconds_or_milliseconds() {
        assert_eq!(parse_lag("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_lag("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_lag("1.5"), Ok(Duration::from_millis(1500)));
        assert!(parse_lag("soon").is_err());
        assert!(parse_lag("-1s").is_err());
        assert!(parse_lag("2h").is_err());
    }
}
