//! The real `wearhouse` binary: migrations from an empty database (two processes at once),
//! then `serve` answering `/health`.

use std::process::Stdio;
use std::time::Duration;

use tokio::process::Command;

use crate::util::{admin_client, database_url, drop_database, redis_url};

fn wearhouse(database: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wearhouse"));
    cmd.env("DATABASE_URL", database_url(database))
        .env("REDIS_URL", redis_url())
        .env("SECRET_KEY", "binary-test-secret-0123456789abcdef0123")
        .env("MASTER_KEY", crate::util::MASTER_KEY)
        .env("ADMIN_PASSWORD", "binary-test-password")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    cmd
}

struct DropDb(String);
impl Drop for DropDb {
    fn drop(&mut self) {
        drop_database(&self.0);
    }
}

#[tokio::test]
async fn concurrent_migrations_then_serve() {
    let name = format!("wearhouse_bin_{}", uuid::Uuid::new_v4().simple());
    let admin = admin_client().await;
    admin.batch_execute(&format!("create database \"{name}\"")).await.expect("create database");
    let _cleanup = DropDb(name.clone());

    // Two processes migrating an empty database at once: both succeed, each migration once.
    let a = wearhouse(&name).arg("migrate").output();
    let b = wearhouse(&name).arg("migrate").output();
    let (a, b) = tokio::join!(a, b);
    for out in [a.expect("run a"), b.expect("run b")] {
        assert!(out.status.success(), "migrate failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let db = crate::util::connect(&database_url(&name)).await;
    let applied: i64 = db
        .query_one("select count(*) from refinery_schema_history", &[])
        .await
        .expect("history")
        .get(0);
    let hypertable: i64 = db
        .query_one("select count(*) from timescaledb_information.hypertables where hypertable_name = 'samples'", &[])
        .await
        .expect("hypertables")
        .get(0);
    assert_eq!(hypertable, 1);
    let series: i64 =
        db.query_one("select count(*) from series_types", &[]).await.expect("series").get(0);
    assert_eq!(series as usize, schema::catalogue::series_types::SERIES_TYPES.len());
    // Running it again changes nothing.
    let out = wearhouse(&name).arg("migrate").output().await.expect("run again");
    assert!(out.status.success());
    let again: i64 = db
        .query_one("select count(*) from refinery_schema_history", &[])
        .await
        .expect("history")
        .get(0);
    assert_eq!(applied, again);
    drop(db);

    // serve on a free port answers /health.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("free port")
        .local_addr()
        .expect("addr")
        .port();
    let mut child = wearhouse(&name)
        .args(["serve", "--bind", &format!("127.0.0.1:{port}")])
        .spawn()
        .expect("spawn serve");
    let http = reqwest::Client::new();
    let mut healthy = false;
    for _ in 0..100 {
        if let Ok(r) = http.get(format!("http://127.0.0.1:{port}/health")).send().await {
            healthy = r.status() == 200;
            if healthy {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let _ = child.kill().await;
    assert!(healthy, "wearhouse serve did not answer /health");
}

/// Ctrl-C stops the one-shot commands: an import waiting on a file that never ends dies at
/// once (its open transaction rolls back), where the service's signal handler used to swallow
/// the signal and leave it running.
#[tokio::test]
async fn ctrl_c_stops_an_import() {
    let app = crate::util::TestApp::spawn_with(crate::util::Mode::ApiOnly, |_| {}).await;
    let key = app.api_key().await;
    let user = app.user(&key, serde_json::json!({})).await;
    let dir =
        std::env::temp_dir().join(format!("wearhouse-fifo-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("dir");
    let fifo = dir.join("export.xml");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    let mut import = app.binary(&["import", "--user", &user, &fifo.to_string_lossy()]);
    let mut child = import.spawn().expect("spawn");
    // The export's start, and then nothing: the import waits for more.
    let mut writer = tokio::fs::OpenOptions::new().write(true).open(&fifo).await.expect("open");
    tokio::io::AsyncWriteExt::write_all(&mut writer, b"<?xml version=\"1.0\"?>\n<HealthData>\n")
        .await
        .expect("write");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(child.try_wait().expect("wait").is_none(), "still importing");
    let pid = child.id().expect("pid").to_string();
    let sent = std::process::Command::new("kill").args(["-INT", &pid]).status().expect("kill");
    assert!(sent.success());
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("it stops on Ctrl-C")
        .expect("status");
    assert!(!status.success(), "{status:?}");
    drop(writer);
    let _ = std::fs::remove_dir_all(&dir);
}
