//! Public catalogues, health, and the OpenAPI document.

use serde_json::{Value, json};

use crate::util::{Auth, TestApp};

#[tokio::test]
async fn providers_without_credentials() {
    let app = TestApp::spawn().await;
    let r = app.get("/api/v1/oauth/providers", &Auth::None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let list = r.body.as_array().expect("array");
    let phone = list.iter().find(|p| p["provider"] == "phonehealth").expect("phonehealth listed");
    for field in [
        "provider",
        "name",
        "has_cloud_api",
        "is_enabled",
        "icon_url",
        "live_sync_mode",
        "live_sync_configurable",
        "data_granularity",
    ] {
        assert!(phone.get(field).is_some(), "{field}");
    }
    assert_eq!(phone["has_cloud_api"], false);
    assert_eq!(phone["live_sync_mode"], Value::Null);

    let enabled = app.get("/api/v1/oauth/providers?enabled_only=true", &Auth::None).await;
    assert!(enabled.body.as_array().expect("array").iter().all(|p| p["is_enabled"] == true));
    let cloud = app.get("/api/v1/oauth/providers?cloud_only=true", &Auth::None).await;
    assert!(cloud.body.as_array().expect("array").iter().all(|p| p["has_cloud_api"] == true));
    assert!(!cloud.body.to_string().contains("phonehealth"));
    app.get("/api/v1/oauth/providers?cloud_only=maybe", &Auth::None)
        .await
        .assert_invalid(&["query", "cloud_only"], "bool_parsing");

    // The icon the catalogue points at is served.
    let icon = app
        .http
        .get(app.url(phone["icon_url"].as_str().unwrap_or_default()))
        .send()
        .await
        .expect("icon");
    assert_eq!(icon.status(), 200);
    assert_eq!(icon.headers()["content-type"], "image/svg+xml");
}

#[tokio::test]
async fn event_types_without_credentials() {
    let app = TestApp::spawn().await;
    let r = app.get("/api/v1/webhooks/event-types", &Auth::None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let list = r.body.as_array().expect("array");
    let names: Vec<&str> = list.iter().filter_map(|e| e["name"].as_str()).collect();
    for name in [
        "connection.created",
        "connection.revoked",
        "workout.created",
        "sleep.created",
        "menstrual_cycle.created",
        "activity.created",
        "heart_rate.created",
        "heart_rate_variability.created",
        "steps.created",
        "calories.created",
        "spo2.created",
        "respiratory_rate.created",
        "body_temperature.created",
        "stress.created",
        "blood_glucose.created",
        "blood_pressure.created",
        "body_composition.created",
        "fitness_metrics.created",
        "recovery_score.created",
        "activity_timeseries.created",
        "workout_metrics.created",
        "environmental.created",
        "timeseries.created",
    ] {
        assert!(names.contains(&name), "{name} missing");
    }
    for e in list {
        assert!(e["description"].as_str().is_some_and(|d| !d.is_empty()));
        assert!(e["child_events"].is_array());
    }
    let steps = list.iter().find(|e| e["name"] == "steps.created").expect("steps");
    assert_eq!(steps["child_events"], serde_json::json!(["series.steps.created"]));
}

#[tokio::test]
async fn health_reports_dependencies() {
    let app = TestApp::spawn().await;
    let r = app.get("/health", &Auth::None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["status"], "ok");
    assert_eq!(r.body["database"], "ok");
    assert_eq!(r.body["redis"], "ok");
    assert!(matches!(r.body["timescaledb"].as_str(), Some("apache" | "community")));
}

#[tokio::test]
async fn openapi_document_and_docs_page() {
    let app = TestApp::spawn().await;
    let r = app.get("/openapi.json", &Auth::None).await;
    assert_eq!(r.status, 200);
    assert!(
        r.body["openapi"].as_str().is_some_and(|v| v.starts_with("3.1")),
        "{}",
        r.body["openapi"]
    );
    assert_eq!(r.body["info"]["version"], "0.2.0");
    let paths = r.body["paths"].as_object().expect("paths");
    for path in [
        "/api/v1/auth/login",
        "/api/v1/users",
        "/api/v1/users/{user_id}",
        "/api/v1/users/{user_id}/connections",
        "/api/v1/users/{user_id}/data-sources",
        "/api/v1/developer/api-keys",
        "/api/v1/developer/api-keys/{key_id}/rotate",
        "/api/v1/users/{user_id}/token",
        "/api/v1/token/refresh",
        "/api/v1/token/revoke",
        "/api/v1/oauth/providers",
        "/api/v1/webhooks/event-types",
        "/health",
    ] {
        assert!(paths.contains_key(path), "{path} not documented");
    }
    let schemes = &r.body["components"]["securitySchemes"];
    assert_eq!(schemes["api_key"]["name"], "X-Service-API-Key");
    assert_eq!(schemes["bearer"]["flows"]["password"]["tokenUrl"], "/api/v1/auth/login");

    // The docs page runs only its own script files and talks only to this service (issue 29).
    let docs = app.http.get(app.url("/docs/")).send().await.expect("docs");
    assert_eq!(docs.status(), 200);
    let csp = docs.headers().get("content-security-policy").and_then(|v| v.to_str().ok());
    let csp = csp.unwrap_or_default().to_string();
    for part in ["script-src 'self';", "connect-src 'self';", "frame-ancestors 'none'"] {
        assert!(csp.contains(part), "{part} in {csp:?}");
    }
    assert!(docs.text().await.unwrap_or_default().contains("swagger"));
}

/// The served document passes a well-kept validator (`openapi-spec-validator` from PyPI, which
/// `scripts/test.sh` installs), and equals the committed `docs/openapi.json`, so every API
/// change shows in a diff. After an intended change:
/// `WEARHOUSE_UPDATE_OPENAPI=1 cargo nextest run -E 'test(openapi)'`, then review the diff.
#[tokio::test]
async fn openapi_document_is_valid_and_committed() {
    let app = TestApp::spawn().await;
    let r = app.get("/openapi.json", &Auth::None).await;
    assert_eq!(r.status, 200);
    let pretty = serde_json::to_string_pretty(&r.body).expect("json") + "\n";
    let dir = std::env::temp_dir().join(format!("wearhouse-oas-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("openapi.json");
    std::fs::write(&file, &pretty).expect("write");
    let out = std::process::Command::new("python3")
        .args(["-m", "openapi_spec_validator"])
        .arg(&file)
        .output()
        .expect("python3");
    let _ = std::fs::remove_dir_all(&dir);
    let said =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && said.contains("OK"), "the document is invalid: {said}");

    let committed = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/openapi.json");
    if std::env::var_os("WEARHOUSE_UPDATE_OPENAPI").is_some() {
        std::fs::write(committed, &pretty).expect("write docs/openapi.json");
    }
    let on_disk: Value = std::fs::read_to_string(committed)
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_default();
    assert!(
        on_disk == r.body,
        "the served OpenAPI document differs from docs/openapi.json: review the change, then \
         WEARHOUSE_UPDATE_OPENAPI=1 cargo nextest run -E 'test(openapi)'"
    );
}

/// Developers set providers: enabled or not, the granularity of 24/7 data; the live sync mode
/// only where it can be switched. Unknown names are refused whole (nothing changes).
#[tokio::test]
async fn provider_settings_by_developers() {
    use reqwest::Method;
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let key = app.api_key().await;
    let put = |path: &str, auth: &Auth, body: Value| {
        let path = format!("/api/v1/oauth/providers{path}");
        let auth = auth.clone();
        let app = &app;
        async move { app.call(Method::PUT, &path, &auth, Some(body)).await }
    };
    let enabled = |list: &Value| -> Vec<String> {
        list.as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["is_enabled"] == true)
            .filter_map(|p| p["provider"].as_str().map(str::to_string))
            .collect()
    };

    // API keys cannot change settings.
    assert_eq!(put("/samsung", &key, json!({"is_enabled": false})).await.status, 401);
    let r = put("/samsung", &admin, json!({"is_enabled": false})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        (r.body["provider"].clone(), r.body["is_enabled"].clone()),
        (json!("samsung"), json!(false))
    );
    let list = app.get("/api/v1/oauth/providers?enabled_only=true", &Auth::None).await;
    assert_eq!(enabled(&list.body), ["phonehealth", "google"]);

    // Granularity is kept when another field changes.
    let r = put("/samsung", &admin, json!({"data_granularity": "hourly"})).await;
    assert_eq!(r.body["data_granularity"], "hourly", "{}", r.body);
    let r = put("/samsung", &admin, json!({"is_enabled": true})).await;
    assert_eq!(
        (r.body["is_enabled"].clone(), r.body["data_granularity"].clone()),
        (json!(true), json!("hourly"))
    );

    // What is refused, and how.
    put("/fitbit", &admin, json!({"is_enabled": false}))
        .await
        .assert_error(400, "Unknown provider: fitbit");
    put("/Samsung", &admin, json!({"is_enabled": false}))
        .await
        .assert_error(400, "Unknown provider: Samsung");
    put("/phonehealth", &admin, json!({"live_sync_mode": "pull"}))
        .await
        .assert_error(400, "Provider 'phonehealth' does not support live sync mode configuration");
    put("/phonehealth", &admin, json!({"live_sync_mode": null}))
        .await
        .assert_invalid(&["body", "live_sync_mode"], "value_error");
    put("/phonehealth", &admin, json!({"data_granularity": "minute"}))
        .await
        .assert_invalid(&["body", "data_granularity"], "value_error");

    // Several at once; an unknown name changes nothing.
    put("", &admin, json!({"providers": {"google": false, "garmin": true}}))
        .await
        .assert_error(400, "Unknown provider: garmin");
    let r = put("", &admin, json!({"providers": {"google": false, "samsung": false}})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(enabled(&r.body), ["phonehealth"]);
    assert_eq!(r.body.as_array().map(Vec::len), Some(3));
}
