//! The role and scope matrix: every operation of the served OpenAPI document, called by a
//! developer of each role and by keys of each scope, answers as the document's `x-access`
//! says (403 naming what is missing, or not refused); and every operation about a user is on
//! the audit trail afterwards.

use std::collections::BTreeSet;

use reqwest::Method;
use serde_json::{Value, json};

use crate::team::member;
use crate::util::{Auth, TestApp};

/// A caller of the matrix.
struct Caller {
    name: &'static str,
    auth: Auth,
    /// A developer's role, or a key's scopes.
    role: Option<&'static str>,
    scopes: &'static [&'static str],
}

impl Caller {
    fn allowed(&self, access: &Value) -> bool {
        match self.role {
            Some(role) => access["roles"].as_array().is_some_and(|r| r.contains(&json!(role))),
            None => access["scope"].as_str().is_some_and(|s| self.scopes.contains(&s)),
        }
    }
}

async fn key(app: &TestApp, owner: &Auth, scopes: &[&str]) -> Auth {
    let r = app
        .post("/api/v1/developer/api-keys", owner, json!({"name": "matrix", "scopes": scopes}))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["scopes"], json!(scopes));
    Auth::Key(r.str("key"))
}

/// A path of the document with its parameters filled: the user's id, a provider, an import's
/// platform and store; any other id a fresh one (nothing found, nothing changed).
fn filled(path: &str, user: &str) -> String {
    let mut out = String::new();
    let mut rest = path;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..].find('}').map_or(rest.len(), |c| open + c);
        out.push_str(match &rest[open + 1..close] {
            "user_id" => user,
            "provider" => "garmin",
            "platform" => "apple",
            "store" => "s3",
            "token" => "not-a-link",
            _ => "0190b8c2-0000-7000-8000-000000000000",
        });
        rest = &rest[(close + 1).min(rest.len())..];
    }
    out.push_str(rest);
    out
}

/// The status of a call, without reading the body (a live stream never ends).
async fn status(app: &TestApp, method: &Method, path: &str, auth: &Auth) -> u16 {
    let mut req = auth.apply(app.http.request(method.clone(), app.url(path)));
    if [Method::POST, Method::PUT, Method::PATCH].contains(method) {
        req = req.json(&json!({}));
    }
    req.send().await.expect("request").status().as_u16()
}

#[tokio::test]
async fn every_operation_answers_each_role_and_scope_as_the_document_says() {
    let app = TestApp::spawn().await;
    let owner = app.admin().await;
    let user = app.user(&owner, json!({"email": "ada@example.com"})).await;
    let callers = vec![
        Caller {
            name: "admin",
            auth: member(&app, &owner, "bob@acme.example", "admin").await,
            role: Some("admin"),
            scopes: &[],
        },
        Caller {
            name: "viewer",
            auth: member(&app, &owner, "cyd@acme.example", "viewer").await,
            role: Some("viewer"),
            scopes: &[],
        },
        Caller {
            name: "read key",
            auth: key(&app, &owner, &["read"]).await,
            role: None,
            scopes: &["read"],
        },
        Caller {
            name: "write key",
            auth: key(&app, &owner, &["write"]).await,
            role: None,
            scopes: &["write"],
        },
        Caller {
            name: "sdk key",
            auth: key(&app, &owner, &["sdk"]).await,
            role: None,
            scopes: &["sdk"],
        },
        Caller { name: "owner", auth: owner.clone(), role: Some("owner"), scopes: &[] },
    ];
    let doc = app.get("/openapi.json", &Auth::None).await.body;
    let mut about_the_user = BTreeSet::new();
    let mut checked = 0;
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().expect("path item") {
            let Ok(method) = method.to_uppercase().parse::<Method>() else { continue };
            let access = &op["x-access"];
            let id = op["operationId"].as_str().unwrap_or_default();
            if access.is_null() {
                // Public, or guarded by a secret of its own (bucket events).
                let credentials = op["security"].as_array().is_some_and(|reqs| {
                    reqs.iter().any(|r| r.get("api_key").is_some() || r.get("bearer").is_some())
                });
                assert!(!credentials, "{id} takes credentials and states no access");
                continue;
            }
            // The key scope is stated on the `api_key` requirement too.
            if let Some(scope) = access["scope"].as_str() {
                let stated = op["security"].as_array().is_some_and(|reqs| {
                    reqs.iter().any(|r| r.get("api_key") == Some(&json!([scope])))
                        || reqs.iter().all(|r| r.get("api_key").is_none())
                });
                assert!(stated, "{id}: the api_key requirement does not name '{scope}'");
            }
            if path.contains("{user_id}") {
                about_the_user.insert(id.to_string());
            }
            let target = filled(path, &user);
            for caller in &callers {
                let got = status(&app, &method, &target, &caller.auth).await;
                if caller.allowed(access) {
                    assert!(
                        got != 403 && got != 401,
                        "{id} ({method} {target}) refused the {}: {got}",
                        caller.name
                    );
                } else {
                    // Keys on operations only developers may call are refused as before: 401.
                    let key_refused = caller.role.is_none() && got == 401;
                    assert!(
                        got == 403 || key_refused,
                        "{id} ({method} {target}) let the {} through: {got}",
                        caller.name
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 400, "only {checked} calls: the document lost its operations");
    assert!(about_the_user.len() > 30, "{about_the_user:?}");

    // Every operation about the user is on record (within the writer's fraction of a second).
    let mut missing = Vec::new();
    for _ in 0..20 {
        let recorded = recorded_operations(&app, &owner, &user).await;
        missing = about_the_user.difference(&recorded).cloned().collect();
        if missing.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    assert!(missing.is_empty(), "not on the trail: {missing:?}");
}

/// The operations the trail holds about `user`, read page by page.
async fn recorded_operations(app: &TestApp, owner: &Auth, user: &str) -> BTreeSet<String> {
    let mut recorded = BTreeSet::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut path = format!("/api/v1/developer/audit?user_id={user}&limit=500");
        if let Some(c) = &cursor {
            path.push_str(&format!("&cursor={c}"));
        }
        let page = app.get(&path, owner).await;
        assert_eq!(page.status, 200, "{}", page.body);
        for e in page.body["data"].as_array().expect("data") {
            assert_eq!(e["user_id"], json!(user));
            recorded.insert(e["operation"].as_str().unwrap_or_default().to_string());
        }
        cursor = page.body["pagination"]["next_cursor"].as_str().map(str::to_string);
        if cursor.is_none() {
            return recorded;
        }
    }
}
