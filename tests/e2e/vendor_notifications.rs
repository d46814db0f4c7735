//! Issue 29's reproductions of abuse on the vendor notification receiver, each rerun as a test:
//! forged notices refused before they cost anything, bursts merged into one pull, repeated
//! deregistrations checked once, the same answer whatever a notice names, a disabled provider
//! refused, and bodies read only once the vendor is known, within its bound.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};

use crate::util::{Auth, Mode, TestApp};
use crate::vendor_pulls::connect_to;

const ATHLETE: &str = "134815";
const TOKEN: &str = "strava-url-token";

/// The service with Strava configured (its notifications to `?token=strava-url-token`).
async fn strava_app(mode: Mode, api_url: &str) -> TestApp {
    let vars = [
        ("STRAVA_CLIENT_ID", "strava-app"),
        ("STRAVA_CLIENT_SECRET", "strava-secret"),
        ("STRAVA_WEBHOOK_TOKEN", TOKEN),
        ("STRAVA_API_URL", api_url),
        ("GARMIN_CLIENT_ID", "garmin-app"),
        ("GARMIN_CLIENT_SECRET", "garmin-secret"),
        ("GARMIN_WEBHOOK_TOKEN", "garmin-url-token"),
        // Withings without its token: its notifications cannot be told from forgeries.
        ("WITHINGS_CLIENT_ID", "withings-app"),
        ("WITHINGS_CLIENT_SECRET", "withings-secret"),
    ];
    let vars = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    TestApp::spawn_with(mode, |s| s.vendor_variables = Some(vars)).await
}

fn activity(owner: &str, at: i64) -> String {
    json!({"aspect_type": "create", "event_time": at, "object_id": 1, "object_type": "activity",
        "owner_id": owner.parse::<i64>().unwrap_or_default(), "subscription_id": 1, "updates": {}})
    .to_string()
}

fn deauthorized(owner: &str) -> String {
    json!({"aspect_type": "update", "event_time": chrono::Utc::now().timestamp(),
        "object_id": 1, "object_type": "athlete", "owner_id": owner.parse::<i64>().unwrap_or_default(),
        "subscription_id": 1, "updates": {"authorized": "false"}})
    .to_string()
}

async fn post(app: &TestApp, path_and_query: &str, body: String) -> (u16, Value) {
    let r = app
        .http
        .post(app.url(path_and_query))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .expect("notify");
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

fn strava_hook(token: Option<&str>) -> String {
    match token {
        Some(t) => format!("/api/v1/providers/strava/webhooks?token={t}"),
        None => "/api/v1/providers/strava/webhooks".into(),
    }
}

/// Forged Strava, Withings and deregistration notices cost nothing; real ones in a burst make
/// one pull and one check; every accepted notice is answered alike.
#[tokio::test]
async fn forged_notices_are_refused_and_bursts_make_one_pull() {
    // The API alone: what is queued stays queued, to be counted.
    let app = strava_app(Mode::ApiOnly, "http://127.0.0.1:9/api/v3").await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    connect_to(&app, &user, "strava", "strava-access", Some(ATHLETE)).await;
    let now = chrono::Utc::now().timestamp();

    // Forged: no token, or a wrong one. Strava athlete ids are public; that is no proof.
    for i in 0..30 {
        let token = [None, Some("guess")][i % 2];
        let (status, body) =
            post(&app, &strava_hook(token), activity(ATHLETE, now + i as i64)).await;
        assert_eq!((status, body["detail"].as_str()), (401, Some("Invalid webhook signature")));
    }
    let form = "userid=363&appli=1&startdate=1773100000&enddate=1773103600";
    let r = app
        .http
        .post(app.url("/api/v1/providers/withings/webhooks"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form)
        .send()
        .await
        .expect("notify");
    assert_eq!(r.status(), 401, "Withings without WITHINGS_WEBHOOK_TOKEN takes nothing");
    assert_eq!(app.count("select count(*) from vendor_pulls").await, 0);

    // Thirty real notices, each a second apart: one pull, its window widened to all of them.
    for i in 0..30 {
        let (status, body) =
            post(&app, &strava_hook(Some(TOKEN)), activity(ATHLETE, now + i as i64)).await;
        assert_eq!((status, body), (200, json!({"received": true})));
    }
    let windows = app
        .db()
        .await
        .query(
            "select extract(epoch from window_start)::int8, extract(epoch from window_end)::int8
             from vendor_pulls where kind = 'fetch'",
            &[],
        )
        .await
        .expect("pulls");
    let windows: Vec<(i64, i64)> = windows.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(windows, [(now - 7 * 86400, now + 29 + 3600)], "one pull for the burst");

    // A notice about a month away from the queued window: its own pull, as merging it would
    // make one pull of more than 31 days.
    let (status, _) =
        post(&app, &strava_hook(Some(TOKEN)), activity(ATHLETE, now - 40 * 86400)).await;
    assert_eq!(status, 200);
    assert_eq!(app.count("select count(*) from vendor_pulls where kind = 'fetch'").await, 2);

    // An athlete nobody here connected: the same answer, nothing queued.
    let (status, body) = post(&app, &strava_hook(Some(TOKEN)), activity("999", now)).await;
    assert_eq!((status, body), (200, json!({"received": true})));
    assert_eq!(app.count("select count(*) from vendor_pulls").await, 2);

    // Five deauthorizations: one check queued.
    for _ in 0..5 {
        let (status, body) = post(&app, &strava_hook(Some(TOKEN)), deauthorized(ATHLETE)).await;
        assert_eq!((status, body), (200, json!({"received": true})));
    }
    let checks = "select count(*) from vendor_pulls where kind = 'deregistration'";
    assert_eq!(app.count(checks).await, 1);

    // A provider a developer disabled takes no notification.
    let dev = app.admin().await;
    let r = app
        .call(
            reqwest::Method::PUT,
            "/api/v1/oauth/providers/strava",
            &dev,
            Some(json!({"is_enabled": false})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let (status, body) = post(&app, &strava_hook(Some(TOKEN)), activity(ATHLETE, now)).await;
    assert_eq!((status, body["detail"].as_str()), (400, Some("Provider 'strava' is not enabled")));
    let r = app.get("/api/v1/providers/strava/webhooks?hub.challenge=x", &Auth::None).await;
    r.assert_error(400, "Provider 'strava' is not enabled");
}

/// Strava's activity list, whose first answer waits until the test lets it go (so a notice
/// arrives while a pull reads), counting calls and keeping the windows asked.
#[derive(Default)]
struct SlowStrava {
    calls: AtomicUsize,
    windows: std::sync::Mutex<Vec<(i64, i64)>>,
    release: tokio::sync::Notify,
}

async fn slow_activities(
    axum::extract::State(s): axum::extract::State<Arc<SlowStrava>>,
    axum::extract::Query(q): axum::extract::Query<std::collections::HashMap<String, String>>,
) -> axum::Json<Value> {
    let n = |k: &str| q.get(k).and_then(|v| v.parse::<i64>().ok()).unwrap_or_default();
    if let Ok(mut w) = s.windows.lock() {
        w.push((n("after"), n("before")));
    }
    if s.calls.fetch_add(1, Ordering::SeqCst) == 0 {
        let _ = tokio::time::timeout(Duration::from_secs(30), s.release.notified()).await;
    }
    axum::Json(json!([]))
}

/// A notice that widens a pull while a worker reads it: what was read is stored under the
/// pull, and the widened window is pulled next, so nothing the notice asked for is lost.
#[tokio::test]
async fn a_notice_during_a_pull_is_pulled_after_it() {
    let strava = Arc::new(SlowStrava::default());
    let api = axum::Router::new()
        .route("/api/v3/athlete/activities", axum::routing::get(slow_activities))
        .with_state(strava.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}/api/v3", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, api).await });
    let app = strava_app(Mode::All, &base).await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    connect_to(&app, &user, "strava", "strava-access", Some(ATHLETE)).await;

    let now = chrono::Utc::now().timestamp();
    let (status, _) = post(&app, &strava_hook(Some(TOKEN)), activity(ATHLETE, now - 86400)).await;
    assert_eq!(status, 200);
    for _ in 0..200 {
        if strava.calls.load(Ordering::SeqCst) > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(strava.calls.load(Ordering::SeqCst), 1, "the first pull is reading");
    let (status, _) = post(&app, &strava_hook(Some(TOKEN)), activity(ATHLETE, now)).await;
    assert_eq!(status, 200);
    strava.release.notify_one();

    let pulls = "select count(*) from vendor_pulls where status = 'done'";
    for _ in 0..400 {
        if app.count(pulls).await == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let rows = app
        .db()
        .await
        .query(
            "select status::text, extract(epoch from window_start)::int8,
                    extract(epoch from window_end)::int8
             from vendor_pulls order by created_at, id",
            &[],
        )
        .await
        .expect("pulls");
    let rows: Vec<(String, i64, i64)> =
        rows.iter().map(|r| (r.get(0), r.get(1), r.get(2))).collect();
    let first = (now - 86400 - 7 * 86400, now - 86400 + 3600);
    let widened = (first.0, now + 3600);
    assert_eq!(
        rows,
        [("done".to_string(), first.0, first.1), ("done".to_string(), widened.0, widened.1)]
    );
    let asked = strava.windows.lock().map(|w| w.clone()).unwrap_or_default();
    assert_eq!(asked, [first, widened], "Strava was asked for both windows");
}

/// A body that sends its first bytes and then nothing: a server that waits for all of it never
/// answers.
fn stalled(declared: Option<u64>) -> reqwest::RequestBuilder {
    let first_len = declared.map_or(16 * 1024, |n| n.min(16 * 1024) as usize / 2);
    let first =
        futures::stream::once(async move { Ok::<_, std::io::Error>(vec![b'{'; first_len]) });
    let body = reqwest::Body::wrap_stream(first.chain(futures::stream::pending()));
    let request = reqwest::Client::new().post("http://placeholder.invalid").body(body);
    match declared {
        Some(n) => request.header("content-length", n),
        None => request,
    }
}

/// Bodies are read only once the vendor is known and the notification's URL token holds, and
/// only up to the vendor's bound: an unknown vendor, a missing token or a declared length past
/// the bound is answered at once, without waiting for the body.
#[tokio::test]
async fn a_body_is_read_only_when_it_can_be_worth_it() {
    let app = strava_app(Mode::ApiOnly, "http://127.0.0.1:9/api/v3").await;
    let answer = |path: String, declared: Option<u64>| {
        let mut request = stalled(declared).build().expect("request");
        *request.url_mut() = reqwest::Url::parse(&app.url(&path)).expect("url");
        let http = app.http.clone();
        async move {
            let sent = tokio::time::timeout(Duration::from_secs(10), http.execute(request)).await;
            let r = sent.expect("answered without the body").expect("response");
            let status = r.status().as_u16();
            (status, r.json::<Value>().await.unwrap_or(Value::Null)["detail"].clone())
        }
    };
    assert_eq!(
        answer("/api/v1/providers/nosuch/webhooks".into(), None).await,
        (400, json!("Unknown provider: nosuch"))
    );
    assert_eq!(
        answer("/api/v1/providers/garmin/webhooks".into(), None).await,
        (401, json!("Invalid webhook signature"))
    );
    assert_eq!(
        answer(strava_hook(Some(TOKEN)), Some(8 << 20)).await,
        (413, json!("Notification too large"))
    );

    // A body that turns out larger than Strava's bound (64 KiB) without saying so: 413.
    let big = format!("{{\"pad\": \"{}\"}}", "x".repeat(100 * 1024));
    let chunks = futures::stream::iter(
        big.into_bytes()
            .chunks(8192)
            .map(|c| Ok::<_, std::io::Error>(c.to_vec()))
            .collect::<Vec<_>>(),
    );
    let r = app
        .http
        .post(app.url(&strava_hook(Some(TOKEN))))
        .body(reqwest::Body::wrap_stream(chunks))
        .send()
        .await
        .expect("notify");
    assert_eq!(r.status(), 413);
    assert_eq!(app.count("select count(*) from vendor_pulls").await, 0);
}

/// The service with the signing vendors configured: Fitbit, Polar and Oura.
async fn signed_app() -> TestApp {
    let vars = [
        ("FITBIT_CLIENT_ID", "fitbit-app"),
        ("FITBIT_CLIENT_SECRET", "fitbit-secret"),
        ("POLAR_CLIENT_ID", "polar-app"),
        ("POLAR_CLIENT_SECRET", "polar-secret"),
        ("POLAR_WEBHOOK_SECRET", "polar-signing-key"),
        ("OURA_CLIENT_ID", "oura-app"),
        ("OURA_CLIENT_SECRET", "oura-secret"),
    ];
    let vars = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    TestApp::spawn_with(Mode::ApiOnly, |s| s.vendor_variables = Some(vars)).await
}

async fn post_signed(
    app: &TestApp,
    slug: &str,
    body: &str,
    headers: &[(&str, String)],
) -> (u16, Value) {
    let mut request = app
        .http
        .post(app.url(&format!("/api/v1/providers/{slug}/webhooks")))
        .header("content-type", "application/json")
        .body(body.to_string());
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    let r = request.send().await.expect("notify");
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// Signatures without a time (Fitbit's here) verify for ever: the same body within five minutes
/// adds no work now — it merges into the queued pull, or waits for the window to end — and
/// Fitbit's repeat of a day's notice is still pulled. Polar's unsigned pings write nothing.
/// Oura's timestamp must read as a time within ten minutes. A body that stops coming is
/// answered 408 at the deadline.
#[tokio::test]
async fn signed_notices_are_fresh_and_acted_on_once_a_window() {
    use base64::Engine;
    use hmac::Mac;
    let app = signed_app().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    connect_to(&app, &user, "fitbit", "fitbit-access", Some("GGNJL9")).await;
    let today = chrono::Utc::now().date_naive().to_string();
    let body = json!([{"collectionType": "activities", "date": today, "ownerId": "GGNJL9",
        "ownerType": "user", "subscriptionId": "1"}])
    .to_string();
    let mut mac = hmac::Hmac::<sha1::Sha1>::new_from_slice(b"fitbit-secret&").expect("key");
    mac.update(body.as_bytes());
    let signature = base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
    let fitbit = [("x-fitbit-signature", signature)];
    let pulls = "select count(*) from vendor_pulls";
    assert_eq!(post_signed(&app, "fitbit", &body, &fitbit).await, (200, json!({"received": true})));
    assert_eq!(app.count(pulls).await, 1);
    assert_eq!(post_signed(&app, "fitbit", &body, &fitbit).await, (200, json!({"received": true})));
    assert_eq!(app.count(pulls).await, 1, "merged into the queued pull");
    app.db().await.batch_execute("update vendor_pulls set status = 'done'").await.expect("done");
    assert_eq!(post_signed(&app, "fitbit", &body, &fitbit).await.0, 200);
    let later = "select count(*) from vendor_pulls
                 where status = 'queued' and not_before > now() + interval '4 minutes'";
    assert_eq!(app.count(later).await, 1, "the same body again: pulled when the window ends");

    // Polar's pings are taken unsigned and ask for nothing: they leave nothing behind.
    for i in 0..20 {
        let ping =
            json!({"event": "PING", "timestamp": "2026-03-10T07:30:00Z", "pad": i}).to_string();
        let r = post_signed(&app, "polar", &ping, &[("polar-webhook-event", "PING".into())]).await;
        assert_eq!(r, (200, json!({"received": true})));
    }
    let mut redis = app.redis().await;
    let pattern = format!("{}:vendor_notice:*", app.settings.redis_key_prefix);
    let kept: Vec<String> =
        redis::cmd("KEYS").arg(&pattern).query_async(&mut redis).await.expect("keys");
    assert_eq!(kept.len(), 1, "only Fitbit's notice is remembered: {kept:?}");

    // Oura: a timestamp that is no time, or an hour old, is refused; a fresh one is taken.
    let event = json!({"event_type": "create", "data_type": "sleep", "object_id": "n",
        "event_time": "2026-03-10T07:30:00+00:00", "user_id": "nobody"})
    .to_string();
    let signed = |timestamp: String| {
        let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(b"oura-secret").expect("key");
        mac.update(timestamp.as_bytes());
        mac.update(event.as_bytes());
        let signature = hex::encode_upper(mac.finalize().into_bytes());
        [("x-oura-signature", signature), ("x-oura-timestamp", timestamp)]
    };
    let now = chrono::Utc::now().timestamp();
    for stale in ["soon".to_string(), (now - 3600).to_string()] {
        let r = post_signed(&app, "oura", &event, &signed(stale.clone())).await;
        assert_eq!(r.0, 401, "timestamp {stale}");
    }
    assert_eq!(post_signed(&app, "oura", &event, &signed(now.to_string())).await.0, 200);

    // A body announced as 1,000 bytes that stops after 500: 408 at the deadline (10 s).
    let mut request = stalled(Some(1000)).build().expect("request");
    *request.url_mut() =
        reqwest::Url::parse(&app.url("/api/v1/providers/fitbit/webhooks")).expect("url");
    let r = tokio::time::timeout(Duration::from_secs(30), app.http.execute(request))
        .await
        .expect("answered at the deadline")
        .expect("response");
    assert_eq!(r.status(), 408);
}

/// Withings' per-user subscriptions made before `WITHINGS_WEBHOOK_TOKEN` was set point at a URL
/// whose notifications are now refused: `wearhouse resubscribe` makes them again with the token.
#[tokio::test]
async fn resubscribe_makes_the_subscriptions_again_with_the_token() {
    let calls = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let log = calls.clone();
    let notify = move |axum::extract::Form(form): axum::extract::Form<
        std::collections::HashMap<String, String>,
    >| {
        let log = log.clone();
        async move {
            if let Ok(mut l) = log.lock() {
                let field = |k: &str| form.get(k).cloned().unwrap_or_default();
                l.push(format!("{} {} {}", field("action"), field("appli"), field("callbackurl")));
            }
            axum::Json(json!({"status": 0, "body": {}}))
        }
    };
    let api = axum::Router::new().route("/notify", axum::routing::post(notify));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, api).await });

    let app = TestApp::spawn_with(Mode::ApiOnly, |_| {}).await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    connect_to(&app, &user, "withings", "withings-access", Some("363")).await;
    let out = app
        .binary(&["resubscribe", "--provider", "withings"])
        .env("WITHINGS_CLIENT_ID", "withings-app")
        .env("WITHINGS_CLIENT_SECRET", "withings-secret")
        .env("WITHINGS_API_URL", &base)
        .env("WITHINGS_WEBHOOK_TOKEN", "withings-url-token")
        .stdout(std::process::Stdio::piped())
        .output()
        .await
        .expect("resubscribe");
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{said}");
    assert!(said.contains("resubscribed 1 withings connection(s)"), "{said}");
    let made = calls.lock().map(|c| c.clone()).unwrap_or_default();
    let hook = "http://127.0.0.1:8000/api/v1/providers/withings/webhooks?token=withings-url-token";
    let want: Vec<String> =
        ["1", "2", "4", "16", "44", "46"].iter().map(|a| format!("subscribe {a} {hook}")).collect();
    assert_eq!(made, want);
}
