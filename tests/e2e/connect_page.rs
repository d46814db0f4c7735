//! Connect links through the API (issue 32): the integrator makes, lists and revokes links; the
//! page's API binds a link to the first browser, connects a vendor through the browser-bound
//! OAuth flow and comes back to the page with the outcome (a refusal too), disconnects, and
//! tells an expired, withdrawn, used or unknown link apart; unknown tokens are throttled per
//! address. Oura and Strava are local servers with a consent page
//! (`vendors::mock::authorize_page`). The same in Chromium: `the_connect_page_in_a_browser`.

use std::collections::BTreeMap;
use std::process::Stdio;

use reqwest::Method;
use serde_json::{Value, json};

use crate::util::{Auth, Browser, Mode, TestApp};
use crate::vendors::mock::{self, AUTHORIZE_PATH, Mock};

/// Oura and Strava, each a local server answering as it documents, with a consent page.
pub(crate) async fn vendors() -> Vec<(&'static str, Mock, &'static str)> {
    let oura = Mock::start(crate::vendors::oura::api()).await;
    let strava = Mock::start(crate::vendors::strava::api()).await;
    vec![("oura", oura, ""), ("strava", strava, "/api/v3")]
}

/// The service at its own URL with both vendors configured.
pub(crate) async fn app_with(
    mode: Mode,
    vendors: &[(&'static str, Mock, &'static str)],
) -> TestApp {
    let mut vars = BTreeMap::new();
    for (slug, mock, api_prefix) in vendors {
        let prefix = slug.to_ascii_uppercase();
        let base = &mock.base;
        for (k, v) in [
            ("CLIENT_ID", mock::CLIENT_ID.to_string()),
            ("CLIENT_SECRET", mock::CLIENT_SECRET.to_string()),
            ("AUTHORIZE_URL", format!("{base}{AUTHORIZE_PATH}")),
            ("TOKEN_URL", format!("{base}/oauth/token")),
            ("API_URL", format!("{base}{api_prefix}")),
            ("WEBHOOK_TOKEN", "verify-me".to_string()),
        ] {
            vars.insert(format!("{prefix}_{k}"), v);
        }
    }
    TestApp::spawn_at_own_url(mode, |s| s.vendor_variables = Some(vars)).await
}

fn token_of(url: &str) -> String {
    url.rsplit('/').next().unwrap_or_default().to_string()
}

async fn page(app: &TestApp, browser: &Browser, token: &str) -> (u16, Value) {
    call(app, browser, Method::GET, &format!("/api/v1/connect/{token}")).await
}

async fn call(app: &TestApp, browser: &Browser, method: Method, path: &str) -> (u16, Value) {
    let r = browser.send(method, &app.url(path)).await;
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

fn vendor_status(page: &Value, slug: &str) -> String {
    let list = page["providers"].as_array().cloned().unwrap_or_default();
    let found = list.iter().find(|p| p["provider"] == slug);
    found.and_then(|p| p["status"].as_str()).unwrap_or("absent").to_string()
}

fn query(url: &str) -> BTreeMap<String, String> {
    url::Url::parse(url).expect("url").query_pairs().into_owned().collect()
}

/// Starts connecting `slug` from the page, opens the link, and comes back from the vendor's
/// consent page with `answer` (the code, or a refusal); returns where the service sent the
/// browser at the end.
async fn connect(app: &TestApp, browser: &Browser, token: &str, slug: &str, allow: bool) -> String {
    let (status, started) =
        call(app, browser, Method::POST, &format!("/api/v1/connect/{token}/{slug}")).await;
    assert_eq!(status, 200, "{started}");
    // Straight to the vendor: the flow is bound to this browser already.
    let consent = started["authorization_url"].as_str().expect("authorization_url").to_string();
    assert!(consent.contains(AUTHORIZE_PATH), "{consent}");
    assert!(browser.cookie_header().contains("wearhouse_oauth_"), "the binding cookie");
    let q = query(&consent);
    let back = &q["redirect_uri"];
    assert_eq!(back, &app.url(&format!("/api/v1/oauth/{slug}/callback")));
    let answer = if allow {
        format!("code={}&state={}", mock::CODE, q["state"])
    } else {
        format!("error=access_denied&error_description=The+user+said+no&state={}", q["state"])
    };
    let r = browser.get(&format!("{back}?{answer}")).await;
    assert_eq!(r.status(), 303);
    r.headers()["location"].to_str().expect("location").to_string()
}

#[tokio::test]
async fn an_integrator_makes_lists_and_revokes_connect_links() {
    let vendors = vendors().await;
    let app = app_with(Mode::ApiOnly, &vendors).await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let links = format!("/api/v1/users/{user}/connect-links");

    let r = app.post(&links, &key, json!({})).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let url = r.str("url");
    assert!(url.starts_with(&format!("{}/connect/", app.base)), "{url}");
    assert_eq!(token_of(&url).len(), 48);
    assert_eq!(r.body["status"], "active");
    assert_eq!(r.body["providers"], Value::Null);
    let made = chrono::DateTime::parse_from_rfc3339(&r.str("created_at")).expect("created_at");
    let ends = chrono::DateTime::parse_from_rfc3339(&r.str("expires_at")).expect("expires_at");
    assert_eq!((ends - made).num_minutes(), 30, "30 minutes by default");

    let r = app
        .post(
            &links,
            &key,
            json!({"providers": ["strava", "oura", "oura"], "expires_in_minutes": 120,
            "redirect_uri": "https://app.example.com/connected"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["providers"], json!(["strava", "oura"]));
    let second = r.str("id");

    // What is refused.
    assert_eq!(app.post(&links, &Auth::None, json!({})).await.status, 401);
    app.post(&links, &key, json!({"expires_in_minutes": 4}))
        .await
        .assert_invalid(&["body", "expires_in_minutes"], "greater_than_equal");
    app.post(&links, &key, json!({"expires_in_minutes": 10_081}))
        .await
        .assert_invalid(&["body", "expires_in_minutes"], "less_than_equal");
    app.post(&links, &key, json!({"providers": []}))
        .await
        .assert_invalid(&["body", "providers"], "greater_than_equal");
    app.post(&links, &key, json!({"providers": ["whoop"]}))
        .await
        .assert_error(400, "Provider 'whoop' is not enabled");
    app.post(&links, &key, json!({"providers": ["phonehealth"]}))
        .await
        .assert_error(400, "Provider 'phonehealth' does not support OAuth");
    app.post(&links, &key, json!({"redirect_uri": "https://evil.example.net/x"}))
        .await
        .assert_error(
            400,
            "redirect_uri is neither under PUBLIC_URL nor in OAUTH_REDIRECT_ALLOWLIST",
        );
    let nobody = uuid::Uuid::new_v4();
    let r = app.post(&format!("/api/v1/users/{nobody}/connect-links"), &key, json!({})).await;
    r.assert_error(404, &format!("User with ID: {nobody} not found."));

    // Listed newest first, without their URLs; revoked once.
    let list = app.get(&links, &key).await;
    assert_eq!(list.status, 200, "{}", list.body);
    assert_eq!(list.body.as_array().map(Vec::len), Some(2));
    assert_eq!(list.body[0]["id"], second);
    assert!(list.body[0].get("url").is_none() && !list.body.to_string().contains(&token_of(&url)));
    let one = format!("{links}/{second}");
    assert_eq!(app.call(Method::DELETE, &one, &key, None).await.status, 204);
    let again = app.call(Method::DELETE, &one, &key, None).await;
    again.assert_error(404, &format!("Connect link with ID: {second} not found."));
    assert_eq!(app.get(&links, &key).await.body[0]["status"], "revoked");
    assert_eq!(
        app.get(&format!("{links}?limit=1"), &key).await.body.as_array().map(Vec::len),
        Some(1)
    );

    // Connections started from one link are bounded: each costs a pending flow.
    let browser = Browser::new();
    let start = format!("/api/v1/connect/{}/oura", token_of(&url));
    for _ in 0..20 {
        assert_eq!(call(&app, &browser, Method::POST, &start).await.0, 200);
    }
    let r = browser.send(Method::POST, &app.url(&start)).await;
    assert_eq!(r.status(), 429);
    assert!(r.headers().get("retry-after").is_some());

    // The page itself: the portal bundle's, for any token, never indexed, never a referrer.
    let r = app.http.get(&url).send().await.expect("page");
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["x-robots-tag"], "noindex");
    assert_eq!(r.headers()["referrer-policy"], "no-referrer");
    assert!(
        r.headers()["content-security-policy"]
            .to_str()
            .unwrap_or("")
            .contains("default-src 'self'")
    );
    let html = r.text().await.expect("html");
    assert!(html.contains("/assets/connect.js"), "{html}");
}

#[tokio::test]
async fn a_connect_link_connects_vendors_in_its_first_browser_only() {
    let vendors = vendors().await;
    let app = app_with(Mode::ApiOnly, &vendors).await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let links = format!("/api/v1/users/{user}/connect-links");
    let made = app.post(&links, &key, json!({"providers": ["oura", "strava"]})).await;
    let token = token_of(&made.str("url"));

    // The first browser is given the link; another is told it was used.
    let mine = Browser::new();
    let (status, shown) = page(&app, &mine, &token).await;
    assert_eq!(status, 200, "{shown}");
    assert_eq!(shown["deployment"], "Acme Health");
    assert_eq!(vendor_status(&shown, "oura"), "not_connected");
    assert_eq!(vendor_status(&shown, "strava"), "not_connected");
    assert_eq!(shown["providers"][0]["icon_url"], "/static/provider-icons/oura.svg");
    assert!(mine.cookie_header().contains("wearhouse_connect="));
    let theirs = Browser::new();
    let (status, said) = page(&app, &theirs, &token).await;
    assert_eq!(status, 410);
    assert!(said["detail"].as_str().unwrap_or("").contains("opened in another browser"), "{said}");
    let (status, _) =
        call(&app, &theirs, Method::POST, &format!("/api/v1/connect/{token}/oura")).await;
    assert_eq!(status, 410, "another browser starts nothing");

    // Connected, back on the page with the outcome.
    let to = connect(&app, &mine, &token, "oura", true).await;
    assert_eq!(to, app.url(&format!("/connect/{token}?provider=oura&outcome=connected")));
    let (_, shown) = page(&app, &mine, &token).await;
    assert_eq!(vendor_status(&shown, "oura"), "connected");
    let rows = format!(
        "select count(*) from connections where user_id = '{user}' and provider = 'oura' and status = 'active'"
    );
    assert_eq!(app.count(&rows).await, 1);

    // Refused at the vendor: back on the page, saying so; nothing connected.
    let to = connect(&app, &mine, &token, "strava", false).await;
    let q = query(&to);
    assert!(to.starts_with(&app.url(&format!("/connect/{token}?"))), "{to}");
    assert_eq!(q["provider"], "strava");
    assert_eq!(q["error"], "access_denied: The user said no");
    let (_, shown) = page(&app, &mine, &token).await;
    assert_eq!(vendor_status(&shown, "strava"), "not_connected");

    // The vendor's URL carried to another browser connects no one there: back to the page.
    let (_, started) =
        call(&app, &mine, Method::POST, &format!("/api/v1/connect/{token}/strava")).await;
    let consent = started["authorization_url"].as_str().expect("authorization_url");
    let q = query(consent);
    let back = format!("{}?code={}&state={}", q["redirect_uri"], mock::CODE, q["state"]);
    let r = theirs.get(&back).await;
    let to = r.headers()["location"].to_str().expect("location").to_string();
    assert!(to.contains("error=This+authorization+was+started+in+another+browser"), "{to}");
    let strava = format!(
        "select count(*) from connections where user_id = '{user}' and provider = 'strava'"
    );
    assert_eq!(app.count(&strava).await, 0);

    // Only what the link offers.
    let (status, said) =
        call(&app, &mine, Method::POST, &format!("/api/v1/connect/{token}/whoop")).await;
    assert_eq!((status, said["detail"].clone()), (404, json!("This link does not offer 'whoop'")));

    // Disconnected: revoked, with its event.
    let path = format!("/api/v1/connect/{token}/oura");
    assert_eq!(call(&app, &mine, Method::DELETE, &path).await.0, 204);
    let (_, shown) = page(&app, &mine, &token).await;
    assert_eq!(vendor_status(&shown, "oura"), "revoked");
    assert_eq!(call(&app, &mine, Method::DELETE, &path).await.0, 204, "as the API's: done already");
    let never = format!("/api/v1/connect/{token}/strava");
    let (status, said) = call(&app, &mine, Method::DELETE, &never).await;
    assert_eq!((status, said["detail"].clone()), (404, json!("Not connected to Strava")));
    let revoked = "select count(*) from outbox where event_type = 'connection.revoked'";
    assert_eq!(app.count(revoked).await, 1);

    // Withdrawn by the integrator: the page says so, in its own browser too.
    let id = made.str("id");
    assert_eq!(app.call(Method::DELETE, &format!("{links}/{id}"), &key, None).await.status, 204);
    let (status, said) = page(&app, &mine, &token).await;
    assert_eq!(status, 410);
    assert!(said["detail"].as_str().unwrap_or("").contains("withdrawn"), "{said}");

    // Expired.
    let late = app.post(&links, &key, json!({})).await;
    let late_token = token_of(&late.str("url"));
    let expire = format!(
        "update connect_links set expires_at = now() - interval '1 second' where id = '{}'",
        late.str("id")
    );
    app.db().await.batch_execute(&expire).await.expect("expire");
    let (status, said) = page(&app, &Browser::new(), &late_token).await;
    assert_eq!(status, 410);
    assert!(said["detail"].as_str().unwrap_or("").contains("expired"), "{said}");

    // Its user deleted: the link is gone with them.
    let gone = app.post(&links, &key, json!({})).await;
    let gone_token = token_of(&gone.str("url"));
    let admin = app.admin().await;
    let deleted = app.call(Method::DELETE, &format!("/api/v1/users/{user}"), &admin, None).await;
    assert_eq!(deleted.status, 200);
    let (status, said) = page(&app, &Browser::new(), &gone_token).await;
    assert_eq!(status, 404);
    assert_eq!(said["detail"], "This link is not valid. Ask whoever sent it for a new one.");
}

/// Tokens that match no link are counted per address: past the limit, 429 with
/// `Retry-After`, before the database is asked (even for a good link from that address).
#[tokio::test]
async fn unknown_connect_links_are_throttled_per_address() {
    let app = TestApp::spawn_with(Mode::ApiOnly, |s| {
        s.redeem_max_failures_per_address = 3;
        s.trust_forwarded_for = true;
    })
    .await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let made = app.post(&format!("/api/v1/users/{user}/connect-links"), &key, json!({})).await;
    let good = token_of(&made.str("url"));
    let from = |address: &'static str, token: String| {
        let app = &app;
        async move {
            let r = app
                .http
                .get(app.url(&format!("/api/v1/connect/{token}")))
                .header("x-forwarded-for", address)
                .send()
                .await
                .expect("page");
            (r.status().as_u16(), r.headers().get("retry-after").is_some())
        }
    };
    for i in 0..3 {
        assert_eq!(from("10.0.0.1", format!("{i:048}")).await, (404, false));
    }
    assert_eq!(from("10.0.0.1", good.clone()).await, (429, true));
    assert_eq!(from("10.0.0.2", good).await.0, 200);
}

/// The connect page in Chromium at phone width (`portal/tests/connect.mjs`): Oura connected by
/// keyboard, Strava refused and then connected, Oura disconnected after a confirmation; a
/// second browser, an expired link and a deleted user's link each get their page. Checked here:
/// the connection rows and the `connection.created`/`revoked` webhooks at a receiver.
#[tokio::test]
async fn the_connect_page_in_a_browser() {
    let portal = crate::portal::portal_dir();
    let vendors = vendors().await;
    let app = app_with(Mode::All, &vendors).await;
    let admin = app.admin().await;
    let (hook, received) = crate::portal::receiver().await;
    let r = app.post("/api/v1/webhooks/endpoints", &admin, json!({"url": hook})).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let links = format!("/api/v1/users/{user}/connect-links");
    let url = |r: crate::util::Resp| r.str("url");
    let link = url(app
        .post(&links, &key, json!({"redirect_uri": "https://app.example.com/connected"}))
        .await);
    let expired = app.post(&links, &key, json!({})).await;
    let sql = format!(
        "update connect_links set expires_at = now() - interval '1 second' where id = '{}'",
        expired.str("id")
    );
    app.db().await.batch_execute(&sql).await.expect("expire");
    let other = app.user(&key, json!({})).await;
    let orphan =
        url(app.post(&format!("/api/v1/users/{other}/connect-links"), &key, json!({})).await);
    let deleted = app.call(Method::DELETE, &format!("/api/v1/users/{other}"), &admin, None).await;
    assert_eq!(deleted.status, 200);

    let shots = crate::portal::Screenshots::new("connect");
    let origins: Vec<String> = vendors.iter().map(|(_, m, _)| m.base.clone()).collect();
    let out = tokio::process::Command::new("node")
        .arg("tests/connect.mjs")
        .current_dir(&portal)
        .env("BASE", &app.base)
        .env("LINK", &link)
        .env("EXPIRED_LINK", url(expired))
        .env("DELETED_LINK", &orphan)
        .env("SCREENSHOTS", &shots.dir)
        .env("CHROMIUM", crate::portal::CHROMIUM)
        .env("ALSO_ALLOWED", origins.join(","))
        .stdin(Stdio::null())
        .output()
        .await
        .expect("run node");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the browser run failed:\n{stdout}\n{stderr}");

    let status = |slug: &str| {
        format!(
            "select count(*) from connections where user_id = '{user}' and provider = '{slug}' and status = '{}'",
            if slug == "oura" { "revoked" } else { "active" }
        )
    };
    assert_eq!(app.count(&status("oura")).await, 1, "Oura disconnected");
    assert_eq!(app.count(&status("strava")).await, 1, "Strava connected");
    // The integrator heard of both connections and the disconnection.
    let mut kinds = Vec::new();
    for _ in 0..100 {
        kinds = received
            .lock()
            .map(|l| {
                l.iter()
                    .filter(|e| e["data"]["user_id"] == user.as_str())
                    .filter_map(|e| e["type"].as_str().map(String::from))
                    .filter(|t| t.starts_with("connection."))
                    .collect()
            })
            .unwrap_or_default();
        kinds.sort();
        if kinds.len() >= 3 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let (created, revoked) = ("connection.created", "connection.revoked");
    assert_eq!(kinds.iter().filter(|k| *k == created).count(), 2, "{kinds:?}");
    assert_eq!(kinds.iter().filter(|k| *k == revoked).count(), 1, "{kinds:?}");
    for name in
        ["connect", "connect-connected", "connect-refused", "connect-used", "connect-expired"]
    {
        assert!(shots.dir.join(format!("{name}.png")).is_file(), "no screenshot {name}");
    }
    shots.done();
}
