//! The restore drill (`scripts/backup.sh`, pgBackRest): data ingested, a full backup, more data,
//! a moment T noted, more data and an incremental backup, then the data directory destroyed and
//! the cluster restored to T. Every API answer equals its answer at T; what came after T (a
//! batch, a user) is gone, as the README says.

use std::time::Duration;

use serde_json::json;

use crate::own_postgres::{OwnPostgres, run};
use crate::replicas::{answers, batch, same};
use crate::util::{Auth, Mode, TestApp};

/// `scripts/backup.sh <args>` for `pg`'s cluster; its output when it fails.
async fn backup(pg: &OwnPostgres, args: &[&str]) {
    let mut cmd =
        tokio::process::Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/backup.sh"));
    cmd.args(args)
        .env("BACKUP_PGDATA", &pg.dir)
        .env("BACKUP_PGPORT", pg.port.to_string())
        .env("BACKUP_PGSOCKET", &pg.dir)
        .env("BACKUP_STANZA", "drill");
    run(cmd, &format!("backup.sh {args:?}")).await;
}

#[tokio::test]
async fn a_restore_to_a_moment_answers_every_read_as_it_was_then() {
    let pg = OwnPostgres::start().await;
    backup(&pg, &["setup"]).await;
    let url = pg.url("wearhouse");
    let app = TestApp::spawn_with(Mode::All, |s| s.database_url = url.clone()).await;
    let key = app.api_key().await;
    let admin = app.admin().await;
    let user = app.user(&key, json!({})).await;
    let token = app.post(&format!("/api/v1/users/{user}/token"), &key, json!({})).await;
    let sdk = Auth::Bearer(token.str("access_token"));
    app.sync_and_wait(&user, &sdk, &batch(0)).await;
    backup(&pg, &["full"]).await;
    app.sync_and_wait(&user, &sdk, &batch(1)).await;

    // T: what every read answers now, and the database's clock.
    let at_t = answers(&app, &key, &user, &admin).await;
    let users_at_t = app.get("/api/v1/users", &key).await.body;
    let db = crate::util::connect(&url).await;
    let t: String = db.query_one("select now()::text", &[]).await.expect("now").get(0);
    tokio::time::sleep(Duration::from_millis(1100)).await;

    // After T: another batch and another user; an incremental backup; the last WAL archived.
    app.sync_and_wait(&user, &sdk, &batch(2)).await;
    let later = app.user(&key, json!({"email": "after-t@example.com"})).await;
    backup(&pg, &["incr"]).await;
    db.batch_execute("select pg_switch_wal()").await.expect("switch wal");
    drop(db);
    assert_ne!(answers(&app, &key, &user, &admin).await, at_t, "the data changed after T");
    app.stop().await.expect("stop the service");

    // The disk lost: the server killed, its data directory emptied; then restored to T.
    pg.kill().await;
    for entry in std::fs::read_dir(&pg.dir).expect("data directory") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            std::fs::remove_dir_all(&path).expect("remove");
        } else {
            std::fs::remove_file(&path).expect("remove");
        }
    }
    backup(&pg, &["restore", "--to", &t]).await;

    let url = pg.url("wearhouse");
    let app = TestApp::spawn_with(Mode::All, |s| s.database_url = url).await;
    same(answers(&app, &key, &user, &admin).await, &at_t, "restored to T");
    assert_eq!(app.get("/api/v1/users", &key).await.body, users_at_t);
    assert_eq!(app.get(&format!("/api/v1/users/{later}"), &key).await.status, 404);
    // And the service takes data again, on the new timeline.
    app.sync_and_wait(&user, &sdk, &batch(2)).await;
}
