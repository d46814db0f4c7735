//! Sealed sample blocks change no answer: every read route and parameter answers the same JSON
//! before and after a user's days are sealed, cursors walk on across a sealing, and writes into
//! sealed days (a re-send, a changed value, a new sample, a reprocess, a deletion) leave the same
//! answers as the same writes on rows.

use chrono::{DateTime, Duration, Utc};
use serde_json::Value;

use crate::fixtures::{at, body, phone, rec, sleep, watch, workout};
use crate::util::{Auth, TestApp};

pub(crate) fn t(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).map(|d| d.with_timezone(&Utc)).expect("time")
}

pub(crate) fn iso(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// Five days (2026-03-08..12) in +02:00: heart rate every 2 minutes 20:00–04:00 UTC (across UTC
/// midnight, so local days and nights span two stored days) with fractional values, steps from
/// the phone and the watch every 10 minutes in the daytime (duplicates across sources), a daily
/// total, a weight a morning, HRV a night; a workout without its own mean heart rate; a night's
/// sleep stages.
pub(crate) fn dataset() -> String {
    let zone = Some("+02:00");
    let mut records = Vec::new();
    for day in 8..13 {
        let evening = t(&format!("2026-03-{day:02}T20:00:00Z"));
        for i in 0..240 {
            let ts = iso(evening + Duration::minutes(2 * i));
            let v = 50.0 + (i % 37) as f64 * 0.7 + f64::from(day) / 3.0;
            records.push(at("HeartRate", &ts, v, "count/min", zone, &watch()));
        }
        let morning = t(&format!("2026-03-{day:02}T07:00:00Z"));
        for i in 0..30 {
            let a = morning + Duration::minutes(10 * i);
            let b = a + Duration::minutes(1);
            let (a, b) = (iso(a), iso(b));
            records.push(rec("StepCount", &a, &b, 100.0 + i as f64, "count", zone, &phone()));
            records.push(rec("StepCount", &a, &b, 90.0 + i as f64, "count", zone, &watch()));
        }
        let weigh = format!("2026-03-{day:02}T06:00:00Z");
        records.push(at("BodyMass", &weigh, 70.0 + f64::from(day) * 0.1, "kg", zone, &phone()));
        let hrv = format!("2026-03-{day:02}T02:00:00Z");
        records.push(at(
            "HeartRateVariabilitySDNN",
            &hrv,
            40.5 + f64::from(day),
            "ms",
            zone,
            &watch(),
        ));
    }
    let mut run = workout(
        "W-1",
        "running",
        "2026-03-10T21:00:00Z",
        "2026-03-10T23:30:00Z",
        500.0,
        9000.0,
        "+02:00",
        &watch(),
    );
    // No mean heart rate of its own: it is the mean of the watch's samples over the run.
    if let Some(values) = run["values"].as_array_mut() {
        values.retain(|v| v["type"] != "averageHeartRate");
    }
    let night = sleep(
        &[
            ("light", "2026-03-08T22:00:00Z", "2026-03-09T01:00:00Z"),
            ("deep", "2026-03-09T01:00:00Z", "2026-03-09T02:30:00Z"),
            ("rem", "2026-03-09T02:30:00Z", "2026-03-09T04:00:00Z"),
        ],
        "+02:00",
        &watch(),
    );
    body(records, vec![run], night)
}

/// Every read this test compares, by name.
fn reads(user: &str) -> Vec<String> {
    let mut out = Vec::new();
    let ts = format!("/api/v1/users/{user}/timeseries?limit=100");
    let windows = [
        "start_time=2026-03-07T00:00:00Z&end_time=2026-03-14T00:00:00Z",
        "start_time=2026-03-09T21:17:00Z&end_time=2026-03-11T03:43:00Z",
    ];
    for w in windows {
        for res in ["raw", "1min", "5min", "15min", "1hour", "1day"] {
            for prio in ["false", "true"] {
                out.push(format!("{ts}&{w}&resolution={res}&filter_by_priority={prio}"));
                out.push(format!(
                    "{ts}&{w}&resolution={res}&filter_by_priority={prio}&types=heart_rate&types=steps"
                ));
            }
        }
    }
    let days = "start_date=2026-03-07&end_date=2026-03-13";
    for s in ["activity", "sleep", "body", "recovery", "data"] {
        out.push(format!("/api/v1/users/{user}/summaries/{s}?{days}"));
    }
    out.push(format!("/api/v1/users/{user}/summaries/data"));
    out.push(format!("/api/v1/users/{user}/summaries/data?start_date=2026-03-09T21:30:00Z"));
    for e in ["workouts", "sleep"] {
        out.push(format!("/api/v1/users/{user}/events/{e}?{days}"));
    }
    out.push(format!("/api/v1/users/{user}/health-scores?{days}"));
    out.push(format!("/api/v1/users/{user}/health-scores"));
    out
}

/// The answers of [`reads`].
async fn read_answers(app: &TestApp, key: &Auth, user: &str) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for path in reads(user) {
        let r = app.get(&path, key).await;
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        out.push((path, r.body));
    }
    out
}

/// The answers of [`reads`], and of pages walked by cursor.
async fn answers(app: &TestApp, key: &Auth, user: &str) -> Vec<(String, Value)> {
    let mut out = read_answers(app, key, user).await;
    // Pages walked by cursor: forward to the end, then back from the last page's previous
    // cursor; short pages, so each reads a bounded stretch of rows and blocks.
    let walks = [
        ("heart", "limit=97&types=heart_rate"),
        ("hours", "limit=7&resolution=1hour&filter_by_priority=true"),
        (
            "quarters",
            "limit=9&resolution=15min&filter_by_priority=true&types=steps&types=heart_rate",
        ),
        ("days", "limit=2&resolution=1day&filter_by_priority=true"),
        // Without priority a sub-hour page takes a page's worth of sealed samples per source.
        ("minutes", "limit=11&resolution=5min&types=heart_rate&types=steps"),
    ];
    for (name, query) in walks {
        let mut path = walk(user, query, None);
        let mut last = None;
        for n in 0..80 {
            let r = app.get(&path, key).await;
            assert_eq!(r.status, 200, "{path}: {}", r.body);
            let next = r.body["pagination"]["next_cursor"].as_str().map(str::to_string);
            last = r.body["pagination"]["previous_cursor"].as_str().map(str::to_string);
            out.push((format!("walk {name} {n}"), r.body));
            let Some(cursor) = next else { break };
            path = walk(user, query, Some(&cursor));
        }
        for n in 0..80 {
            let Some(cursor) = last.take() else { break };
            let r = app.get(&walk(user, query, Some(&cursor)), key).await;
            assert_eq!(r.status, 200, "{}", r.body);
            last = r.body["pagination"]["previous_cursor"].as_str().map(str::to_string);
            out.push((format!("walk back {name} {n}"), r.body));
        }
        let pages = out.iter().filter(|(p, _)| p.contains(&format!(" {name} "))).count();
        assert!(pages > 6, "{name}: {pages} pages there and back");
    }
    out
}

/// A page of a walk `answers` takes over the five days, from `cursor` on.
fn walk(user: &str, query: &str, cursor: Option<&str>) -> String {
    let from = cursor.map(|c| format!("&cursor={c}")).unwrap_or_default();
    format!(
        "/api/v1/users/{user}/timeseries?start_time=2026-03-08T00:00:00Z\
         &end_time=2026-03-13T00:00:00Z&{query}{from}"
    )
}

/// An app with a user holding [`dataset`], as rows.
pub(crate) async fn seeded() -> (TestApp, Auth, String) {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, serde_json::json!({})).await;
    app.sync_and_wait(&user, &key, &dataset()).await;
    (app, key, user)
}

pub(crate) async fn db(app: &TestApp) -> schema::Db {
    schema::Db::connect(&app.settings.database_url, 2).await.expect("db")
}

fn assert_same(before: &[(String, Value)], after: &[(String, Value)], when: &str) {
    assert_eq!(before.len(), after.len(), "{when}: as many answers");
    for ((path, a), (_, b)) in before.iter().zip(after) {
        assert_eq!(a, b, "{when}: {path}");
    }
}

pub(crate) async fn seal_all(app: &TestApp) -> schema::blocks::Sealing {
    let db = db(app).await;
    let now = ingest::sealer::SealConfig {
        after: std::time::Duration::ZERO,
        quiet: std::time::Duration::ZERO,
        ..Default::default()
    };
    let mut total = schema::blocks::Sealing::default();
    loop {
        let done = ingest::sealer::seal_due(&db, &now).await.expect("seal");
        if !done.progressed() {
            return total;
        }
        total += done;
    }
}

pub(crate) async fn unseal_all(app: &TestApp, user: &str) {
    let db = db(app).await;
    let user: schema::ids::UserId = user.parse().expect("user id");
    let mut client = db.client().await.expect("client");
    let tx = client.transaction().await.expect("tx");
    schema::blocks::unseal_user(&tx, user).await.expect("unseal");
    schema::session_blocks::unseal_user(&tx, user).await.expect("unseal sessions");
    tx.commit().await.expect("commit");
}

/// The workouts and sleep sessions stored, in rows and in their months' blocks.
async fn sessions_stored(app: &TestApp) -> (i64, i64) {
    let count = |table: &str, blocks: &str| {
        format!(
            "select (select count(*) from {table})
                    + (select coalesce(sum(cardinality(sessions)), 0) from {blocks})::int8"
        )
    };
    (
        app.count(&count("workouts", "workout_blocks")).await,
        app.count(&count("sleep_sessions", "sleep_blocks")).await,
    )
}

/// Heart rate at odd minutes of two evenings, sent after [`dataset`]: their hours' sums were
/// added batch by batch, so they differ in the last bits from the samples summed in time order
/// (the hours a block must keep as they are).
fn later_beats() -> String {
    let mut records = Vec::new();
    for day in [9, 10] {
        let evening = t(&format!("2026-03-{day:02}T21:00:00Z"));
        for i in 0..60 {
            let ts = iso(evening + Duration::minutes(2 * i + 1));
            let v = 61.3 + (i % 11) as f64 * 0.37;
            records.push(at("HeartRate", &ts, v, "count/min", Some("+02:00"), &watch()));
        }
    }
    body(records, vec![], vec![])
}

/// The rows of a rollup table keyed by `span` (`hour`, `day`), in key order, as text.
async fn rollup_rows(app: &TestApp, table: &str, span: &str) -> Vec<String> {
    let db = db(app).await;
    let client = db.client().await.expect("client");
    let rows = client
        .query(
            &format!(
                "select (user_id, series_type_id, data_source_id, {span}, sample_count, value_sum,
                         total_count, total_sum, value_max, zone_offset)::text
                 from {table} order by user_id, series_type_id, data_source_id, {span}"
            ),
            &[],
        )
        .await
        .expect("rollups");
    rows.iter().map(|r| r.get(0)).collect()
}

/// The local day rollup rows, in key order, as text.
async fn local_day_rows(app: &TestApp) -> Vec<String> {
    let db = db(app).await;
    let client = db.client().await.expect("client");
    let rows = client
        .query(
            "select (user_id, series_type_id, data_source_id, local_date, sample_count, value_sum,
                     value_min, value_max, total_count, total_sum)::text
             from daily_rollups order by user_id, series_type_id, data_source_id, local_date",
            &[],
        )
        .await
        .expect("rollups");
    rows.iter().map(|r| r.get(0)).collect()
}

/// The hourly, UTC day and local day rollup rows.
async fn hour_and_day_rows(app: &TestApp) -> (Vec<String>, Vec<String>, Vec<String>) {
    (
        rollup_rows(app, "hourly_rollups", "hour").await,
        rollup_rows(app, "utc_day_rollups", "day").await,
        local_day_rows(app).await,
    )
}

#[tokio::test]
async fn sealing_changes_no_answer_and_writes_into_sealed_days_land_as_on_rows() {
    let (app, key, user) = seeded().await;
    app.sync_and_wait(&user, &key, &later_beats()).await;
    let stored = app.count("select count(*) from samples").await;
    assert!(stored > 1300, "{stored}");
    let rows = answers(&app, &key, &user).await;
    let hours = hour_and_day_rows(&app).await;

    // Half a walk, then everything sealed, then the rest of the walk.
    let heart = "limit=97&types=heart_rate";
    let page1 = app.get(&walk(&user, heart, None), &key).await.body;
    let cursor = page1["pagination"]["next_cursor"].as_str().expect("a next cursor").to_string();

    let db = db(&app).await;
    let backlog = schema::blocks::store::oldest_unsealed(&db).await.expect("backlog");
    assert_eq!(backlog, Some(t("2026-03-08T00:00:00Z")), "the oldest day waits");
    let sealed = seal_all(&app).await;
    assert_eq!(sealed.samples as i64, stored, "every sample sealed");
    assert_eq!(schema::blocks::store::oldest_unsealed(&db).await.expect("backlog"), None);
    assert_eq!(app.count("select count(*) from samples").await, 0);
    // A block per series and source: their five days are sparse enough to share one.
    let blocks = app.count("select count(*) from sample_blocks").await;
    assert_eq!(blocks, 5, "{blocks} blocks");
    assert_eq!(app.count("select count(*) from sample_blocks where span >= 5").await, 5);
    // The hourly and UTC day rollups moved into the blocks, a few hours as they were summed.
    assert_eq!(app.count("select count(*) from hourly_rollups").await, 0);
    assert_eq!(app.count("select count(*) from utc_day_rollups").await, 0);
    let with_day = "select count(*) from sample_blocks where day_figures is not null";
    assert_eq!(app.count(with_day).await, blocks, "every block holds its day's rollup");
    let kept = app.count("select count(*) from sample_blocks where hour_exceptions is not null");
    assert!(kept.await > 0, "some hours kept as stored");
    // The local days whose UTC days all lie in a block (the 9th to the 11th of 8–12) moved in;
    // those at the blocks' edges stay rows.
    let inner =
        "select count(*) from daily_rollups where local_date between '2026-03-09' and '2026-03-11'";
    assert_eq!(app.count(inner).await, 0, "the inner local days are in the blocks");
    assert!(app.count("select count(*) from daily_rollups").await > 0, "the edge days are rows");
    // The sessions of past months moved into their months' blocks.
    let sessions = sessions_stored(&app).await;
    assert!(sessions.0 > 0 && sessions.1 > 0, "{sessions:?}");
    assert_eq!(app.count("select count(*) from workouts").await, 0, "workouts sealed");
    assert_eq!(app.count("select count(*) from sleep_sessions").await, 0, "nights sealed");
    let local = "select count(*) from sample_blocks where local_figures is not null
                 and substring(local_days from 2 for 3) = B'111' and local_samples > 0";
    assert_eq!(app.count(local).await, blocks, "every block keeps its inner local days");
    assert_same(&rows, &answers(&app, &key, &user).await, "sealed");
    let page2 = app.get(&walk(&user, heart, Some(&cursor)), &key).await.body;
    let walked = rows.iter().find(|(p, _)| p == "walk heart 1").map(|(_, v)| v.clone());
    assert_eq!(Some(page2), walked, "the walk goes on across the sealing");

    // Unsealed, the hours and days come back to the bit.
    unseal_all(&app, &user).await;
    let back = hour_and_day_rows(&app).await;
    assert_eq!(back, hours, "the hourly, UTC day and local day rollups as they were");
    seal_all(&app).await;

    // The same batch again: stored once, nothing unsealed.
    app.sync_and_wait(&user, &key, &dataset()).await;
    assert_eq!(app.count("select count(*) from samples").await, 0, "a re-send stays sealed");
    assert_eq!(sessions_stored(&app).await, sessions, "re-sent sessions are stored once");
    assert_same(&rows, &answers(&app, &key, &user).await, "re-sent");
    seal_all(&app).await;

    // A changed value, a new sample and a moved zone in sealed days...
    let zone = Some("+02:00");
    let changes = vec![
        at("HeartRate", "2026-03-09T23:00:00Z", 99.25, "count/min", zone, &watch()),
        at("HeartRate", "2026-03-11T00:01:00Z", 77.5, "count/min", zone, &watch()),
        at("HeartRate", "2026-03-12T01:00:00Z", 61.0, "count/min", Some("-05:00"), &watch()),
    ];
    app.sync_and_wait(&user, &key, &body(changes, vec![], vec![])).await;
    assert!(app.count("select count(*) from samples").await > 0, "the changed days are rows");
    let changed = answers(&app, &key, &user).await;
    assert_ne!(changed, rows, "the change shows");
    // ...answer as the same data wholly in rows does, and as it does sealed again.
    unseal_all(&app, &user).await;
    assert_eq!(app.count("select count(*) from sample_blocks").await, 0);
    assert_eq!(app.count("select count(*) from samples").await, stored + 1);
    assert!(app.count("select count(*) from hourly_rollups").await > 0);
    assert_same(&changed, &answers(&app, &key, &user).await, "changed, all rows");
    seal_all(&app).await;
    assert_same(&changed, &answers(&app, &key, &user).await, "changed, sealed again");

    // A new sample unseals its block; a changed one in that day, now rows, is recounted with
    // its local days, which reach into the sealed days beside it.
    let beat = |ts: &str, v: f64| at("HeartRate", ts, v, "count/min", Some("+02:00"), &watch());
    let new = vec![beat("2026-03-10T20:01:00Z", 66.0)];
    app.sync_and_wait(&user, &key, &body(new, vec![], vec![])).await;
    let changed = vec![beat("2026-03-10T20:02:00Z", 88.5)];
    app.sync_and_wait(&user, &key, &body(changed, vec![], vec![])).await;
    let beside = answers(&app, &key, &user).await;
    unseal_all(&app, &user).await;
    assert_same(&beside, &answers(&app, &key, &user).await, "changed beside sealed days, rows");

    // A sealed workout is deleted like a row.
    seal_all(&app).await;
    assert_eq!(app.count("select count(*) from workouts").await, 0);
    let list =
        format!("/api/v1/users/{user}/events/workouts?start_date=2026-03-07&end_date=2026-03-13");
    let listed = app.get(&list, &key).await;
    let id = listed.body["data"][0]["id"].as_str().expect("a workout").to_string();
    let path = format!("/api/v1/users/{user}/events/workouts/{id}");
    let r = app.call(reqwest::Method::DELETE, &path, &key, None).await;
    assert!(r.status < 300, "{}", r.body);
    assert_eq!(sessions_stored(&app).await.0, sessions.0 - 1, "the sealed workout is gone");
    let listed = app.get(&list, &key).await;
    assert!(
        listed.body["data"].as_array().is_some_and(|d| d.iter().all(|w| w["id"] != id.as_str()))
    );

    // Deleting the user deletes the blocks.
    let admin = app.admin().await;
    let r = app.call(reqwest::Method::DELETE, &format!("/api/v1/users/{user}"), &admin, None).await;
    assert!(r.status < 300, "{}", r.body);
    assert_eq!(app.count("select count(*) from sample_blocks").await, 0);
    assert_eq!(sessions_stored(&app).await, (0, 0));
}

#[tokio::test]
async fn reprocess_reaches_sealed_days() {
    let (app, key, user) = seeded().await;
    let rows = answers(&app, &key, &user).await;
    let stored = app.count("select count(*) from samples").await;
    seal_all(&app).await;
    let db = db(&app).await;
    let id: schema::ids::UserId = user.parse().expect("user id");
    let done =
        ingest::reprocess::reprocess_user(&db, id, None, |_, _| {}).await.expect("reprocess");
    assert_eq!(done.samples_deleted as i64, stored, "{done:?}");
    assert_eq!(app.count("select count(*) from samples").await, stored);
    // Rollups are rebuilt from the samples (their sums in another order than ingest added
    // them), so the raw pages are compared: every sample back, once.
    let raw = |a: Vec<(String, Value)>| -> Vec<(String, Value)> {
        a.into_iter()
            .filter(|(p, _)| p.contains("resolution=raw") || p.starts_with("walk heart"))
            .collect()
    };
    assert_same(&raw(rows), &raw(answers(&app, &key, &user).await), "reprocessed");
}

/// Blocks of a day each, as builds before V26 sealed them (made here by sealing the days newest
/// first: a day never joins a block that starts after it), are packed again by the sealer once
/// their user is on the worklist, and every read answers as before.
#[tokio::test]
async fn blocks_of_a_day_are_packed_again() {
    let (app, key, user) = seeded().await;
    let rows = answers(&app, &key, &user).await;
    let db = db(&app).await;
    let id: schema::ids::UserId = user.parse().expect("user id");
    let far = Utc::now() + Duration::days(1);
    let mut days =
        schema::blocks::store::due_for_user(&db, id, far, far, 1000).await.expect("due days");
    days.sort_by_key(|(key, _)| std::cmp::Reverse(key.day));
    for (day, _) in &days {
        schema::blocks::seal(&db, id, &[*day]).await.expect("seal a day");
    }
    let single = app.count("select count(*) from sample_blocks").await;
    assert!(single >= 25, "{single} blocks of a day");
    assert_eq!(app.count("select count(*) from sample_blocks where span > 1").await, 0);
    assert_same(&rows, &answers(&app, &key, &user).await, "blocks of a day");

    let worklist = "insert into block_repacks values ($1)";
    app.db().await.execute(worklist, &[&id]).await.expect("on the worklist");
    seal_all(&app).await;
    assert_eq!(app.count("select count(*) from block_repacks").await, 0, "off the worklist");
    assert_eq!(app.count("select count(*) from sample_blocks").await, 5, "a block a series");
    assert_same(&rows, &answers(&app, &key, &user).await, "packed again");
}

/// Samples stored, in rows and in blocks.
pub(crate) async fn stored_samples(app: &TestApp) -> i64 {
    app.count(
        "select (select count(*) from samples)
              + (select coalesce(sum(sample_count), 0) from sample_blocks)::bigint",
    )
    .await
}

#[tokio::test]
async fn sealing_beside_ingest_of_the_same_days_loses_and_doubles_nothing() {
    let (app, key, user) = seeded().await;
    let stored = stored_samples(&app).await;
    // Batches of new samples (odd minutes) and changed ones (even minutes) into every day,
    // sent while the days are sealed over and over.
    let writer = async {
        for round in 0..4i64 {
            let mut records = Vec::new();
            for day in 8..13 {
                let evening = t(&format!("2026-03-{day:02}T20:00:00Z"));
                for i in 0..10 {
                    let new = iso(evening + Duration::minutes(2 * i + 1 + 40 * round));
                    records.push(at(
                        "HeartRate",
                        &new,
                        70.0,
                        "count/min",
                        Some("+02:00"),
                        &watch(),
                    ));
                    let old = iso(evening + Duration::minutes(2 * i + 40 * round));
                    let v = 80.0 + round as f64;
                    records.push(at("HeartRate", &old, v, "count/min", Some("+02:00"), &watch()));
                }
            }
            app.sync_and_wait(&user, &key, &body(records, vec![], vec![])).await;
        }
    };
    let sealer = async {
        for _ in 0..8 {
            seal_all(&app).await;
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    };
    tokio::join!(writer, sealer);
    assert_eq!(stored_samples(&app).await, stored + 4 * 5 * 10, "each new sample once");
    seal_all(&app).await;
    let sealed = answers(&app, &key, &user).await;
    unseal_all(&app, &user).await;
    assert_eq!(stored_samples(&app).await, stored + 200);
    assert_same(&sealed, &answers(&app, &key, &user).await, "sealed beside ingest, then rows");
}

/// Seals with `config` until it has nothing left to do.
async fn seal_share(db: &schema::Db, config: &ingest::sealer::SealConfig) {
    while ingest::sealer::seal_due(db, config).await.expect("seal").progressed() {}
}

#[tokio::test]
async fn sealers_side_by_side_take_each_user_once_and_seal_every_day() {
    let (app, key, first) = seeded().await;
    let mut users = vec![first];
    for _ in 0..3 {
        let user = app.user(&key, serde_json::json!({})).await;
        app.sync_and_wait(&user, &key, &dataset()).await;
        users.push(user);
    }
    let mut before = Vec::new();
    for user in &users {
        before.push(read_answers(&app, &key, user).await);
    }
    let stored = stored_samples(&app).await;
    let jobs = ingest::sealer::SealConfig {
        after: std::time::Duration::ZERO,
        quiet: std::time::Duration::ZERO,
        jobs: 2,
        ..Default::default()
    };
    let shares = jobs.shares();
    assert_eq!(shares.len(), 2);
    let db = db(&app).await;
    // The second share alone takes whole users: none is left half sealed.
    seal_share(&db, &shares[1]).await;
    // A sealed day leaves the worklist (`utc_day_rollups`) for a block.
    let split = "select count(*) from (select distinct user_id from sample_blocks) b
                 join (select distinct user_id from utc_day_rollups where not sealed) r using (user_id)";
    assert_eq!(app.count(split).await, 0, "a user is wholly in one share");
    let sealed_users = "select count(distinct user_id) from sample_blocks";
    let second = app.count(sealed_users).await;
    // Both side by side seal the rest, each day once.
    tokio::join!(seal_share(&db, &shares[0]), seal_share(&db, &shares[1]));
    assert_eq!(app.count("select count(*) from utc_day_rollups where not sealed").await, 0);
    assert_eq!(app.count(sealed_users).await, 4);
    let hashed = "select count(*) from users where (hashtext(id::text) & 2147483647) % 2 = 1";
    assert_eq!(second, app.count(hashed).await, "the second share took its users, only");
    assert_eq!(stored_samples(&app).await, stored, "every sample once");
    for (user, before) in users.iter().zip(&before) {
        assert_same(before, &read_answers(&app, &key, user).await, "sealed by two sealers");
    }
}

/// Local day rollups as sealing leaves them after converting a backlog: most rows gone, a few
/// on every page (the days at blocks' edges). Packing moves the rows behind what they need to
/// the front and gives the rest of the heap back, every row kept; a packed heap is left alone.
#[tokio::test]
async fn packing_gives_back_the_local_days_sealing_emptied() {
    // No worker sealing (and packing) beside the test.
    let app = TestApp::spawn_with(crate::util::Mode::ApiOnly, |_| {}).await;
    let client = app.db().await;
    let before = sealed_local_days(&client).await;
    let size_before = app.count(LOCAL_DAYS_HEAP).await;
    assert!(size_before > 8 << 20, "{size_before} bytes");

    let db = db(&app).await;
    packed_down(&app, &db, size_before, 0).await;
    assert_eq!(local_days(&client).await, before, "every row");
    // Packed: nothing more to give back.
    let again = schema::blocks::compact::pack_local_days(&db).await.expect("pack again");
    assert!(!again.progressed(), "{again:?}");
}

/// A heap of more users than a round moves gives its end back once the last round moved the
/// rest: the rounds before, which free nothing, are progress, not a fruitless round to rest on.
#[tokio::test]
async fn packing_many_users_goes_on_over_rounds_that_free_nothing_yet() {
    let app = TestApp::spawn_with(crate::util::Mode::ApiOnly, |_| {}).await;
    let client = app.db().await;
    let before = sealed_local_days_of(&client, 2500, 4).await;
    let size_before = app.count(LOCAL_DAYS_HEAP).await;
    assert!(size_before > 8 << 20, "{size_before} bytes");
    let db = db(&app).await;
    let first = schema::blocks::compact::pack_local_days(&db).await.expect("pack");
    assert!(first.more, "a round moves 2,000 users: {first:?}");
    packed_down(&app, &db, size_before, first.freed).await;
    assert_eq!(local_days(&client).await, before, "every row");
}

const LOCAL_DAYS_HEAP: &str = "select pg_relation_size('daily_rollups')";

/// Five more rounds of packing, after `freed` bytes given back already: the heap ends under a
/// third of `size_before`, smaller by the bytes the rounds said they gave back.
async fn packed_down(app: &TestApp, db: &schema::Db, size_before: i64, mut freed: u64) {
    for _ in 0..5 {
        freed += schema::blocks::compact::pack_local_days(db).await.expect("pack").freed;
    }
    let size_after = app.count(LOCAL_DAYS_HEAP).await;
    assert!(size_after * 3 < size_before, "{size_before} -> {size_after} bytes");
    assert_eq!(freed as i64, size_before - size_after);
}

/// Fills `daily_rollups` as sealing a backlog leaves it: 300 users with 20 series over 20
/// days, of which sealing took all but the first day. Answers [`local_days`].
async fn sealed_local_days(client: &tokio_postgres::Client) -> (i64, i64, i64, i64) {
    sealed_local_days_of(client, 300, 20).await
}

/// [`sealed_local_days`] of `users` users with `series` series each.
async fn sealed_local_days_of(
    client: &tokio_postgres::Client,
    users: i32,
    series: i32,
) -> (i64, i64, i64, i64) {
    let fill =
        "with u as (insert into users (id) select gen_random_uuid() from generate_series(1, $1)
                           returning id)
                insert into daily_rollups (user_id, series_type_id, data_source_id, local_date,
                                           sample_count, value_sum)
                select u.id, s, u.id, date '2025-01-01' + d, s + d, s * 1.5 + d
                from u, generate_series(1, $2) s, generate_series(0, 19) d";
    client.execute(fill, &[&users, &series]).await.expect("fill");
    client
        .execute("delete from daily_rollups where local_date > '2025-01-01'", &[])
        .await
        .expect("seal");
    // The deletions counted now (a busy server flushes a backend's counters up to seconds
    // later), as a round of the sealer, minutes after sealing, would find them.
    client.execute("select pg_stat_force_next_flush()", &[]).await.expect("flush");
    let rows = local_days(client).await;
    assert_eq!(rows.0, i64::from(users * series));
    rows
}

/// The local day rollups' rows, sample counts, sums and users.
async fn local_days(client: &tokio_postgres::Client) -> (i64, i64, i64, i64) {
    let r = client
        .query_one(
            "select count(*), sum(sample_count)::bigint, sum(value_sum)::bigint,
                    count(distinct user_id)
             from daily_rollups",
            &[],
        )
        .await
        .expect("rows");
    (r.get(0), r.get(1), r.get(2), r.get(3))
}

/// Packing waits for a user's writers only so long (2 s), then leaves their rows to the next
/// round. When that frees nothing (here: the busy user's rows end the heap, so VACUUM can cut
/// nothing off), the next rounds rest instead of vacuuming the table again for nothing.
#[tokio::test]
async fn packing_passes_a_busy_user_and_rests_after_a_fruitless_round() {
    let app = TestApp::spawn_with(crate::util::Mode::ApiOnly, |_| {}).await;
    let client = app.db().await;
    let before = sealed_local_days(&client).await;
    let size_before = app.count(LOCAL_DAYS_HEAP).await;
    let last: uuid::Uuid = client
        .query_one("select user_id from daily_rollups order by ctid desc limit 1", &[])
        .await
        .expect("last row")
        .get(0);
    // That user's import is writing.
    let mut writer = app.db().await;
    let import = writer.transaction().await.expect("begin");
    import.execute("select 1 from users where id = $1 for share", &[&last]).await.expect("lock");

    let db = db(&app).await;
    let round = schema::blocks::compact::pack_local_days(&db).await.expect("pack");
    assert_eq!(round, schema::blocks::compact::Packing::default());
    assert!(app.count(LOCAL_DAYS_HEAP).await >= size_before, "the heap's end kept");
    let vacuums = "select vacuum_count from pg_stat_all_tables where relname = 'daily_rollups'";
    let vacuumed = app.count(vacuums).await;
    assert!(vacuumed >= 2, "the round vacuumed ({vacuumed})");
    let rest = schema::blocks::compact::pack_local_days(&db).await.expect("rest");
    assert_eq!(rest, schema::blocks::compact::Packing::default());
    assert_eq!(app.count(vacuums).await, vacuumed, "rested: no VACUUM");
    import.rollback().await.expect("rollback");
    assert_eq!(local_days(&client).await, before, "every row");
}

/// A chunk of past samples that sealing left far larger than its rows is rewritten, every row
/// kept; a chunk as full as its rows, and a chunk still within the sealing age, are not.
#[tokio::test]
async fn sample_chunks_sealing_emptied_are_rewritten() {
    // No worker sealing (and compacting) beside the test.
    let app = TestApp::spawn_with(crate::util::Mode::ApiOnly, |_| {}).await;
    let client = app.db().await;
    let today = schema::blocks::store::utc_day(Utc::now());
    // Weeks as the chunks are cut (7 days from a Thursday); the recent one ends past today.
    let (emptied, full, recent) =
        (t("2025-01-02T00:00:00Z"), t("2025-03-06T00:00:00Z"), today + Duration::hours(1));
    // 10,000 samples a week, a minute apart; sealing then took all but the first hundred of
    // the emptied week and of the recent one.
    let fill = "insert into samples (user_id, series_type_id, data_source_id, ts, value)
                select '00000000-0000-4000-8000-000000000001', 1,
                       '00000000-0000-4000-8000-000000000002', $1::timestamptz + i * interval '1 minute', i
                from generate_series(0, 9999) i";
    for start in [emptied, full, recent - Duration::minutes(10_000)] {
        client.execute(fill, &[&start]).await.expect("fill");
    }
    let sealed = "delete from samples where ts >= $1::timestamptz + interval '100 minutes' and ts < $1::timestamptz + interval '7 days'";
    for start in [emptied, recent - Duration::minutes(10_000)] {
        client.execute(sealed, &[&start]).await.expect("seal");
    }
    let rows = "select count(*), sum(value)::bigint from samples";
    let before: (i64, i64) =
        client.query_one(rows, &[]).await.map(|r| (r.get(0), r.get(1))).expect("rows");
    let sizes = |at: DateTime<Utc>| {
        format!(
            "select pg_total_relation_size(format('%I.%I', chunk_schema, chunk_name)::regclass)
             from timescaledb_information.chunks
             where hypertable_name = 'samples' and '{}'::timestamptz >= range_start
               and '{}'::timestamptz < range_end",
            iso(at),
            iso(at)
        )
    };
    let emptied_before = app.count(&sizes(emptied)).await;
    let full_before = app.count(&sizes(full)).await;
    let recent_before = app.count(&sizes(recent)).await;
    assert!(emptied_before > 256 * 1024, "{emptied_before} bytes");

    let db = db(&app).await;
    let compact = || schema::blocks::compact::compact_sealed_chunks(&db, today, true);
    // A chunk busy (autovacuum after the deletion) is left to the next round, as the sealer
    // does; on a loaded box that takes a few rounds.
    let mut freed = 0;
    let mut emptied_after = emptied_before;
    for _ in 0..30 {
        freed += compact().await.expect("compact");
        emptied_after = app.count(&sizes(emptied)).await;
        if emptied_after * 5 < emptied_before {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    assert!(emptied_after * 5 < emptied_before, "{emptied_before} -> {emptied_after} bytes");
    // At least that: the recent fill's first days may lie in an earlier chunk, emptied too.
    assert!(freed as i64 >= emptied_before - emptied_after, "{freed} bytes freed");
    assert_eq!(app.count(&sizes(full)).await, full_before, "a full chunk");
    assert_eq!(app.count(&sizes(recent)).await, recent_before, "within the sealing age");
    let after: (i64, i64) =
        client.query_one(rows, &[]).await.map(|r| (r.get(0), r.get(1))).expect("rows");
    assert_eq!(after, before, "every row");
    assert_eq!(compact().await.expect("compact again"), 0);
}

/// A past chunk that sealing left without a row is dropped (each chunk costs every read of
/// `samples` on a generic plan its start-up), but not while a snapshot taken before the sealing
/// committed can still read its rows; a later sample of that week makes a new chunk.
#[tokio::test]
async fn sample_chunks_sealing_left_empty_are_dropped_once_no_snapshot_reads_them() {
    let app = TestApp::spawn_with(crate::util::Mode::ApiOnly, |_| {}).await;
    let client = app.db().await;
    let today = schema::blocks::store::utc_day(Utc::now());
    // Two weeks as the chunks are cut (7 days from a Thursday): one sealing empties, one it
    // leaves a row in.
    let (emptied, kept) = (t("2025-01-02T00:00:00Z"), t("2025-01-09T00:00:00Z"));
    let fill = "insert into samples (user_id, series_type_id, data_source_id, ts, value)
                select '00000000-0000-4000-8000-000000000001', 1,
                       '00000000-0000-4000-8000-000000000002', $1::timestamptz + i * interval '1 hour', i
                from generate_series(0, 99) i";
    for start in [emptied, kept] {
        client.execute(fill, &[&start]).await.expect("fill");
    }
    let chunk = |at: DateTime<Utc>| {
        format!(
            "select count(*) from timescaledb_information.chunks
             where hypertable_name = 'samples' and '{0}'::timestamptz >= range_start
               and '{0}'::timestamptz < range_end",
            iso(at)
        )
    };
    let in_week = "select count(*) from samples
                   where ts >= $1::timestamptz and ts < $1::timestamptz + interval '7 days'";
    // A reader's snapshot, taken before the sealing deletes the week's rows.
    let reader = app.db().await;
    reader
        .batch_execute("begin isolation level repeatable read; select count(*) from users")
        .await
        .expect("snapshot");
    client
        .execute(
            "delete from samples where ts >= $1::timestamptz and ts < $1::timestamptz + interval '99 hours'",
            &[&kept],
        )
        .await
        .expect("seal all but one");
    client
        .execute(
            "delete from samples where ts >= $1::timestamptz and ts < $1::timestamptz + interval '7 days'",
            &[&emptied],
        )
        .await
        .expect("seal");
    let db = db(&app).await;
    let compact = || schema::blocks::compact::compact_sealed_chunks(&db, today, true);
    compact().await.expect("compact");
    assert_eq!(app.count(&chunk(emptied)).await, 1, "kept for the older snapshot");
    let seen: i64 = reader.query_one(in_week, &[&emptied]).await.expect("read").get(0);
    assert_eq!(seen, 100, "the older snapshot reads the week's rows");
    reader.batch_execute("commit").await.expect("commit");

    // Busy (autovacuum after the deletion) is left to the next round, as the sealer does.
    let mut freed = 0;
    for _ in 0..30 {
        freed += compact().await.expect("compact");
        if app.count(&chunk(emptied)).await == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    assert_eq!(app.count(&chunk(emptied)).await, 0, "dropped");
    assert!(freed > 0, "its disk given back");
    assert_eq!(app.count(&chunk(kept)).await, 1, "a chunk with a row stays");
    let left: i64 = client.query_one(in_week, &[&kept]).await.expect("read").get(0);
    assert_eq!(left, 1, "its row kept");

    // A late sample of the dropped week: a chunk again, and the sample read back.
    client
        .execute(
            "insert into samples (user_id, series_type_id, data_source_id, ts, value)
             values ('00000000-0000-4000-8000-000000000001', 1,
                     '00000000-0000-4000-8000-000000000002', $1::timestamptz + interval '3 days', 7)",
            &[&emptied],
        )
        .await
        .expect("a late sample");
    assert_eq!(app.count(&chunk(emptied)).await, 1, "made again");
    let back: i64 = client.query_one(in_week, &[&emptied]).await.expect("read").get(0);
    assert_eq!(back, 1);
}

/// Values whose sums depend on their order, signed zeros and values too large to be averaged
/// before the statement: every sub-hour page answers the same once they are sealed (a sealed
/// bucket is aggregated outside the statement, `schema::blocks::buckets`, except where a value is
/// too large for that, when its samples go to the statement as they are).
#[tokio::test]
async fn sub_hour_buckets_of_awkward_values_answer_as_on_rows() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, serde_json::json!({})).await;
    let zone = Some("+01:00");
    let mut records = Vec::new();
    let minute =
        |day: u32, m: i64| iso(t(&format!("2026-03-{day:02}T10:00:00Z")) + Duration::minutes(m));
    for m in (0..120).step_by(5) {
        // Steps, by the minute: 1e16 + 1 - 1e16 in time order is 0, in another order 1.
        for (i, v) in [(0, 1e16), (1, 1.0), (2, -1e16), (3, 0.1), (4, 0.2)] {
            let (a, b) = (minute(9, m + i), minute(9, m + i));
            records.push(rec(
                "StepCount",
                &a,
                &b,
                v * f64::from(1 + (m % 3) as u32),
                "count",
                zone,
                &phone(),
            ));
        }
        // Heart rate means of thirds; a best effort of signed zeros.
        for (i, v) in [(0, 0.1), (1, 0.2), (3, 0.7), (4, 1.0 / 3.0)] {
            records.push(at("HeartRate", &minute(9, m + i), 60.0 + v, "count/min", zone, &watch()));
        }
        records.push(at("SixMinuteWalkTestDistance", &minute(9, m), 0.0, "m", zone, &watch()));
        records.push(at("SixMinuteWalkTestDistance", &minute(9, m + 2), -0.0, "m", zone, &watch()));
        // A bucket of one negative zero.
        records.push(rec(
            "StepCount",
            &minute(10, m),
            &minute(10, m),
            -0.0,
            "count",
            zone,
            &phone(),
        ));
        // The next day: values a mean of which PostgreSQL takes but the buckets leave to it.
        records.push(at(
            "HeartRate",
            &minute(11, m),
            1e120 * f64::from(1 + (m % 7) as u32),
            "count/min",
            zone,
            &watch(),
        ));
    }
    app.sync_and_wait(&user, &key, &body(records, vec![], vec![])).await;
    let ts = format!("/api/v1/users/{user}/timeseries?limit=100");
    let windows = [
        "start_time=2026-03-09T00:00:00Z&end_time=2026-03-10T00:00:00Z",
        "start_time=2026-03-09T10:03:00Z&end_time=2026-03-09T11:12:00Z",
        "start_time=2026-03-08T00:00:00Z&end_time=2026-03-12T00:00:00Z",
        "start_time=2026-03-10T00:00:00Z&end_time=2026-03-12T00:00:00Z",
    ];
    let mut paths = Vec::new();
    for w in windows {
        for res in ["1min", "5min", "15min"] {
            for prio in ["false", "true"] {
                paths.push(format!("{ts}&{w}&resolution={res}&filter_by_priority={prio}"));
                paths.push(format!(
                    "{ts}&{w}&resolution={res}&limit=7&types=steps&types=heart_rate"
                ));
            }
        }
    }
    let read = async || {
        let mut out = Vec::new();
        for p in &paths {
            let r = app.get(p, &key).await;
            assert_eq!(r.status, 200, "{p}: {}", r.body);
            out.push((p.clone(), r.body));
        }
        out
    };
    let before = read().await;
    // The steps of 10:03–11:12 by 5 minutes: every third bucket (values x1) sums to 0.3 + ~0,
    // the rest to 1e16-sized cancellations; whatever they come to, sealed they must be the same.
    let steps: Vec<f64> = before[18].1["data"]
        .as_array()
        .map(|d| {
            d.iter().filter(|s| s["type"] == "steps").filter_map(|s| s["value"].as_f64()).collect()
        })
        .unwrap_or_default();
    assert!(
        before[18].0.contains("T10:03:00Z") && before[18].0.contains("5min"),
        "{}",
        before[18].0
    );
    assert!(steps.len() > 10, "{steps:?}");
    let stored = app.count("select count(*) from samples").await;
    let sealed = seal_all(&app).await;
    assert_eq!(sealed.samples as i64, stored, "every sample sealed");
    assert_eq!(app.count("select count(*) from samples").await, 0);
    assert_same(&before, &read().await, "sealed");
}
