//! Secrets at rest: what the service generates or is given is stored sealed under MASTER_KEY;
//! a legacy clear value is sealed at start; a key rotation re-seals; no key, no start.

use std::process::Stdio;
use std::time::Duration;

use schema::sealed::MasterKeys;
use serde_json::json;

use crate::util::{MASTER_KEY, Mode, TestApp};

const NEW_KEY: &str = "bmV3LW1hc3Rlci1rZXktZm9yLXJvdGF0aW9uLXRlc3Q=";

async fn stored(app: &TestApp, sql: &str) -> String {
    app.db().await.query_one(sql, &[]).await.expect(sql).get(0)
}

#[tokio::test]
async fn secrets_are_stored_sealed_and_resealed_when_the_master_key_rotates() {
    // No SECRET_KEY: the token-signing key is generated, and stored sealed.
    let app = TestApp::spawn_with(Mode::All, |s| s.secret_key = None).await;
    let admin = app.admin().await;
    let jwt = stored(&app, "select value from server_settings where key = 'jwt_secret'").await;
    assert!(jwt.starts_with("sealed:v1:"), "{jwt}");

    let r = app
        .post("/api/v1/webhooks/endpoints", &admin, json!({"url": "https://hooks.example.com/in"}))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let id = r.str("id");
    let secret =
        app.get(&format!("/api/v1/webhooks/endpoints/{id}/secret"), &admin).await.str("key");
    let column = format!("select secret from webhook_endpoints where id = '{id}'");
    let sealed = stored(&app, &column).await;
    assert!(sealed.starts_with("sealed:v1:") && !sealed.contains(&secret[6..]), "{sealed}");
    let context = format!("webhook_endpoint:{id}");
    let old = MasterKeys::new(MASTER_KEY, None).expect("key");
    assert_eq!(old.open(&context, &sealed).as_deref(), Ok(secret.as_str()));
    // Sealed for its own row: copied to another place it does not open.
    assert!(old.open("webhook_endpoint:ep_other", &sealed).is_err());

    // A value left in clear by an older version, and a rotation to a new key: a process
    // started with both keys seals everything under the new one.
    app.db()
        .await
        .execute(
            &format!(
                "update webhook_endpoints set previous_secret = 'whsec_legacy' where id = '{id}'"
            ),
            &[],
        )
        .await
        .expect("legacy value");
    let mut worker = app
        .binary(&["worker"])
        .env("MASTER_KEY", NEW_KEY)
        .env("MASTER_KEY_PREVIOUS", MASTER_KEY)
        .spawn()
        .expect("spawn a worker");
    let new = MasterKeys::new(NEW_KEY, None).expect("new key");
    let mut resealed = false;
    for _ in 0..200 {
        let now = stored(&app, &column).await;
        if new.open(&context, &now).as_deref() == Ok(secret.as_str()) {
            resealed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = worker.kill().await;
    assert!(resealed, "the endpoint secret was not sealed under the new key");
    let previous =
        stored(&app, &format!("select previous_secret from webhook_endpoints where id = '{id}'"))
            .await;
    assert_eq!(new.open(&context, &previous).as_deref(), Ok("whsec_legacy"));
    let jwt = stored(&app, "select value from server_settings where key = 'jwt_secret'").await;
    assert!(new.open("server_settings:jwt_secret", &jwt).is_ok(), "{jwt}");
    assert!(old.open("server_settings:jwt_secret", &jwt).is_err());

    // Without a master key the service does not start, and says why.
    let out = app
        .binary(&["serve", "--bind", "127.0.0.1:0"])
        .env_remove("MASTER_KEY")
        .stderr(Stdio::piped())
        .output()
        .await
        .expect("run");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("MASTER_KEY is not set"), "{stderr}");
}
