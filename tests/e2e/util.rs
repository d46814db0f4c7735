//! The test harness: each test gets its own database (cloned in milliseconds from a migrated
//! template) and a real server on a free port, so tests run in parallel and never see each
//! other's rows.
//!
//! Environment: `TEST_DATABASE_URL` (a superuser connection to the maintenance database,
//! default `postgres://postgres:postgres@127.0.0.1:5432/postgres`) and `TEST_REDIS_URL`
//! (default `redis://127.0.0.1:6379`).

#![allow(dead_code)]

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio_postgres::NoTls;
use tokio_util::sync::CancellationToken;
use wearhouse::config::{CompletionMode, LogFormat, S3Settings, Settings};

pub const ADMIN_EMAIL: &str = "admin@example.com";
pub const ADMIN_PASSWORD: &str = "admin-password-for-tests";
pub const SECRET_KEY: &str = "test-secret-key-0123456789abcdef0123456789";
/// The tests' master key (32 bytes, hex).
pub const MASTER_KEY: &str = "6d61737465722d6b65792d666f722d74657374732d6f6e6c792d303132333435";

/// Serialises template creation across test processes.
const TEMPLATE_LOCK: i64 = 0x7465_6d70_6c61_7465;

pub fn admin_url() -> String {
    std::env::var("TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres:postgres@127.0.0.1:5432/postgres".to_string())
}

pub fn redis_url() -> String {
    std::env::var("TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".to_string())
}

/// The URL of database `name` on the test server.
pub fn database_url(name: &str) -> String {
    let mut url = url::Url::parse(&admin_url()).expect("TEST_DATABASE_URL is a URL");
    url.set_path(&format!("/{name}"));
    url.to_string()
}

pub async fn admin_client() -> tokio_postgres::Client {
    connect(&admin_url()).await
}

pub async fn connect(url: &str) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(url, NoTls).await.expect("connect to PostgreSQL");
    tokio::spawn(async move {
        let _ = conn.await;
    });
    client
}

/// Creates (once per schema version) a migrated template database and returns its name.
async fn template() -> String {
    let name = format!("wearhouse_tpl_{}", schema::db::fingerprint());
    let admin = admin_client().await;
    admin.execute("select pg_advisory_lock($1)", &[&TEMPLATE_LOCK]).await.expect("lock");
    let exists = admin
        .query_opt("select 1 from pg_database where datname = $1", &[&name])
        .await
        .expect("query pg_database")
        .is_some();
    if !exists {
        admin.batch_execute(&format!("create database \"{name}\"")).await.expect("create template");
        schema::db::migrate(&database_url(&name)).await.expect("migrate the template");
        // No connections to a template, or cloning it fails; TimescaleDB's scheduler would
        // otherwise keep one open.
        admin
            .batch_execute(&format!(
                "alter database \"{name}\" with allow_connections false;
                 select pg_terminate_backend(pid) from pg_stat_activity where datname = '{name}';"
            ))
            .await
            .expect("seal the template");
    }
    admin.execute("select pg_advisory_unlock($1)", &[&TEMPLATE_LOCK]).await.expect("unlock");
    name
}

/// A fresh database cloned from the template.
pub async fn fresh_database() -> String {
    let template = template().await;
    let name = format!("wearhouse_test_{}", uuid::Uuid::new_v4().simple());
    let admin = admin_client().await;
    // The template may still be closing the migration connection: retry briefly.
    for attempt in 0.. {
        match admin
            .batch_execute(&format!("create database \"{name}\" template \"{template}\""))
            .await
        {
            Ok(()) => break,
            Err(e) if attempt < 50 => {
                let _ = e;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("cloning the template: {e}"),
        }
    }
    name
}

/// Drops a test database, closing whatever still uses it.
pub fn drop_database(name: &str) {
    let name = name.to_string();
    // Drop runs inside the test's runtime: use a thread with its own.
    let _ = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build();
        if let Ok(rt) = rt {
            rt.block_on(async {
                if let Ok((client, conn)) = tokio_postgres::connect(&admin_url(), NoTls).await {
                    tokio::spawn(conn);
                    let _ = client
                        .batch_execute(&format!("drop database if exists \"{name}\" with (force)"))
                        .await;
                }
            });
        }
    })
    .join();
}

/// The S3 server of the local stack, from the settings `scripts/stack.sh` writes
/// (`TEST_S3_ENV`, default `~/.cache/wearhouse/s3.env`).
pub fn s3_settings() -> S3Settings {
    let path = std::env::var("TEST_S3_ENV").unwrap_or_else(|_| {
        format!("{}/.cache/wearhouse/s3.env", std::env::var("HOME").unwrap_or_default())
    });
    s3_settings_from(&path)
}

/// The object store settings an env file of scripts/stack.sh (or garage_cluster.sh) holds.
pub fn s3_settings_from(path: &str) -> S3Settings {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let get = |k: &str| {
        text.lines().find_map(|l| l.strip_prefix(&format!("{k}="))).map(|v| v.trim().to_string())
    };
    S3Settings {
        s3_endpoint: get("S3_ENDPOINT"),
        s3_public_endpoint: None,
        s3_region: get("S3_REGION").unwrap_or_else(|| "us-east-1".into()),
        s3_bucket: get("S3_BUCKET"),
        s3_access_key_id: get("S3_ACCESS_KEY_ID"),
        s3_secret_access_key: get("S3_SECRET_ACCESS_KEY"),
        s3_force_path_style: get("S3_FORCE_PATH_STYLE").is_some_and(|v| v == "true"),
        upload_completion_mode: CompletionMode::Client,
        multipart_part_size: 5 * 1024 * 1024,
        bucket_events_secret: Some(BUCKET_EVENTS_SECRET.to_string()),
        direct_upload_max_bytes: 8 * 1024 * 1024,
        direct_upload_concurrency: 2,
    }
}

pub const BUCKET_EVENTS_SECRET: &str = "bucket-events-secret-for-tests";

/// What a program wrote.
pub struct Said {
    pub stdout: String,
    pub stderr: String,
}

impl Said {
    pub fn all(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }
}

/// Runs `program args` in `dir` with `envs`, without blocking the test's runtime (the service
/// under test may run on it); what it wrote, or all of it as the error when it fails.
pub async fn run_tool(
    dir: &std::path::Path,
    program: &str,
    args: &[&str],
    envs: &[(&str, &str)],
) -> Result<Said, String> {
    let out = tokio::process::Command::new(program)
        .args(args)
        .envs(envs.iter().copied())
        .current_dir(dir)
        .output()
        .await
        .map_err(|e| format!("{program}: {e}"))?;
    let said = Said {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    if out.status.success() { Ok(said) } else { Err(format!("{program} {args:?}: {}", said.all())) }
}

pub fn settings(database: &str) -> Settings {
    Settings {
        database_url: database_url(database),
        database_pool_size: 4,
        database_replica_urls: Vec::new(),
        replica_max_lag: std::time::Duration::from_secs(1),
        redis_url: redis_url(),
        secret_key: Some(SECRET_KEY.to_string()),
        master_key: Some(MASTER_KEY.to_string()),
        master_key_previous: None,
        access_token_expire_minutes: 60,
        sdk_refresh_token_days: 90,
        admin_email: ADMIN_EMAIL.to_string(),
        admin_password: Some(ADMIN_PASSWORD.to_string()),
        bind: ([127, 0, 0, 1], 0).into(),
        // Each test has its own Redis keys.
        redis_key_prefix: format!("wearhouse_test_{}", uuid::Uuid::new_v4().simple()),
        public_url: "http://127.0.0.1:8000".into(),
        deployment_name: "Acme Health".into(),
        mcp_allowed_hosts: vec![],
        export_retention_days: 7,
        oauth_redirect_allowlist: vec!["https://app.example.com/connected".into()],
        vendor_variables: Some(Default::default()),
        vendor_pull_interval_seconds: 3600,
        sdk_max_body_bytes: 1024 * 1024,
        sdk_max_pending_bytes_per_user: 256 * 1024 * 1024,
        login_max_failures_per_account: 10,
        login_max_failures_per_address: 50,
        login_failure_window_seconds: 900,
        invitation_code_minutes: 1440,
        redeem_max_failures_per_address: 10,
        redeem_max_failures_per_prefix: 20,
        redeem_failure_window_seconds: 900,
        password_hash_threads: 2,
        trust_forwarded_for: false,
        sync_stream_max_subscribers: 256,
        worker_concurrency: 2,
        worker_import_concurrency: 1,
        worker_pull_concurrency: 2,
        worker_claim_idle_seconds: 2,
        worker_sweep_interval_seconds: 1,
        batch_retention_days: 30,
        seal_after_hours: 48,
        seal_quiet_minutes: 60,
        seal_jobs: 1,
        delete_after_days: 0,
        audit_trail: true,
        audit_retention_days: 400,
        team_invitation_hours: 72,
        smtp_url: None,
        smtp_from: "Acme Health <team@acme.example>".into(),
        outgoing_webhooks_enabled: true,
        // Tests deliver to receivers on this machine.
        // Retries in a fraction of a second.
        webhook_retry_schedule: Some("0.2,0.2,0.2".to_string()),
        webhook_timeout_seconds: 2,
        webhook_ca_file: None,
        webhook_proxy: None,
        webhooks_allow_http_loopback: true,
        webhooks_allow_private_targets: true,
        metrics_bind: None,
        s3: s3_settings(),
        log_format: LogFormat::Text,
    }
}

/// What a test app runs in-process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// API and worker, as `wearhouse all`.
    All,
    /// The API only, as `wearhouse serve`: workers are started by the test.
    ApiOnly,
}

/// A running service on its own database.
pub struct TestApp {
    pub base: String,
    pub database: String,
    pub http: reqwest::Client,
    pub settings: Settings,
    shutdown: CancellationToken,
    task: Option<tokio::task::JoinHandle<anyhow::Result<()>>>,
}

impl TestApp {
    pub async fn spawn() -> TestApp {
        TestApp::spawn_with(Mode::All, |_| {}).await
    }

    pub async fn spawn_with(mode: Mode, configure: impl FnOnce(&mut Settings)) -> TestApp {
        TestApp::spawn_as(mode, false, configure).await
    }

    /// A service whose `PUBLIC_URL` is its own address: vendors and pages a real browser
    /// follows come back to it.
    pub async fn spawn_at_own_url(mode: Mode, configure: impl FnOnce(&mut Settings)) -> TestApp {
        TestApp::spawn_as(mode, true, configure).await
    }

    async fn spawn_as(mode: Mode, own_url: bool, configure: impl FnOnce(&mut Settings)) -> TestApp {
        let database = fresh_database().await;
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind a free port");
        let base = format!("http://{}", listener.local_addr().expect("local addr"));
        let shutdown = CancellationToken::new();
        let mut settings = settings(&database);
        if own_url {
            settings.public_url = base.clone();
        }
        configure(&mut settings);
        let (token, s) = (shutdown.clone(), settings.clone());
        let task = tokio::spawn(async move {
            match mode {
                Mode::All => wearhouse::app::all(&s, listener, token).await,
                Mode::ApiOnly => wearhouse::app::serve(&s, listener, token).await,
            }
        });
        let app = TestApp {
            base,
            database,
            http: reqwest::Client::new(),
            settings,
            shutdown,
            task: Some(task),
        };
        app.wait_healthy().await;
        app
    }

    /// The real `wearhouse` binary running `args` against this app's database and Redis keys.
    pub fn binary(&self, args: &[&str]) -> tokio::process::Command {
        let s = &self.settings;
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_wearhouse"));
        cmd.args(args)
            .env("DATABASE_URL", &s.database_url)
            .env("REDIS_URL", &s.redis_url)
            .env("REDIS_KEY_PREFIX", &s.redis_key_prefix)
            .env("SECRET_KEY", SECRET_KEY)
            .env("MASTER_KEY", MASTER_KEY)
            .env("WORKER_CLAIM_IDLE_SECONDS", s.worker_claim_idle_seconds.to_string())
            .env("WORKER_SWEEP_INTERVAL_SECONDS", s.worker_sweep_interval_seconds.to_string())
            .env("OUTGOING_WEBHOOKS_ENABLED", s.outgoing_webhooks_enabled.to_string())
            .env("WEBHOOK_TIMEOUT_SECONDS", s.webhook_timeout_seconds.to_string())
            .env("WEBHOOKS_ALLOW_HTTP_LOOPBACK", s.webhooks_allow_http_loopback.to_string())
            .env("WEBHOOKS_ALLOW_PRIVATE_TARGETS", s.webhooks_allow_private_targets.to_string())
            .envs(
                [
                    ("S3_ENDPOINT", s.s3.s3_endpoint.clone()),
                    ("S3_REGION", Some(s.s3.s3_region.clone())),
                    ("S3_BUCKET", s.s3.s3_bucket.clone()),
                    ("S3_ACCESS_KEY_ID", s.s3.s3_access_key_id.clone()),
                    ("S3_SECRET_ACCESS_KEY", s.s3.s3_secret_access_key.clone()),
                    ("S3_FORCE_PATH_STYLE", Some(s.s3.s3_force_path_style.to_string())),
                ]
                .into_iter()
                .filter_map(|(k, v)| v.map(|v| (k, v))),
            )
            .env("RUST_LOG", "warn")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true);
        // Unset rather than empty: clap refuses an empty value.
        if !s.database_replica_urls.is_empty() {
            cmd.env("DATABASE_REPLICA_URLS", s.database_replica_urls.join(","));
        }
        if let Some(schedule) = &s.webhook_retry_schedule {
            cmd.env("WEBHOOK_RETRY_SCHEDULE", schedule);
        }
        if let Some(ca) = &s.webhook_ca_file {
            cmd.env("WEBHOOK_CA_FILE", ca);
        }
        cmd
    }

    /// A Redis connection, for looking at (or breaking) this app's keys.
    pub async fn redis(&self) -> redis::aio::MultiplexedConnection {
        redis::Client::open(self.settings.redis_url.as_str())
            .expect("redis url")
            .get_multiplexed_async_connection()
            .await
            .expect("connect to Redis")
    }

    /// Waits until the batch is no longer queued; returns its status.
    pub async fn wait_batch(&self, batch_id: &str) -> String {
        let id: uuid::Uuid = batch_id.parse().expect("batch id");
        let db = self.db().await;
        for _ in 0..1200 {
            let row = db
                .query_opt("select status::text from sdk_batches where id = $1", &[&id])
                .await
                .expect("query");
            if let Some(status) = row.map(|r| r.get::<_, String>(0))
                && status != "queued"
            {
                return status;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("batch {batch_id} was not processed in time");
    }

    /// Posts an SDK sync body (a JSON string) for `user`.
    pub async fn sync(&self, user: &str, auth: &Auth, body: &str) -> Resp {
        let req = self
            .http
            .post(self.url(&format!("/api/v1/sdk/users/{user}/sync")))
            .header("content-type", "application/json")
            .body(body.to_string());
        Resp::read(auth.apply(req).send().await.expect("request")).await
    }

    /// Posts a body and waits for the worker to process it; returns the batch id.
    pub async fn sync_and_wait(&self, user: &str, auth: &Auth, body: &str) -> String {
        let r = self.sync(user, auth, body).await;
        assert_eq!(r.status, 202, "{}", r.body);
        let task = r.str("task_id");
        let status = self.wait_batch(&task).await;
        if status != "done" {
            // Say why: the worker keeps the last error and the attempts it took.
            let id: uuid::Uuid = task.parse().expect("batch id");
            let why = self
                .db()
                .await
                .query_one(
                    "select attempts, coalesce(error, '') from sdk_batches where id = $1",
                    &[&id],
                )
                .await
                .map(|r| format!("{} attempts: {}", r.get::<_, i32>(0), r.get::<_, String>(1)));
            panic!("batch {task} ended {status}: {why:?}");
        }
        task
    }

    /// Runs a query returning one number.
    pub async fn count(&self, sql: &str) -> i64 {
        self.db().await.query_one(sql, &[]).await.unwrap_or_else(|e| panic!("{sql}: {e}")).get(0)
    }

    async fn wait_healthy(&self) {
        for _ in 0..200 {
            if let Ok(r) = self.http.get(format!("{}/health", self.base)).send().await
                && r.status() == StatusCode::OK
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("the service did not become healthy");
    }

    /// Stops the service and returns how its task ended.
    pub async fn stop(mut self) -> anyhow::Result<()> {
        self.shutdown.cancel();
        match self.task.take() {
            Some(task) => task.await.expect("service task"),
            None => Ok(()),
        }
    }

    pub async fn db(&self) -> tokio_postgres::Client {
        connect(&self.settings.database_url).await
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// Sends a request and reads the answer as JSON (`Value::Null` for an empty body).
    pub async fn call(&self, method: Method, path: &str, auth: &Auth, body: Option<Value>) -> Resp {
        let mut req = self.http.request(method, self.url(path));
        req = auth.apply(req);
        if let Some(body) = body {
            req = req.json(&body);
        }
        Resp::read(req.send().await.expect("request")).await
    }

    pub async fn get(&self, path: &str, auth: &Auth) -> Resp {
        self.call(Method::GET, path, auth, None).await
    }

    pub async fn post(&self, path: &str, auth: &Auth, body: Value) -> Resp {
        self.call(Method::POST, path, auth, Some(body)).await
    }

    pub async fn login(&self, email: &str, password: &str) -> Resp {
        let req = self
            .http
            .post(self.url("/api/v1/auth/login"))
            .form(&[("username", email), ("password", password)]);
        Resp::read(req.send().await.expect("request")).await
    }

    /// A developer bearer token for the admin.
    pub async fn admin(&self) -> Auth {
        let r = self.login(ADMIN_EMAIL, ADMIN_PASSWORD).await;
        assert_eq!(r.status, 200, "{}", r.body);
        Auth::Bearer(r.str("access_token"))
    }

    /// A fresh API key.
    pub async fn api_key(&self) -> Auth {
        let admin = self.admin().await;
        let r = self.post("/api/v1/developer/api-keys", &admin, json!({"name": "tests"})).await;
        assert_eq!(r.status, 201, "{}", r.body);
        Auth::Key(r.str("key"))
    }

    /// Creates a user and returns its id.
    pub async fn user(&self, auth: &Auth, body: Value) -> String {
        let r = self.post("/api/v1/users", auth, body).await;
        assert_eq!(r.status, 201, "{}", r.body);
        r.str("id")
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.shutdown.cancel();
        if let Some(task) = self.task.take() {
            task.abort();
        }
        drop_database(&self.database);
    }
}

/// How a request authenticates.
#[derive(Debug, Clone)]
pub enum Auth {
    None,
    Bearer(String),
    Key(String),
    /// A raw header, for the SDK variants.
    Header(&'static str, String),
}

impl Auth {
    pub fn apply(&self, req: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match self {
            Auth::None => req,
            Auth::Bearer(token) => req.bearer_auth(token),
            Auth::Key(key) => req.header("X-Service-API-Key", key),
            Auth::Header(name, value) => req.header(*name, value),
        }
    }
}

/// A response, read whole.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
}

impl Resp {
    pub async fn read(r: reqwest::Response) -> Resp {
        let status = r.status().as_u16();
        let headers = r.headers().clone();
        let bytes = r.bytes().await.expect("body");
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()))
        };
        Resp { status, headers, body }
    }

    pub fn str(&self, field: &str) -> String {
        self.body[field]
            .as_str()
            .unwrap_or_else(|| panic!("no string {field} in {}", self.body))
            .to_string()
    }

    pub fn detail(&self) -> &str {
        self.body["detail"].as_str().unwrap_or("")
    }

    /// Asserts the contract's `{detail}` error.
    #[track_caller]
    pub fn assert_error(&self, status: u16, detail: &str) {
        assert_eq!(self.status, status, "{}", self.body);
        assert_eq!(self.detail(), detail, "{}", self.body);
    }

    /// Asserts a 422 whose first item is at `loc` with `kind`.
    #[track_caller]
    pub fn assert_invalid(&self, loc: &[&str], kind: &str) {
        assert_eq!(self.status, 422, "{}", self.body);
        let items =
            self.body["detail"].as_array().unwrap_or_else(|| panic!("422 body: {}", self.body));
        let found = items.iter().any(|item| {
            item["type"] == kind
                && item["loc"].as_array().is_some_and(|l| {
                    l.iter()
                        .map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string()))
                        .collect::<Vec<_>>()
                        == loc.iter().map(|s| s.to_string()).collect::<Vec<_>>()
                })
                && item["msg"].is_string()
                && item["ctx"].is_object()
                && item.get("input").is_some()
        });
        assert!(found, "no {kind} error at {loc:?} in {}", self.body);
    }
}

/// A browser in an OAuth flow: follows no redirects, and keeps the cookies it is given (a
/// cookie set with `Max-Age=0` is dropped).
pub struct Browser {
    http: reqwest::Client,
    cookies: std::sync::Mutex<std::collections::BTreeMap<String, String>>,
}

impl Default for Browser {
    fn default() -> Browser {
        Browser::new()
    }
}

impl Browser {
    pub fn new() -> Browser {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client");
        Browser { http, cookies: Default::default() }
    }

    /// The cookies it holds, as a `Cookie` header.
    pub fn cookie_header(&self) -> String {
        let jar = self.cookies.lock().expect("jar");
        jar.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("; ")
    }

    pub async fn get(&self, url: &str) -> reqwest::Response {
        self.send(Method::GET, url).await
    }

    /// Sends `method` to `url` with the cookies held, and keeps those the answer sets.
    pub async fn send(&self, method: Method, url: &str) -> reqwest::Response {
        let mut request = self.http.request(method, url);
        let cookies = self.cookie_header();
        if !cookies.is_empty() {
            request = request.header("cookie", cookies);
        }
        let response = request.send().await.expect("request");
        let mut jar = self.cookies.lock().expect("jar");
        for set in response.headers().get_all("set-cookie") {
            let text = set.to_str().unwrap_or_default();
            let Some((name, rest)) = text.split_once('=') else { continue };
            let value = rest.split(';').next().unwrap_or_default().to_string();
            if text.contains("Max-Age=0") {
                jar.remove(name);
            } else {
                jar.insert(name.to_string(), value);
            }
        }
        response
    }

    /// Opens a link `authorize` handed out (under `PUBLIC_URL`, answered by the test's server);
    /// returns where it sends the browser on to.
    pub async fn open(&self, app: &TestApp, link: &str) -> String {
        let public = app.settings.public_url.trim_end_matches('/');
        let path = link.strip_prefix(public).unwrap_or_else(|| panic!("{link} is not ours"));
        let r = self.get(&app.url(path)).await;
        assert_eq!(r.status(), 303, "opening {link}");
        r.headers()["location"].to_str().expect("location").to_string()
    }
}
