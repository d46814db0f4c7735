//! A team: developers invited with roles, what each role may do, the last owner kept, removal
//! ending sessions at once, invitations that expire and work once, and invitations by mail
//! through a real SMTP server (PyPI's `aiosmtpd`).

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::util::{ADMIN_EMAIL, Auth, Resp, TestApp};

/// An invitation made by `by`: its id and link token.
async fn invite(app: &TestApp, by: &Auth, email: &str, role: &str) -> (String, String) {
    let r = app
        .post("/api/v1/developer/team/invitations", by, json!({"email": email, "role": role}))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["role"], role);
    assert_eq!(r.body["mailed"], false);
    let url = r.str("url");
    assert!(url.starts_with(&app.settings.public_url), "{url}");
    (r.str("id"), token_of(&url))
}

/// The token of an invitation link.
fn token_of(url: &str) -> String {
    url.rsplit_once("/#/join/").map(|(_, t)| t.to_string()).expect("a join link")
}

/// A port nothing listens on (for now).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

async fn join(app: &TestApp, token: &str, password: &str) -> Resp {
    app.post("/api/v1/team/join", &Auth::None, json!({"token": token, "password": password})).await
}

/// A colleague invited as `role`, joined: their bearer token.
pub async fn member(app: &TestApp, by: &Auth, email: &str, role: &str) -> Auth {
    let (_, token) = invite(app, by, email, role).await;
    let r = join(app, &token, "a long password").await;
    assert_eq!(r.status, 201, "{}", r.body);
    Auth::Bearer(r.str("access_token"))
}

async fn me(app: &TestApp, auth: &Auth) -> Value {
    let r = app.get("/api/v1/auth/me", auth).await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.body
}

#[tokio::test]
async fn a_team_of_three_works_by_role() {
    let app = TestApp::spawn().await;
    let owner = app.admin().await;
    assert_eq!(me(&app, &owner).await["role"], "owner");

    // The link says what it invites to; joining logs in with the invited role.
    let (_, token) = invite(&app, &owner, "bob@acme.example", "admin").await;
    let shown = app.post("/api/v1/team/invitation", &Auth::None, json!({"token": token})).await;
    assert_eq!(shown.status, 200, "{}", shown.body);
    assert_eq!(shown.body["email"], "bob@acme.example");
    assert_eq!(shown.body["role"], "admin");
    assert_eq!(shown.body["deployment_name"], "Acme Health");
    join(&app, &token, "short").await.assert_invalid(&["body", "password"], "string_too_short");
    let joined = join(&app, &token, "bob's long password").await;
    assert_eq!(joined.status, 201, "{}", joined.body);
    let bob = Auth::Bearer(joined.str("access_token"));
    let bob_me = me(&app, &bob).await;
    assert_eq!(bob_me["role"], "admin");
    assert_eq!(bob_me["email"], "bob@acme.example");
    // Once only; and the password chosen logs in.
    join(&app, &token, "another long one")
        .await
        .assert_error(404, "This invitation is not valid or has expired. Ask for a new one.");
    assert_eq!(app.login("bob@acme.example", "bob's long password").await.status, 200);

    // An admin invites viewers and admins, not owners.
    let r = app
        .post(
            "/api/v1/developer/team/invitations",
            &bob,
            json!({"email": "eve@acme.example", "role": "owner"}),
        )
        .await;
    r.assert_error(403, "Only an owner can invite an owner");
    let cyd = member(&app, &bob, "cyd@acme.example", "viewer").await;
    let team = app.get("/api/v1/developer/team", &cyd).await;
    let roles: Vec<(String, String)> = team
        .body
        .as_array()
        .expect("members")
        .iter()
        .map(|m| {
            (m["email"].as_str().unwrap_or("").into(), m["role"].as_str().unwrap_or("").into())
        })
        .collect();
    assert_eq!(
        roles,
        vec![
            (ADMIN_EMAIL.to_string(), "owner".to_string()),
            ("bob@acme.example".into(), "admin".into()),
            ("cyd@acme.example".into(), "viewer".into()),
        ]
    );

    // The viewer reads in the API and changes nothing.
    let user = app.user(&owner, json!({"email": "ada@example.com"})).await;
    assert_eq!(app.get(&format!("/api/v1/users/{user}"), &cyd).await.status, 200);
    assert_eq!(app.get("/api/v1/users", &cyd).await.status, 200);
    let refused = "The viewer role cannot do this: it needs the owner or admin role";
    app.post("/api/v1/users", &cyd, json!({})).await.assert_error(403, refused);
    app.post("/api/v1/developer/api-keys", &cyd, json!({"name": "k"}))
        .await
        .assert_error(403, refused);
    app.get("/api/v1/developer/audit", &cyd).await.assert_error(403, refused);
    app.call(Method::DELETE, &format!("/api/v1/users/{user}"), &cyd, None)
        .await
        .assert_error(403, refused);

    // Admins neither touch owners nor make them; owners do both.
    let owner_id = me(&app, &owner).await["id"].as_str().expect("id").to_string();
    let cyd_id = me(&app, &cyd).await["id"].as_str().expect("id").to_string();
    let bob_id = bob_me["id"].as_str().expect("id").to_string();
    let patch = |id: &str| format!("/api/v1/developer/team/{id}");
    let r = app.call(Method::PATCH, &patch(&owner_id), &bob, Some(json!({"role": "viewer"}))).await;
    r.assert_error(403, "Only an owner can change an owner, or make someone owner");
    let r = app.call(Method::PATCH, &patch(&cyd_id), &bob, Some(json!({"role": "owner"}))).await;
    assert_eq!(r.status, 403, "{}", r.body);
    let r = app.call(Method::PATCH, &patch(&cyd_id), &bob, Some(json!({"role": "admin"}))).await;
    assert_eq!((r.status, r.body["role"].clone()), (200, json!("admin")), "{}", r.body);
    let r = app.call(Method::PATCH, &patch(&cyd_id), &bob, Some(json!({"role": "boss"}))).await;
    assert_eq!(r.status, 422, "{}", r.body);

    // The last owner stays an owner and stays in the team.
    let last = "The team must keep an owner: make someone else owner first";
    let r =
        app.call(Method::PATCH, &patch(&owner_id), &owner, Some(json!({"role": "admin"}))).await;
    r.assert_error(409, last);
    app.call(Method::DELETE, &patch(&owner_id), &owner, None).await.assert_error(409, last);
    // With a second owner, the first may step down.
    let r = app.call(Method::PATCH, &patch(&bob_id), &owner, Some(json!({"role": "owner"}))).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r =
        app.call(Method::PATCH, &patch(&owner_id), &owner, Some(json!({"role": "admin"}))).await;
    assert_eq!(r.status, 200, "{}", r.body);

    // Removal ends the member's sessions at once.
    assert_eq!(app.get("/api/v1/users", &cyd).await.status, 200);
    let r = app.call(Method::DELETE, &patch(&cyd_id), &bob, None).await;
    assert_eq!(r.status, 204, "{}", r.body);
    assert_eq!(app.get("/api/v1/users", &cyd).await.status, 401);
    assert_eq!(app.get("/api/v1/auth/me", &cyd).await.status, 401);
    assert_eq!(app.login("cyd@acme.example", "a long password").await.status, 401);
    let r = app.call(Method::DELETE, &patch(&cyd_id), &bob, None).await;
    assert_eq!(r.status, 404, "{}", r.body);
}

#[tokio::test]
async fn invitations_expire_are_withdrawn_and_replaced() {
    let app = TestApp::spawn().await;
    let owner = app.admin().await;
    let db = app.db().await;
    let gone = "This invitation is not valid or has expired. Ask for a new one.";

    // Expired: the link no longer works.
    let (id, token) = invite(&app, &owner, "dan@acme.example", "viewer").await;
    db.execute(
        "update team_invitations set expires_at = now() - interval '1 second' where id = $1",
        &[&uuid::Uuid::parse_str(&id).expect("uuid")],
    )
    .await
    .expect("expire");
    join(&app, &token, "a long password").await.assert_error(404, gone);
    let shown = app.post("/api/v1/team/invitation", &Auth::None, json!({"token": token})).await;
    shown.assert_error(404, gone);

    // Withdrawn: listed no more, the link no longer works.
    let (id, token) = invite(&app, &owner, "dan@acme.example", "viewer").await;
    let listed = app.get("/api/v1/developer/team/invitations", &owner).await;
    assert_eq!(listed.body.as_array().map(Vec::len), Some(1), "{}", listed.body);
    let path = format!("/api/v1/developer/team/invitations/{id}");
    assert_eq!(app.call(Method::DELETE, &path, &owner, None).await.status, 204);
    assert_eq!(app.call(Method::DELETE, &path, &owner, None).await.status, 404);
    join(&app, &token, "a long password").await.assert_error(404, gone);

    // A new invitation of the same address replaces the older one.
    let (_, older) = invite(&app, &owner, "dan@acme.example", "viewer").await;
    let (_, newer) = invite(&app, &owner, "dan@acme.example", "admin").await;
    join(&app, &older, "a long password").await.assert_error(404, gone);
    let r = join(&app, &newer, "a long password").await;
    assert_eq!(r.status, 201, "{}", r.body);
    let dan = Auth::Bearer(r.str("access_token"));
    assert_eq!(me(&app, &dan).await["role"], "admin");

    // A member's address cannot be invited again.
    let r = app
        .post(
            "/api/v1/developer/team/invitations",
            &owner,
            json!({"email": "DAN@acme.example", "role": "viewer"}),
        )
        .await;
    r.assert_error(409, "A developer with this email is already in the team");
    let r = app
        .post("/api/v1/developer/team/invitations", &owner, json!({"email": "x", "role": "viewer"}))
        .await;
    r.assert_invalid(&["body", "email"], "value_error");

    // Made-up tokens cost an address its tries.
    let mut last = 0;
    for _ in 0..12 {
        last = app
            .post("/api/v1/team/invitation", &Auth::None, json!({"token": "made-up"}))
            .await
            .status;
    }
    assert_eq!(last, 429);
}

/// `python3 -m aiosmtpd` on a free port, printing what it receives.
struct SmtpServer {
    port: u16,
    child: tokio::process::Child,
}

impl SmtpServer {
    async fn start() -> SmtpServer {
        let port = free_port();
        let child = tokio::process::Command::new("python3")
            .args(["-u", "-m", "aiosmtpd", "-n", "-l", &format!("127.0.0.1:{port}")])
            .args(["-c", "aiosmtpd.handlers.Debugging"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("python3 -m aiosmtpd (pip install aiosmtpd; scripts/test.sh does)");
        for _ in 0..100 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        SmtpServer { port, child }
    }

    /// What it printed, up to the end of the first message.
    async fn first_message(&mut self) -> String {
        let stdout = self.child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        let mut out = String::new();
        let read = async {
            while let Ok(Some(line)) = lines.next_line().await {
                if line.contains("END MESSAGE") {
                    break;
                }
                out.push_str(&line);
                out.push('\n');
            }
        };
        tokio::time::timeout(Duration::from_secs(10), read).await.expect("a message within 10 s");
        out
    }
}

/// A quoted-printable text as read: soft line breaks joined, `=XX` decoded.
fn quoted_printable(text: &str) -> String {
    let joined = text.replace("=\n", "");
    let mut out = Vec::new();
    let bytes = joined.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'=', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test]
async fn invitations_are_mailed_when_smtp_is_set() {
    let mut smtp = SmtpServer::start().await;
    let url = format!("smtp://127.0.0.1:{}", smtp.port);
    let app = TestApp::spawn_with(crate::util::Mode::All, |s| s.smtp_url = Some(url)).await;
    let owner = app.admin().await;
    let r = app
        .post(
            "/api/v1/developer/team/invitations",
            &owner,
            json!({"email": "fay@acme.example", "role": "viewer"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["mailed"], true, "{}", r.body);
    let mail = quoted_printable(&smtp.first_message().await);
    assert!(mail.contains("To: fay@acme.example"), "{mail}");
    assert!(mail.contains("From: \"Acme Health\" <team@acme.example>"), "{mail}");
    assert!(mail.contains("Subject: Join Acme Health on wearhouse"), "{mail}");
    assert!(mail.contains(&r.str("url")), "the link is in the mail: {mail}");
    // The mailed link works.
    assert_eq!(join(&app, &token_of(&r.str("url")), "fay's long password").await.status, 201);
}

#[tokio::test]
async fn an_unreachable_mail_server_leaves_the_link_to_pass_on() {
    let port = free_port();
    let url = format!("smtp://127.0.0.1:{port}");
    let app = TestApp::spawn_with(crate::util::Mode::All, |s| s.smtp_url = Some(url)).await;
    let owner = app.admin().await;
    let r = app
        .post(
            "/api/v1/developer/team/invitations",
            &owner,
            json!({"email": "gus@acme.example", "role": "viewer"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["mailed"], false, "{}", r.body);
    assert!(r.str("url").contains("/#/join/"));
}

/// Where `SMTP_URL` asks for TLS (`smtps://`, or STARTTLS with `?tls=required`), a server that
/// offers none gets no mail: the invitation is made, not mailed, and nothing goes out in clear.
#[tokio::test]
async fn mail_never_goes_out_in_clear_where_tls_is_asked_for() {
    let mut smtp = SmtpServer::start().await;
    let port = smtp.port;
    let invite = |url: String, email: &'static str| async move {
        let app = TestApp::spawn_with(crate::util::Mode::All, |s| s.smtp_url = Some(url)).await;
        let owner = app.admin().await;
        let body = json!({"email": email, "role": "viewer"});
        app.post("/api/v1/developer/team/invitations", &owner, body).await
    };
    for url in
        [format!("smtp://127.0.0.1:{port}?tls=required"), format!("smtps://127.0.0.1:{port}")]
    {
        let r = invite(url.clone(), "ida@acme.example").await;
        assert_eq!(r.status, 201, "{url}: {}", r.body);
        assert_eq!(r.body["mailed"], false, "{url}: {}", r.body);
    }
    // The server's first message is the one sent in clear where clear was asked for.
    let r = invite(format!("smtp://127.0.0.1:{port}"), "jon@acme.example").await;
    assert_eq!(r.body["mailed"], true, "{}", r.body);
    let mail = smtp.first_message().await;
    assert!(mail.contains("To: jon@acme.example"), "{mail}");
    assert!(!mail.contains("ida@acme.example"), "{mail}");
}

/// The team in Chromium (`portal/tests/team.mjs`): an invitation made, copied, accepted in a
/// logged-out browser; the viewer's pages offer no changes; the audit trail found; the member
/// removed, her session ended. Checked here: the rows the browser left.
#[tokio::test]
async fn the_team_in_a_browser() {
    let portal = crate::portal::portal_dir();
    let app = TestApp::spawn_at_own_url(crate::util::Mode::ApiOnly, |_| {}).await;
    let shots = crate::portal::Screenshots::new("team");
    let out = tokio::process::Command::new("node")
        .arg("tests/team.mjs")
        .current_dir(&portal)
        .env("BASE", &app.base)
        .env("EMAIL", ADMIN_EMAIL)
        .env("PASSWORD", crate::util::ADMIN_PASSWORD)
        .env("SCREENSHOTS", &shots.dir)
        .env("CHROMIUM", crate::portal::CHROMIUM)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .expect("run node");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the browser run failed:\n{stdout}\n{stderr}");
    shots.done();
    let accepted = "select count(*) from team_invitations where accepted_at is not null";
    assert_eq!(app.count(accepted).await, 1);
    assert_eq!(app.count("select count(*) from developers").await, 1, "the member was removed");
    let keys = "select count(*) from api_keys where name = 'reader' and scopes = 1";
    assert_eq!(app.count(keys).await, 1, "a key that may only read");
}
