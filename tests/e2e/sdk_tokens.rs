//! SDK user tokens: issued for a user, refreshed with rotation, revoked.

use serde_json::json;
use uuid::Uuid;

use crate::util::{Auth, TestApp};

#[tokio::test]
async fn issue_refresh_revoke() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({"email": "u@example.com"})).await;

    let issued = app.post(&format!("/api/v1/users/{user}/token"), &key, json!({})).await;
    assert_eq!(issued.status, 200, "{}", issued.body);
    assert_eq!(issued.body["token_type"], "bearer");
    assert_eq!(issued.body["user_id"], user.as_str());
    assert_eq!(issued.body["expires_in"], 3600);
    let refresh = issued.str("refresh_token");
    assert!(refresh.starts_with("rt-"));

    // A developer token may issue too.
    let admin = app.admin().await;
    assert_eq!(
        app.post(&format!("/api/v1/users/{user}/token"), &admin, json!({})).await.status,
        200
    );

    // Refresh rotates: a new pair, and the old refresh token works no more.
    let refreshed =
        app.post("/api/v1/token/refresh", &Auth::None, json!({"refresh_token": refresh})).await;
    assert_eq!(refreshed.status, 200, "{}", refreshed.body);
    let next = refreshed.str("refresh_token");
    assert_ne!(next, refresh);
    assert!(!refreshed.str("access_token").is_empty());
    let again =
        app.post("/api/v1/token/refresh", &Auth::None, json!({"refresh_token": refresh})).await;
    again.assert_error(401, "Invalid or revoked refresh token");
    assert_eq!(again.headers["www-authenticate"], "Bearer");

    // The SDK token is no developer credential.
    let sdk = Auth::Bearer(refreshed.str("access_token"));
    app.get("/api/v1/developer/api-keys", &sdk)
        .await
        .assert_error(401, "SDK tokens cannot access this endpoint");

    // The old token presented again: someone holds a copy, so the token it was exchanged for
    // is revoked too (the family). Another family of the same user is untouched.
    app.post("/api/v1/token/refresh", &Auth::None, json!({"refresh_token": next}))
        .await
        .assert_error(401, "Invalid or revoked refresh token");
    let other = app.post(&format!("/api/v1/users/{user}/token"), &key, json!({})).await;
    let other = other.str("refresh_token");
    let r = app.post("/api/v1/token/refresh", &Auth::None, json!({"refresh_token": other})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let next = r.str("refresh_token");

    // Revoke (sign-out).
    let r = app.post("/api/v1/token/revoke", &Auth::None, json!({"refresh_token": next})).await;
    assert_eq!(r.status, 204, "{}", r.body);
    app.post("/api/v1/token/revoke", &Auth::None, json!({"refresh_token": next}))
        .await
        .assert_error(404, "Refresh token not found");
    app.post("/api/v1/token/refresh", &Auth::None, json!({"refresh_token": next}))
        .await
        .assert_error(401, "Invalid or revoked refresh token");
}

#[tokio::test]
async fn issuing_needs_credentials_and_a_user() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let missing = Uuid::new_v4();
    app.post(&format!("/api/v1/users/{missing}/token"), &key, json!({}))
        .await
        .assert_error(404, &format!("User with ID: {missing} not found."));
    app.post("/api/v1/users/123/token", &key, json!({}))
        .await
        .assert_error(400, "Input should be a valid UUID");
    let user = app.user(&key, json!({})).await;
    app.post(&format!("/api/v1/users/{user}/token"), &Auth::None, json!({}))
        .await
        .assert_error(401, "Authentication required: provide JWT token or API key");
    app.post("/api/v1/token/refresh", &Auth::None, json!({}))
        .await
        .assert_invalid(&["body", "refresh_token"], "missing");
}

#[tokio::test]
async fn deleting_a_user_ends_their_refresh_tokens() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let admin = app.admin().await;
    let user = app.user(&key, json!({})).await;
    let issued = app.post(&format!("/api/v1/users/{user}/token"), &key, json!({})).await;
    let r = app.call(reqwest::Method::DELETE, &format!("/api/v1/users/{user}"), &admin, None).await;
    assert_eq!(r.status, 200);
    refused(&app, &issued.str("refresh_token")).await;
}

/// A refresh token lives SDK_REFRESH_TOKEN_DAYS unused; each refresh starts the count again.
#[tokio::test]
async fn refresh_tokens_expire() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let issued = app.post(&format!("/api/v1/users/{user}/token"), &key, json!({})).await;
    let db = app.db().await;
    let days: f64 = db
        .query_one(
            "select extract(epoch from expires_at - now())::float8 / 86400 from sdk_refresh_tokens",
            &[],
        )
        .await
        .expect("expiry")
        .get(0);
    assert!((89.9..=90.0).contains(&days), "{days}");
    db.execute("update sdk_refresh_tokens set expires_at = now() - interval '1 second'", &[])
        .await
        .expect("age the token");
    refused(&app, &issued.str("refresh_token")).await;
}

/// Asserts that refreshing with `token` is refused.
async fn refused(app: &TestApp, token: &str) {
    app.post("/api/v1/token/refresh", &Auth::None, json!({"refresh_token": token}))
        .await
        .assert_error(401, "Invalid or revoked refresh token");
}
