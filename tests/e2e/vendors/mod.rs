//! Every cloud vendor through the same life, against a local server answering in the vendor's
//! documented format (`mock`): the OAuth round trip (the documented authorize URL with its
//! scopes and PKCE, the code exchanged, the tokens stored sealed, the calls the vendor needs
//! after connecting), the initial sync, a rate limit waited out, webhooks accepted when signed
//! and refused when not, the rows stored checked against values worked out by hand, a re-pull
//! that stores nothing twice, a token renewed and then refused (`connection.revoked`,
//! `refresh_failed`), and a disconnection that revokes at the vendor.

mod fitbit;
mod garmin;
pub(crate) mod mock;
pub(crate) mod oura;
mod polar;
pub(crate) mod strava;
mod suunto;
mod ultrahuman;
mod whoop;
mod withings;

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{Value, json};

use crate::util::{Auth, Mode, TestApp};
use mock::{CLIENT_ID, CODE, Mock, VendorApi};

/// A notification as the vendor sends it.
pub struct Notification {
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
    pub content_type: &'static str,
}

impl Notification {
    pub fn json(body: &Value, headers: Vec<(&'static str, String)>) -> Notification {
        Notification {
            headers,
            body: body.to_string().into_bytes(),
            content_type: "application/json",
        }
    }
}

/// A workout's figures: type, seconds, kcal, metres.
pub type WorkoutFigures = (&'static str, i32, Option<f64>, Option<f64>);

/// What a vendor's data becomes.
pub struct Expected {
    /// Per series: samples and the sum of their values.
    pub series: Vec<(&'static str, i64, f64)>,
    pub workouts: Vec<WorkoutFigures>,
    pub sleep_sessions: i64,
}

/// One vendor's case.
pub struct Case {
    pub slug: &'static str,
    pub api: VendorApi,
    /// The path of the data API on the local server.
    pub api_prefix: &'static str,
    /// Further variables, without the vendor's prefix.
    pub vars: Vec<(&'static str, String)>,
    /// The documented authorize URL.
    pub authorize: &'static str,
    pub scope: Option<&'static str>,
    pub pkce: bool,
    pub vendor_user: &'static str,
    /// Calls the vendor gets after the code exchange (prefixes of the mock's log).
    pub connect_calls: Vec<&'static str>,
    /// Calls that revoke at the vendor on disconnection.
    pub revoke_calls: Vec<&'static str>,
    /// Handshakes: a query and the status it gets.
    pub handshakes: Vec<(&'static str, u16)>,
    /// A notification, signed or not.
    pub webhook: Option<fn(bool) -> Notification>,
    /// The vendor's notice that the user removed the app, where it sends one (the `n`th: each
    /// differs, as a vendor's notices of two removals do).
    pub deregistration: Option<fn(u32) -> Notification>,
    /// Whether the initial sync asks for history (Garmin's backfill) instead of pulling it.
    pub backfills: bool,
    /// The query the URL registered for notifications carries (`token=…`), where the vendor
    /// signs nothing.
    pub hook_query: &'static str,
    pub expected: Expected,
}

fn query(url: &str) -> HashMap<String, String> {
    url::Url::parse(url).expect("url").query_pairs().into_owned().collect()
}

/// Waits until no pull is queued; returns every pull as (status, attempts, last error), oldest
/// first.
async fn settled(app: &TestApp) -> Vec<(String, i32, Option<String>)> {
    for _ in 0..1500 {
        let queued = app.count("select count(*) from vendor_pulls where status = 'queued'").await;
        if queued == 0 {
            let rows = app
                .db()
                .await
                .query(
                    "select status::text, attempts, last_error from vendor_pulls order by created_at, id",
                    &[],
                )
                .await
                .expect("pulls");
            return rows.iter().map(|r| (r.get(0), r.get(1), r.get(2))).collect();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("pulls were still queued after two and a half minutes");
}

/// A stored workout's type, seconds, kcal and metres.
type StoredWorkout = (Option<String>, i32, Option<f64>, Option<f64>);

/// What is stored for a user: samples per series (count, sum), workouts, sleep sessions.
struct Stored {
    series: Vec<(String, i64, f64)>,
    workouts: Vec<StoredWorkout>,
    sleep_sessions: i64,
}

async fn rows(app: &TestApp, user: &str) -> Stored {
    let user: uuid::Uuid = user.parse().expect("uuid");
    let db = app.db().await;
    let series = db
        .query(
            "select t.slug, count(*), sum(s.value)::float8 from samples s
             join series_types t on t.id = s.series_type_id where s.user_id = $1
             group by t.slug order by t.slug",
            &[&user],
        )
        .await
        .expect("samples")
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    let workouts = db
        .query(
            "select type, duration_seconds, calories_kcal, distance_meters from workouts
             where user_id = $1 order by start_time",
            &[&user],
        )
        .await
        .expect("workouts")
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
        .collect();
    let sleep_sessions = db
        .query_one("select count(*) from sleep_sessions where user_id = $1", &[&user])
        .await
        .expect("sleep")
        .get(0);
    Stored { series, workouts, sleep_sessions }
}

fn assert_rows(case: &Case, got: &Stored) {
    let mut want = case.expected.series.clone();
    want.sort_by(|a, b| a.0.cmp(b.0));
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * a.abs().max(1.0);
    let same = want.len() == got.series.len()
        && want.iter().zip(&got.series).all(|(w, g)| w.0 == g.0 && w.1 == g.1 && close(w.2, g.2));
    assert!(same, "{}: series\n want {want:?}\n got  {:?}", case.slug, got.series);
    let round = |(k, d, c, m): (Option<&str>, i32, Option<f64>, Option<f64>)| {
        (
            k.map(str::to_string),
            d,
            c.map(|c| (c * 100.0).round() as i64),
            m.map(|m| m.round() as i64),
        )
    };
    let got_w: Vec<_> =
        got.workouts.iter().map(|(k, d, c, m)| round((k.as_deref(), *d, *c, *m))).collect();
    let want_w: Vec<_> =
        case.expected.workouts.iter().map(|(k, d, c, m)| round((Some(*k), *d, *c, *m))).collect();
    assert_eq!(got_w, want_w, "{}: workouts", case.slug);
    assert_eq!(got.sleep_sessions, case.expected.sleep_sessions, "{}: sleep sessions", case.slug);
}

impl Case {
    fn variables(&self, mock: &Mock) -> std::collections::BTreeMap<String, String> {
        let prefix = self.slug.to_ascii_uppercase();
        let mut vars = vec![
            ("CLIENT_ID", CLIENT_ID.to_string()),
            ("CLIENT_SECRET", mock::CLIENT_SECRET.to_string()),
            ("TOKEN_URL", format!("{}{}", mock.base, self.api.token_path)),
            ("API_URL", format!("{}{}", mock.base, self.api_prefix)),
        ];
        vars.extend(self.vars.iter().cloned());
        vars.into_iter().map(|(k, v)| (format!("{prefix}_{k}"), v)).collect()
    }
}

/// Authorizes, opens the link in a browser (which keeps the cookie it sets) and comes back from
/// the vendor with its code; returns the vendor's authorize URL's query.
async fn connect(app: &TestApp, key: &Auth, case: &Case, user: &str) -> HashMap<String, String> {
    let r = app.get(&format!("/api/v1/oauth/{}/authorize?user_id={user}", case.slug), key).await;
    assert_eq!(r.status, 200, "{}: {}", case.slug, r.body);
    let browser = crate::util::Browser::new();
    let url = browser.open(app, &r.str("authorization_url")).await;
    assert!(url.starts_with(&format!("{}?", case.authorize)), "{}: {url}", case.slug);
    let q = query(&url);
    let back = app.url(&format!(
        "/api/v1/oauth/{}/callback?code={CODE}&state={}",
        case.slug,
        r.str("state")
    ));
    let r = browser.get(&back).await;
    assert_eq!(r.status(), 303, "{}: {:?}", case.slug, r.text().await);
    let to = r.headers()["location"].to_str().unwrap_or_default().to_string();
    assert!(to.starts_with("/api/v1/oauth/success?"), "{}: {to}", case.slug);
    q
}

/// Queues a sync of the user's last two days and waits for every pull to end; returns the
/// last pull's (status, attempts, error).
async fn sync(app: &TestApp, key: &Auth, case: &Case, user: &str) -> (String, i32, Option<String>) {
    let r = app
        .post(&format!("/api/v1/providers/{}/users/{user}/sync", case.slug), key, json!({}))
        .await;
    assert_eq!(r.status, 200, "{}: {}", case.slug, r.body);
    settled(app).await.pop().expect("a pull")
}

async fn expire(app: &TestApp) {
    app.db()
        .await
        .batch_execute("update connections set token_expires_at = now() - interval '1 minute'")
        .await
        .expect("expire the token");
}

async fn revoked_reasons(app: &TestApp) -> Vec<String> {
    let sql =
        "select payload->'data'->>'reason' from outbox where event_type = 'connection.revoked'
               order by id";
    app.db().await.query(sql, &[]).await.expect("outbox").iter().map(|r| r.get(0)).collect()
}

/// Posts a notification to the vendor's receiver, with `query` in its URL.
async fn notify(app: &TestApp, slug: &str, query: &str, n: Notification) -> reqwest::Response {
    let query = if query.is_empty() { String::new() } else { format!("?{query}") };
    let mut request = app
        .http
        .post(app.url(&format!("/api/v1/providers/{slug}/webhooks{query}")))
        .header("content-type", n.content_type)
        .body(n.body);
    for (name, value) in n.headers {
        request = request.header(name, value);
    }
    request.send().await.expect("notify")
}

pub async fn conformance(case: Case) {
    let slug = case.slug;
    let mock = Mock::start(case.api.clone()).await;
    let vars = case.variables(&mock);
    let app = TestApp::spawn_with(Mode::All, |s| s.vendor_variables = Some(vars)).await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let listed = app.get("/api/v1/oauth/providers?cloud_only=true", &Auth::None).await;
    let mine = listed.body.as_array().into_iter().flatten().find(|p| p["provider"] == slug);
    assert_eq!(mine.map(|p| p["is_enabled"].clone()), Some(json!(true)), "{slug}: {}", listed.body);
    let icon = mine.and_then(|p| p["icon_url"].as_str()).unwrap_or_default();
    let r = app.http.get(app.url(icon)).send().await.expect("icon");
    assert_eq!(
        (r.status().as_u16(), r.headers()["content-type"].clone()),
        (200, "image/svg+xml".parse().expect("mime"))
    );

    // The OAuth round trip: the documented URL, the code exchanged, the tokens sealed.
    let q = connect(&app, &key, &case, &user).await;
    assert_eq!(q["client_id"], CLIENT_ID, "{slug}");
    assert_eq!(q["response_type"], "code", "{slug}");
    assert_eq!(q["redirect_uri"], format!("http://127.0.0.1:8000/api/v1/oauth/{slug}/callback"));
    assert_eq!(q.get("scope").map(String::as_str), case.scope, "{slug}: scopes");
    assert_eq!(q.get("code_challenge_method").map(String::as_str), case.pkce.then_some("S256"));
    if case.pkce {
        assert!(mock.called(&format!("POST {}", case.api.token_path)));
        assert!(mock.log().iter().any(|l| l.contains("code_verifier=")), "{slug}: PKCE verifier");
    }
    let row: String = app
        .db()
        .await
        .query_one("select row_to_json(c)::text from connections c", &[])
        .await
        .expect("connection")
        .get(0);
    assert!(!row.contains("access-1") && !row.contains("refresh-1"), "{slug}: {row}");
    assert!(row.contains("sealed:v1:"), "{slug}: {row}");
    let list = app.get(&format!("/api/v1/users/{user}/connections"), &key).await;
    assert_eq!(list.body[0]["provider_user_id"], case.vendor_user, "{slug}: {}", list.body);
    for call in &case.connect_calls {
        assert!(mock.called(call), "{slug}: no {call} after connecting: {:?}", mock.log());
    }

    // The initial sync.
    let pulls = settled(&app).await;
    assert_eq!(pulls.len(), 1, "{slug}: {pulls:?}");
    assert_eq!((pulls[0].0.as_str(), pulls[0].1), ("done", 0), "{slug}: {pulls:?}");
    if case.backfills {
        assert!(mock.called("GET /wellness-api/rest/backfill/"), "{slug}: {:?}", mock.log());
    }

    // The vendor's handshakes and notifications: signed ones taken, the others refused.
    for (handshake, status) in &case.handshakes {
        let r =
            app.get(&format!("/api/v1/providers/{slug}/webhooks?{handshake}"), &Auth::None).await;
        assert_eq!(r.status, *status, "{slug}: handshake {handshake}: {}", r.body);
    }
    match case.webhook {
        Some(hook) => {
            let before = app.count("select count(*) from vendor_pulls").await;
            let r = notify(&app, slug, case.hook_query, hook(false)).await;
            assert_eq!(r.status(), 401, "{slug}: an unsigned notification");
            if !case.hook_query.is_empty() {
                let r = notify(&app, slug, "", hook(true)).await;
                assert_eq!(r.status(), 401, "{slug}: a notification without our URL token");
            }
            assert_eq!(app.count("select count(*) from vendor_pulls").await, before, "{slug}");
            let r = notify(&app, slug, case.hook_query, hook(true)).await;
            assert_eq!(r.status(), 200, "{slug}: {:?}", r.text().await);
            assert_eq!(r.json::<Value>().await.ok(), Some(json!({"received": true})), "{slug}");
            let pulls = settled(&app).await;
            assert!(pulls.len() > 1, "{slug}: the notification queued nothing");
            assert!(pulls.iter().all(|p| p.0 == "done"), "{slug}: {pulls:?}");
            // The same notification again: a signature without a time is remembered, so the
            // copy adds no work now — what it asks for is pulled when the replay window ends
            // (the vendor may send the same bytes for new data) and data it pushed is not taken
            // twice; a timed one is refused once stale.
            if vendors::by_slug(slug).map(|v| v.info().proof) == Some(vendors::Proof::Signature) {
                let r = notify(&app, slug, case.hook_query, hook(true)).await;
                assert_eq!(r.status(), 200, "{slug}: a replay");
                let later = "select count(*) from vendor_pulls where status = 'queued'
                             and not_before > now() + interval '4 minutes'";
                let deferred = app.count(later).await;
                // Suunto's notice is its data (taken the first time); the others ask for pulls.
                let pushes = slug == "suunto";
                assert_eq!(deferred, i64::from(!pushes), "{slug}: what a replay queued");
                app.db()
                    .await
                    .batch_execute(
                        "update vendor_pulls set not_before = now() where status = 'queued'",
                    )
                    .await
                    .expect("due now");
                settled(&app).await;
            }
        }
        None => {
            let r = notify(&app, slug, case.hook_query, Notification::json(&json!({}), Vec::new()))
                .await;
            assert_eq!(r.status(), 400, "{slug}: a vendor without webhooks");
        }
    }
    assert!(mock.limited_calls() >= 2, "{slug}: the rate-limited call was not made again");
    let got = rows(&app, &user).await;
    assert_rows(&case, &got);
    let runs = app.get(&format!("/api/v1/users/{user}/sync/runs"), &key).await;
    assert!(
        runs.body
            .as_array()
            .is_some_and(|r| !r.is_empty() && r.iter().all(|r| r["status"] == "success")),
        "{slug}: {}",
        runs.body
    );

    // The vendor's data ranks beside the phones' in the user's priorities.
    let body = json!({"providers": [slug, "phonehealth"]});
    let r = app
        .call(reqwest::Method::PUT, &format!("/api/v1/users/{user}/priorities"), &key, Some(body))
        .await;
    assert_eq!(
        (r.status, r.body["providers"][0].clone()),
        (200, json!(slug)),
        "{slug}: {}",
        r.body
    );

    // The same data again: nothing stored twice.
    let again = sync(&app, &key, &case, &user).await;
    assert_eq!(again.0, "done", "{slug}: {again:?}");
    assert_rows(&case, &rows(&app, &user).await);

    // An expired token is renewed; a refresh token the vendor refuses ends the connection.
    expire(&app).await;
    let renewed = sync(&app, &key, &case, &user).await;
    if case.api.refreshes {
        assert_eq!(renewed.0, "done", "{slug}: {renewed:?}");
        assert!(mock.log().iter().any(|l| l.contains("refresh_token=refresh-1")), "{slug}");
        assert!(mock.log().iter().any(|l| l.ends_with("auth=Bearer access-2")), "{slug}");
        expire(&app).await;
        let refused = sync(&app, &key, &case, &user).await;
        assert_eq!(refused.0, "failed", "{slug}: {refused:?}");
        assert_eq!(
            refused.2.as_deref(),
            Some(format!("Refresh token rejected for {slug}; reconnection required").as_str())
        );
        assert_eq!(revoked_reasons(&app).await, ["refresh_failed"], "{slug}");
        let list = app.get(&format!("/api/v1/users/{user}/connections"), &key).await;
        assert_eq!(list.body[0]["status"], "revoked", "{slug}");
        // Data pushed before the connection ended is stored, and does not bring it back.
        let db = schema::Db::connect(&app.settings.database_url, 1).await.expect("pool");
        let collection = vendors::by_slug(slug).map(|v| v.collections()[0]).expect("vendor");
        let page = zstd::encode_all(&b"[]"[..], 3).expect("zstd");
        let now = chrono::Utc::now();
        let user_id: schema::ids::UserId = user.parse().expect("uuid");
        schema::vendor_pulls::insert_pushed(&db, user_id, slug, (now, now), collection, &page)
            .await
            .expect("a pushed pull");
        assert_eq!(settled(&app).await.pop().map(|p| p.0), Some("done".into()), "{slug}");
        let list = app.get(&format!("/api/v1/users/{user}/connections"), &key).await;
        assert_eq!(list.body[0]["status"], "revoked", "{slug}: {}", list.body);
    } else {
        assert_eq!(
            (renewed.0.as_str(), renewed.2.as_deref()),
            (
                "failed",
                Some(format!("Token expired and no refresh token available for {slug}").as_str())
            ),
        );
    }

    // Connected again, then disconnected: revoked at the vendor too.
    connect(&app, &key, &case, &user).await;
    settled(&app).await;
    let r = app
        .call(
            reqwest::Method::DELETE,
            &format!("/api/v1/users/{user}/connections/{slug}"),
            &key,
            None,
        )
        .await;
    assert_eq!(r.status, 204, "{slug}: {}", r.body);
    for call in &case.revoke_calls {
        assert!(mock.called(call), "{slug}: no {call} on disconnection: {:?}", mock.log());
    }
    assert_eq!(revoked_reasons(&app).await.last().map(String::as_str), Some("user_disconnected"));

    // The user removes the app at the vendor: believed once the vendor refuses the token.
    if let Some(notice) = case.deregistration {
        connect(&app, &key, &case, &user).await;
        settled(&app).await;
        let r = notify(&app, slug, case.hook_query, notice(0)).await;
        assert_eq!(r.status(), 200, "{slug}");
        settled(&app).await;
        let list = app.get(&format!("/api/v1/users/{user}/connections"), &key).await;
        assert_eq!(
            list.body[0]["status"], "active",
            "{slug}: the token still works: {}",
            list.body
        );
        mock.refuse_tokens();
        let r = notify(&app, slug, case.hook_query, notice(1)).await;
        assert_eq!(r.status(), 200, "{slug}");
        settled(&app).await;
        let list = app.get(&format!("/api/v1/users/{user}/connections"), &key).await;
        assert_eq!(list.body[0]["status"], "revoked", "{slug}: {}", list.body);
        assert_eq!(revoked_reasons(&app).await.last().map(String::as_str), Some("deregistration"));
    }
}

/// The hex HMAC-SHA256 of `body` with `key`.
pub fn hex_hmac(key: &str, body: &[u8]) -> String {
    use hmac::Mac;
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(key.as_bytes()).expect("key");
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}
