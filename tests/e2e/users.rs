//! `/api/v1/users` and the user-scoped lists.

use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::util::{Auth, TestApp};

#[tokio::test]
async fn create_read_update() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let created = app
        .post("/api/v1/users", &key, json!({"email": "ada@example.com", "first_name": "Ada", "external_user_id": "ext-1", "unknown": 1}))
        .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let id = created.str("id");
    for field in [
        "id",
        "created_at",
        "first_name",
        "last_name",
        "email",
        "external_user_id",
        "last_synced_at",
        "last_synced_provider",
        "has_active_connection",
    ] {
        assert!(created.body.get(field).is_some(), "{field} missing in {}", created.body);
    }
    assert_eq!(created.body["has_active_connection"], false);
    assert_eq!(created.body["last_name"], Value::Null);

    let got = app.get(&format!("/api/v1/users/{id}"), &key).await;
    assert_eq!(got.status, 200);
    assert_eq!(got.body, created.body);

    // Duplicate emails are allowed; duplicate external ids are not.
    assert_eq!(
        app.post("/api/v1/users", &key, json!({"email": "ada@example.com"})).await.status,
        201
    );
    app.post("/api/v1/users", &key, json!({"external_user_id": "ext-1"}))
        .await
        .assert_error(409, "A user with this external_user_id already exists.");
    // An empty body creates an empty user.
    assert_eq!(app.call(Method::POST, "/api/v1/users", &key, None).await.status, 201);

    // PATCH: absent fields stay, null clears.
    let admin = app.admin().await;
    let patched = app
        .call(
            Method::PATCH,
            &format!("/api/v1/users/{id}"),
            &admin,
            Some(json!({"last_name": "Lovelace", "external_user_id": null})),
        )
        .await;
    assert_eq!(patched.status, 200, "{}", patched.body);
    assert_eq!(patched.body["first_name"], "Ada");
    assert_eq!(patched.body["last_name"], "Lovelace");
    assert_eq!(patched.body["external_user_id"], Value::Null);
    // PATCH needs the developer token.
    app.call(Method::PATCH, &format!("/api/v1/users/{id}"), &key, Some(json!({"last_name": "x"})))
        .await
        .assert_error(401, "Could not validate credentials");
}

#[tokio::test]
async fn body_validation_is_422() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    app.post("/api/v1/users", &key, json!({"email": "not-an-email"}))
        .await
        .assert_invalid(&["body", "email"], "value_error");
    app.post("/api/v1/users", &key, json!({"first_name": "x".repeat(101)}))
        .await
        .assert_invalid(&["body", "first_name"], "string_too_long");
    app.post("/api/v1/users", &key, json!({"email": 42}))
        .await
        .assert_invalid(&["body", "email"], "value_error");
    let r = app
        .http
        .post(app.url("/api/v1/users"))
        .header(
            "X-Service-API-Key",
            match &key {
                Auth::Key(k) => k.clone(),
                _ => unreachable!(),
            },
        )
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .expect("request");
    let r = crate::util::Resp::read(r).await;
    assert_eq!(r.status, 422, "{}", r.body);
    assert_eq!(r.body["detail"][0]["type"], "json_invalid");
}

#[tokio::test]
async fn list_pages_filters_and_sorts() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let mut ids = Vec::new();
    for i in 0..5 {
        let email = format!("user{i}@example.com");
        ids.push(app.user(&key, json!({"email": email, "first_name": format!("Name{i}"), "external_user_id": format!("e{i}")})).await);
    }
    app.user(&key, json!({"email": "other@elsewhere.org", "last_name": "100%_sure"})).await;

    let page = app.get("/api/v1/users?page=2&limit=2", &key).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(page.body["total"], 6);
    assert_eq!(page.body["page"], 2);
    assert_eq!(page.body["limit"], 2);
    assert_eq!(page.body["pages"], 3);
    assert_eq!(page.body["has_next"], true);
    assert_eq!(page.body["has_prev"], true);
    assert_eq!(page.body["items"].as_array().map(Vec::len), Some(2));

    // Default: newest first, 20 per page.
    let all = app.get("/api/v1/users", &key).await;
    assert_eq!(all.body["limit"], 20);
    assert_eq!(all.body["has_next"], false);
    assert_eq!(all.body["has_prev"], false);
    assert_eq!(all.body["items"][5]["id"], ids[0].as_str());
    let asc = app.get("/api/v1/users?sort_by=email&sort_order=asc", &key).await;
    assert_eq!(asc.body["items"][0]["email"], "other@elsewhere.org");

    let found = app.get("/api/v1/users?search=NAME3", &key).await;
    assert_eq!(found.body["total"], 1);
    assert_eq!(found.body["items"][0]["id"], ids[3].as_str());
    // LIKE metacharacters match literally.
    let found = app.get("/api/v1/users?search=100%25_", &key).await;
    assert_eq!(found.body["total"], 1);
    let found = app.get("/api/v1/users?search=%25", &key).await;
    assert_eq!(found.body["total"], 1);
    let found = app.get("/api/v1/users?external_user_id=e4", &key).await;
    assert_eq!(found.body["total"], 1);
    assert_eq!(found.body["items"][0]["id"], ids[4].as_str());
    let none = app.get("/api/v1/users?external_user_id=nope", &key).await;
    assert_eq!(none.body["items"], json!([]));
    assert_eq!(none.body["pages"], 0);
}

#[tokio::test]
async fn list_bounds_are_422() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    app.get("/api/v1/users?page=0", &key)
        .await
        .assert_invalid(&["query", "page"], "greater_than_equal");
    app.get("/api/v1/users?limit=0", &key)
        .await
        .assert_invalid(&["query", "limit"], "greater_than_equal");
    let r = app.get("/api/v1/users?limit=101", &key).await;
    r.assert_invalid(&["query", "limit"], "less_than_equal");
    assert_eq!(r.body["detail"][0]["msg"], "Input should be less than or equal to 100");
    assert_eq!(r.body["detail"][0]["ctx"]["le"], 100);
    app.get("/api/v1/users?limit=ten", &key)
        .await
        .assert_invalid(&["query", "limit"], "int_parsing");
    app.get("/api/v1/users?sort_order=up", &key)
        .await
        .assert_invalid(&["query", "sort_order"], "enum");
    assert_eq!(app.get("/api/v1/users?limit=100", &key).await.status, 200);
}

#[tokio::test]
async fn malformed_and_missing_ids() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let admin = app.admin().await;
    let missing = Uuid::new_v4();
    let not_found = format!("User with ID: {missing} not found.");
    for suffix in ["", "/connections", "/data-sources"] {
        app.get(&format!("/api/v1/users/not-a-uuid{suffix}"), &key)
            .await
            .assert_error(400, "Input should be a valid UUID");
        app.get(&format!("/api/v1/users/{missing}{suffix}"), &key)
            .await
            .assert_error(404, &not_found);
    }
    let patch = Some(json!({"first_name": "x"}));
    app.call(Method::PATCH, "/api/v1/users/123", &admin, patch.clone())
        .await
        .assert_error(400, "Input should be a valid UUID");
    app.call(Method::PATCH, &format!("/api/v1/users/{missing}"), &admin, patch)
        .await
        .assert_error(404, &not_found);
    app.call(Method::DELETE, "/api/v1/users/123", &admin, None)
        .await
        .assert_error(400, "Input should be a valid UUID");
    app.call(Method::DELETE, &format!("/api/v1/users/{missing}"), &admin, None)
        .await
        .assert_error(404, &not_found);
}

/// Stores a little of everything for `user` directly, as ingest will.
async fn seed_data(app: &TestApp, user: Uuid) {
    let db = app.db().await;
    let source = Uuid::now_v7();
    db.batch_execute(&format!(
        "insert into connections (id, user_id, provider) values ('{conn}', '{user}', 'phonehealth');
         insert into data_sources (id, user_id, provider, user_connection_id, device_model, source, device_type)
             values ('{source}', '{user}', 'phonehealth', '{conn}', 'Watch6,12', 'Apple Watch', 'watch');
         insert into samples (user_id, series_type_id, data_source_id, ts, value, zone_offset)
             values ('{user}', 1, '{source}', now(), 61, 60), ('{user}', 80, '{source}', now(), 1200, 60);
         insert into workouts (id, user_id, data_source_id, start_time, end_time, duration_seconds)
             values ('{w}', '{user}', '{source}', now() - interval '1 hour', now(), 3600);
         insert into sleep_sessions (id, user_id, data_source_id, start_time, end_time, duration_seconds)
             values ('{s}', '{user}', '{source}', now() - interval '8 hours', now(), 28800);
         insert into sync_runs (id, user_id, provider, source, status) values ('{r}', '{user}', 'phonehealth', 'sdk', 'success');",
        conn = Uuid::now_v7(),
        w = Uuid::now_v7(),
        s = Uuid::now_v7(),
        r = Uuid::now_v7(),
    ))
    .await
    .expect("seed");
}

async fn count_rows(app: &TestApp, user: Uuid) -> i64 {
    let db = app.db().await;
    let mut total = 0;
    for table in [
        "samples",
        "workouts",
        "sleep_sessions",
        "sync_runs",
        "data_sources",
        "connections",
        "users",
    ] {
        let column = if table == "users" { "id" } else { "user_id" };
        let row = db
            .query_one(&format!("select count(*) from {table} where {column} = $1"), &[&user])
            .await
            .expect("count");
        total += row.get::<_, i64>(0);
    }
    total
}

#[tokio::test]
async fn connections_and_data_sources() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user: Uuid = app.user(&key, json!({})).await.parse().expect("uuid");
    assert_eq!(app.get(&format!("/api/v1/users/{user}/connections"), &key).await.body, json!([]));
    let empty = app.get(&format!("/api/v1/users/{user}/data-sources"), &key).await;
    assert_eq!(empty.body, json!({"items": [], "total": 0}));

    seed_data(&app, user).await;
    let conns = app.get(&format!("/api/v1/users/{user}/connections"), &key).await;
    assert_eq!(conns.status, 200, "{}", conns.body);
    let c = &conns.body[0];
    assert_eq!(c["provider"], "phonehealth");
    assert_eq!(c["status"], "active");
    assert_eq!(c["icon_url"], "/static/provider-icons/phonehealth.svg");
    assert_eq!(c["rest_pull"], false);
    assert_eq!(c["live_sync_mode"], Value::Null);
    assert_eq!(c["linked_user_ids"], json!([]));

    let sources = app.get(&format!("/api/v1/users/{user}/data-sources"), &key).await;
    assert_eq!(sources.body["total"], 1);
    let s = &sources.body["items"][0];
    assert_eq!(s["device_model"], "Watch6,12");
    assert_eq!(s["device_type"], "watch");
    assert_eq!(s["display_name"], "Apple Health - Watch6,12");
    assert_eq!(s["user_connection_id"], c["id"]);

    let user_row = app.get(&format!("/api/v1/users/{user}"), &key).await;
    assert_eq!(user_row.body["has_active_connection"], true);
}

#[tokio::test]
async fn deleting_a_user_deletes_all_their_data() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let admin = app.admin().await;
    let doomed: Uuid =
        app.user(&key, json!({"email": "gone@example.com"})).await.parse().expect("uuid");
    let kept: Uuid = app.user(&key, json!({})).await.parse().expect("uuid");
    seed_data(&app, doomed).await;
    seed_data(&app, kept).await;
    let before = count_rows(&app, kept).await;
    assert!(count_rows(&app, doomed).await > 0);

    let r = app.call(Method::DELETE, &format!("/api/v1/users/{doomed}"), &admin, None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["email"], "gone@example.com");
    assert_eq!(count_rows(&app, doomed).await, 0);
    assert_eq!(count_rows(&app, kept).await, before, "another user's data is untouched");
    app.get(&format!("/api/v1/users/{doomed}"), &key)
        .await
        .assert_error(404, &format!("User with ID: {doomed} not found."));
}
