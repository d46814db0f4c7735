//! Connecting a user to a cloud vendor by OAuth, against a local server that answers as the
//! vendor's token endpoint documents (Oura: form body with the client credentials,
//! `{token_type, access_token, expires_in, refresh_token}`; RFC 6749 errors).

use std::collections::HashMap;

use axum::Form;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde_json::{Value, json};

use crate::util::{Auth, Browser, Mode, TestApp};

const CALLBACK: &str = "http://127.0.0.1:8000/api/v1/oauth/oura/callback";

/// Oura's token endpoint: the code `good-code` gives tokens; anything else is `invalid_grant`.
async fn token(Form(form): Form<HashMap<String, String>>) -> axum::response::Response {
    let has = |k: &str, v: &str| form.get(k).map(String::as_str) == Some(v);
    if !(has("client_id", "oura-app") && has("client_secret", "oura-secret")) {
        return (StatusCode::UNAUTHORIZED, axum::Json(json!({"error": "invalid_client"})))
            .into_response();
    }
    if has("grant_type", "authorization_code")
        && has("code", "good-code")
        && has("redirect_uri", CALLBACK)
    {
        return axum::Json(json!({"token_type": "bearer", "access_token": "oura-access-1",
            "expires_in": 86400, "refresh_token": "oura-refresh-1", "scope": "personal daily"}))
        .into_response();
    }
    (
        StatusCode::BAD_REQUEST,
        axum::Json(json!({"error": "invalid_grant",
        "error_description": "code is invalid or used"})),
    )
        .into_response()
}

/// Tokens Oura was asked to revoke.
static REVOKED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

async fn revoke(
    axum::extract::Query(q): axum::extract::Query<HashMap<String, String>>,
) -> StatusCode {
    if let (Some(t), Ok(mut list)) = (q.get("access_token"), REVOKED.lock()) {
        list.push(t.clone());
    }
    StatusCode::OK
}

async fn vendor() -> String {
    let me = || async { axum::Json(json!({"id": "oura-user-7", "age": 31, "email": null})) };
    let app = axum::Router::new()
        .route("/oauth/token", axum::routing::post(token))
        .route("/oauth/revoke", axum::routing::post(revoke))
        .route("/v2/usercollection/personal_info", axum::routing::get(me));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    base
}

fn query(url: &str) -> HashMap<String, String> {
    url::Url::parse(url).expect("url").query_pairs().into_owned().collect()
}

fn authorize(provider: &str, q: &str) -> String {
    format!("/api/v1/oauth/{provider}/authorize?{q}")
}

/// Starts connecting `user` to Oura and opens the link in a new browser: the browser, the
/// state, and where the link sent it.
async fn opened(app: &TestApp, key: &Auth, user: &str) -> (Browser, String, String) {
    let r = app.get(&authorize("oura", &format!("user_id={user}")), key).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let browser = Browser::new();
    let to = browser.open(app, &r.str("authorization_url")).await;
    (browser, r.str("state"), to)
}

/// The vendor sends the browser back with `q`.
async fn back(app: &TestApp, browser: &Browser, q: &str) -> reqwest::Response {
    browser.get(&app.url(&format!("/api/v1/oauth/oura/callback?{q}"))).await
}

async fn oura_app(base: &str) -> TestApp {
    TestApp::spawn_with(Mode::ApiOnly, |s| {
        let vars = [
            ("OURA_CLIENT_ID", "oura-app".to_string()),
            ("OURA_CLIENT_SECRET", "oura-secret".to_string()),
            ("OURA_TOKEN_URL", format!("{base}/oauth/token")),
            ("OURA_API_URL", base.to_string()),
        ];
        s.vendor_variables = Some(vars.into_iter().map(|(k, v)| (k.to_string(), v)).collect());
    })
    .await
}

#[tokio::test]
async fn a_user_connects_oura_with_sealed_tokens_and_disconnects() {
    let base = vendor().await;
    let app = oura_app(&base).await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let listed = app.get("/api/v1/oauth/providers?cloud_only=true", &Auth::None).await;
    assert_eq!(listed.body[0]["provider"], "oura", "{}", listed.body);
    assert_eq!(listed.body[0]["is_enabled"], true);

    // What is refused.
    assert_eq!(
        app.get(&authorize("oura", &format!("user_id={user}")), &Auth::None).await.status,
        401
    );
    app.get(&authorize("oura", ""), &key).await.assert_invalid(&["query", "user_id"], "missing");
    app.get(&authorize("phonehealth", &format!("user_id={user}")), &key)
        .await
        .assert_error(400, "Provider 'phonehealth' does not support OAuth");
    app.get(&authorize("Oura", &format!("user_id={user}")), &key)
        .await
        .assert_error(400, "Unknown provider: Oura");
    let evil = format!("user_id={user}&redirect_uri=https://evil.example/steal");
    app.get(&authorize("oura", &evil), &key).await.assert_error(
        400,
        "redirect_uri is neither under PUBLIC_URL nor in OAUTH_REDIRECT_ALLOWLIST",
    );

    // The link handed out is the service's; opened, it sets the binding cookie and sends the
    // browser on to Oura's authorize URL, with the app, the scopes, the callback and the state.
    let ok = format!("user_id={user}&redirect_uri=https://app.example.com/connected/done");
    let r = app.get(&authorize("oura", &ok), &key).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let link = r.str("authorization_url");
    let q = query(&link);
    assert!(link.starts_with("http://127.0.0.1:8000/api/v1/oauth/oura/start?"), "{link}");
    assert_eq!(q["state"], r.str("state"));
    let browser = Browser::new();
    let start = app.url(link.trim_start_matches("http://127.0.0.1:8000"));
    let started = browser.get(&start).await;
    assert_eq!(started.status(), 303);
    let cookie = started.headers()["set-cookie"].to_str().expect("cookie").to_string();
    assert!(cookie.starts_with("wearhouse_oauth_"), "{cookie}");
    for part in ["Path=/api/v1/oauth/oura/", "HttpOnly", "SameSite=Lax", "Max-Age=900"] {
        assert!(cookie.contains(part), "{cookie}: {part}");
    }
    let url = started.headers()["location"].to_str().expect("location").to_string();
    assert!(url.starts_with("https://cloud.ouraring.com/oauth/authorize?"), "{url}");
    let q = query(&url);
    assert_eq!(q["client_id"], "oura-app");
    assert_eq!(q["response_type"], "code");
    assert_eq!(q["redirect_uri"], CALLBACK);
    assert_eq!(q["scope"], "personal daily heartrate workout session spo2Daily");
    assert_eq!(q["state"], r.str("state"));

    // The vendor sends the user back: the code is exchanged, the user sent on, the cookie
    // cleared.
    let state = r.str("state");
    let r =
        back(&app, &browser, &format!("code=good-code&scope=personal+daily&state={state}")).await;
    assert_eq!(r.status(), 303);
    assert_eq!(r.headers()["location"], "https://app.example.com/connected/done");
    assert!(r.headers()["set-cookie"].to_str().is_ok_and(|c| c.contains("Max-Age=0")));
    // Stored sealed: no token in clear anywhere in the row.
    let row: String = app
        .db()
        .await
        .query_one("select row_to_json(c)::text from connections c where provider = 'oura'", &[])
        .await
        .expect("connection")
        .get(0);
    assert!(!row.contains("oura-access-1") && !row.contains("oura-refresh-1"), "{row}");
    assert!(row.contains("sealed:v1:"), "{row}");
    let list = app.get(&format!("/api/v1/users/{user}/connections"), &key).await;
    assert_eq!(list.body[0]["provider"], "oura", "{}", list.body);
    assert_eq!(list.body[0]["status"], "active");
    assert_eq!(list.body[0]["scope"], "personal daily");
    // Who the user is at Oura, for its webhooks.
    assert_eq!(list.body[0]["provider_user_id"], "oura-user-7");

    // The initial sync is queued: the last 30 days.
    let days =
        "select extract(epoch from window_end - window_start)::int8 / 86400 from vendor_pulls";
    let rows = app.db().await.query(days, &[]).await.expect("pulls");
    assert_eq!(rows.iter().map(|r| r.get::<_, i64>(0)).collect::<Vec<_>>(), [30]);

    // connection.created, once, in the contract's shape.
    let created = "select payload->'data' from outbox where event_type = 'connection.created'";
    let rows = app.db().await.query(created, &[]).await.expect("outbox");
    assert_eq!(rows.len(), 1);
    let data: Value = rows[0].get(0);
    assert_eq!(
        (data["user_id"].as_str(), data["provider"].as_str()),
        (Some(user.as_str()), Some("oura"))
    );
    assert_eq!(data["connection_id"], list.body[0]["id"]);
    assert!(data["connected_at"].is_string(), "{data}");

    // A state works once.
    let r = back(&app, &browser, &format!("code=good-code&state={state}")).await;
    assert_eq!(r.status(), 400);
    let body: Value = r.json().await.expect("json");
    assert_eq!(body["detail"], "Invalid or expired state parameter");

    // The user said no; a code the vendor refuses; no parameters at all.
    let r = back(&app, &browser, "error=access_denied&state=x").await;
    assert_eq!(r.status(), 303);
    assert_eq!(r.headers()["location"], "/api/v1/oauth/error?message=access_denied");
    let (browser, state, _) = opened(&app, &key, &user).await;
    let r = back(&app, &browser, &format!("code=stale-code&state={state}")).await;
    assert_eq!(r.status(), 400);
    let body: Value = r.json().await.expect("json");
    assert!(body["detail"].as_str().is_some_and(|d| d.starts_with("Oura refused")), "{body}");
    let r = back(&app, &browser, "").await;
    assert_eq!(r.headers()["location"], "/api/v1/oauth/error?message=Missing+OAuth+parameters");

    // Authorizing again while connected renews the tokens; it is no new connection.
    let (browser, state, _) = opened(&app, &key, &user).await;
    let r = back(&app, &browser, &format!("code=good-code&state={state}")).await;
    assert_eq!(r.status(), 303);
    assert_eq!(
        app.count("select count(*) from outbox where event_type = 'connection.created'").await,
        1
    );
    assert_eq!(app.count("select count(*) from connections").await, 1);

    // Disconnecting: 204, revoked, tokens forgotten, connection.revoked once.
    let path = format!("/api/v1/users/{user}/connections/oura");
    let r = app.call(reqwest::Method::DELETE, &path, &key, None).await;
    assert_eq!(r.status, 204, "{}", r.body);
    let list = app.get(&format!("/api/v1/users/{user}/connections"), &key).await;
    assert_eq!(list.body[0]["status"], "revoked");
    // Revoked at Oura too.
    assert!(REVOKED.lock().map(|l| l.contains(&"oura-access-1".to_string())).unwrap_or(false));
    let r = app.call(reqwest::Method::DELETE, &path, &key, None).await;
    assert_eq!(r.status, 204, "already revoked");
    let revoked = "select payload->'data' from outbox where event_type = 'connection.revoked'";
    let rows = app.db().await.query(revoked, &[]).await.expect("outbox");
    assert_eq!(rows.len(), 1);
    let data: Value = rows[0].get(0);
    assert_eq!(
        (data["reason"].as_str(), data["provider"].as_str()),
        (Some("user_disconnected"), Some("oura"))
    );
    assert!(data["revoked_at"].is_string(), "{data}");
    let tokens = "select count(*) from connections where access_token_sealed is not null
                  or refresh_token_sealed is not null";
    assert_eq!(app.count(tokens).await, 0);
    let google = format!("/api/v1/users/{user}/connections/google");
    app.call(reqwest::Method::DELETE, &google, &key, None)
        .await
        .assert_error(404, &format!("Connection with ID: {user} not found."));
    let bad = format!("/api/v1/users/{user}/connections/Oura");
    app.call(reqwest::Method::DELETE, &bad, &key, None)
        .await
        .assert_error(400, "Unknown provider: Oura");
}

/// Issue 29: the flow belongs to the browser that opened its link first. A link forwarded
/// after it was opened, a code carried to another browser, a link opened late or twice, and a
/// vendor account already on another user are all refused; a user's pending flows are capped.
#[tokio::test]
async fn an_authorization_is_bound_to_its_browser_and_its_vendor_account_to_one_user() {
    let base = vendor().await;
    let app = oura_app(&base).await;
    let key = app.api_key().await;
    let (alice, mallory) = (app.user(&key, json!({})).await, app.user(&key, json!({})).await);

    // Mallory starts a flow for herself and opens the link; the victim's browser comes back
    // from Oura with Mallory's state (a forwarded vendor URL, or a forged callback): refused,
    // and the state is spent.
    let (_mallory_browser, state, _) = opened(&app, &key, &mallory).await;
    let victim = Browser::new();
    let r = back(&app, &victim, &format!("code=good-code&state={state}")).await;
    assert_eq!(r.status(), 400);
    let body: Value = r.json().await.expect("json");
    assert_eq!(
        body["detail"],
        "This authorization was started in another browser; start connecting again"
    );
    assert_eq!(app.count("select count(*) from connections").await, 0, "nothing connected");

    // A link works once: opened again (forwarded after use), it goes nowhere.
    let r = app.get(&authorize("oura", &format!("user_id={mallory}")), &key).await;
    let link = r.str("authorization_url");
    Browser::new().open(&app, &link).await;
    let to = Browser::new().open(&app, &link).await;
    assert_eq!(
        to,
        "/api/v1/oauth/error?message=This+link+was+opened+already%3B+start+connecting+again"
    );

    // A link not opened within five minutes has expired.
    let r = app.get(&authorize("oura", &format!("user_id={mallory}")), &key).await;
    let mut redis = app.redis().await;
    let key_of = format!("{}:oauth_state:{}", app.settings.redis_key_prefix, r.str("state"));
    let kept: String = redis::cmd("GET").arg(&key_of).query_async(&mut redis).await.expect("get");
    let mut kept: Value = serde_json::from_str(&kept).expect("json");
    kept["created"] = json!(kept["created"].as_i64().unwrap_or_default() - 301);
    let () = redis::cmd("SET")
        .arg(&key_of)
        .arg(kept.to_string())
        .arg("KEEPTTL")
        .query_async(&mut redis)
        .await
        .expect("set");
    let to = Browser::new().open(&app, &r.str("authorization_url")).await;
    assert_eq!(to, "/api/v1/oauth/error?message=This+link+has+expired%3B+start+connecting+again");

    // Alice connects her Oura account; Mallory's flow, approved with the same Oura account, is
    // refused: the account is Alice's.
    let (browser, state, _) = opened(&app, &key, &alice).await;
    assert_eq!(back(&app, &browser, &format!("code=good-code&state={state}")).await.status(), 303);
    let (browser, state, _) = opened(&app, &key, &mallory).await;
    let r = back(&app, &browser, &format!("code=good-code&state={state}")).await;
    assert_eq!(r.status(), 303);
    assert_eq!(
        r.headers()["location"],
        "/api/v1/oauth/error?message=This+Oura+account+is+already+connected+to+another+user"
    );
    let owners = "select user_id::text from connections where status = 'active'";
    let rows = app.db().await.query(owners, &[]).await.expect("connections");
    assert_eq!(rows.iter().map(|r| r.get::<_, String>(0)).collect::<Vec<_>>(), [alice.as_str()]);
    assert_eq!(
        app.count("select count(*) from vendor_pulls").await,
        1,
        "Alice's initial sync only"
    );

    // 200 authorizations of one user keep five flows in Redis; the oldest are forgotten.
    let mut states = Vec::new();
    for _ in 0..200 {
        states.push(
            app.get(&authorize("oura", &format!("user_id={mallory}")), &key).await.str("state"),
        );
    }
    let pattern = format!("{}:oauth_*", app.settings.redis_key_prefix);
    let keys: Vec<String> =
        redis::cmd("KEYS").arg(&pattern).query_async(&mut redis).await.expect("keys");
    let flows = keys.iter().filter(|k| k.contains(":oauth_state:")).count();
    assert!(flows <= 5, "{flows} flows kept: {keys:?}");
    assert!(keys.len() <= 5 + 5 + 2, "{} keys: {keys:?}", keys.len());
    let last = states.last().cloned().unwrap_or_default();
    assert!(keys.iter().any(|k| k.ends_with(&last)), "the newest flow is kept");
    let first = format!("/api/v1/oauth/oura/start?state={}", states[0]);
    let r = Browser::new().get(&app.url(&first)).await;
    assert_eq!(
        r.headers()["location"],
        "/api/v1/oauth/error?message=This+link+has+expired%3B+start+connecting+again"
    );
}

/// Issue 29's attack itself: Mallory, with her own SDK token, starts a flow and passes the link,
/// unopened, to a victim whose browser opens it first and who approves at Oura. Flows an end
/// user's token starts are finished by that client (`completion=client`): the callback connects
/// no one and hands the victim's browser a code that the victim's app cannot use for Mallory's
/// user and that Mallory never sees. Her own flow, finished by her client, connects her.
#[tokio::test]
async fn a_flow_an_end_user_starts_is_finished_by_their_own_client() {
    let base = vendor().await;
    let app = oura_app(&base).await;
    let key = app.api_key().await;
    let (mallory, victim) = (app.user(&key, json!({})).await, app.user(&key, json!({})).await);
    let sdk = |user: &str| {
        let (app, key, path) = (&app, &key, format!("/api/v1/users/{user}/token"));
        async move { Auth::Bearer(app.post(&path, key, json!({})).await.str("access_token")) }
    };
    let (mallorys, victims) = (sdk(&mallory).await, sdk(&victim).await);
    let done = "https://app.example.com/connected/done";
    app.get(&authorize("oura", &format!("user_id={mallory}")), &mallorys)
        .await
        .assert_invalid(&["query", "redirect_uri"], "missing");
    let started = |browser: Browser| {
        let (app, token) = (&app, &mallorys);
        let q = format!("user_id={mallory}&redirect_uri={done}");
        async move {
            let r = app.get(&authorize("oura", &q), token).await;
            assert_eq!(r.status, 200, "{}", r.body);
            browser.open(app, &r.str("authorization_url")).await;
            let back =
                back(app, &browser, &format!("code=good-code&state={}", r.str("state"))).await;
            assert_eq!(back.status(), 303);
            let to = back.headers()["location"].to_str().expect("location").to_string();
            assert!(to.starts_with(&format!("{done}?completion=")), "{to}");
            query(&to)["completion"].clone()
        }
    };
    let complete = |code: &str, user: &str, auth: &Auth| {
        let body = json!({"completion": code, "user_id": user});
        let (app, auth) = (&app, auth.clone());
        async move { app.post("/api/v1/oauth/oura/complete", &auth, body).await }
    };

    // The victim's browser comes back with a code: nothing is connected.
    let code = started(Browser::new()).await;
    assert_eq!(app.count("select count(*) from connections").await, 0);
    // The victim's app gives it back for the victim: refused, and the code is spent.
    complete(&code, &victim, &victims)
        .await
        .assert_error(400, "This connection was started for another user");
    complete(&code, &mallory, &mallorys)
        .await
        .assert_error(400, "Invalid or expired completion code");
    assert_eq!(
        complete("guess", &victim, &mallorys).await.status,
        403,
        "Mallory's token, the victim"
    );
    assert_eq!(app.count("select count(*) from connections").await, 0, "no one connected");

    // Mallory's own flow, opened in her browser and finished by her client: connected, once.
    let code = started(Browser::new()).await;
    let r = complete(&code, &mallory, &mallorys).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body, json!({"success": true, "provider": "oura", "user_id": mallory}));
    complete(&code, &mallory, &mallorys)
        .await
        .assert_error(400, "Invalid or expired completion code");
    let active = "select count(*) from connections where status = 'active'";
    assert_eq!(app.count(active).await, 1);
    assert_eq!(app.count("select count(*) from vendor_pulls").await, 1, "the initial sync");
    let sealed = "select count(*) from connections where access_token_sealed like 'sealed:v1:%'";
    assert_eq!(app.count(sealed).await, 1);

    // An API key may ask for the same; a victim's vendor account already on Mallory stays hers.
    let q = format!("user_id={victim}&redirect_uri={done}&completion=client");
    let r = app.get(&authorize("oura", &q), &key).await;
    let browser = Browser::new();
    browser.open(&app, &r.str("authorization_url")).await;
    let back = back(&app, &browser, &format!("code=good-code&state={}", r.str("state"))).await;
    let to = back.headers()["location"].to_str().expect("location").to_string();
    let code = query(&to)["completion"].clone();
    complete(&code, &victim, &key)
        .await
        .assert_error(409, "This Oura account is already connected to another user");
    app.get(&authorize("oura", &format!("user_id={victim}&completion=later")), &key)
        .await
        .assert_invalid(&["query", "completion"], "enum");
}

/// Oura's token endpoint for refreshes: `oura-refresh-1` is renewed once (single use), anything
/// else is `invalid_grant`.
async fn refresh(
    axum::extract::State(calls): axum::extract::State<
        std::sync::Arc<std::sync::atomic::AtomicUsize>,
    >,
    Form(form): Form<HashMap<String, String>>,
) -> axum::response::Response {
    calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let has = |k: &str, v: &str| form.get(k).map(String::as_str) == Some(v);
    if has("grant_type", "refresh_token")
        && has("refresh_token", "oura-refresh-1")
        && has("client_secret", "oura-secret")
    {
        return axum::Json(json!({"token_type": "bearer", "access_token": "oura-access-2",
            "expires_in": 86400, "refresh_token": "oura-refresh-2"}))
        .into_response();
    }
    (StatusCode::BAD_REQUEST, axum::Json(json!({"error": "invalid_grant"}))).into_response()
}

#[tokio::test]
async fn tokens_are_renewed_before_they_expire_and_a_refused_refresh_ends_the_connection() {
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let vendor_app = axum::Router::new()
        .route("/oauth/token", axum::routing::post(refresh))
        .with_state(calls.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let token_url = format!("http://{}/oauth/token", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, vendor_app).await });

    let app = TestApp::spawn_with(Mode::ApiOnly, |_| {}).await;
    let key = app.api_key().await;
    let user: schema::ids::UserId = app.user(&key, json!({})).await.parse().expect("uuid");
    let db = schema::Db::connect(&app.settings.database_url, 2).await.expect("pool");
    let keys = schema::sealed::MasterKeys::new(crate::util::MASTER_KEY, None).expect("key");
    let oura = vendors::by_slug("oura").expect("oura");
    let ends = vendors::Endpoints {
        client_id: "oura-app".into(),
        client_secret: "oura-secret".into(),
        authorize_url: "http://127.0.0.1:9/authorize".into(),
        token_url,
        api_url: "http://127.0.0.1:9".into(),
        ..vendors::Endpoints::default()
    };
    let http = vendors::oauth::http_client().expect("http");
    let client = vendors::tokens::Client {
        db: &db,
        keys: &keys,
        http: &http,
        redirect: CALLBACK,
        events: true,
    };

    let none = vendors::tokens::access_token(&client, oura, &ends, user).await;
    assert_eq!(
        none.map_err(|e| e.to_string()).err().as_deref(),
        Some("User not connected to oura")
    );

    // Connected, with an access token a minute from expiring: renewed once, then reused.
    let connect = |access: &'static str, refresh: &'static str| {
        let grant = schema::connections::Grant {
            access_token: access,
            refresh_token: Some(refresh),
            expires_at: Some(chrono::Utc::now() + chrono::Duration::seconds(60)),
            scope: None,
            provider_user_id: None,
        };
        let (db, keys) = (&db, &keys);
        async move {
            schema::connections::connect(db, keys, user, "oura", &grant, true)
                .await
                .expect("connect")
        }
    };
    connect("oura-access-1", "oura-refresh-1").await;
    for _ in 0..2 {
        let token = vendors::tokens::access_token(&client, oura, &ends, user)
            .await
            .map_err(|e| e.to_string());
        assert_eq!(token.as_deref(), Ok("oura-access-2"));
    }
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1, "renewed once, then reused");
    let row: String = app
        .db()
        .await
        .query_one("select row_to_json(c)::text from connections c", &[])
        .await
        .expect("row")
        .get(0);
    assert!(!row.contains("oura-access-2") && !row.contains("oura-refresh-2"), "{row}");

    // A refresh token the vendor refuses: the connection ends, and says why.
    connect("oura-access-3", "spent-refresh").await;
    let refused =
        vendors::tokens::access_token(&client, oura, &ends, user).await.map_err(|e| e.to_string());
    assert_eq!(
        refused.err().as_deref(),
        Some("Refresh token rejected for oura; reconnection required")
    );
    let status = app.count("select count(*) from connections where status = 'revoked'").await;
    assert_eq!(status, 1);
    let reason =
        "select payload->'data'->>'reason' from outbox where event_type = 'connection.revoked'";
    let rows = app.db().await.query(reason, &[]).await.expect("outbox");
    assert_eq!(rows.iter().map(|r| r.get::<_, String>(0)).collect::<Vec<_>>(), ["refresh_failed"]);
}
