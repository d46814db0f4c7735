//! Outbox → webhook messages: chunked timeseries events, session events, fan-out to the
//! endpoints that receive them, and replays that store nothing twice.

use serde_json::{Value, json};

use crate::fixtures::{at, body, watch, workout};
use crate::util::{Mode, TestApp};

#[tokio::test]
async fn outbox_events_become_chunked_messages_for_matching_endpoints() {
    let app = TestApp::spawn_with(Mode::All, |s| s.sdk_max_body_bytes = 32 * 1024 * 1024).await;
    let admin = app.admin().await;
    let key = app.api_key().await;
    let ada = app.user(&key, json!({})).await;
    let bob = app.user(&key, json!({})).await;
    let endpoint = |body: Value| {
        let (app, admin) = (&app, &admin);
        async move {
            let r = app.post("/api/v1/webhooks/endpoints", admin, body).await;
            assert_eq!(r.status, 201, "{}", r.body);
            r.str("id")
        }
    };
    let all = endpoint(json!({"url": "https://hooks.example.com/all"})).await;
    let ada_hr = endpoint(json!({"url": "https://hooks.example.com/ada",
                                  "filter_types": ["heart_rate.created"], "user_id": ada}))
    .await;
    let bob_all = endpoint(json!({"url": "https://hooks.example.com/bob", "user_id": bob})).await;

    // 6,001 heart-rate samples and a run for Ada.
    let t0 = chrono::DateTime::parse_from_rfc3339("2026-03-10T00:00:00Z").unwrap_or_default();
    let records: Vec<Value> = (0..6001)
        .map(|i| {
            let t = (t0 + chrono::Duration::seconds(i * 10)).to_rfc3339();
            at("HeartRate", &t, 60.0 + (i % 40) as f64, "count/min", Some("+02:00"), &watch())
        })
        .collect();
    let run = workout(
        "W-1",
        "running",
        "2026-03-10T18:00:00Z",
        "2026-03-10T18:30:00Z",
        300.0,
        5000.0,
        "+02:00",
        &watch(),
    );
    app.sync_and_wait(&ada, &key, &body(records, vec![run], vec![])).await;

    // The worker's sender turns the outbox into messages.
    wait_dispatched(&app).await;

    let sql = app.db().await;
    let rows = sql
        .query(
            "select m.event_type, m.payload, array_agg(d.endpoint_id order by d.endpoint_id)
             from webhook_messages m left join webhook_deliveries d on d.message_id = m.id
             group by m.id order by m.event_type, m.id",
            &[],
        )
        .await
        .expect("messages");
    let hr: Vec<&tokio_postgres::Row> =
        rows.iter().filter(|r| r.get::<_, String>(0) == "heart_rate.created").collect();
    assert_eq!(hr.len(), 3, "6,001 samples make three chunks");
    let mut seen = 0;
    for (k, r) in hr.iter().enumerate() {
        let p: Value = r.get(1);
        assert_eq!(p["type"], "heart_rate.created");
        let d = &p["data"];
        assert_eq!(d["sample_count"], 6001);
        assert_eq!(d["chunk_index"], k);
        assert_eq!(d["total_chunks"], 3);
        assert_eq!(d["series_type"], "heart_rate");
        assert_eq!(d["user_id"], ada.as_str());
        assert!(d.get("batch_id").is_none() && d.get("kind").is_none(), "{d}");
        let s = &d["samples"][0];
        assert_eq!(s["type"], "heart_rate");
        assert_eq!(s["unit"], "bpm");
        assert_eq!(s["is_daily_total"], Value::Null);
        assert_eq!(s["zone_offset"], "+02:00");
        assert_eq!(s["source"]["provider"], "phonehealth");
        seen += d["samples"].as_array().map_or(0, Vec::len);
        let mut targets: Vec<String> = r.get(2);
        targets.sort();
        let mut want = vec![all.clone(), ada_hr.clone()];
        want.sort();
        assert_eq!(targets, want, "Bob's endpoint never gets Ada's data");
    }
    assert_eq!(seen, 6001);
    assert_eq!(
        hr[0].get::<_, Value>(1)["data"]["samples"][0]["timestamp"],
        "2026-03-10T02:00:00+02:00"
    );

    let w =
        rows.iter().find(|r| r.get::<_, String>(0) == "workout.created").expect("workout message");
    let p: Value = w.get(1);
    assert_eq!(p["data"]["type"], "running");
    assert_eq!(w.get::<_, Vec<Option<String>>>(2), vec![Some(all.clone())], "filtered by type");
    assert!(
        !rows.iter().any(|r| r.get::<_, Vec<Option<String>>>(2).contains(&Some(bob_all.clone())))
    );

    // A replay of the outbox stores nothing twice.
    let before = app.count("select count(*) from webhook_deliveries").await;
    let messages = app.count("select count(*) from webhook_messages").await;
    sql.execute("update outbox set dispatched_at = null", &[]).await.expect("replay");
    let db = schema::Db::connect(&app.settings.database_url, 2).await.expect("db");
    let replay = webhooks::dispatch::dispatch_once(&db, 1000).await.expect("replay");
    assert_eq!((replay.messages, replay.deliveries), (0, 0), "{replay:?}");
    wait_dispatched(&app).await;
    assert_eq!(app.count("select count(*) from webhook_deliveries").await, before);
    assert_eq!(app.count("select count(*) from webhook_messages").await, messages);
}

/// Waits until no outbox event is left undispatched.
pub async fn wait_dispatched(app: &TestApp) {
    for _ in 0..200 {
        if app.count("select count(*) from outbox where dispatched_at is null").await == 0 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the outbox was not dispatched in 10 s");
}
