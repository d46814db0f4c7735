//! Login, developer tokens, and how each kind of route treats each kind of credential.

use chrono::Utc;
use jsonwebtoken::{EncodingKey, Header};
use serde_json::json;
use uuid::Uuid;

use crate::util::{ADMIN_EMAIL, ADMIN_PASSWORD, Auth, SECRET_KEY, TestApp};

fn token(sub: &str, scope: &str, exp_offset: i64, secret: &str) -> String {
    let now = Utc::now().timestamp();
    let claims = json!({"sub": sub, "scope": scope, "iat": now, "exp": now + exp_offset});
    jsonwebtoken::encode(&Header::default(), &claims, &EncodingKey::from_secret(secret.as_bytes()))
        .expect("sign")
}

#[tokio::test]
async fn login_issues_a_bearer_token() {
    let app = TestApp::spawn().await;
    let r = app.login(ADMIN_EMAIL, ADMIN_PASSWORD).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["token_type"], "bearer");
    assert_eq!(r.body["expires_in"], 3600);
    let me = app.get("/api/v1/auth/me", &Auth::Bearer(r.str("access_token"))).await;
    assert_eq!(me.status, 200, "{}", me.body);
    assert_eq!(me.body["email"], ADMIN_EMAIL);

    // Email is matched without regard to case.
    let r = app.login(&ADMIN_EMAIL.to_uppercase(), ADMIN_PASSWORD).await;
    assert_eq!(r.status, 200, "{}", r.body);
}

#[tokio::test]
async fn wrong_or_malformed_logins_are_401_with_a_challenge() {
    let app = TestApp::spawn().await;
    for (email, password) in [(ADMIN_EMAIL, "wrong"), ("nobody@example.com", ADMIN_PASSWORD)] {
        let r = app.login(email, password).await;
        r.assert_error(401, "Incorrect email or password");
        assert_eq!(r.headers["www-authenticate"], "Bearer");
    }
    // A form without a password is answered like a wrong one.
    let resp = app
        .http
        .post(app.url("/api/v1/auth/login"))
        .form(&[("username", ADMIN_EMAIL)])
        .send()
        .await
        .expect("request");
    crate::util::Resp::read(resp).await.assert_error(401, "Incorrect email or password");
}

#[tokio::test]
async fn developer_routes_refuse_keys_and_bad_tokens() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let admin = app.admin().await;
    let user = app.user(&key, json!({})).await;
    let path = format!("/api/v1/users/{user}");

    // An API key is not enough to delete a user or manage keys.
    for (method, p) in [
        (reqwest::Method::DELETE, path.as_str()),
        (reqwest::Method::GET, "/api/v1/developer/api-keys"),
    ] {
        let r = app.call(method, p, &key, None).await;
        r.assert_error(401, "Could not validate credentials");
        assert_eq!(r.headers["www-authenticate"], "Bearer");
    }

    let admin_id = app.get("/api/v1/auth/me", &admin).await.str("id");
    let expired = Auth::Bearer(token(&admin_id, "developer", -3600, SECRET_KEY));
    let forged =
        Auth::Bearer(token(&admin_id, "developer", 3600, "another deployment's secret key"));
    let unknown = Auth::Bearer(token(&Uuid::new_v4().to_string(), "developer", 3600, SECRET_KEY));
    for bad in [&expired, &forged, &unknown, &Auth::Bearer("garbage".into()), &Auth::None] {
        let r = app.call(reqwest::Method::DELETE, &path, bad, None).await;
        r.assert_error(401, "Could not validate credentials");
    }

    // A user's SDK token is refused by name.
    let sdk = Auth::Bearer(token(&user, "sdk", 3600, SECRET_KEY));
    app.call(reqwest::Method::DELETE, &path, &sdk, None)
        .await
        .assert_error(401, "SDK tokens cannot access this endpoint");

    // The user survived all of that, and the developer token works.
    let r = app.call(reqwest::Method::DELETE, &path, &admin, None).await;
    assert_eq!(r.status, 200, "{}", r.body);
}

#[tokio::test]
async fn integration_routes_take_a_key_or_a_developer_token() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let admin = app.admin().await;
    for auth in [&key, &admin] {
        let r = app.get("/api/v1/users", auth).await;
        assert_eq!(r.status, 200, "{}", r.body);
    }
    // The SDKs' header name works as well.
    let Auth::Key(raw) = &key else { unreachable!() };
    let r = app.get("/api/v1/users", &Auth::Header("X-Open-Wearables-API-Key", raw.clone())).await;
    assert_eq!(r.status, 200, "{}", r.body);

    app.get("/api/v1/users", &Auth::None)
        .await
        .assert_error(401, "Authentication required: provide JWT token or API key");
    app.get("/api/v1/users", &Auth::Key("sk-00000000000000000000000000000000".into()))
        .await
        .assert_error(401, "Invalid or missing API key");
    // An expired developer token is no credential.
    let admin_id = app.get("/api/v1/auth/me", &admin).await.str("id");
    let expired = Auth::Bearer(token(&admin_id, "developer", -3600, SECRET_KEY));
    app.get("/api/v1/users", &expired)
        .await
        .assert_error(401, "Authentication required: provide JWT token or API key");
    // Credentials are checked before the path: no 400 leaks to an anonymous caller.
    app.get("/api/v1/users/not-a-uuid", &Auth::None)
        .await
        .assert_error(401, "Authentication required: provide JWT token or API key");
}

/// Failed logins are counted per account and per client address: past the limit the answer is
/// 429 with `Retry-After` (even for the right password), before any hash is computed; a
/// success clears the account's count.
#[tokio::test]
async fn repeated_login_failures_are_throttled_per_account_and_per_address() {
    let app = TestApp::spawn_with(crate::util::Mode::ApiOnly, |s| {
        s.login_max_failures_per_account = 3;
        s.login_max_failures_per_address = 6;
    })
    .await;
    let fail = |email: &'static str| {
        let app = &app;
        async move { app.login(email, "wrong password").await.status }
    };
    assert_eq!((fail(ADMIN_EMAIL).await, fail(ADMIN_EMAIL).await), (401, 401));
    assert_eq!(app.login(ADMIN_EMAIL, ADMIN_PASSWORD).await.status, 200);
    // The success cleared the account's two failures: three more are needed.
    assert_eq!((fail(ADMIN_EMAIL).await, fail(ADMIN_EMAIL).await), (401, 401));
    assert_eq!(fail(ADMIN_EMAIL).await, 401);
    let r = app.login(&ADMIN_EMAIL.to_uppercase(), ADMIN_PASSWORD).await;
    assert_eq!(r.status, 429, "{}", r.body);
    let wait: u64 = r
        .headers
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!((1..=900).contains(&wait), "{wait}");
    assert!(r.detail().starts_with("Too many failed login attempts"), "{}", r.body);

    // Six failures from this address in all: every account is refused from here on.
    assert_eq!(fail("nobody@example.com").await, 401);
    assert_eq!(fail("someone@example.com").await, 429);
}

/// The portal's session: a token is renewed within the session, which ends 12 h after its
/// login however often it was renewed.
#[tokio::test]
async fn a_session_is_renewed_until_twelve_hours_after_its_login() {
    let app = TestApp::spawn().await;
    let login = app.login(ADMIN_EMAIL, ADMIN_PASSWORD).await.str("access_token");
    let r = app.post("/api/v1/auth/refresh", &Auth::Bearer(login), json!({})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let renewed = Auth::Bearer(r.str("access_token"));
    assert_eq!(app.get("/api/v1/auth/me", &renewed).await.status, 200);

    let me = app.get("/api/v1/auth/me", &renewed).await.str("id");
    let now = Utc::now().timestamp();
    let old = json!({"sub": me, "scope": "developer", "iat": now, "exp": now + 600, "auth": now - 13 * 3600});
    let old = jsonwebtoken::encode(
        &Header::default(),
        &old,
        &EncodingKey::from_secret(SECRET_KEY.as_bytes()),
    )
    .expect("sign");
    app.post("/api/v1/auth/refresh", &Auth::Bearer(old), json!({}))
        .await
        .assert_error(401, "Session expired; log in again");
    let key = app.api_key().await;
    assert_eq!(app.post("/api/v1/auth/refresh", &key, json!({})).await.status, 401);
}

/// Changing the password ends every other session (issue 29): tokens issued before stop
/// working at once, for the API as for renewals, and the session that changed it goes on with
/// the token the change answers.
#[tokio::test]
async fn a_developer_changes_their_password_and_other_sessions_end() {
    let app = TestApp::spawn().await;
    let dev = app.admin().await;
    let other = app.admin().await;
    let key = app.api_key().await;
    let change =
        |current: &str, new: &str| json!({"current_password": current, "new_password": new});
    app.post("/api/v1/auth/password", &dev, change("wrong", "a-long-new-password"))
        .await
        .assert_error(400, "Incorrect password");
    app.post("/api/v1/auth/password", &dev, change(ADMIN_PASSWORD, "short"))
        .await
        .assert_invalid(&["body", "new_password"], "string_too_short");
    assert_eq!(
        app.get("/api/v1/auth/me", &other).await.status,
        200,
        "a failed change ends nothing"
    );
    let r = app
        .post("/api/v1/auth/password", &dev, change(ADMIN_PASSWORD, "a-long-new-password"))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["token_type"], "bearer");
    let renewed = Auth::Bearer(r.str("access_token"));
    for old in [&dev, &other] {
        app.get("/api/v1/auth/me", old).await.assert_error(401, "Could not validate credentials");
        let r = app.post("/api/v1/auth/refresh", old, json!({})).await;
        assert_eq!(r.status, 401, "{}", r.body);
        // Nor does an old token work where API keys do.
        assert_eq!(app.get("/api/v1/users", old).await.status, 401);
    }
    assert_eq!(app.get("/api/v1/auth/me", &renewed).await.status, 200);
    let r = app.post("/api/v1/auth/refresh", &renewed, json!({})).await;
    assert_eq!(r.status, 200, "this session goes on: {}", r.body);
    assert_eq!(app.get("/api/v1/users", &key).await.status, 200, "API keys are not sessions");
    assert_eq!(app.login(ADMIN_EMAIL, ADMIN_PASSWORD).await.status, 401);
    assert_eq!(app.login(ADMIN_EMAIL, "a-long-new-password").await.status, 200);
}

/// Issue 29: the login form is bounded (413 past 4 KiB), a username past 320 characters is a
/// wrong login that costs Redis nothing, and the throttle's keys are hashes of the name typed,
/// whatever its length.
#[tokio::test]
async fn login_forms_are_bounded_and_throttle_keys_are_hashes() {
    let app = TestApp::spawn_with(crate::util::Mode::ApiOnly, |s| {
        s.login_max_failures_per_account = 100;
        s.login_max_failures_per_address = 100;
    })
    .await;
    let big = "x".repeat(16 << 10);
    let r = app.login(&big, "wrong").await;
    r.assert_error(413, "The login form is too large");
    let long = format!("{}@example.com", "a".repeat(400));
    app.login(&long, "wrong").await.assert_error(401, "Incorrect email or password");
    let typed = format!("{}@example.com", "b".repeat(300));
    for _ in 0..20 {
        app.login(&typed, "wrong").await.assert_error(401, "Incorrect email or password");
    }
    let mut redis = app.redis().await;
    let pattern = format!("{}:login-failures:*", app.settings.redis_key_prefix);
    let keys: Vec<String> =
        redis::cmd("KEYS").arg(&pattern).query_async(&mut redis).await.expect("keys");
    let accounts: Vec<&String> = keys.iter().filter(|k| k.contains(":account:")).collect();
    assert_eq!(accounts.len(), 1, "the long username left no key: {keys:?}");
    let hash = accounts[0].rsplit(':').next().unwrap_or_default();
    assert_eq!(hash.len(), 64, "{keys:?}");
    assert!(keys.iter().all(|k| k.len() < 160), "{keys:?}");
}

/// The overview the portal opens on: work waiting, what was stored, the latest runs.
#[tokio::test]
async fn the_overview_says_what_the_deployment_is_doing() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    app.user(&key, json!({})).await;
    let user = app.user(&key, json!({"email": "ada@example.com"})).await;
    let body = ingest::payloads::payload(&ingest::payloads::Spec::new(
        ingest::payloads::Platform::Ios,
        50,
    ))
    .to_string();
    app.sync_and_wait(&user, &key, &body).await;
    let dev = app.admin().await;
    let r = app.get("/api/v1/developer/overview", &dev).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["batches_queued"], 0);
    assert!(r.body["samples_last_hour"].as_i64().is_some_and(|n| n > 0), "{}", r.body);
    assert_eq!(r.body["recent_runs"][0]["user_id"], user.as_str());
    assert_eq!(r.body["recent_runs"][0]["status"], "success");
    assert_eq!(r.body["recent_runs"][0]["user_email"], "ada@example.com");
    assert_eq!(r.body["users_total"], 2);
    let hours = r.body["ingest_by_hour"].as_array().cloned().unwrap_or_default();
    let stored: i64 = hours.iter().filter_map(|h| h["samples"].as_i64()).sum();
    assert_eq!(Some(stored), r.body["samples_last_hour"].as_i64(), "{}", r.body);
    assert!(hours.iter().all(|h| h["runs"].as_i64() >= Some(1)), "{}", r.body);
    assert_eq!(app.get("/api/v1/developer/overview", &key).await.status, 401, "developers only");
}
