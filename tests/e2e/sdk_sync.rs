//! The SDK sync: accept, store once, report; each real client's wire format.

use ingest::payloads::{Platform, Spec, payload};
use serde_json::{Value, json};

use crate::util::{Auth, TestApp};

const IOS_SOURCE: &str = r#"{"appId":"com.apple.health.81D2","name":"Apple Watch","deviceId":null,"deviceName":"Apple Watch",
  "deviceManufacturer":"Apple Inc.","deviceModel":"Watch6,2","deviceType":"watch","recordingMethod":null}"#;

fn ios_body() -> String {
    let rec = |id: &str, kind: &str, value: &str, unit: &str, zone: &str| {
        format!(
            r#"{{"id":"{id}","type":"HKQuantityTypeIdentifier{kind}","startDate":"2026-03-14T18:46:45Z","endDate":"2026-03-14T18:46:45Z","zoneOffset":{zone},"source":{IOS_SOURCE},"value":{value},"unit":"{unit}","parentId":null,"metadata":null}}"#
        )
    };
    let records = [
        rec("1", "HeartRate", "81", "bpm", "null"),
        rec("2", "ActiveEnergyBurned", "25.315", "Cal", r#""+01:00""#),
        rec("3", "OxygenSaturation", "98", "%", "null"),
        rec("4", "BodyFatPercentage", "0.242", "%", "null"),
        rec("5", "BodyMass", "86.3", "kg", "null"),
        rec("6", "Height", "1.69", "m", "null"),
        rec("7", "BloodGlucose", "114", "mg\\/dL", "null"),
    ]
    .join(",");
    format!(
        r#"{{"provider":"apple","sdkVersion":"0.13.0","syncTimestamp":"2026-03-14T18:50:00Z","data":{{"records":[{records}],"workouts":[],"sleep":[]}}}}"#
    )
}

/// `(series slug, value)` of a user's stored samples.
async fn stored(app: &TestApp, user: &str) -> Vec<(String, f64, Option<i16>)> {
    let id: uuid::Uuid = user.parse().expect("uuid");
    app.db()
        .await
        .query(
            "select st.slug, s.value, s.zone_offset from samples s join series_types st on st.id = s.series_type_id
             where s.user_id = $1 order by st.slug, s.ts",
            &[&id],
        )
        .await
        .expect("samples")
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect()
}

fn value_of(rows: &[(String, f64, Option<i16>)], slug: &str) -> Vec<f64> {
    rows.iter().filter(|r| r.0 == slug).map(|r| r.1).collect()
}

#[tokio::test]
async fn ios_batch_is_stored_with_the_right_values() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;

    let r = app.sync(&user, &key, &ios_body()).await;
    assert_eq!(r.status, 202, "{}", r.body);
    assert_eq!(r.body["status_code"], 202);
    assert_eq!(r.body["response"], "Import task queued successfully");
    assert_eq!(r.body["user_id"], user.as_str());
    for field in ["dropped_count", "records_saved", "workouts_saved", "sleep_saved"] {
        assert_eq!(r.body[field], 0, "{field}");
    }
    let task = r.str("task_id");
    assert_eq!(app.wait_batch(&task).await, "done");
    // The phone's connection says when it last synced, as the user's listing does.
    let conns = app.get(&format!("/api/v1/users/{user}/connections"), &key).await;
    let listed = app.get(&format!("/api/v1/users/{user}"), &key).await;
    let synced = conns.body[0]["last_synced_at"].as_str().unwrap_or("none").to_string();
    let user_synced = listed.body["last_synced_at"].as_str().unwrap_or("").to_string();
    assert_eq!(synced.get(..16), user_synced.get(..16), "{}", conns.body);

    let rows = stored(&app, &user).await;
    let approx = |slug: &str, want: f64| {
        let got = value_of(&rows, slug);
        assert!(got.len() == 1 && (got[0] - want).abs() < 1e-6, "{slug}: {got:?} != {want}");
    };
    approx("heart_rate", 81.0);
    approx("energy", 25.315);
    approx("oxygen_saturation", 98.0);
    approx("body_fat_percentage", 24.2);
    approx("weight", 86.3);
    approx("height", 169.0);
    approx("blood_glucose", 114.0);
    // Samples without an offset take the batch's known one.
    assert!(rows.iter().all(|r| r.2 == Some(60)), "{rows:?}");

    let runs = app.get(&format!("/api/v1/users/{user}/sync/runs"), &key).await;
    assert_eq!(runs.status, 200, "{}", runs.body);
    let run = &runs.body[0];
    assert_eq!(run["run_id"], task.as_str());
    assert_eq!(run["status"], "success");
    assert_eq!(run["provider"], "phonehealth");
    assert_eq!(run["counts"]["samples_inserted"], 7);
    assert_eq!(run["counts"]["received"]["records"], 7);

    let u = app.get(&format!("/api/v1/users/{user}"), &key).await;
    assert_eq!(u.body["last_synced_provider"], "phonehealth");
    assert!(u.body["last_synced_at"].is_string());
    assert_eq!(u.body["has_active_connection"], true);
    let sources = app.get(&format!("/api/v1/users/{user}/data-sources"), &key).await;
    assert_eq!(sources.body["total"], 1);
    assert_eq!(sources.body["items"][0]["device_model"], "Watch6,2");
    assert_eq!(sources.body["items"][0]["provider"], "phonehealth");
    let conns = app.get(&format!("/api/v1/users/{user}/connections"), &key).await;
    assert_eq!(conns.body[0]["provider"], "phonehealth");
    assert_eq!(conns.body[0]["status"], "active");
}

#[tokio::test]
async fn health_connect_and_samsung_batches() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    for platform in [Platform::HealthConnect, Platform::Samsung] {
        let body = payload(&Spec::new(platform, 50)).to_string();
        app.sync_and_wait(&user, &key, &body).await;
    }
    let id: uuid::Uuid = user.parse().expect("uuid");
    let db = app.db().await;
    let workouts = db
        .query(
            "select d.provider, w.type, w.duration_seconds, w.calories_kcal, w.distance_meters, w.avg_heart_rate_bpm,
                    jsonb_array_length(w.route)
             from workouts w join data_sources d on d.id = w.data_source_id where w.user_id = $1 order by d.provider",
            &[&id],
        )
        .await
        .expect("workouts");
    assert_eq!(workouts.len(), 2);
    for w in &workouts {
        assert_eq!(w.get::<_, Option<String>>(1).as_deref(), Some("running"));
        assert_eq!(w.get::<_, i32>(2), 2185, "Samsung's milliseconds are converted");
        assert_eq!(w.get::<_, Option<f64>>(3), Some(412.5));
        assert_eq!(w.get::<_, Option<f64>>(4), Some(6446.16));
        assert_eq!(w.get::<_, Option<f64>>(5), Some(151.0));
        assert_eq!(w.get::<_, Option<i32>>(6), Some(36));
    }
    let providers: Vec<String> = workouts.iter().map(|w| w.get(0)).collect();
    assert_eq!(providers, vec!["google", "samsung"]);
    // The workouts' heart-rate samples are series of the workout's source.
    let in_workout = app
        .count(&format!(
            "select count(*) from samples s join data_sources d on d.id = s.data_source_id
             where s.user_id = '{user}' and s.series_type_id = 1 and s.value >= 120 and s.value <= 155
               and s.ts >= '2026-03-14T09:00:00Z' and s.ts < '2026-03-14T09:37:00Z'"
        ))
        .await;
    assert!(in_workout >= 72, "{in_workout}");
    let sleep =
        app.count(&format!("select count(*) from sleep_sessions where user_id = '{user}'")).await;
    assert_eq!(sleep, 2);
    // Each route, read back in the shape an export's GPX route is read in.
    let list = app
        .get(
            &format!(
                "/api/v1/users/{user}/events/workouts?start_date=2026-03-01&end_date=2026-04-01&filter_by_priority=false"
            ),
            &key,
        )
        .await;
    let listed = list.body["data"].as_array().cloned().unwrap_or_default();
    assert_eq!(listed.len(), 2, "{}", list.body);
    for w in listed {
        assert_eq!(w["has_route"], true, "{w}");
        let id = w["id"].as_str().unwrap_or_default();
        let route =
            app.get(&format!("/api/v1/users/{user}/events/workouts/{id}/route"), &key).await;
        assert_eq!(route.status, 200, "{}", route.body);
        let points = route.body["points"].as_array().cloned().unwrap_or_default();
        assert_eq!(points.len(), 36);
        assert_eq!(
            points[1],
            json!({"timestamp": points[1]["timestamp"], "latitude": 52.2301, "longitude": 21.01,
                   "altitude_m": 110.0, "horizontal_accuracy_m": 4.0})
        );
        assert!(points[1]["timestamp"].is_string());
    }
    // Another user's workout, or none: 404.
    let other = app.user(&key, json!({})).await;
    let id = uuid::Uuid::now_v7();
    let missing = app.get(&format!("/api/v1/users/{other}/events/workouts/{id}/route"), &key).await;
    missing.assert_error(404, "Workout not found");
}

#[tokio::test]
async fn valid_items_are_stored_and_invalid_ones_reported() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let body = r#"{"provider":"google","sdkVersion":"0.11.1","syncTimestamp":"2026-03-14T18:46:45Z","data":{"records":[
        {"id":"a","type":"HEART_RATE","startDate":"2026-03-14T18:40:00Z","endDate":"2026-03-14T18:40:00Z","zoneOffset":"Z","value":70,"unit":"bpm"},
        {"id":"b","type":"HEART_RATE","startDate":"garbage","value":70,"unit":"bpm"},
        {"id":"c","type":"NOT_A_TYPE","startDate":"2026-03-14T18:40:00Z","value":1,"unit":"x"},
        {"id":"d","type":"WEIGHT","startDate":"2026-03-14T18:40:00Z","value":80,"unit":"stone-ish"},
        {"id":"e","type":"STEP_COUNT","startDate":"2026-03-14T18:41:00Z","value":12,"unit":"count"}],
      "sleep":[{"id":"s","stage":"dozing","startDate":"2026-03-14T01:00:00Z","endDate":"2026-03-14T02:00:00Z"}],
      "workouts":[{"id":"w","type":"RUNNING","startDate":"2026-03-14T07:00:00Z","endDate":"2026-03-14T06:00:00Z"}]}}"#;
    let task = app.sync_and_wait(&user, &key, body).await;
    let rows = stored(&app, &user).await;
    assert_eq!(rows.len(), 2, "{rows:?}");
    let runs = app.get(&format!("/api/v1/users/{user}/sync/runs"), &key).await;
    let run = runs
        .body
        .as_array()
        .and_then(|a| a.iter().find(|r| r["run_id"] == task.as_str()))
        .cloned()
        .unwrap_or_default();
    assert_eq!(run["status"], "partial");
    assert_eq!(run["counts"]["dropped"], 5);
    let dropped = &run["dropped"];
    for reason in [
        "record.invalid_date",
        "record.unknown_type",
        "record.unknown_unit",
        "sleep.invalid_stage",
        "workout.end_before_start",
    ] {
        assert_eq!(dropped[reason]["count"], 1, "{reason} in {dropped}");
    }
    assert_eq!(dropped["record.unknown_type"]["examples"], json!(["NOT_A_TYPE"]));
    let said = run["message"].as_str().unwrap_or_default();
    assert!(said.contains("4 item(s) dropped, 1 of unsupported types skipped"), "{said}");
}

#[tokio::test]
async fn a_batch_sent_twice_is_stored_once() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let body = payload(&Spec::new(Platform::Ios, 300)).to_string();
    app.sync_and_wait(&user, &key, &body).await;
    let app = &app;
    let count = |sql: String| async move { app.count(&sql).await };
    let samples = count(format!("select count(*) from samples where user_id = '{user}'")).await;
    let events = count(format!("select count(*) from outbox where user_id = '{user}'")).await;
    let rollup_sum = count(format!(
        "select sum(sample_count)::bigint from daily_rollups where user_id = '{user}'"
    ))
    .await;
    assert_eq!(samples, rollup_sum, "rollups count every stored sample once");
    assert!(events > 0);

    let second = app.sync_and_wait(&user, &key, &body).await;
    assert_eq!(
        count(format!("select count(*) from samples where user_id = '{user}'")).await,
        samples
    );
    assert_eq!(count(format!("select count(*) from workouts where user_id = '{user}'")).await, 1);
    assert_eq!(
        count(format!("select count(*) from sleep_sessions where user_id = '{user}'")).await,
        2
    );
    assert_eq!(
        count(format!("select count(*) from outbox where user_id = '{user}'")).await,
        events,
        "no second event"
    );
    assert_eq!(
        count(format!(
            "select sum(sample_count)::bigint from daily_rollups where user_id = '{user}'"
        ))
        .await,
        rollup_sum
    );
    let runs = app.get(&format!("/api/v1/users/{user}/sync/runs"), &key).await;
    let run = runs
        .body
        .as_array()
        .and_then(|a| a.iter().find(|r| r["run_id"] == second.as_str()))
        .cloned()
        .unwrap_or_default();
    assert_eq!(run["counts"]["samples_inserted"], 0);
    assert_eq!(run["counts"]["samples_unchanged"], samples);
    assert_eq!(run["counts"]["workouts_duplicate"], 1);

    // The workout sent again with other figures (a vendor scores a workout after the fact):
    // brought up to date, still one, and no second `workout.created`.
    let mut changed: serde_json::Value = serde_json::from_str(&body).expect("json");
    let calories = changed["data"]["workouts"][0]["values"]
        .as_array_mut()
        .and_then(|v| v.iter_mut().find(|v| v["unit"] == "kcal"))
        .expect("a calories value");
    calories["value"] = json!(987.0);
    let third = app.sync_and_wait(&user, &key, &changed.to_string()).await;
    let kcal = format!("select calories_kcal::int8 from workouts where user_id = '{user}'");
    assert_eq!(count(kcal).await, 987);
    assert_eq!(count(format!("select count(*) from workouts where user_id = '{user}'")).await, 1);
    let created = format!(
        "select count(*) from outbox where user_id = '{user}' and event_type = 'workout.created'"
    );
    assert_eq!(count(created).await, 1);
    let runs = app.get(&format!("/api/v1/users/{user}/sync/runs"), &key).await;
    let run = runs.body.as_array().and_then(|a| a.iter().find(|r| r["run_id"] == third.as_str()));
    assert_eq!(run.map(|r| r["counts"]["workouts_updated"].clone()), Some(json!(1)));
}

#[tokio::test]
async fn accept_path_errors() {
    let app =
        TestApp::spawn_with(crate::util::Mode::All, |s| s.sdk_max_body_bytes = 64 * 1024).await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let other = app.user(&key, json!({})).await;
    let token = |u: &str| {
        let app = &app;
        let key = key.clone();
        let u = u.to_string();
        async move {
            app.post(&format!("/api/v1/users/{u}/token"), &key, json!({})).await.str("access_token")
        }
    };
    let mine = Auth::Bearer(token(&user).await);
    let body = ios_body();

    // A user's own SDK token works; another user's is 403.
    assert_eq!(app.sync(&user, &mine, &body).await.status, 202);
    app.sync(&other, &mine, &body).await.assert_error(403, "Token does not match user_id");
    // Old iOS SDKs send the token without "Bearer ".
    let Auth::Bearer(raw) = &mine else { unreachable!() };
    assert_eq!(
        app.sync(&user, &Auth::Header("Authorization", raw.clone()), &body).await.status,
        202
    );
    // The SDKs' own API-key header.
    let Auth::Key(raw_key) = &key else { unreachable!() };
    assert_eq!(
        app.sync(&user, &Auth::Header("X-Open-Wearables-API-Key", raw_key.clone()), &body)
            .await
            .status,
        202
    );

    app.sync(&user, &Auth::None, &body)
        .await
        .assert_error(401, "Authentication required: provide SDK token or API key");
    app.sync(&user, &Auth::Bearer("expired.or.bad".into()), &body)
        .await
        .assert_error(401, "Could not validate credentials");

    // Only an unsupported provider is a 400 about the payload.
    app.sync(&user, &key, r#"{"provider":"fitbit","data":{}}"#)
        .await
        .assert_error(400, "Unsupported provider: fitbit. Supported: apple, samsung, google");
    app.sync(&user, &key, r#"{"data":{}}"#)
        .await
        .assert_error(400, "Unsupported provider: (none). Supported: apple, samsung, google");
    // Any case of a supported provider is fine; bad records are no 4xx.
    let r = app.sync(&user, &key, r#"{"provider":"Samsung","sdkVersion":"1","syncTimestamp":"x","data":{"records":[{"type":"?"}]}}"#).await;
    assert_eq!(r.status, 202, "{}", r.body);
    assert_eq!(app.wait_batch(&r.str("task_id")).await, "done");
    // A body that is not JSON (junk after the provider) is refused at the door, as the
    // reference refuses it, and nothing is stored.
    let before = app.count("select count(*) from sdk_batches").await;
    let r = app.sync(&user, &key, r#"{"provider":"apple","data":{"records":[1,2,"#).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.detail().starts_with("JSON decode error - "), "{}", r.body);
    let r =
        app.sync(&user, &key, &format!(r#"{{"provider":"apple"}}{}"#, "x".repeat(50_000))).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(app.count("select count(*) from sdk_batches").await, before);

    // Over the limit: 413 with {detail}.
    let big = format!(
        r#"{{"provider":"apple","data":{{"records":[{}]}}}}"#,
        vec!["{}"; 40_000].join(",")
    );
    let r = app.sync(&user, &key, &big).await;
    assert_eq!(r.status, 413, "{}", r.body);
    assert!(r.detail().contains("limit"), "{}", r.body);

    let missing = uuid::Uuid::new_v4();
    app.sync(&missing.to_string(), &key, &body)
        .await
        .assert_error(404, &format!("User with ID: {missing} not found."));
    app.sync("not-a-uuid", &key, &body).await.assert_error(400, "Input should be a valid UUID");
}

#[tokio::test]
async fn chunked_and_gzipped_bodies() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let body = payload(&Spec::new(Platform::HealthConnect, 20)).to_string();
    let url = app.url(&format!("/api/v1/sdk/users/{user}/sync"));

    // Android streams the body: chunked transfer encoding, no Content-Length.
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
        body.as_bytes().chunks(1000).map(|c| Ok(c.to_vec())).collect();
    let stream = futures::stream::iter(chunks);
    let req = key
        .apply(app.http.post(&url))
        .header("content-type", "application/json")
        .body(reqwest::Body::wrap_stream(stream));
    let r = crate::util::Resp::read(req.send().await.expect("request")).await;
    assert_eq!(r.status, 202, "{}", r.body);
    assert_eq!(app.wait_batch(&r.str("task_id")).await, "done");

    // A gzip-compressing fork of the iOS SDK.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, ios_body().as_bytes()).expect("gzip");
    let req = key
        .apply(app.http.post(&url))
        .header("content-type", "application/json")
        .header("content-encoding", "gzip")
        .body(gz.finish().expect("gzip"));
    let r = crate::util::Resp::read(req.send().await.expect("request")).await;
    assert_eq!(r.status, 202, "{}", r.body);
    assert_eq!(app.wait_batch(&r.str("task_id")).await, "done");
    assert!(value_of(&stored(&app, &user).await, "body_fat_percentage").contains(&24.2));
}

fn sleep_body(items: &[(&str, &str, &str)], source: &str) -> String {
    let items: Vec<Value> = items
        .iter()
        .enumerate()
        .map(|(i, (stage, a, b))| {
            json!({"id": format!("{stage}-{i}-{a}"), "parentId": null, "stage": stage, "startDate": a, "endDate": b,
                   "zoneOffset": "+01:00", "source": serde_json::from_str::<Value>(source).unwrap_or_default(),
                   "values": null, "metadata": null})
        })
        .collect();
    json!({"provider": "apple", "sdkVersion": "0.13.0", "syncTimestamp": "2026-03-14T08:00:00Z",
           "data": {"records": [], "workouts": [], "sleep": items}})
    .to_string()
}

async fn sessions(app: &TestApp, user: &str) -> Vec<Value> {
    let id: uuid::Uuid = user.parse().expect("uuid");
    app.db()
        .await
        .query(
            "select json_build_object('start', start_time, 'end', end_time, 'sleep', sleep_seconds, 'in_bed', in_bed_seconds,
                    'deep', deep_minutes, 'rem', rem_minutes, 'light', light_minutes, 'awake', awake_minutes,
                    'efficiency', efficiency_percent, 'nap', is_nap)
             from sleep_sessions where user_id = $1 order by start_time",
            &[&id],
        )
        .await
        .expect("sessions")
        .iter()
        .map(|r| r.get(0))
        .collect()
}

#[tokio::test]
async fn sleep_sessions_are_assembled_and_merged() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;

    // An old watch: `sleeping` and `in_bed` only.
    let old = app.user(&key, json!({})).await;
    let body = sleep_body(
        &[
            ("in_bed", "2026-03-13T21:30:00Z", "2026-03-14T06:00:00Z"),
            ("sleeping", "2026-03-13T22:00:00Z", "2026-03-14T02:00:00Z"),
            ("awake", "2026-03-14T02:00:00Z", "2026-03-14T02:20:00Z"),
            ("sleeping", "2026-03-14T02:20:00Z", "2026-03-14T05:40:00Z"),
        ],
        IOS_SOURCE,
    );
    app.sync_and_wait(&old, &key, &body).await;
    let s = sessions(&app, &old).await;
    assert_eq!(s.len(), 1, "{s:?}");
    assert_eq!(s[0]["sleep"], (4 * 60 + 200) * 60);
    assert_eq!(s[0]["in_bed"], (8 * 60 + 30) * 60);
    assert_eq!(s[0]["awake"], 20);
    assert_eq!(s[0]["nap"], false);

    // Detailed stages, and a night that arrives in two batches: one merged session.
    let user = app.user(&key, json!({})).await;
    let first = sleep_body(
        &[
            ("light", "2026-03-13T22:00:00Z", "2026-03-14T00:00:00Z"),
            ("deep", "2026-03-14T00:00:00Z", "2026-03-14T01:00:00Z"),
        ],
        IOS_SOURCE,
    );
    let second = sleep_body(
        &[
            ("rem", "2026-03-14T01:30:00Z", "2026-03-14T03:00:00Z"),
            ("awake", "2026-03-14T03:00:00Z", "2026-03-14T03:10:00Z"),
            ("core", "2026-03-14T03:10:00Z", "2026-03-14T06:00:00Z"),
        ],
        IOS_SOURCE,
    );
    app.sync_and_wait(&user, &key, &first).await;
    assert_eq!(sessions(&app, &user).await.len(), 1);
    app.sync_and_wait(&user, &key, &second).await;
    let s = sessions(&app, &user).await;
    assert_eq!(s.len(), 1, "{s:?}");
    assert_eq!(s[0]["light"], 120 + 170);
    assert_eq!(s[0]["deep"], 60);
    assert_eq!(s[0]["rem"], 90);
    assert_eq!(s[0]["awake"], 10);
    assert_eq!(s[0]["start"], "2026-03-13T22:00:00+00:00");
    assert_eq!(s[0]["end"], "2026-03-14T06:00:00+00:00");
    let events = app
        .count(&format!(
            "select count(*) from outbox where user_id = '{user}' and event_type = 'sleep.created'"
        ))
        .await;
    assert_eq!(events, 2, "a new and a merged session");
    // Sending the second part again changes nothing and announces nothing.
    app.sync_and_wait(&user, &key, &second).await;
    let again = app
        .count(&format!(
            "select count(*) from outbox where user_id = '{user}' and event_type = 'sleep.created'"
        ))
        .await;
    assert_eq!(again, 2);

    // An afternoon nap is marked.
    let napper = app.user(&key, json!({})).await;
    app.sync_and_wait(
        &napper,
        &key,
        &sleep_body(&[("light", "2026-03-14T13:00:00Z", "2026-03-14T13:40:00Z")], IOS_SOURCE),
    )
    .await;
    assert_eq!(sessions(&app, &napper).await[0]["nap"], true);
}

#[tokio::test]
async fn a_session_id_sent_again_for_another_night_replaces_that_session() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let night = |start: &str, end: &str| {
        json!({"provider": "google", "sdkVersion": "0.11.1", "syncTimestamp": "2026-03-20T08:00:00Z",
            "data": {"records": [], "workouts": [], "sleep": [
                {"id": "s-1", "parentId": "session-A", "stage": "light", "startDate": start, "endDate": end,
                 "zoneOffset": "+01:00", "source": {"appId": "com.sleep.app", "deviceModel": "Pixel 8"}}]}})
        .to_string()
    };
    app.sync_and_wait(&user, &key, &night("2026-03-13T22:00:00Z", "2026-03-14T06:00:00Z")).await;
    // The client edited the session (same id, another time): the batch succeeds, one session.
    app.sync_and_wait(&user, &key, &night("2026-03-18T23:00:00Z", "2026-03-19T06:00:00Z")).await;
    let s = sessions(&app, &user).await;
    assert_eq!(s.len(), 1, "{s:?}");
    assert_eq!(s[0]["start"], "2026-03-18T23:00:00+00:00");
}

#[tokio::test]
async fn android_units_are_converted_by_client() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let rec = |provider: &str, kind: &str, value: f64, unit: &str| {
        json!({"provider": provider, "sdkVersion": "0.11.1", "syncTimestamp": "2026-03-14T18:46:45Z",
            "data": {"records": [{"id": format!("{provider}-{kind}"), "type": kind, "startDate": "2026-03-14T08:00:00Z",
                "endDate": "2026-03-14T08:00:00Z", "zoneOffset": "Z", "value": value, "unit": unit, "parentId": null,
                "metadata": null, "source": {"appId": format!("app.{provider}"), "deviceModel": format!("{provider}-phone")}}],
                "workouts": [], "sleep": []}})
        .to_string()
    };
    for body in [
        rec("google", "BLOOD_GLUCOSE", 6.333333333333333, "mmol/L"),
        rec("google", "HEART_RATE_VARIABILITY", 42.0, "ms"),
        rec("google", "HEIGHT", 1.69, "m"),
        rec("samsung", "BODY_FAT", 24.200000762939453, "%"),
        rec("samsung", "WEIGHT", 86.30000305175781, "kg"),
        rec("samsung", "BLOOD_GLUCOSE", 6.33, "mmol/L"),
    ] {
        app.sync_and_wait(&user, &key, &body).await;
    }
    let rows = stored(&app, &user).await;
    let within = |slug: &str, want: f64, tol: f64| {
        let got = value_of(&rows, slug);
        assert!(
            !got.is_empty() && got.iter().all(|v| (v - want).abs() <= tol),
            "{slug}: {got:?} vs {want}"
        );
    };
    within("blood_glucose", 114.0, 0.2);
    within("heart_rate_variability_rmssd", 42.0, 1e-9);
    within("height", 169.0, 1e-9);
    within("body_fat_percentage", 24.2, 1e-5);
    within("weight", 86.3, 1e-5);
    assert!(value_of(&rows, "heart_rate_variability_sdnn").is_empty());
    let providers = app.get(&format!("/api/v1/users/{user}/data-sources"), &key).await;
    let names: Vec<&str> = providers.body["items"]
        .as_array()
        .map(|a| a.iter().filter_map(|i| i["provider"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(names, vec!["google", "samsung"]);
}

/// A user whose batches wait unprocessed past the bound gets 503 with `Retry-After` (which the
/// SDKs retry later; a 4xx would make iOS drop the chunk), and is accepted again once the
/// worker has caught up.
#[tokio::test]
async fn a_full_backlog_is_answered_503_with_retry_after() {
    let app = TestApp::spawn_with(crate::util::Mode::ApiOnly, |s| {
        s.sdk_max_pending_bytes_per_user = 1;
    })
    .await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let other = app.user(&key, json!({})).await;
    let body = ios_body();
    // Nothing waiting: accepted (the bound is on what waits, not on one batch).
    let first = app.sync(&user, &key, &body).await;
    assert_eq!(first.status, 202, "{}", first.body);
    let r = app.sync(&user, &key, &body).await;
    assert_eq!(r.status, 503, "{}", r.body);
    assert_eq!(r.headers.get("retry-after").and_then(|v| v.to_str().ok()), Some("30"));
    assert!(r.detail().contains("waiting to be processed"), "{}", r.body);
    assert_eq!(app.count("select count(*) from sdk_batches").await, 1);
    // Another user is not held up by this one.
    assert_eq!(app.sync(&other, &key, &body).await.status, 202);

    let _worker = app.binary(&["worker"]).spawn().expect("spawn a worker");
    assert_eq!(app.wait_batch(&first.str("task_id")).await, "done");
    assert_eq!(app.sync(&user, &key, &body).await.status, 202);
}

/// Rollup rows of a user that differ from a recount of their raw samples, daily by SQL's
/// `local_day` (what summaries and recounts use), hourly and daily by UTC hour and day (what
/// downsampled timeseries read), and how many daily rollup rows there are.
pub(crate) async fn rollups_against_samples(app: &TestApp, user: &str) -> (i64, i64) {
    let mut utc = 0;
    for (table, unit) in [("hourly_rollups", "hour"), ("utc_day_rollups", "day")] {
        utc += app
            .count(&format!(
                "with raw as (
                    select series_type_id, data_source_id, time_bucket(interval '1 {unit}', ts) as {unit},
                           count(*) filter (where not coalesce(is_daily_total, false)) as c,
                           coalesce(sum(value) filter (where not coalesce(is_daily_total, false)), 0) as s,
                           count(*) filter (where is_daily_total) as tc,
                           coalesce(sum(value) filter (where is_daily_total), 0) as ts,
                           max(value) as mx, min(zone_offset) as z
                    from samples where user_id = '{user}' group by 1, 2, 3),
                 r as (select * from {table} where user_id = '{user}')
                 select count(*) from raw full join r using (series_type_id, data_source_id, {unit})
                 where r.user_id is null or raw.c is null or raw.c <> r.sample_count
                    or abs(raw.s - r.value_sum) > 1e-6 or raw.tc <> r.total_count
                    or abs(raw.ts - r.total_sum) > 1e-6 or raw.mx <> r.value_max
                    or raw.z is distinct from r.zone_offset"
            ))
            .await;
    }
    let figures = "count(*) filter (where not coalesce(is_daily_total, false)) as c,
           coalesce(sum(value) filter (where not coalesce(is_daily_total, false)), 0) as s,
           min(value) filter (where not coalesce(is_daily_total, false)) as mn,
           max(value) filter (where not coalesce(is_daily_total, false)) as mx,
           count(*) filter (where is_daily_total) as tc,
           coalesce(sum(value) filter (where is_daily_total), 0) as ts";
    let differing = app
        .count(&format!(
            "with raw as (
                select series_type_id, data_source_id, local_day(ts, zone_offset) as local_date,
                       {figures}
                from samples where user_id = '{user}' group by 1, 2, 3),
             r as (select * from daily_rollups where user_id = '{user}')
             select count(*) from raw full join r using (series_type_id, data_source_id, local_date)
             where r.user_id is null or raw.c is null or raw.c <> r.sample_count
                or abs(raw.s - r.value_sum) > 1e-6 or raw.mn is distinct from r.value_min
                or raw.mx is distinct from r.value_max or raw.tc <> r.total_count
                or abs(raw.ts - r.total_sum) > 1e-6"
        ))
        .await;
    let rows =
        app.count(&format!("select count(*) from daily_rollups where user_id = '{user}'")).await;
    (differing + utc, rows)
}

/// Samples announced per series by a user's timeseries events.
async fn announced(app: &TestApp, user: &str) -> Vec<(String, i64)> {
    app.db()
        .await
        .query(
            "select payload->>'series_type', sum((payload->>'sample_count')::bigint)::bigint
             from outbox where user_id = $1 and payload->>'kind' = 'timeseries'
             group by 1 order by 1",
            &[&user.parse::<uuid::Uuid>().expect("uuid")],
        )
        .await
        .expect("events")
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()
}

#[tokio::test]
async fn copied_and_upserted_batches_agree() {
    use crate::fixtures::{at, watch};
    // A batch of new samples is copied straight in; one that repeats a stored sample goes
    // through the upsert. Both must give the same rollups (by the same local days as SQL's
    // `local_day`, here around midnight at several offsets) and announce the same samples.
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let mut body = payload(&Spec::new(Platform::Ios, 400));
    let w = watch();
    let midnight = [
        at("HeartRate", "2026-03-14T23:40:00Z", 61.0, "count/min", Some("+00:30"), &w),
        at("HeartRate", "2026-03-14T23:20:00Z", 62.0, "count/min", Some("+00:30"), &w),
        at("HeartRate", "2026-03-15T02:10:00Z", 63.0, "count/min", Some("-03:00"), &w),
        at("HeartRate", "2026-03-14T18:40:00Z", 64.0, "count/min", Some("+05:45"), &w),
        at("HeartRate", "2026-03-14T23:59:59Z", 65.0, "count/min", None, &w),
        at("StepCount", "2026-03-14T23:50:00Z", 120.0, "count", Some("+01:00"), &w),
    ];
    let records = body["data"]["records"].as_array_mut().expect("records");
    records.extend(midnight);
    let first = json!({"provider": "apple", "sdkVersion": "0.13.0",
        "syncTimestamp": "2026-03-14T18:50:00Z",
        "data": {"records": [records[records.len() - 1].clone()], "workouts": [], "sleep": []}});
    let body = body.to_string();

    let copied = app.user(&key, json!({})).await;
    app.sync_and_wait(&copied, &key, &body).await;
    let upserted = app.user(&key, json!({})).await;
    app.sync_and_wait(&upserted, &key, &first.to_string()).await;
    let run = app.sync_and_wait(&upserted, &key, &body).await;

    let runs = app.get(&format!("/api/v1/users/{upserted}/sync/runs"), &key).await;
    let run = runs.body.as_array().and_then(|a| a.iter().find(|r| r["run_id"] == run.as_str()));
    let counts = run.map(|r| r["counts"].clone()).unwrap_or_default();
    assert_eq!(counts["samples_unchanged"], 1, "the repeated sample sends the batch to the upsert");
    let total =
        app.count(&format!("select count(*) from samples where user_id = '{copied}'")).await;
    assert_eq!(counts["samples_inserted"], total - 1);

    for user in [&copied, &upserted] {
        let (differing, rows) = rollups_against_samples(&app, user).await;
        assert!(rows > 10, "{rows} rollup rows");
        assert_eq!(differing, 0, "rollups of {user} differ from their samples");
    }
    let days = |user: &str| {
        format!(
            "select count(distinct local_date) from daily_rollups
             where user_id = '{user}' and local_date between '2026-03-14' and '2026-03-15'"
        )
    };
    assert_eq!(app.count(&days(&copied)).await, 2, "samples on both sides of local midnight");
    let copied_events = announced(&app, &copied).await;
    assert!(!copied_events.is_empty());
    assert_eq!(copied_events, announced(&app, &upserted).await);
}
