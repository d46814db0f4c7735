//! The lifecycle setting (`DELETE_AFTER_DAYS`) and the storage figures of the overview: data
//! wholly before the cutoff goes from blocks, rows, rollups and sessions, what is after it
//! answers as before, and the overview counts what is left.

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::fixtures::{at, body, sleep, watch};
use crate::sealing::{db, seal_all, seeded, stored_samples, t, unseal_all};
use crate::util::{Auth, TestApp};

/// Reads wholly after the cutoff (2026-03-11): they answer the same before and after it.
fn kept_reads(user: &str) -> Vec<String> {
    let ts = format!("/api/v1/users/{user}/timeseries?limit=100");
    let w = "start_time=2026-03-11T00:00:00Z&end_time=2026-03-14T00:00:00Z";
    let mut out = Vec::new();
    for res in ["raw", "15min", "1hour", "1day"] {
        for prio in ["false", "true"] {
            out.push(format!("{ts}&{w}&resolution={res}&filter_by_priority={prio}"));
        }
    }
    // Local days (+02:00) that began after the cutoff.
    let days = "start_date=2026-03-12&end_date=2026-03-13";
    for s in ["activity", "body", "data"] {
        out.push(format!("/api/v1/users/{user}/summaries/{s}?{days}"));
    }
    out.push(format!(
        "/api/v1/users/{user}/events/sleep?start_date=2026-03-10&end_date=2026-03-13"
    ));
    out
}

async fn answers(app: &TestApp, key: &Auth, paths: &[String]) -> Vec<Value> {
    let mut out = Vec::new();
    for path in paths {
        let r = app.get(path, key).await;
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        out.push(r.body);
    }
    out
}

async fn count_before(app: &TestApp, table: &str, column: &str, cutoff: &str) -> i64 {
    app.count(&format!("select count(*) from {table} where {column} < '{cutoff}'")).await
}

#[tokio::test]
async fn data_before_the_cutoff_goes_whole_and_the_rest_answers_as_before() {
    let (app, key, user) = seeded().await;
    seal_all(&app).await;
    // A new beat on the 9th moves that day back into rows: before the cutoff lie both. Two
    // nights: one wholly before the cutoff, one across it.
    let beat = at("HeartRate", "2026-03-09T21:01:00Z", 77.0, "count/min", Some("+02:00"), &watch());
    let nights = sleep(
        &[
            ("light", "2026-03-09T22:00:00Z", "2026-03-10T02:00:00Z"),
            ("deep", "2026-03-10T02:00:00Z", "2026-03-10T05:00:00Z"),
            ("light", "2026-03-10T22:00:00Z", "2026-03-11T01:00:00Z"),
            ("rem", "2026-03-11T01:00:00Z", "2026-03-11T04:00:00Z"),
        ],
        "+02:00",
        &watch(),
    );
    app.sync_and_wait(&user, &key, &body(vec![beat], vec![], nights)).await;
    let cut = "2026-03-11T00:00:00Z";
    assert!(count_before(&app, "samples", "ts", cut).await > 0, "rows before the cutoff");
    assert!(count_before(&app, "sample_blocks", "day", cut).await > 0, "blocks before it");
    // The workout sealed in its month; the nights' month is rows again (the new nights' writes
    // moved it back).
    assert_eq!(app.count("select count(*) from workout_blocks").await, 1);
    assert_eq!(app.count("select count(*) from sleep_sessions").await, 3);

    let dev = app.admin().await;
    let overview = app.get("/api/v1/developer/overview", &dev).await;
    assert_eq!(overview.status, 200, "{}", overview.body);
    let storage = &overview.body["storage"];
    let stored = stored_samples(&app).await;
    // The sealer measured the user; the beat came later, so the figure is as sealed.
    assert_eq!(storage["largest_users"][0]["user_id"], user.as_str(), "{storage}");
    assert_eq!(storage["largest_users"][0]["samples"], stored - 1, "{storage}");
    assert!(storage["durable_bytes_per_sample"].as_f64().is_some_and(|b| b > 0.0), "{storage}");
    let tables = storage["tables"].as_array().expect("tables");
    assert!(tables.iter().any(|t| t["kind"] == "durable"), "{storage}");
    assert!(tables.iter().all(|t| t["bytes"].as_i64().is_some_and(|b| b > 0)), "{storage}");

    let paths = kept_reads(&user);
    let before = answers(&app, &key, &paths).await;
    let db = db(&app).await;
    let cutoff = t(cut);
    let done = ingest::lifecycle::pass(&db, cutoff, &CancellationToken::new()).await.expect("pass");
    assert_eq!(done.users, 1);
    assert!(done.rows > 0);
    for (table, column) in [
        ("samples", "ts"),
        ("sample_blocks", "day"),
        ("hourly_rollups", "hour"),
        ("utc_day_rollups", "day"),
        ("workouts", "start_time"),
        ("workout_blocks", "month"),
        ("sleep_blocks", "month"),
    ] {
        assert_eq!(count_before(&app, table, column, cut).await, 0, "{table} before the cutoff");
    }
    // In +02:00 the 10th ended before the cutoff and the 11th began before it: the 10th goes,
    // the 11th is recounted from what is left (below).
    assert_eq!(count_before(&app, "daily_rollups", "local_date", "2026-03-11").await, 0);
    let eleventh = "select count(*) from daily_rollups where local_date = '2026-03-11'";
    assert!(app.count(eleventh).await > 0);
    // The night that ran past the cutoff stays, as does everything after the cutoff.
    assert_eq!(app.count("select count(*) from sleep_sessions").await, 1);
    // The blocks that spanned the cutoff are rows again (sealed again once quiet).
    assert!(app.count(&format!("select count(*) from samples where ts >= '{cut}'")).await > 0);
    let spanning = format!(
        "select count(*) from sample_blocks where day < '{cut}' \
         and day + span * interval '1 day' > '{cut}'"
    );
    assert_eq!(app.count(&spanning).await, 0);
    assert_eq!(answers(&app, &key, &paths).await, before, "reads after the cutoff");
    let raw = app
        .get(
            &format!(
                "/api/v1/users/{user}/timeseries?start_time=2026-03-01T00:00:00Z\
                 &end_time=2026-03-14T00:00:00Z&limit=1&types=heart_rate"
            ),
            &key,
        )
        .await;
    let first = raw.body["data"][0]["timestamp"].as_str().unwrap_or_default().to_string();
    assert!(first.as_str() >= cut, "the first beat left is at {first}: {}", raw.body);

    // Every rollup left agrees with the samples left, the local days the cutoff cut through
    // too (compared as rows).
    unseal_all(&app, &user).await;
    let (differing, _) = crate::sdk_sync::rollups_against_samples(&app, &user).await;
    assert_eq!(differing, 0, "rollups that differ from the samples left");
    seal_all(&app).await;

    // The overview follows at once.
    let left = stored_samples(&app).await;
    assert!(left > 0 && left < stored);
    let overview = app.get("/api/v1/developer/overview", &dev).await;
    assert_eq!(overview.body["storage"]["largest_users"][0]["samples"], left, "{}", overview.body);

    // Again: nothing more to delete.
    let again =
        ingest::lifecycle::pass(&db, cutoff, &CancellationToken::new()).await.expect("pass");
    assert_eq!((again.rows, again.users), (0, 0));

    // A cutoff past every day: whole chunks dropped, nothing of the user's data left.
    let done = ingest::lifecycle::pass(&db, t("2026-04-01T00:00:00Z"), &CancellationToken::new())
        .await
        .expect("pass");
    assert!(done.chunks > 0, "{done:?}");
    assert_eq!(stored_samples(&app).await, 0);
    for table in schema::storage::HEALTH.map(|(table, _)| table) {
        assert_eq!(app.count(&format!("select count(*) from {table}")).await, 0, "{table}");
    }
    let overview = app.get("/api/v1/developer/overview", &dev).await;
    assert_eq!(overview.body["storage"]["largest_users"][0]["samples"], 0, "{}", overview.body);
}
