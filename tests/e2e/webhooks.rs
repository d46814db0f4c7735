//! Outgoing-webhook management: endpoints, secrets, the switch and the URL rules.

use base64::Engine;
use reqwest::Method;
use serde_json::{Value, json};

use crate::util::{Mode, TestApp};

const ENDPOINTS: &str = "/api/v1/webhooks/endpoints";

#[tokio::test]
async fn endpoints_created_listed_patched_and_deleted_by_developers_only() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;

    // An API key is not enough.
    let r = app.post(ENDPOINTS, &key, json!({"url": "https://hooks.example.com/in"})).await;
    r.assert_error(401, "Could not validate credentials");

    let r = app.post(ENDPOINTS, &admin, json!({"url": "https://hooks.example.com/in"})).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let all = r.body.clone();
    assert!(all["id"].as_str().is_some_and(|id| id.starts_with("ep_")), "{all}");
    assert_eq!(all["filter_types"], Value::Null);
    assert_eq!(all["user_id"], Value::Null);
    assert_eq!(all["disabled"], false);

    let scoped = json!({"url": "https://hooks.example.com/ada", "description": "Ada's workouts",
                        "filter_types": ["workout.created", "sleep.created"], "user_id": user});
    let r = app.post(ENDPOINTS, &admin, scoped).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let ada = r.str("id");
    assert_eq!(r.body["user_id"], user.as_str());
    assert_eq!(r.body["filter_types"], json!(["workout.created", "sleep.created"]));

    // Bad input: every problem is listed.
    let r = app.post(ENDPOINTS, &admin, json!({"url": "http://hooks.example.com/in"})).await;
    r.assert_invalid(&["body", "url"], "url_parsing");
    let r = app
        .post(
            ENDPOINTS,
            &admin,
            json!({"url": "https://h.example.com", "filter_types": ["workout.created", "nope"]}),
        )
        .await;
    r.assert_invalid(&["body", "filter_types", "1"], "enum");
    let r = app
        .post(
            ENDPOINTS,
            &admin,
            json!({"url": "https://h.example.com", "user_id": "018f6f7e-0000-7000-8000-000000000000"}),
        )
        .await;
    r.assert_invalid(&["body", "user_id"], "value_error");
    let r = app.post(ENDPOINTS, &admin, json!({"description": "no url"})).await;
    assert_eq!(r.status, 422, "{}", r.body);

    let r = app.get(ENDPOINTS, &admin).await;
    assert_eq!(r.status, 200);
    let ids: Vec<&str> = r
        .body
        .as_array()
        .map(|a| a.iter().filter_map(|e| e["id"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(ids, [all["id"].as_str().unwrap_or(""), ada.as_str()]);

    // PATCH: omitted fields stay; `user_id: null` removes the user filter.
    let path = format!("{ENDPOINTS}/{ada}");
    let r =
        app.call(Method::PATCH, &path, &admin, Some(json!({"description": "all of Ada"}))).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["user_id"], user.as_str());
    assert_eq!(r.body["filter_types"], json!(["workout.created", "sleep.created"]));
    let r = app
        .call(Method::PATCH, &path, &admin, Some(json!({"user_id": null, "filter_types": null})))
        .await;
    assert_eq!(r.body["user_id"], Value::Null, "{}", r.body);
    assert_eq!(r.body["filter_types"], Value::Null);
    assert_eq!(r.body["description"], "all of Ada");
    let r =
        app.call(Method::PATCH, &path, &admin, Some(json!({"url": "ftp://x.example.com"}))).await;
    r.assert_invalid(&["body", "url"], "url_parsing");

    // Secrets: whsec_ + base64 of 32 bytes; a rotation gives a new one.
    let r = app.get(&format!("{path}/secret"), &admin).await;
    let secret = r.str("key");
    let raw = secret.strip_prefix("whsec_").expect("whsec_ prefix");
    let bytes = base64::engine::general_purpose::STANDARD.decode(raw).expect("base64");
    assert_eq!(bytes.len(), 32);
    let r = app.post(&format!("{path}/secret/rotate"), &admin, json!({})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_ne!(r.str("key"), secret);
    assert_eq!(app.get(&format!("{path}/secret"), &admin).await.str("key"), r.str("key"));

    // Delete: 204, then 404 everywhere.
    let r = app.call(Method::DELETE, &path, &admin, None).await;
    assert_eq!(r.status, 204);
    let r = app.call(Method::DELETE, &path, &admin, None).await;
    r.assert_error(404, &format!("Webhook endpoint with ID: {ada} not found."));
    assert_eq!(app.get(&path, &admin).await.status, 404);
    assert_eq!(app.get(&format!("{path}/secret"), &admin).await.status, 404);
}

#[tokio::test]
async fn management_is_503_while_webhooks_are_off() {
    let app = TestApp::spawn_with(Mode::ApiOnly, |s| s.outgoing_webhooks_enabled = false).await;
    let admin = app.admin().await;
    let r = app.get(ENDPOINTS, &admin).await;
    assert_eq!(r.status, 503, "{}", r.body);
    assert!(r.detail().contains("OUTGOING_WEBHOOKS_ENABLED=true"), "{}", r.body);
    let r = app.post(ENDPOINTS, &admin, json!({"url": "https://hooks.example.com/in"})).await;
    assert_eq!(r.status, 503);
    // The event types stay public.
    let r = app.get("/api/v1/webhooks/event-types", &crate::util::Auth::None).await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn internal_targets_refused_unless_allowed() {
    let app = TestApp::spawn_with(Mode::ApiOnly, |s| {
        s.webhooks_allow_http_loopback = false;
        s.webhooks_allow_private_targets = false;
    })
    .await;
    let admin = app.admin().await;
    for url in [
        "https://127.0.0.1/in",
        "https://10.0.0.7/in",
        "https://169.254.169.254/",
        "http://127.0.0.1:9000/in",
    ] {
        let r = app.post(ENDPOINTS, &admin, json!({ "url": url })).await;
        r.assert_invalid(&["body", "url"], "url_parsing");
    }
    // With the development defaults of the other tests, a loopback receiver is fine.
    let dev = TestApp::spawn_with(Mode::ApiOnly, |_| {}).await;
    let admin = dev.admin().await;
    let r = dev.post(ENDPOINTS, &admin, json!({"url": "http://127.0.0.1:9000/in"})).await;
    assert_eq!(r.status, 201, "{}", r.body);
}
