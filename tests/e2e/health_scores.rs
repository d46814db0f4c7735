//! Health scores: a computed sleep score for every night, vendor scores beside it, newest first.

use reqwest::Method;
use serde_json::{Value, json};

use crate::fixtures::{body, delete_night};
use crate::summaries::tokyo_night;
use crate::util::{Auth, TestApp};

async fn scores(app: &TestApp, key: &Auth, user: &str, query: &str) -> Value {
    let r = app.get(&format!("/api/v1/users/{user}/health-scores?{query}"), key).await;
    assert_eq!(r.status, 200, "{query}: {}", r.body);
    r.body
}

fn categories(page: &Value) -> Vec<String> {
    page["data"]
        .as_array()
        .map(|a| a.iter().map(|s| s["category"].as_str().unwrap_or("").to_string()).collect())
        .unwrap_or_default()
}

#[tokio::test]
async fn sleep_score_computed_and_vendor_scores_listed_newest_first() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    app.sync_and_wait(&user, &key, &body(vec![], vec![], tokyo_night())).await;

    // The night (watch and ring record it; it counts once): 470 min asleep of 480 in bed,
    // 60 deep + 60 REM. Duration 470/480 = 97.9; efficiency (97.9 − 60)/35 → capped at 100;
    // restoration 120/470/0.40 = 63.8 → 0.5·97.92 + 0.25·100 + 0.25·63.83 = 89.9 → 90.
    let p = scores(&app, &key, &user, "").await;
    assert_eq!(p["data"].as_array().map(Vec::len), Some(1), "{p}");
    let s = &p["data"][0];
    assert_eq!(s["category"], "sleep");
    assert_eq!(s["provider"], "internal");
    assert_eq!(s["value"], 90.0);
    assert_eq!(s["qualifier"], "excellent");
    assert_eq!(s["recorded_at"], "2026-03-11T07:00:00+09:00");
    assert_eq!(s["zone_offset"], "+09:00");
    assert_eq!(s["components"]["duration"]["value"], 97.9);
    assert_eq!(s["components"]["efficiency"]["value"], 100.0);
    assert_eq!(s["components"]["restoration"]["value"], 63.8);
    assert_eq!(s["components"]["restoration"]["qualifier"], "fair");
    let sleep_id = s["id"].clone();
    // The id is stable between reads.
    assert_eq!(scores(&app, &key, &user, "").await["data"][0]["id"], sleep_id);

    // Vendor recovery scores from the ring's source, stored as samples.
    let sources = app.get(&format!("/api/v1/users/{user}/data-sources"), &key).await;
    let ring = sources.body["items"]
        .as_array()
        .and_then(|a| a.iter().find(|s| s["device_type"] == "ring"))
        .and_then(|s| s["id"].as_str())
        .map(str::to_string)
        .expect("ring source");
    app.db()
        .await
        .batch_execute(&format!(
            "insert into samples (user_id, series_type_id, data_source_id, ts, value, zone_offset)
             values ('{user}', 230, '{ring}', '2026-03-12T00:00:00Z', 70, 540),
                    ('{user}', 230, '{ring}', '2026-03-09T00:00:00Z', 55, 540)"
        ))
        .await
        .expect("vendor scores");

    let p = scores(&app, &key, &user, "").await;
    assert_eq!(categories(&p), ["recovery", "sleep", "recovery"], "{p}");
    assert_eq!(p["data"][0]["value"], 70.0);
    assert_eq!(p["data"][0]["provider"], "phonehealth");
    assert_eq!(p["data"][0]["recorded_at"], "2026-03-12T09:00:00+09:00");
    assert_eq!(p["data"][0]["components"], Value::Null);
    assert_eq!(p["pagination"]["total_count"], 3);
    assert_eq!(p["pagination"]["next_cursor"], Value::Null);

    // Filters, offsets and windows.
    assert_eq!(categories(&scores(&app, &key, &user, "category=sleep").await), ["sleep"]);
    assert_eq!(categories(&scores(&app, &key, &user, "provider=internal").await), ["sleep"]);
    let p = scores(&app, &key, &user, "provider=phonehealth").await;
    assert_eq!(categories(&p), ["recovery", "recovery"]);
    assert_eq!(scores(&app, &key, &user, "category=stress").await["data"], json!([]));
    let p = scores(&app, &key, &user, "limit=1&offset=1").await;
    assert_eq!(p["data"][0]["id"], sleep_id);
    assert_eq!(p["pagination"]["has_more"], true);
    let p = scores(&app, &key, &user, "limit=2&offset=1").await;
    assert_eq!(categories(&p), ["sleep", "recovery"]);
    assert_eq!(p["pagination"]["has_more"], false);
    // The night ended on UTC 03-10 22:00: outside a window from 03-11.
    let p = scores(&app, &key, &user, "start_date=2026-03-11&end_date=2026-03-12").await;
    assert_eq!(categories(&p), ["recovery"]);
    assert_eq!(p["pagination"]["total_count"], 1);

    // Deleting the watch's night: the ring's copy is scored instead (its own stages).
    assert_eq!(delete_night(&app, &key, &user, "2026-03-10").await, "watch");
    let p = scores(&app, &key, &user, "category=sleep").await;
    assert_ne!(p["data"][0]["id"], sleep_id);
    // The ring saw only light sleep: restoration 0.
    assert_eq!(p["data"][0]["components"]["restoration"]["value"], 0.0, "{p}");

    // Bounds and bad values.
    let base = format!("/api/v1/users/{user}/health-scores");
    app.get(&format!("{base}?limit=1001"), &key)
        .await
        .assert_invalid(&["query", "limit"], "less_than_equal");
    app.get(&format!("{base}?offset=-1"), &key)
        .await
        .assert_invalid(&["query", "offset"], "greater_than_equal");
    app.get(&format!("{base}?category=mood"), &key)
        .await
        .assert_invalid(&["query", "category"], "enum");
    app.get(&format!("{base}?provider=acme"), &key)
        .await
        .assert_invalid(&["query", "provider"], "enum");
    app.get(&format!("{base}?start_date=2026-03-12&end_date=2026-03-01"), &key)
        .await
        .assert_invalid(&["query", "end_date"], "value_error");

    // Another user sees nothing of it; an unknown user is a 404.
    let other = app.user(&key, json!({})).await;
    assert_eq!(scores(&app, &key, &other, "").await["data"], json!([]));
    let r = app.get("/api/v1/users/018f6f7e-0000-7000-8000-000000000000/health-scores", &key).await;
    assert_eq!(r.status, 404);
    let r = app.get(&base, &Auth::None).await;
    assert_eq!(r.status, 401);
}

#[tokio::test]
async fn deployment_priorities_need_a_developer_and_reorder_every_user() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let key = app.api_key().await;

    let r = app.get("/api/v1/priorities", &admin).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["providers"], json!([]));
    assert_eq!(r.body["default_device_types"][0], "watch");
    // An API key is not enough to change or read the deployment's order.
    let r = app.get("/api/v1/priorities", &key).await;
    assert_eq!(r.status, 401);
    let r = app
        .call(Method::PUT, "/api/v1/priorities", &key, Some(json!({"device_types": ["phone"]})))
        .await;
    assert_eq!(r.status, 401);

    let r = app
        .call(
            Method::PUT,
            "/api/v1/priorities",
            &admin,
            Some(json!({"device_types": ["phone", "toaster"]})),
        )
        .await;
    r.assert_invalid(&["body", "device_types", "1"], "enum");
    let r = app
        .call(
            Method::PUT,
            "/api/v1/priorities",
            &admin,
            Some(json!({"providers": ["google", "google"]})),
        )
        .await;
    assert_eq!(r.status, 422, "{}", r.body);

    // Phone first for the whole deployment: a user's phone steps win over the watch's.
    let user = app.user(&key, json!({})).await;
    let la = Some("-08:00");
    let step = |v: f64, src: &Value| {
        crate::fixtures::rec(
            "StepCount",
            "2026-03-10T17:00:00Z",
            "2026-03-10T17:30:00Z",
            v,
            "count",
            la,
            src,
        )
    };
    crate::fixtures::push(
        &app,
        &user,
        &key,
        vec![step(500.0, &crate::fixtures::phone()), step(600.0, &crate::fixtures::watch())],
    )
    .await;
    let day = "/summaries/activity?start_date=2026-03-10&end_date=2026-03-10";
    let steps = |b: &Value| b["data"][0]["steps"].clone();
    let r = app.get(&format!("/api/v1/users/{user}{day}"), &key).await;
    assert_eq!(steps(&r.body), 600, "{}", r.body);
    let r = app
        .call(Method::PUT, "/api/v1/priorities", &admin, Some(json!({"device_types": ["phone"]})))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["device_types"], json!(["phone"]));
    let r = app.get(&format!("/api/v1/users/{user}{day}"), &key).await;
    assert_eq!(steps(&r.body), 500, "{}", r.body);
    // The user's own order still comes first.
    let r = app
        .call(
            Method::PUT,
            &format!("/api/v1/users/{user}/priorities"),
            &key,
            Some(json!({"device_types": ["watch"]})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["ranking"][0]["data_source"]["device_type"], "watch");
    let r = app.get(&format!("/api/v1/users/{user}{day}"), &key).await;
    assert_eq!(steps(&r.body), 600);
}

/// Sleep scores are paged in the database: a page reads the newest `offset + limit` nights,
/// and `total_count` counts every night in the window (a nap alone makes no night).
#[tokio::test]
async fn sleep_scores_page_through_many_nights() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let watch = crate::fixtures::watch();
    let mut items = Vec::new();
    for day in 10..=14 {
        let (a, b) = (format!("2026-03-{day}T22:00:00Z"), format!("2026-03-{}T06:00:00Z", day + 1));
        items.extend(crate::fixtures::sleep(&[("deep", &a, &b)], "+00:00", &watch));
    }
    // A nap on the 20th: no night, no score.
    let nap = [("light", "2026-03-20T13:00:00Z", "2026-03-20T13:30:00Z")];
    items.extend(crate::fixtures::sleep(&nap, "+00:00", &watch));
    app.sync_and_wait(&user, &key, &body(vec![], vec![], items)).await;

    let recorded = |p: &Value| -> Vec<String> {
        p["data"].as_array().into_iter().flatten().map(|s| s["recorded_at"].to_string()).collect()
    };
    let p = scores(&app, &key, &user, "category=sleep&limit=2").await;
    assert_eq!(p["pagination"]["total_count"], 5, "{p}");
    assert_eq!(p["pagination"]["has_more"], true);
    assert_eq!(recorded(&p), ["\"2026-03-15T06:00:00+00:00\"", "\"2026-03-14T06:00:00+00:00\""]);
    let p = scores(&app, &key, &user, "category=sleep&limit=2&offset=3").await;
    assert_eq!(recorded(&p), ["\"2026-03-12T06:00:00+00:00\"", "\"2026-03-11T06:00:00+00:00\""]);
    assert_eq!(p["pagination"]["has_more"], false);
    // A window: the nights ending in it.
    let p =
        scores(&app, &key, &user, "category=sleep&start_date=2026-03-12&end_date=2026-03-13").await;
    assert_eq!(p["pagination"]["total_count"], 2, "{p}");
    assert_eq!(recorded(&p), ["\"2026-03-13T06:00:00+00:00\"", "\"2026-03-12T06:00:00+00:00\""]);
}
