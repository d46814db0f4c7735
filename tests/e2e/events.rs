//! `/users/{id}/events/*`: session lists newest first, cursor pages, cross-source duplicates,
//! deletes.

use reqwest::Method;
use serde_json::{Value, json};

use crate::fixtures::{body, phone, ring, sleep, watch, workout};
use crate::util::{Auth, TestApp};

/// A run recorded by the watch and, overlapping it, by the phone; a walk the next day on the
/// phone alone; the same night recorded by the watch and by a ring.
async fn seed(app: &TestApp, key: &Auth, user: &str) {
    let workouts = vec![
        workout(
            "W-RUN",
            "running",
            "2026-03-10T07:00:00Z",
            "2026-03-10T07:40:00Z",
            400.0,
            8000.0,
            "+01:00",
            &watch(),
        ),
        workout(
            "P-RUN",
            "running",
            "2026-03-10T07:02:00Z",
            "2026-03-10T07:38:00Z",
            380.0,
            7900.0,
            "+01:00",
            &phone(),
        ),
        workout(
            "P-WALK",
            "walking",
            "2026-03-11T17:00:00Z",
            "2026-03-11T17:30:00Z",
            0.0,
            2500.0,
            "+01:00",
            &phone(),
        ),
    ];
    let mut nights = sleep(
        &[
            ("light", "2026-03-09T22:00:00Z", "2026-03-10T01:00:00Z"),
            ("deep", "2026-03-10T01:00:00Z", "2026-03-10T02:00:00Z"),
            ("rem", "2026-03-10T02:00:00Z", "2026-03-10T03:00:00Z"),
            ("awake", "2026-03-10T03:00:00Z", "2026-03-10T03:10:00Z"),
            ("light", "2026-03-10T03:10:00Z", "2026-03-10T06:00:00Z"),
        ],
        "+01:00",
        &watch(),
    );
    nights.extend(sleep(
        &[
            ("light", "2026-03-09T22:10:00Z", "2026-03-10T02:00:00Z"),
            ("deep", "2026-03-10T02:00:00Z", "2026-03-10T06:05:00Z"),
        ],
        "+01:00",
        &ring(),
    ));
    app.sync_and_wait(user, key, &body(vec![], workouts, nights)).await;
}

async fn list(app: &TestApp, key: &Auth, user: &str, what: &str, query: &str) -> Value {
    let r = app.get(&format!("/api/v1/users/{user}/events/{what}?{query}"), key).await;
    assert_eq!(r.status, 200, "{what}?{query}: {}", r.body);
    r.body
}

fn field(page: &Value, name: &str) -> Vec<Value> {
    page["data"].as_array().map(|d| d.iter().map(|w| w[name].clone()).collect()).unwrap_or_default()
}

#[tokio::test]
async fn workouts_newest_first_with_duplicates_resolved_and_cursor_pages() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let other = app.user(&key, json!({})).await;
    seed(&app, &key, &user).await;
    let window = "start_date=2026-03-01&end_date=2026-03-31";

    let p = list(&app, &key, &user, "workouts", window).await;
    // The watch's run wins over the phone's; the walk has no rival.
    assert_eq!(field(&p, "type"), [json!("walking"), json!("running")]);
    assert_eq!(p["pagination"]["total_count"], 2);
    let run = &p["data"][1];
    assert_eq!(run["source"]["device_type"], "watch");
    assert_eq!(run["start_time"], "2026-03-10T08:00:00+01:00");
    assert_eq!(run["zone_offset"], "+01:00");
    assert_eq!(run["duration_seconds"], 2400);
    assert_eq!(run["calories_kcal"], 400.0);
    assert_eq!(run["distance_meters"], 8000.0);
    assert_eq!(run["avg_pace_sec_per_km"], 300.0);
    assert_eq!(run["avg_heart_rate_bpm"], 140);
    assert_eq!(run["max_heart_rate_bpm"], 170);
    // Zero calories mean "not measured".
    assert_eq!(p["data"][0]["calories_kcal"], Value::Null);

    let all =
        list(&app, &key, &user, "workouts", &format!("{window}&filter_by_priority=false")).await;
    assert_eq!(all["pagination"]["total_count"], 3);
    assert_eq!(field(&all, "type"), [json!("walking"), json!("running"), json!("running")]);

    // One per page, newest first, and back.
    let mut ids = Vec::new();
    let mut cursor = String::new();
    let mut pages = Vec::new();
    loop {
        let p = list(
            &app,
            &key,
            &user,
            "workouts",
            &format!("{window}&filter_by_priority=false&limit=1{cursor}"),
        )
        .await;
        ids.extend(field(&p, "id"));
        pages.push(p.clone());
        match p["pagination"]["next_cursor"].as_str() {
            Some(c) => cursor = format!("&cursor={c}"),
            None => break,
        }
    }
    assert_eq!(ids, field(&all, "id"));
    let prev = pages[2]["pagination"]["previous_cursor"].as_str().expect("previous cursor");
    let back = list(
        &app,
        &key,
        &user,
        "workouts",
        &format!("{window}&filter_by_priority=false&limit=1&cursor={prev}"),
    )
    .await;
    assert_eq!(field(&back, "id"), [ids[1].clone()]);

    // The window is on the start time; a date-only end includes the day.
    let p = list(&app, &key, &user, "workouts", "start_date=2026-03-11&end_date=2026-03-11").await;
    assert_eq!(field(&p, "type"), [json!("walking")]);
    let p = list(
        &app,
        &key,
        &user,
        "workouts",
        "start_date=2026-03-10T07:01:00Z&end_date=2026-03-11T00:00:00Z&filter_by_priority=false",
    )
    .await;
    assert_eq!(field(&p, "source").len(), 1);
    // Another user sees none of it.
    let p = list(&app, &key, &other, "workouts", window).await;
    assert_eq!(p["data"], json!([]));
    assert_eq!(p["pagination"]["total_count"], 0);

    // Bad input.
    let r =
        app.get(&format!("/api/v1/users/{user}/events/workouts?start_date=2026-03-01"), &key).await;
    r.assert_invalid(&["query", "end_date"], "missing");
    let r =
        app.get(&format!("/api/v1/users/{user}/events/workouts?{window}&limit=101"), &key).await;
    r.assert_invalid(&["query", "limit"], "less_than_equal");
}

#[tokio::test]
async fn sleep_sessions_resolve_the_same_night_by_source_priority() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    seed(&app, &key, &user).await;
    let window = "start_date=2026-03-09&end_date=2026-03-10";

    let p = list(&app, &key, &user, "sleep", window).await;
    assert_eq!(p["pagination"]["total_count"], 1);
    let night = &p["data"][0];
    assert_eq!(night["source"]["device_type"], "watch");
    assert_eq!(night["start_time"], "2026-03-09T23:00:00+01:00");
    assert_eq!(night["end_time"], "2026-03-10T07:00:00+01:00");
    assert_eq!(night["duration_seconds"], 8 * 3600);
    assert_eq!(night["sleep_duration_seconds"], 8 * 3600 - 600);
    assert_eq!(
        night["stages"],
        json!({"awake_minutes": 10, "light_minutes": 350, "deep_minutes": 60, "rem_minutes": 60})
    );
    assert_eq!(night["is_nap"], false);
    assert_eq!(night["sleep_stage_intervals"].as_array().map(Vec::len), Some(5));

    let all = list(&app, &key, &user, "sleep", &format!("{window}&filter_by_priority=false")).await;
    assert_eq!(all["pagination"]["total_count"], 2);
    let kinds: Vec<Value> =
        field(&all, "source").iter().map(|s| s["device_type"].clone()).collect();
    assert_eq!(kinds, [json!("ring"), json!("watch")]);
}

/// Two sources ranked alike (neither is in the ranking the filter is given: a source that
/// appeared after the ranking was read) keep the same one of two overlapping sessions in SQL
/// (the event lists' filter) as in Rust (the day rollups' pick, `rules::Ranking::rank`): the
/// source with the smaller id, which here holds the newer session.
#[tokio::test]
async fn a_tie_in_rank_goes_the_same_way_in_sql_and_in_rust() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let at = |id: &str, start: &str, end: &str, device: &Value| {
        let w = workout(id, "running", start, end, 400.0, 8000.0, "+01:00", device);
        body(vec![], vec![w], vec![])
    };
    // Both sources first (their ids are random), then a run on the source with the larger id,
    // then one over it on the source with the smaller id: the rule keeps the newer session.
    app.sync_and_wait(
        &user,
        &key,
        &at("P-EARLY", "2026-03-01T07:00:00Z", "2026-03-01T07:30:00Z", &phone()),
    )
    .await;
    app.sync_and_wait(
        &user,
        &key,
        &at("W-EARLY", "2026-03-02T07:00:00Z", "2026-03-02T07:30:00Z", &watch()),
    )
    .await;
    let sources = app
        .db()
        .await
        .query(
            "select id, device_type from data_sources where user_id = $1::text::uuid order by id",
            &[&user],
        )
        .await
        .expect("sources");
    let devices: Vec<String> = sources.iter().map(|r| r.get(1)).collect();
    let (smaller, larger) =
        if devices == ["phone", "watch"] { (phone(), watch()) } else { (watch(), phone()) };
    app.sync_and_wait(
        &user,
        &key,
        &at("FIRST", "2026-03-10T07:00:00Z", "2026-03-10T07:40:00Z", &larger),
    )
    .await;
    app.sync_and_wait(
        &user,
        &key,
        &at("SECOND", "2026-03-10T07:02:00Z", "2026-03-10T07:38:00Z", &smaller),
    )
    .await;

    let db = crate::sealing::db(&app).await;
    let user_id: schema::ids::UserId = user.parse().expect("user id");
    let day = |d: &str| chrono::DateTime::parse_from_rfc3339(d).expect("time").to_utc();
    let mut q = schema::sessions::EventQuery {
        user_id,
        start: day("2026-03-10T00:00:00Z"),
        end: day("2026-03-11T00:00:00Z"),
        after: None,
        backward: false,
        fetch: 10,
        resolve: false,
        sources: (Vec::new(), Vec::new()),
    };
    let both: Vec<schema::sessions::Workout> = schema::sessions::page(&db, &q).await.expect("page");
    assert_eq!(both.len(), 2);
    let (older, newer) =
        if both[0].id < both[1].id { (&both[0], &both[1]) } else { (&both[1], &both[0]) };
    assert!(
        newer.data_source_id < older.data_source_id,
        "the newer session's source is the older one"
    );

    q.resolve = true;
    let kept: Vec<schema::sessions::Workout> = schema::sessions::page(&db, &q).await.expect("page");
    let ranking = rules::Ranking::new(Vec::new());
    let pick =
        [older.data_source_id, newer.data_source_id].into_iter().min_by_key(|s| ranking.rank(*s));
    assert_eq!(kept.iter().map(|w| Some(w.data_source_id)).collect::<Vec<_>>(), [pick]);
}

#[tokio::test]
async fn deletes() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let other = app.user(&key, json!({})).await;
    seed(&app, &key, &user).await;
    let window = "start_date=2026-03-01&end_date=2026-03-31";
    let del = |path: String| {
        let app = &app;
        let key = key.clone();
        async move { app.call(Method::DELETE, &path, &key, None).await }
    };

    let p = list(&app, &key, &user, "workouts", window).await;
    let run = p["data"][1]["id"].as_str().unwrap_or("").to_string();
    // Not through another user's path.
    del(format!("/api/v1/users/{other}/events/workouts/{run}"))
        .await
        .assert_error(404, "Workout not found");
    let r = del(format!("/api/v1/users/{user}/events/workouts/{run}")).await;
    assert_eq!(r.status, 204, "{}", r.body);
    assert_eq!(r.body, Value::Null);
    del(format!("/api/v1/users/{user}/events/workouts/{run}"))
        .await
        .assert_error(404, "Workout not found");
    // The phone's run, hidden behind the watch's, now shows.
    let p = list(&app, &key, &user, "workouts", window).await;
    assert_eq!(field(&p, "type"), [json!("walking"), json!("running")]);
    assert_eq!(p["data"][1]["source"]["device_type"], "phone");
    let r = del(format!("/api/v1/users/{user}/events/workouts/not-a-uuid")).await;
    r.assert_error(400, "Input should be a valid UUID");

    let night = list(&app, &key, &user, "sleep", window).await["data"][0]["id"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let sleep_path = format!("/api/v1/users/{user}/events/sleep/{night}");
    let workout_path = format!("/api/v1/users/{user}/events/workouts/{night}");
    // A sleep id is not a workout.
    del(workout_path).await.assert_error(404, "Workout not found");
    assert_eq!(del(sleep_path.clone()).await.status, 204);
    del(sleep_path).await.assert_error(404, "Sleep session not found");
    let left = list(&app, &key, &user, "sleep", window).await;
    assert_eq!(left["data"][0]["source"]["device_type"], "ring");

    // Cycles come from exports; stored directly here, the read path is what is tested.
    let db = app.db().await;
    let uid: uuid::Uuid = user.parse().expect("uuid");
    let cycle = uuid::Uuid::now_v7();
    db.execute(
        "insert into menstrual_cycles (id, user_id, data_source_id, start_time, end_time, zone_offset, cycle_length, period_length, details)
         select $1, $2, id, '2026-03-02T00:00:00Z', '2026-03-30T00:00:00Z', 60, 28, 5, '{\"flow\": \"medium\"}'::jsonb
         from data_sources where user_id = $2 limit 1",
        &[&cycle, &uid],
    )
    .await
    .expect("cycle");
    let p = list(&app, &key, &user, "menstrual-cycles", window).await;
    assert_eq!(p["data"][0]["cycle_length"], 28);
    assert_eq!(p["data"][0]["start_time"], "2026-03-02T01:00:00+01:00");
    assert_eq!(p["data"][0]["details"]["flow"], "medium");
    let path = format!("/api/v1/users/{user}/events/menstrual-cycles/{cycle}");
    assert_eq!(del(path.clone()).await.status, 204);
    del(path).await.assert_error(404, "Menstrual cycle record not found");
    let p = list(&app, &key, &user, "menstrual-cycles", window).await;
    assert_eq!(p["data"], json!([]));
    assert_eq!(
        app.get(&format!("/api/v1/users/{user}/events/sleep?{window}"), &Auth::None).await.status,
        401
    );
}
