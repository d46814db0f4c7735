//! API keys: shown once, listed by prefix, renamed, rotated and revoked.

use reqwest::Method;
use serde_json::json;

use crate::util::{Auth, TestApp};

#[tokio::test]
async fn key_lifecycle() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;

    let created = app.post("/api/v1/developer/api-keys", &admin, json!({"name": "backend"})).await;
    assert_eq!(created.status, 201, "{}", created.body);
    let key = created.str("key");
    let id = created.str("id");
    assert!(key.starts_with("sk-") && key.len() == 35, "{key}");
    assert!(key.starts_with(&created.str("prefix")));
    let key_auth = Auth::Key(key.clone());
    assert_eq!(app.get("/api/v1/users", &key_auth).await.status, 200);

    // Listings never show the key.
    let list = app.get("/api/v1/developer/api-keys", &admin).await;
    assert_eq!(list.status, 200);
    let items = list.body.as_array().expect("array");
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["name"], "backend");
    assert!(items[0].get("key").is_none());
    assert!(!list.body.to_string().contains(&key));

    // Its use is recorded beside the call, once a minute at most.
    let used = |db: tokio_postgres::Client| async move {
        let sql = "select last_used_at from api_keys";
        db.query_one(sql, &[]).await.expect(sql).get::<_, Option<chrono::DateTime<chrono::Utc>>>(0)
    };
    let mut first = None;
    for _ in 0..50 {
        first = used(app.db().await).await;
        if first.is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let first = first.expect("the key's use recorded");
    assert_eq!(app.get("/api/v1/users", &key_auth).await.status, 200);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(used(app.db().await).await, Some(first), "not written again within the minute");
    let list = app.get("/api/v1/developer/api-keys", &admin).await;
    assert!(list.body[0]["last_used_at"].is_string(), "{}", list.body);

    // Only a hash is stored.
    let db = app.db().await;
    let rows = db.query("select key_hash, prefix from api_keys", &[]).await.expect("query");
    let stored: Vec<u8> = rows[0].get(0);
    assert_eq!(stored.len(), 32);
    assert!(!String::from_utf8_lossy(&stored).contains(&key[3..]));

    let renamed = app
        .call(
            Method::PATCH,
            &format!("/api/v1/developer/api-keys/{id}"),
            &admin,
            Some(json!({"name": "mobile backend"})),
        )
        .await;
    assert_eq!(renamed.status, 200, "{}", renamed.body);
    assert_eq!(renamed.body["name"], "mobile backend");

    // Rotation: a new key with the same name; the old one stops working at once.
    let rotated =
        app.post(&format!("/api/v1/developer/api-keys/{id}/rotate"), &admin, json!({})).await;
    assert_eq!(rotated.status, 201, "{}", rotated.body);
    assert_eq!(rotated.body["name"], "mobile backend");
    assert_ne!(rotated.str("key"), key);
    app.get("/api/v1/users", &key_auth).await.assert_error(401, "Invalid or missing API key");
    let new_auth = Auth::Key(rotated.str("key"));
    assert_eq!(app.get("/api/v1/users", &new_auth).await.status, 200);
    app.post(&format!("/api/v1/developer/api-keys/{id}/rotate"), &admin, json!({}))
        .await
        .assert_error(404, &format!("API key with ID: {id} not found."));

    // Revocation.
    let new_id = rotated.str("id");
    let revoked = app
        .call(Method::DELETE, &format!("/api/v1/developer/api-keys/{new_id}"), &admin, None)
        .await;
    assert_eq!(revoked.status, 200, "{}", revoked.body);
    assert!(revoked.body["revoked_at"].is_string());
    app.get("/api/v1/users", &new_auth).await.assert_error(401, "Invalid or missing API key");
    let list = app.get("/api/v1/developer/api-keys", &admin).await;
    assert_eq!(list.body, json!([]));
    app.call(Method::DELETE, &format!("/api/v1/developer/api-keys/{new_id}"), &admin, None)
        .await
        .assert_error(404, &format!("API key with ID: {new_id} not found."));
}

#[tokio::test]
async fn key_input_errors() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    // Name defaults to "Default"; an empty body is fine.
    let r = app.call(Method::POST, "/api/v1/developer/api-keys", &admin, None).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["name"], "Default");

    app.post("/api/v1/developer/api-keys", &admin, json!({"name": ""}))
        .await
        .assert_invalid(&["body", "name"], "string_too_short");
    app.post("/api/v1/developer/api-keys", &admin, json!({"name": "x".repeat(101)}))
        .await
        .assert_invalid(&["body", "name"], "string_too_long");
    app.post("/api/v1/developer/api-keys", &admin, json!({"name": 5}))
        .await
        .assert_invalid(&["body", "name"], "value_error");
    app.call(Method::DELETE, "/api/v1/developer/api-keys/nope", &admin, None)
        .await
        .assert_error(400, "Input should be a valid UUID");
}
