//! Delivery to real local https receivers (self-signed certificates the sender is told to
//! trust through `WEBHOOK_CA_FILE`): signatures checked by an independent implementation
//! (the `standardwebhooks` package from PyPI), failure then success with the same
//! `webhook-id`, a receiver down for the whole schedule, and ingest unaffected meanwhile;
//! over https with a trusted certificate, and refused with an untrusted one.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use serde_json::{Value, json};

use crate::fixtures::{body, watch, workout};
use crate::util::{Auth, Mode, TestApp};

/// What the receiver got: headers and raw body of each request.
type Seen = Arc<Mutex<Vec<(HeaderMap, String)>>>;

/// The receiving app: answers 500 to its first `fail_first` requests, then 204, holding its
/// first request for `hold` before answering.
fn receiver_app(fail_first: usize, hold: Duration) -> (axum::Router, Seen) {
    let seen: Seen = Arc::default();
    let count = Arc::new(AtomicUsize::new(0));
    let app = axum::Router::new()
        .route(
            "/in",
            axum::routing::post(
                move |State((seen, count)): State<(Seen, Arc<AtomicUsize>)>,
                      headers: HeaderMap,
                      body: String| async move {
                    if let Ok(mut s) = seen.lock() {
                        s.push((headers, body));
                    }
                    let n = count.fetch_add(1, Ordering::SeqCst);
                    if n == 0 {
                        tokio::time::sleep(hold).await;
                    }
                    if n < fail_first {
                        StatusCode::INTERNAL_SERVER_ERROR
                    } else {
                        StatusCode::NO_CONTENT
                    }
                },
            ),
        )
        .with_state((seen.clone(), count));
    (app, seen)
}

/// `receiver_app` over plain http on 127.0.0.1.
async fn receiver_with(fail_first: usize, hold: Duration) -> (String, Seen) {
    let (app, seen) = receiver_app(fail_first, hold);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/in", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, seen)
}

/// `receiver_app` over https at `localhost`, with a fresh self-signed certificate; returns its
/// URL, what it saw, and the certificate's PEM (for the sender to trust, or not).
async fn tls_receiver(fail_first: usize, hold: Duration) -> (String, Seen, String) {
    let (app, seen) = receiver_app(fail_first, hold);
    let issued = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).expect("cert");
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(issued.key_pair.serialize_der().into());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(vec![issued.cert.der().clone()], key)
        .expect("server certificate");
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, app) = (acceptor.clone(), app.clone());
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else { return };
                let service = hyper_util::service::TowerToHyperService::new(app);
                let _ = hyper_util::server::conn::auto::Builder::new(
                    hyper_util::rt::TokioExecutor::new(),
                )
                .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                .await;
            });
        }
    });
    (format!("https://localhost:{port}/in"), seen, issued.cert.pem())
}

async fn wait_for(seen: &Seen, n: usize) -> Vec<(HeaderMap, String)> {
    for _ in 0..400 {
        let got = seen.lock().map(|s| s.clone()).unwrap_or_default();
        if got.len() >= n {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the receiver did not get {n} requests");
}

/// Waits until the receiver got message `id` (its `webhook-id`) `n` times.
async fn wait_for_message(seen: &Seen, id: &str, n: usize) {
    for _ in 0..200 {
        let got = seen.lock().map(|s| s.clone()).unwrap_or_default();
        let times = got
            .iter()
            .filter(|(h, _)| h.get("webhook-id").and_then(|v| v.to_str().ok()) == Some(id))
            .count();
        if times >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the receiver did not get message {id} {n} time(s)");
}

/// Verifies with the `standardwebhooks` package; returns its verdict.
async fn python_verifies(secret: &str, headers: &HeaderMap, body: &str) -> bool {
    let h = |k: &str| headers.get(k).and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    let input = json!({"secret": secret, "body": body, "headers": {
        "webhook-id": h("webhook-id"), "webhook-timestamp": h("webhook-timestamp"),
        "webhook-signature": h("webhook-signature")}});
    let script = "import json,sys\nfrom standardwebhooks.webhooks import Webhook\n\
                  d=json.load(sys.stdin)\nWebhook(d['secret']).verify(d['body'], d['headers'])\nprint('verified')";
    let mut child = tokio::process::Command::new("python3")
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python3");
    if let Some(mut stdin) = child.stdin.take() {
        use tokio::io::AsyncWriteExt;
        stdin.write_all(input.to_string().as_bytes()).await.expect("stdin");
    }
    let out = child.wait_with_output().await.expect("python3 output");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() || stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    stdout.trim() == "verified"
}

async fn endpoint(app: &TestApp, admin: &Auth, url: &str) -> (String, String) {
    let r = app
        .post(
            "/api/v1/webhooks/endpoints",
            admin,
            json!({"url": url, "filter_types": ["workout.created"]}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let id = r.str("id");
    let secret =
        app.get(&format!("/api/v1/webhooks/endpoints/{id}/secret"), admin).await.str("key");
    (id, secret)
}

/// A run on the evening of 2026-03-`day`.
fn run(id: &str, day: u32) -> String {
    let (start, end) =
        (format!("2026-03-{day:02}T18:00:00Z"), format!("2026-03-{day:02}T18:30:00Z"));
    let w = workout(id, "running", &start, &end, 300.0, 5000.0, "+02:00", &watch());
    body(vec![], vec![w], vec![])
}

/// The delivery status of the endpoint's one delivery, once it is `want` (or after 5 s).
async fn delivery_status(app: &TestApp, endpoint_id: &str, want: i16) -> i16 {
    let db = app.db().await;
    let mut status = -1;
    for _ in 0..100 {
        status = db
            .query_one(
                "select status from webhook_deliveries where endpoint_id = $1",
                &[&endpoint_id],
            )
            .await
            .expect("delivery")
            .get(0);
        if status == want {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    status
}

/// A service, a developer, a user, and an endpoint for workouts at a local https receiver
/// (its certificate trusted through `WEBHOOK_CA_FILE`) that fails its first `fail_first`
/// requests, holding the first for `hold`.
struct Setup {
    app: TestApp,
    admin: Auth,
    key: Auth,
    user: String,
    endpoint_id: String,
    secret: String,
    seen: Seen,
}

async fn setup(
    mode: Mode,
    configure: impl FnOnce(&mut wearhouse::config::Settings),
    fail_first: usize,
    hold: Duration,
) -> Setup {
    let (url, seen, pem) = tls_receiver(fail_first, hold).await;
    let ca = std::env::temp_dir().join(format!("wearhouse-test-ca-{}.pem", uuid::Uuid::new_v4()));
    std::fs::write(&ca, pem).expect("write the CA file");
    let app = TestApp::spawn_with(mode, |s| {
        s.webhook_ca_file = Some(ca);
        configure(s);
    })
    .await;
    let admin = app.admin().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let (endpoint_id, secret) = endpoint(&app, &admin, &url).await;
    Setup { app, admin, key, user, endpoint_id, secret, seen }
}

#[tokio::test]
async fn signed_deliveries_retried_with_the_same_id_until_accepted() {
    let Setup { app, admin, key, user, endpoint_id, secret, seen } =
        setup(Mode::All, |_| {}, 1, Duration::ZERO).await;

    app.sync_and_wait(&user, &key, &run("W-1", 10)).await;
    let got = wait_for(&seen, 2).await;
    let (first, second) = (&got[0], &got[1]);
    let id =
        |h: &HeaderMap| h.get("webhook-id").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    assert!(id(&first.0).starts_with("msg_"));
    assert_eq!(id(&first.0), id(&second.0), "the same webhook-id on the retry");
    let payload: Value = serde_json::from_str(&second.1).expect("json body");
    assert_eq!(payload["type"], "workout.created");
    assert_eq!(payload["data"]["user_id"], user.as_str());
    assert_eq!(payload["data"]["type"], "running");
    assert!(
        python_verifies(&secret, &second.0, &second.1).await,
        "standardwebhooks rejects our signature"
    );
    // A tampered body does not verify: the check is real.
    assert!(!python_verifies(&secret, &second.0, &second.1.replace("running", "walking")).await);

    // The history: a failed attempt, then a success.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let db = app.db().await;
    let rows = db
        .query(
            "select status, response_status_code from webhook_attempts where endpoint_id = $1 order by created_at",
            &[&endpoint_id],
        )
        .await
        .expect("attempts");
    let history: Vec<(i16, i32)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(history, [(2, 500), (0, 204)]);
    let status: i16 = db
        .query_one("select status from webhook_deliveries where endpoint_id = $1", &[&endpoint_id])
        .await
        .expect("delivery")
        .get(0);
    assert_eq!(status, 0);

    // The attempt history, Svix-shaped, newest first, with filters and iterators.
    let attempts = format!("/api/v1/webhooks/endpoints/{endpoint_id}/attempts");
    let r = app.get(&attempts, &admin).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let a = &r.body["data"];
    assert_eq!(a.as_array().map(Vec::len), Some(2), "{}", r.body);
    assert_eq!((a[0]["status"].clone(), a[0]["statusText"].clone()), (json!(0), json!("success")));
    assert_eq!(a[1]["responseStatusCode"], 500);
    assert_eq!(a[0]["msgId"], id(&first.0).as_str());
    assert_eq!(a[0]["msg"]["eventType"], "workout.created");
    assert_eq!(a[0]["msg"]["channels"], json!([format!("user.{user}")]));
    assert_eq!(a[0]["msg"]["payload"]["data"]["type"], "running");
    assert_eq!(r.body["done"], true);
    let r = app.get(&format!("{attempts}?status=2"), &admin).await;
    assert_eq!(r.body["data"].as_array().map(Vec::len), Some(1));
    let r = app.get(&format!("{attempts}?event_types=sleep.created"), &admin).await;
    assert_eq!(r.body["data"], json!([]));
    let p1 = app.get(&format!("{attempts}?limit=1"), &admin).await;
    assert_eq!(p1.body["done"], false);
    let it = p1.body["iterator"].as_str().unwrap_or("").to_string();
    let p2 = app.get(&format!("{attempts}?limit=1&iterator={it}"), &admin).await;
    assert_eq!(p2.body["data"][0]["status"], 2);
    assert_eq!(p2.body["done"], true);
    let back = p2.body["prevIterator"].as_str().unwrap_or("").to_string();
    let p0 = app.get(&format!("{attempts}?limit=1&iterator={back}"), &admin).await;
    assert_eq!(p0.body["data"][0]["id"], p1.body["data"][0]["id"]);
    app.get(&format!("{attempts}?limit=251"), &admin)
        .await
        .assert_invalid(&["query", "limit"], "less_than_equal");
    app.get(&format!("{attempts}?status=4"), &admin)
        .await
        .assert_invalid(&["query", "status"], "less_than_equal");
    assert_eq!(app.get("/api/v1/webhooks/endpoints/ep_nope/attempts", &admin).await.status, 404);

    let r = app.get("/api/v1/webhooks/messages", &admin).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(
        r.body["data"]
            .as_array()
            .is_some_and(|m| m.iter().any(|m| m["eventType"] == "workout.created"))
    );

    // A test event: to this endpoint only, signed like any other.
    let r = app
        .post(&format!("/api/v1/webhooks/endpoints/{endpoint_id}/test"), &admin, json!({}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["message"], "Test event sent successfully.");
    let test_id = r.str("message_id");
    let got = wait_for(&seen, 3).await;
    assert_eq!(id(&got[2].0), test_id);
    assert!(python_verifies(&secret, &got[2].0, &got[2].1).await);

    // The endpoint's own messages, newest first, each with its payload and its delivery here.
    let own = format!("/api/v1/webhooks/endpoints/{endpoint_id}/messages");
    let mut r = app.get(&own, &admin).await;
    for _ in 0..50 {
        if r.body["data"][0]["statusText"] == "success" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        r = app.get(&own, &admin).await;
    }
    assert_eq!(r.status, 200, "{}", r.body);
    let m = &r.body["data"];
    assert_eq!(m.as_array().map(Vec::len), Some(2), "{}", r.body);
    assert_eq!(
        (m[0]["id"].clone(), m[0]["statusText"].clone()),
        (json!(test_id), json!("success"))
    );
    assert_eq!(m[1]["eventType"], "workout.created");
    assert_eq!((m[1]["status"].clone(), m[1]["attempts"].clone()), (json!(0), json!(2)));
    assert_eq!(m[1]["payload"]["data"]["type"], "running");
    assert_eq!(m[1]["channels"], json!([format!("user.{user}")]));
    let p1 = app.get(&format!("{own}?limit=1"), &admin).await;
    assert_eq!(p1.body["done"], false);
    let it = p1.body["iterator"].as_str().unwrap_or("").to_string();
    let p2 = app.get(&format!("{own}?limit=1&iterator={it}"), &admin).await;
    assert_eq!(
        (p2.body["data"][0]["id"].clone(), p2.body["done"].clone()),
        (m[1]["id"].clone(), json!(true))
    );
    let r = app.get(&format!("{own}?event_types=sleep.created"), &admin).await;
    assert_eq!(r.body["data"], json!([]));
    // Another endpoint has none of them; an unknown one is 404.
    let other = app
        .post(
            "/api/v1/webhooks/endpoints",
            &admin,
            json!({"url": "https://hooks.example.com/other"}),
        )
        .await
        .str("id");
    let r = app.get(&format!("/api/v1/webhooks/endpoints/{other}/messages"), &admin).await;
    assert_eq!(r.body["data"], json!([]), "{}", r.body);
    assert_eq!(app.get("/api/v1/webhooks/endpoints/ep_nope/messages", &admin).await.status, 404);

    // After a rotation both secrets verify, for 24 hours: receivers switch without a gap.
    let rotate = format!("/api/v1/webhooks/endpoints/{endpoint_id}/secret/rotate");
    let new_secret = app.post(&rotate, &admin, json!({})).await.str("key");
    let test = format!("/api/v1/webhooks/endpoints/{endpoint_id}/test");
    let r = app.post(&test, &admin, json!({"event_type": "sleep.created"})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let got = wait_for(&seen, 4).await;
    let (h, b) = &got[3];
    assert!(b.contains("sleep.created"));
    let signatures = h.get("webhook-signature").and_then(|v| v.to_str().ok()).unwrap_or("");
    assert_eq!(signatures.split(' ').count(), 2, "{signatures}");
    assert!(python_verifies(&new_secret, h, b).await);
    assert!(python_verifies(&secret, h, b).await);
    assert!(!python_verifies(&webhooks::sign::new_secret(), h, b).await);

    let r = app
        .post(
            &format!("/api/v1/webhooks/endpoints/{endpoint_id}/test"),
            &admin,
            json!({"event_type": "nope"}),
        )
        .await;
    r.assert_invalid(&["body", "event_type"], "enum");
}

#[tokio::test]
async fn a_receiver_down_for_the_whole_schedule_fails_the_message_and_ingest_goes_on() {
    let Setup { app, admin, key, user, endpoint_id, seen, .. } =
        setup(Mode::All, |_| {}, usize::MAX, Duration::ZERO).await;

    app.sync_and_wait(&user, &key, &run("W-2", 10)).await;
    // The test schedule: the first attempt and three retries.
    let got = wait_for(&seen, 4).await;
    let ids: Vec<_> = got.iter().map(|(h, _)| h.get("webhook-id").cloned()).collect();
    assert!(ids.windows(2).all(|w| w[0] == w[1]));
    let status = delivery_status(&app, &endpoint_id, 2).await;
    assert_eq!(status, 2, "failed after the last retry");
    assert_eq!(
        app.count(&format!(
            "select count(*) from webhook_attempts where endpoint_id = '{endpoint_id}'"
        ))
        .await,
        4
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(seen.lock().map(|s| s.len()).unwrap_or_default(), 4, "nothing after the last retry");
    let r = app
        .get(&format!("/api/v1/webhooks/endpoints/{endpoint_id}/attempts?status=2"), &admin)
        .await;
    assert_eq!(r.body["data"].as_array().map(Vec::len), Some(4), "failed in the attempt history");

    // Recovering the failed messages sends them again, with a fresh schedule.
    let since = (chrono::Utc::now() - chrono::Duration::hours(1)).to_rfc3339();
    let r = app
        .post(
            &format!("/api/v1/webhooks/endpoints/{endpoint_id}/recover"),
            &admin,
            json!({ "since": since }),
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.body);
    assert_eq!(r.body["recovered"], 1);
    wait_for(&seen, 5).await;

    // Meanwhile ingest is unaffected: another batch is stored as usual.
    app.sync_and_wait(&user, &key, &run("W-3", 11)).await;
    assert_eq!(app.count("select count(*) from workouts").await, 2);
}

#[tokio::test]
async fn a_sender_killed_mid_delivery_loses_no_message() {
    // The first request is held for a minute: the worker is killed while it waits.
    let Setup { app, key, user, endpoint_id, seen, .. } =
        setup(Mode::ApiOnly, |s| s.webhook_timeout_seconds = 3, 0, Duration::from_secs(60)).await;

    let mut first = app.binary(&["worker"]).spawn().expect("spawn a worker");
    let r = app.sync(&user, &key, &run("W-4", 12)).await;
    assert_eq!(r.status, 202, "{}", r.body);
    let got = wait_for(&seen, 1).await;
    first.start_kill().expect("kill");
    let _ = first.wait().await;
    let db = app.db().await;
    let status: i16 = db
        .query_one("select status from webhook_deliveries where endpoint_id = $1", &[&endpoint_id])
        .await
        .expect("delivery")
        .get(0);
    assert_eq!(status, 3, "killed while sending: nothing recorded");

    // Another worker takes the abandoned delivery over once it has been idle long enough: the
    // timeout (3 s) and then WORKER_CLAIM_IDLE_SECONDS (2 s), not while its call may still run.
    let mut second = app.binary(&["worker"]).spawn().expect("spawn a worker");
    let again = wait_for(&seen, 2).await;
    let id = |h: &HeaderMap| h.get("webhook-id").cloned();
    assert_eq!(id(&again[1].0), id(&got[0].0), "the same message, the same webhook-id");
    let status = delivery_status(&app, &endpoint_id, 0).await;
    assert_eq!(status, 0);
    let _ = second.kill().await;
}

#[tokio::test]
async fn an_endpoint_failing_for_five_days_is_disabled_and_says_so() {
    let Setup { app, admin, key, user, endpoint_id, seen, .. } =
        setup(Mode::All, |_| {}, usize::MAX, Duration::ZERO).await;
    // It has been failing for six days already.
    let db = app.db().await;
    db.execute(
        "update webhook_endpoints set failing_since = now() - interval '6 days' where id = $1",
        &[&endpoint_id],
    )
    .await
    .expect("age the failure");

    app.sync_and_wait(&user, &key, &run("W-5", 13)).await;
    wait_for(&seen, 1).await;
    let path = format!("/api/v1/webhooks/endpoints/{endpoint_id}");
    let mut listed = Value::Null;
    for _ in 0..100 {
        listed = app.get(&path, &admin).await.body;
        if listed["disabled"] == true {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(listed["disabled"], true, "{listed}");
    assert_eq!(listed["disabled_reason"], "every delivery failed for 5 days");
    // A disabled endpoint receives nothing more, not even the retries of its message.
    let r = app.post(&format!("{path}/test"), &admin, json!({})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(seen.lock().map(|s| s.len()).unwrap_or_default(), 1);

    // Re-enabled by a developer, it receives again; a message can be resent to it by hand.
    let r = app.call(reqwest::Method::PATCH, &path, &admin, Some(json!({"disabled": false}))).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        (r.body["disabled"].clone(), r.body["disabled_reason"].clone()),
        (json!(false), Value::Null)
    );
    let msg = app.post(&format!("{path}/test"), &admin, json!({})).await.str("message_id");
    // Counted by its own id: the test message sent while disabled may arrive now too.
    wait_for_message(&seen, &msg, 1).await;
    // Arrived is not yet recorded: the sender records the attempt after the answer, and a
    // delivery still `sending` is not resent. Wait for its record.
    for _ in 0..100 {
        let page = app.get(&format!("{path}/messages"), &admin).await.body;
        let recorded = page["data"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|m| m["id"] == msg.as_str() && m["status"] == 0);
        if recorded {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let resend = format!("{path}/messages/{msg}/resend");
    let r = app.post(&resend, &admin, json!({})).await;
    assert_eq!(r.status, 202, "{}", r.body);
    // A resend keeps the message's webhook-id: the same id arrives a second time.
    wait_for_message(&seen, &msg, 2).await;
    let r = app.post(&format!("{path}/messages/msg_nope/resend"), &admin, json!({})).await;
    assert_eq!(r.status, 404);
}

#[tokio::test]
async fn https_receivers_get_signed_events_and_untrusted_certificates_are_refused() {
    let (url, seen, pem) = tls_receiver(0, Duration::ZERO).await;
    let (other_url, other_seen, _) = tls_receiver(0, Duration::ZERO).await;
    // The sender trusts the first receiver's certificate only.
    let ca = std::env::temp_dir().join(format!("wearhouse-test-ca-{}.pem", uuid::Uuid::new_v4()));
    std::fs::write(&ca, pem).expect("write the CA file");
    let app = TestApp::spawn_with(Mode::All, |s| s.webhook_ca_file = Some(ca.clone())).await;
    let admin = app.admin().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let (trusted, secret) = endpoint(&app, &admin, &url).await;
    let (untrusted, _) = endpoint(&app, &admin, &other_url).await;

    app.sync_and_wait(&user, &key, &run("W-6", 14)).await;
    let got = wait_for(&seen, 1).await;
    assert!(python_verifies(&secret, &got[0].0, &got[0].1).await);
    assert_eq!(delivery_status(&app, &trusted, 0).await, 0);
    // The other certificate is not trusted: no request reaches it, and the attempts say why.
    assert_eq!(delivery_status(&app, &untrusted, 2).await, 2);
    assert!(other_seen.lock().map(|s| s.is_empty()).unwrap_or(false));
    let r = app.get(&format!("/api/v1/webhooks/endpoints/{untrusted}/attempts"), &admin).await;
    let why = r.body["data"][0]["response"].as_str().unwrap_or("").to_lowercase();
    assert!(
        why.contains("certificate") || why.contains("tls") || why.contains("unknownissuer"),
        "{why}"
    );
    let _ = std::fs::remove_file(ca);
}

#[tokio::test]
async fn a_slow_endpoint_delays_no_other() {
    let Setup { app, admin, key, user, endpoint_id: slow, seen: slow_seen, .. } =
        setup(Mode::All, |s| s.webhook_timeout_seconds = 60, 0, Duration::from_secs(60)).await;
    let (fast_url, fast_seen) = receiver_with(0, Duration::ZERO).await;
    let (fast, _) = endpoint(&app, &admin, &fast_url).await;

    app.sync_and_wait(&user, &key, &run("W-7", 15)).await;
    wait_for(&slow_seen, 1).await;
    wait_for(&fast_seen, 1).await;
    // The fast endpoint has its event while the slow one still holds its request.
    assert_eq!(delivery_status(&app, &fast, 0).await, 0);
    assert_eq!(delivery_status(&app, &slow, 3).await, 3, "the slow delivery is still in flight");
    // And so is ingest: another batch is stored meanwhile.
    app.sync_and_wait(&user, &key, &run("W-8", 16)).await;
    assert_eq!(wait_for(&fast_seen, 2).await.len(), 2);
}

/// The webhook stream holds only deliveries not yet done: each entry leaves it once its attempt
/// is recorded (and the one queue trims every stream to a bound besides; `queue` tests that).
#[tokio::test]
async fn the_webhook_stream_keeps_no_delivered_entry() {
    let Setup { app, key, user, endpoint_id, seen, .. } =
        setup(Mode::All, |_| {}, 0, Duration::ZERO).await;
    let workouts: Vec<Value> = (0..20)
        .map(|i| {
            let (start, end) =
                (format!("2026-03-10T{i:02}:00:00Z"), format!("2026-03-10T{i:02}:30:00Z"));
            workout(&format!("S-{i}"), "running", &start, &end, 300.0, 5000.0, "+02:00", &watch())
        })
        .collect();
    app.sync_and_wait(&user, &key, &body(vec![], workouts, vec![])).await;
    wait_for(&seen, 20).await;
    let db = app.db().await;
    let stream = format!("{}:webhooks", app.settings.redis_key_prefix);
    let mut redis = app.redis().await;
    let mut len = usize::MAX;
    for _ in 0..100 {
        let done: i64 = db
            .query_one(
                "select count(*) from webhook_deliveries where endpoint_id = $1 and status = 0",
                &[&endpoint_id],
            )
            .await
            .expect("deliveries")
            .get(0);
        len = redis::cmd("XLEN").arg(&stream).query_async(&mut redis).await.expect("xlen");
        if done == 20 && len == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(len, 0, "20 deliveries done, {len} entries left in {stream}");
}

/// Deliveries go through no proxy unless `WEBHOOK_PROXY` names one: a proxy in the sender's
/// environment (`HTTPS_PROXY`), which would resolve receivers past the address guard, is not
/// used (here it points at a closed port: using it would lose the delivery).
#[tokio::test]
async fn deliveries_ignore_the_proxy_of_the_environment() {
    let Setup { app, key, user, seen, .. } = setup(Mode::ApiOnly, |_| {}, 0, Duration::ZERO).await;
    let closed = "http://127.0.0.1:9";
    let _worker = app
        .binary(&["worker"])
        .env("HTTPS_PROXY", closed)
        .env("HTTP_PROXY", closed)
        .env("ALL_PROXY", closed)
        .env("NO_PROXY", "")
        .spawn()
        .expect("spawn a worker");
    let r = app.sync(&user, &key, &run("W-P", 14)).await;
    assert_eq!(r.status, 202, "{}", r.body);
    assert_eq!(wait_for(&seen, 1).await.len(), 1);
}

/// A receiver that answers 200 with a body that never ends: the sender reads a little of it,
/// records the delivery as done, and moves on (it used to read until its timeout and record a
/// failure).
#[tokio::test]
async fn an_endless_answer_is_read_only_in_part() {
    let endless = axum::Router::new().route(
        "/in",
        axum::routing::post(|| async {
            let chunk = axum::body::Bytes::from_static(&[b'x'; 8192]);
            let stream =
                futures::stream::repeat_with(move || Ok::<_, std::io::Error>(chunk.clone()));
            axum::body::Body::from_stream(stream)
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/in", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, endless).await });
    let app = TestApp::spawn_with(Mode::All, |s| s.webhook_timeout_seconds = 30).await;
    let (admin, key) = (app.admin().await, app.api_key().await);
    let user = app.user(&key, json!({})).await;
    let (endpoint_id, _) = endpoint(&app, &admin, &url).await;
    app.sync_and_wait(&user, &key, &run("W-E", 15)).await;
    let sql = format!("select count(*) from webhook_attempts where endpoint_id = '{endpoint_id}'");
    for _ in 0..100 {
        if app.count(&sql).await > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(delivery_status(&app, &endpoint_id, 0).await, 0, "delivered");
    let kept: i64 = app
        .db()
        .await
        .query_one(
            "select length(response)::bigint from webhook_attempts where endpoint_id = $1",
            &[&endpoint_id],
        )
        .await
        .expect("attempt")
        .get(0);
    assert_eq!(kept, 1000);
}
