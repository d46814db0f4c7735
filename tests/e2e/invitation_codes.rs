//! Invitation codes (issue 32): an integrator makes a code for a user, the user's app redeems it
//! for SDK tokens once; a new code revokes the older one; expired codes fail; wrong codes are
//! throttled per address and per code prefix, and every failure reads the same.

use serde_json::json;
use uuid::Uuid;

use crate::fixtures::{body, rec, watch};
use crate::util::{Auth, Mode, TestApp};

const INVALID: &str = "Invalid or expired invitation code";

async fn redeem(app: &TestApp, code: &str) -> crate::util::Resp {
    app.post("/api/v1/invitation-code/redeem", &Auth::None, json!({ "code": code })).await
}

#[tokio::test]
async fn a_code_is_redeemed_once_for_working_sdk_tokens() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({"email": "u@example.com"})).await;

    let made = app.post(&format!("/api/v1/users/{user}/invitation-code"), &key, json!({})).await;
    assert_eq!(made.status, 201, "{}", made.body);
    let code = made.str("code");
    assert_eq!(code.len(), 8);
    assert!(code.bytes().all(|b| b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789".contains(&b)), "{code}");
    assert_eq!(made.body["user_id"], user.as_str());
    let (created, expires) = (made.str("created_at"), made.str("expires_at"));
    let lived = chrono::DateTime::parse_from_rfc3339(&expires).expect("expires_at")
        - chrono::DateTime::parse_from_rfc3339(&created).expect("created_at");
    assert_eq!(lived.num_minutes(), 24 * 60, "a day by default");
    // Stored hashed: the table does not hold the code.
    let clear = app
        .count(&format!("select count(*) from invitation_codes where code_hash = '{code}'::bytea"))
        .await;
    assert_eq!(clear, 0);

    let r = redeem(&app, &code).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["user_id"], user.as_str());
    assert_eq!(r.body["token_type"], "bearer");
    // The tokens are the user's: the access token sends data, the refresh token rotates.
    let sdk = Auth::Bearer(r.str("access_token"));
    let steps = rec(
        "StepCount",
        "2026-03-20T07:00:00Z",
        "2026-03-20T07:10:00Z",
        640.0,
        "count",
        None,
        &watch(),
    );
    app.sync_and_wait(&user, &sdk, &body(vec![steps], vec![], vec![])).await;
    assert_eq!(app.count("select count(*) from samples").await, 1, "sent with the redeemed token");
    let refresh = r.str("refresh_token");
    let rotated =
        app.post("/api/v1/token/refresh", &Auth::None, json!({"refresh_token": refresh})).await;
    assert_eq!(rotated.status, 200, "{}", rotated.body);

    // Once only.
    redeem(&app, &code).await.assert_error(404, INVALID);

    // A developer may make codes too; an unknown user is the contract's 404.
    let admin = app.admin().await;
    let by_dev =
        app.post(&format!("/api/v1/users/{user}/invitation-code"), &admin, json!({})).await;
    assert_eq!(by_dev.status, 201, "{}", by_dev.body);
    let missing = Uuid::new_v4();
    app.post(&format!("/api/v1/users/{missing}/invitation-code"), &key, json!({}))
        .await
        .assert_error(404, &format!("User with ID: {missing} not found."));
    let anonymous =
        app.post(&format!("/api/v1/users/{user}/invitation-code"), &Auth::None, json!({})).await;
    assert_eq!(anonymous.status, 401, "{}", anonymous.body);
}

#[tokio::test]
async fn a_new_code_revokes_the_old_and_codes_expire() {
    let app = TestApp::spawn_with(Mode::ApiOnly, |_| {}).await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let make = || async {
        app.post(&format!("/api/v1/users/{user}/invitation-code"), &key, json!({}))
            .await
            .str("code")
    };
    let first = make().await;
    let second = make().await;
    assert_ne!(first, second);
    redeem(&app, &first).await.assert_error(404, INVALID);

    // Past its expiry (set back in the table), the live code fails like a wrong one.
    let db = app.db().await;
    db.execute(
        "update invitation_codes set expires_at = now() - interval '1 second'
         where redeemed_at is null and revoked_at is null",
        &[],
    )
    .await
    .expect("expire");
    redeem(&app, &second).await.assert_error(404, INVALID);

    // A user's deletion takes their codes with it.
    let third = make().await;
    let admin = app.admin().await;
    let r = app.call(reqwest::Method::DELETE, &format!("/api/v1/users/{user}"), &admin, None).await;
    assert!(r.status < 300, "{}", r.body);
    assert_eq!(app.count("select count(*) from invitation_codes").await, 0);
    redeem(&app, &third).await.assert_error(404, INVALID);
}

#[tokio::test]
async fn a_code_must_have_a_codes_shape() {
    let app = TestApp::spawn_with(Mode::ApiOnly, |_| {}).await;
    for bad in ["k7pq2mxa", "K7PQ2MX", "K7PQ2MX01", "K7PQ-2MX"] {
        redeem(&app, bad).await.assert_invalid(&["body", "code"], "string_pattern_mismatch");
    }
    let r = app.post("/api/v1/invitation-code/redeem", &Auth::None, json!({})).await;
    r.assert_invalid(&["body", "code"], "missing");
}

/// Wrong codes are counted per address and per code prefix: past either limit, 429 with
/// `Retry-After`, even for a good code, before the database is asked.
#[tokio::test]
async fn wrong_codes_are_throttled_per_address_and_per_prefix() {
    let app = TestApp::spawn_with(Mode::ApiOnly, |s| {
        s.redeem_max_failures_per_address = 4;
        s.redeem_max_failures_per_prefix = 3;
        s.trust_forwarded_for = true;
    })
    .await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let from = |address: &'static str, code: String| {
        let app = &app;
        async move {
            let r = app
                .http
                .post(app.url("/api/v1/invitation-code/redeem"))
                .header("x-forwarded-for", address)
                .json(&json!({ "code": code }))
                .send()
                .await
                .expect("redeem");
            let status = r.status().as_u16();
            let retry = r.headers().get("retry-after").is_some();
            (status, retry)
        }
    };
    // Three wrong codes beginning "ZZ", each from another address: the prefix is used up, and
    // a fourth address is refused for it, but not for another prefix.
    for (i, address) in ["10.0.0.1", "10.0.0.2", "10.0.0.3"].into_iter().enumerate() {
        assert_eq!(from(address, format!("ZZAAAAA{}", i + 2)).await, (404, false));
    }
    assert_eq!(from("10.0.0.4", "ZZBBBBBB".into()).await, (429, true));
    assert_eq!(from("10.0.0.4", "YYBBBBBB".into()).await.0, 404);

    // Four wrong codes from one address: even its good code waits.
    let good = app.post(&format!("/api/v1/users/{user}/invitation-code"), &key, json!({})).await;
    let good = good.str("code");
    for prefix in ["AB", "CD", "EF"] {
        assert_eq!(from("10.0.0.5", format!("{prefix}AAAAAA")).await.0, 404);
    }
    assert_eq!(from("10.0.0.5", "GHAAAAAA".into()).await.0, 404);
    assert_eq!(from("10.0.0.5", good.clone()).await, (429, true));
    // From elsewhere it works (unless its own prefix was the one used up).
    let elsewhere = from("10.0.0.6", good.clone()).await.0;
    assert!(elsewhere == 200 || good.starts_with("ZZ"), "{elsewhere}");
}
