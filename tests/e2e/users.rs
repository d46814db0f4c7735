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
    // A full id finds its user too.
    let found = app.get(&format!("/api/v1/users?search={}", ids[2].to_uppercase()), &key).await;
    assert_eq!(
        (found.body["total"].clone(), found.body["items"][0]["id"].clone()),
        (json!(1), json!(ids[2]))
    );
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

/// Every row of the user's, in every table of the schema: the tables are found from the
/// database's catalogue (each with a `user_id` column, and `users`), so a table added later
/// cannot be forgotten.
async fn count_rows(app: &TestApp, user: Uuid) -> std::collections::BTreeMap<String, i64> {
    let db = app.db().await;
    let tables: Vec<String> = db
        .query(
            "select table_name::text from information_schema.columns
             where table_schema = 'public' and column_name = 'user_id'",
            &[],
        )
        .await
        .expect("catalogue")
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert!(tables.len() >= 15, "{tables:?}");
    let mut counts = std::collections::BTreeMap::new();
    // The audit trail outlives the users it names (it holds ids, never health data): deleting a
    // user keeps the record of who read their data, and of the deletion (issue 34).
    let tables = tables.iter().map(String::as_str).filter(|t| *t != "audit_events");
    for table in tables.chain(["users"]) {
        let column = if table == "users" { "id" } else { "user_id" };
        let row = db
            .query_one(&format!("select count(*) from {table} where {column} = $1"), &[&user])
            .await
            .expect("count");
        counts.insert(table.to_string(), row.get::<_, i64>(0));
    }
    // Rows that name the user only through their message.
    let row = db
        .query_one(
            "select (select count(*) from webhook_deliveries d join webhook_messages m
                     on m.id = d.message_id where m.user_id = $1)
                  + (select count(*) from webhook_attempts a join webhook_messages m
                     on m.id = a.message_id where m.user_id = $1)",
            &[&user],
        )
        .await
        .expect("count");
    counts.insert("webhook_deliveries and attempts".into(), row.get(0));
    counts
}

/// Real data of every kind, through the real routes: an SDK batch (samples, rollups, a
/// workout, a night, outbox events turned into webhook messages and attempts), an imported
/// export (an object in the bucket), and a multipart upload left open.
async fn seed_everything(app: &TestApp, key: &Auth, user: &str) {
    use crate::fixtures::{at, body, sleep, watch};
    let z = Some("+01:00");
    let records = vec![
        at("HeartRate", "2026-03-10T07:00:00Z", 61.0, "count/min", z, &watch()),
        at("StepCount", "2026-03-10T07:00:00Z", 1200.0, "count", z, &watch()),
    ];
    let w = crate::fixtures::evening_run("W-1", 10);
    let night =
        sleep(&[("light", "2026-03-09T23:00:00Z", "2026-03-10T06:00:00Z")], "+01:00", &watch());
    app.sync_and_wait(user, key, &body(records, vec![w], night)).await;
    let url = app.url(&format!("/api/v1/users/{user}/import/phonehealth/xml/direct"));
    let mut xml = Vec::new();
    ingest::export::generate::write_export(&mut xml, &ingest::export::generate::ExportSpec::new(1))
        .expect("generate");
    let form = reqwest::multipart::Form::new()
        .part("file", reqwest::multipart::Part::bytes(xml).file_name("export.xml"));
    let r = crate::util::Resp::read(
        key.apply(app.http.post(url)).multipart(form).send().await.expect("upload"),
    )
    .await;
    assert_eq!(r.status, 202, "{}", r.body);
    let base = format!("/api/v1/users/{user}/import/phonehealth/xml/storage/multipart");
    let created = app.post(&format!("{base}/create"), key, json!({"file_size": 6 << 20})).await;
    assert_eq!(created.status, 201, "{}", created.body);
    let task = r.str("task_id");
    for _ in 0..600 {
        let done = app
            .count(&format!("select count(*) from imports where id = '{task}' and status = 'done'"))
            .await;
        let messages = app
            .count(&format!("select count(*) from webhook_messages where user_id = '{user}'"))
            .await;
        if done == 1 && messages > 0 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("the import or the webhook messages did not come");
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

/// Delete means gone: no row in any table, no object and no open upload under the user's
/// prefix in the bucket (rollups, outbox events, webhook messages and uploaded exports used
/// to stay behind).
#[tokio::test]
async fn deleting_a_user_leaves_no_row_and_no_object() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let admin = app.admin().await;
    // An endpoint nobody answers at: messages, deliveries and failed attempts.
    let r = app
        .post("/api/v1/webhooks/endpoints", &admin, json!({"url": "http://127.0.0.1:9/in"}))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let doomed = app.user(&key, json!({})).await;
    let kept = app.user(&key, json!({})).await;
    seed_everything(&app, &key, &doomed).await;
    seed_everything(&app, &key, &kept).await;
    let (doomed_id, kept_id): (Uuid, Uuid) =
        (doomed.parse().expect("uuid"), kept.parse().expect("uuid"));
    let storage = app.settings.s3.storage().expect("storage");
    let prefix = schema::users::object_prefix(schema::ids::UserId(doomed_id));
    assert!(!storage.keys(&prefix).await.expect("keys").is_empty());
    assert!(!storage.uploads(&prefix).await.expect("uploads").is_empty());
    // Deliveries to the dead endpoint go on being retried, and the worker's sweep measures
    // storage when it comes to a user: the rest must not move.
    let settled = |mut c: std::collections::BTreeMap<String, i64>| {
        c.retain(|table, _| !table.starts_with("webhook_") && table != "user_storage");
        c
    };
    let kept_rows = settled(count_rows(&app, kept_id).await);
    let kept_objects = storage
        .keys(&schema::users::object_prefix(schema::ids::UserId(kept_id)))
        .await
        .expect("keys");

    let r = app.call(Method::DELETE, &format!("/api/v1/users/{doomed}"), &admin, None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let left_rows: Vec<_> =
        count_rows(&app, doomed_id).await.into_iter().filter(|(_, n)| *n > 0).collect();
    assert_eq!(left_rows, [], "rows left");
    let mut left = (usize::MAX, usize::MAX);
    for _ in 0..100 {
        left = (
            storage.keys(&prefix).await.expect("keys").len(),
            storage.uploads(&prefix).await.expect("uploads").len(),
        );
        if left == (0, 0) && app.count("select count(*) from object_deletions").await == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(left, (0, 0), "objects and uploads left under {prefix}");
    assert_eq!(app.count("select count(*) from object_deletions").await, 0);
    // Another user's data is untouched.
    assert_eq!(settled(count_rows(&app, kept_id).await), kept_rows);
    assert_eq!(
        storage
            .keys(&schema::users::object_prefix(schema::ids::UserId(kept_id)))
            .await
            .expect("keys"),
        kept_objects
    );
}

/// Events written for a user who is then deleted, before they were dispatched, are never
/// delivered.
#[tokio::test]
async fn nothing_of_a_deleted_user_is_delivered() {
    use std::sync::{Arc, Mutex};
    let got: Arc<Mutex<Vec<String>>> = Arc::default();
    let receiver = {
        let got = got.clone();
        axum::Router::new().route(
            "/in",
            axum::routing::post(move |body: String| {
                let got = got.clone();
                async move {
                    if let Ok(mut g) = got.lock() {
                        g.push(body);
                    }
                    axum::http::StatusCode::NO_CONTENT
                }
            }),
        )
    };
    let received = || got.lock().map(|g| g.clone()).unwrap_or_default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/in", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, receiver).await });

    let app = TestApp::spawn_with(crate::util::Mode::ApiOnly, |_| {}).await;
    let (key, admin) = (app.api_key().await, app.admin().await);
    let r = app.post("/api/v1/webhooks/endpoints", &admin, json!({"url": url})).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let user = app.user(&key, json!({})).await;
    let w = crate::fixtures::evening_run("W-9", 10);
    let r = app.sync(&user, &key, &crate::fixtures::body(vec![], vec![w], vec![])).await;
    assert_eq!(r.status, 202, "{}", r.body);
    // Processed here, with outbox events, and not dispatched: no worker runs yet.
    let db = schema::Db::connect(&app.settings.database_url, 2).await.expect("db");
    let opts = ingest::process::Options { outbox: true, force: false };
    let id = schema::ids::BatchId(r.str("task_id").parse().expect("uuid"));
    ingest::process::process_sdk_batch(&db, id, opts).await.expect("process");
    assert!(app.count("select count(*) from outbox where dispatched_at is null").await > 0);

    let r = app.call(Method::DELETE, &format!("/api/v1/users/{user}"), &admin, None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let _worker = app.binary(&["worker"]).spawn().expect("spawn a worker");
    // A control user's event goes through the same worker: once it arrives, the deleted
    // user's would have too.
    let other = app.user(&key, json!({})).await;
    let w = crate::fixtures::evening_run("W-10", 11);
    app.sync_and_wait(&other, &key, &crate::fixtures::body(vec![], vec![w], vec![])).await;
    for _ in 0..100 {
        if received().iter().any(|b| b.contains(&other)) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let bodies = received();
    assert!(bodies.iter().any(|b| b.contains(&other)), "the control user's event arrived");
    assert!(!bodies.iter().any(|b| b.contains(&user)), "nothing of the deleted user: {bodies:?}");
    let messages =
        app.count(&format!("select count(*) from webhook_messages where user_id = '{user}'")).await;
    assert_eq!(messages, 0);
}
