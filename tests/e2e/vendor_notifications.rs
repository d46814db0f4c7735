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

/// Strava's activity list, slow (so a notice can arrive while a pull reads it), counting calls
/// and keeping the windows asked.
#[derive(Default)]
struct SlowStrava {
    calls: AtomicUsize,
    windows: std::sync::Mutex<Vec<(i64, i64)>>,
}

async fn slow_activities(
    axum::extract::State(s): axum::extract::State<Arc<SlowStrava>>,
    axum::extract::Query(q): axum::extract::Query<std::collections::HashMap<String, String>>,
) -> axum::Json<Value> {
    let n = |k: &str| q.get(k).and_then(|v| v.parse::<i64>().ok()).unwrap_or_default();
    if let Ok(mut w) = s.windows.lock() {
        w.push((n("after"), n("before")));
    }
    s.calls.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(1500)).await;
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
    let first = futures::stream::once(async { Ok::<_, std::io::Error>(vec![b'{'; 16 * 1024]) });
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
