//! The audit trail: who read whose data, filtered and paged; what it keeps after the user is
//! deleted; health data refused while the trail cannot be written; retention.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::util::{Auth, TestApp};

/// Every event `query` finds, page by page (pages of `limit`), newest first.
async fn trail(app: &TestApp, auth: &Auth, query: &str, limit: usize) -> Vec<Value> {
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut path = format!("/api/v1/developer/audit?limit={limit}&{query}");
        if let Some(c) = &cursor {
            path.push_str(&format!("&cursor={c}"));
        }
        let page = app.get(&path, auth).await;
        assert_eq!(page.status, 200, "{}", page.body);
        out.extend(page.body["data"].as_array().expect("data").iter().cloned());
        cursor = page.body["pagination"]["next_cursor"].as_str().map(str::to_string);
        if cursor.is_none() {
            return out;
        }
    }
}

/// Waits until `query` finds `n` events (the writer flushes within a fraction of a second).
async fn settled(app: &TestApp, auth: &Auth, query: &str, n: usize) -> Vec<Value> {
    for _ in 0..40 {
        let found = trail(app, auth, query, 500).await;
        if found.len() >= n {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    trail(app, auth, query, 500).await
}

#[tokio::test]
async fn the_trail_says_who_read_a_users_data() {
    let app = TestApp::spawn().await;
    let owner = app.admin().await;
    let made = app
        .post(
            "/api/v1/developer/api-keys",
            &owner,
            json!({"name": "dashboard", "scopes": ["read"]}),
        )
        .await;
    let (key_id, secret) = (made.str("id"), made.str("key"));
    let key = Auth::Key(secret.clone());
    let ada = app.user(&owner, json!({"email": "ada@example.com"})).await;
    let bea = app.user(&owner, json!({"email": "bea@example.com"})).await;
    let window = "start_time=2026-01-01T00:00:00Z&end_time=2026-01-08T00:00:00Z";
    for user in [&ada, &ada, &bea] {
        let r = app.get(&format!("/api/v1/users/{user}/timeseries?{window}"), &key).await;
        assert_eq!(r.status, 200, "{}", r.body);
    }
    let days = "start_date=2026-01-01&end_date=2026-01-07";
    let r = app.get(&format!("/api/v1/users/{ada}/summaries/sleep?{days}"), &owner).await;
    assert_eq!(r.status, 200, "{}", r.body);
    // A write the key may not make is on record too, refused.
    let r = app
        .call(Method::DELETE, &format!("/api/v1/users/{ada}/connections/garmin"), &key, None)
        .await;
    r.assert_error(403, "This API key lacks the 'write' scope");

    // "Who read ada's data last week?"
    let since = (chrono::Utc::now() - chrono::Duration::days(7)).to_rfc3339();
    let q = format!("user_id={ada}&start_time={}", urlencode(&since));
    let events = settled(&app, &owner, &q, 5).await;
    let seen: Vec<(String, String, i64)> = events
        .iter()
        .map(|e| {
            (
                e["operation"].as_str().unwrap_or_default().to_string(),
                e["actor_type"].as_str().unwrap_or_default().to_string(),
                e["status"].as_i64().unwrap_or_default(),
            )
        })
        .collect();
    let own = |op: &str, actor: &str, status: i64| (op.to_string(), actor.to_string(), status);
    assert_eq!(
        seen,
        vec![
            own("connections_delete", "api_key", 403),
            own("summaries_sleep", "developer", 200),
            own("timeseries_list", "api_key", 200),
            own("timeseries_list", "api_key", 200),
            own("users_create", "developer", 201),
        ],
        "{events:#?}"
    );
    let reads = events.iter().filter(|e| e["operation"] == "timeseries_list");
    for e in reads {
        assert_eq!(e["actor_id"], json!(key_id));
        assert_eq!(e["user_id"], json!(ada));
        assert_eq!(e["client_address"], "127.0.0.1");
    }
    let refused = &events[0];
    assert_eq!(refused["resource_id"], "garmin");

    // Filters: by actor, by operation; pages of one walk it all once.
    let by_key = trail(&app, &owner, &format!("actor_id={key_id}"), 500).await;
    assert_eq!(by_key.len(), 4, "{by_key:#?}");
    let reads = trail(&app, &owner, "operation=timeseries_list&actor_type=api_key", 500).await;
    assert_eq!(reads.len(), 3);
    let one_by_one = trail(&app, &owner, "operation=timeseries_list", 1).await;
    let ids = |v: &[Value]| v.iter().map(|e| e["id"].clone()).collect::<Vec<_>>();
    assert_eq!(ids(&one_by_one), ids(&reads));
    let r = app.get("/api/v1/developer/audit?actor_type=robot", &owner).await;
    r.assert_invalid(&["query", "actor_type"], "enum");
    // Never a secret.
    let everything = trail(&app, &owner, "", 500).await;
    assert!(!serde_json::to_string(&everything).unwrap_or_default().contains(&secret));
    // The login and the key's making are developer actions on record.
    let ops: Vec<&str> = everything.iter().filter_map(|e| e["operation"].as_str()).collect();
    assert!(ops.contains(&"auth_login") && ops.contains(&"api_keys_create"), "{ops:?}");

    // Deleting the user keeps the trail, the deletion included.
    let r = app.call(Method::DELETE, &format!("/api/v1/users/{ada}"), &owner, None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let after = settled(&app, &owner, &format!("user_id={ada}"), 6).await;
    assert_eq!(after.len(), 6);
    assert_eq!(after[0]["operation"], "users_delete");
}

fn urlencode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// Waits until `/health` says the trail is `state`.
async fn trail_is(app: &TestApp, state: &str) -> Value {
    for _ in 0..50 {
        let r = app.get("/health", &Auth::None).await;
        if r.body["audit"] == state {
            return r.body;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the trail never became {state}");
}

#[tokio::test]
async fn health_data_is_refused_while_the_trail_cannot_be_written() {
    let app = TestApp::spawn().await;
    let owner = app.admin().await;
    let user = app.user(&owner, json!({})).await;
    let db = app.db().await;
    db.batch_execute("alter table audit_events rename to audit_events_away").await.expect("rename");
    // Served: the trail was fine when it came; its record waits in memory.
    let r = app.get(&format!("/api/v1/users/{user}"), &owner).await;
    assert_eq!(r.status, 200);
    let health = trail_is(&app, "unwritable").await;
    assert_eq!(health["status"], "degraded");
    let r = app.get(&format!("/api/v1/users/{user}/timeseries"), &owner).await;
    r.assert_error(503, "The audit trail cannot be written: requests are refused until it can");
    assert!(r.headers.contains_key("retry-after"));
    let sdk = app.post(&format!("/api/v1/users/{user}/token"), &owner, json!({})).await;
    assert_eq!(sdk.status, 503);
    assert_eq!(app.get("/health", &Auth::None).await.status, 503);

    db.batch_execute("alter table audit_events_away rename to audit_events").await.expect("back");
    trail_is(&app, "ok").await;
    let r = app.get(&format!("/api/v1/users/{user}"), &owner).await;
    assert_eq!(r.status, 200);
    // What was held is written: the read served before the refusal is on record.
    let events = settled(&app, &owner, &format!("user_id={user}&operation=users_get"), 2).await;
    assert_eq!(events.len(), 2, "{events:#?}");
}

#[tokio::test]
async fn the_trail_expires_after_its_retention_and_can_be_off() {
    let app = TestApp::spawn().await;
    let db = app.db().await;
    db.batch_execute(
        "insert into audit_events (at, id, actor_kind, operation, status)
         values (now() - interval '500 days', gen_random_uuid(), 4, 'auth_login', 401),
                (now() - interval '401 days', gen_random_uuid(), 4, 'auth_login', 401),
                (now() - interval '399 days', gen_random_uuid(), 4, 'auth_login', 401)",
    )
    .await
    .expect("old events");
    let pool = schema::Db::connect(&app.settings.database_url, 1).await.expect("pool");
    schema::audit::expire(&pool, 400, 1000).await.expect("expire");
    let left =
        app.count("select count(*) from audit_events where at < now() - interval '300 days'").await;
    assert_eq!(left, 1);

    let off = TestApp::spawn_with(crate::util::Mode::ApiOnly, |s| s.audit_trail = false).await;
    let health = off.get("/health", &Auth::None).await;
    assert_eq!(health.body["audit"], "off");
    let owner = off.admin().await;
    off.user(&owner, json!({})).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(off.count("select count(*) from audit_events").await, 0);
}
