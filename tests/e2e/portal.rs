//! The developer portal in a real browser against the real service and stack: Debian's Chromium
//! driven by `portal/tests/browser.mjs` (playwright-core). The service, a webhook receiver and a
//! generated export (about 7 MB) are set up here; the script logs in, makes an API key (shown
//! once), meets an error message, makes a user, uploads the export and waits for the import,
//! reads the charts, reorders the user's sources, registers an endpoint at the receiver and sends
//! a test event, and logs out, taking screenshots (desktop and phone width) into a temporary
//! directory, or into `PORTAL_SCREENSHOTS` (e.g. `docs/portal`, to refresh the README's).
//! What the browser did is then checked here, in the database and at the receiver.

use std::process::Stdio;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::util::{ADMIN_EMAIL, ADMIN_PASSWORD, Mode, TestApp};

pub(crate) const CHROMIUM: &str = "/usr/bin/chromium";

/// The portal's folder, where its browser scripts run, once its packages and Chromium are
/// installed (by scripts/test.sh).
pub(crate) fn portal_dir() -> std::path::PathBuf {
    let portal = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("portal");
    assert!(
        portal.join("node_modules/playwright-core").is_dir()
            && std::path::Path::new(CHROMIUM).exists(),
        "the portal's packages or Chromium are missing: scripts/test.sh installs them (scripts/portal.sh, apt chromium)"
    );
    portal
}

/// Where a browser run puts its screenshots: `PORTAL_SCREENSHOTS` when asked to refresh the
/// README's, else a temporary folder, removed by [`Screenshots::done`] so that a run leaves the
/// checkout as it was.
pub(crate) struct Screenshots {
    pub dir: std::path::PathBuf,
    asked: bool,
}

impl Screenshots {
    pub(crate) fn new(name: &str) -> Screenshots {
        let asked = std::env::var_os("PORTAL_SCREENSHOTS");
        let dir = match &asked {
            Some(dir) => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir),
            None => std::env::temp_dir().join(format!("{name}-shots-{}", uuid::Uuid::new_v4())),
        };
        std::fs::create_dir_all(&dir).expect("the screenshots' directory");
        Screenshots { dir, asked: asked.is_some() }
    }

    pub(crate) fn done(self) {
        if !self.asked {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// A webhook receiver: answers 204 and keeps the bodies.
pub(crate) async fn receiver() -> (String, Arc<Mutex<Vec<Value>>>) {
    let got = Arc::new(Mutex::new(Vec::new()));
    let kept = got.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |body: axum::body::Bytes| {
            let kept = kept.clone();
            async move {
                if let (Ok(v), Ok(mut list)) = (serde_json::from_slice::<Value>(&body), kept.lock())
                {
                    list.push(v);
                }
                axum::http::StatusCode::NO_CONTENT
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, got)
}

#[tokio::test]
async fn the_portal_in_a_browser() {
    let portal = portal_dir();
    let app = TestApp::spawn_with(Mode::All, |_| {}).await;
    let (hook, received) = receiver().await;
    // Twelve days up to today: the portal's 30-day range shows them.
    let export = std::env::temp_dir().join(format!("portal-export-{}.xml", uuid::Uuid::new_v4()));
    {
        let mut spec = ingest::export::generate::ExportSpec::new(12);
        spec.start = (chrono::Utc::now() - chrono::Duration::days(12)).date_naive();
        let mut file = std::io::BufWriter::new(std::fs::File::create(&export).expect("export"));
        ingest::export::generate::write_export(&mut file, &spec).expect("write the export");
    }
    // And one day over a year ago, under the multipart minimum of 5 MiB: the direct upload
    // takes it, and the charts find it.
    let small = std::env::temp_dir().join(format!("portal-small-{}.xml", uuid::Uuid::new_v4()));
    {
        let mut spec = ingest::export::generate::ExportSpec::new(1);
        spec.start = (chrono::Utc::now() - chrono::Duration::days(400)).date_naive();
        let mut file = std::io::BufWriter::new(std::fs::File::create(&small).expect("export"));
        ingest::export::generate::write_export(&mut file, &spec).expect("write the export");
    }
    assert!(std::fs::metadata(&small).map(|m| m.len()).unwrap_or(0) < 5 * 1024 * 1024);
    let shots = Screenshots::new("portal");
    let storage = app.settings.s3.s3_endpoint.clone().unwrap_or_default();
    let storage =
        url::Url::parse(&storage).map(|u| u.origin().ascii_serialization()).unwrap_or_default();
    let out = tokio::process::Command::new("node")
        .arg("tests/browser.mjs")
        .current_dir(&portal)
        .env("BASE", &app.base)
        .env("EMAIL", ADMIN_EMAIL)
        .env("PASSWORD", ADMIN_PASSWORD)
        .env("EXPORT", &export)
        .env("SMALL_EXPORT", &small)
        .env("RECEIVER", &hook)
        .env("SCREENSHOTS", &shots.dir)
        .env("CHROMIUM", CHROMIUM)
        .env("ALSO_ALLOWED", &storage)
        .stdin(Stdio::null())
        .output()
        .await
        .expect("run node");
    let _ = std::fs::remove_file(&export);
    let _ = std::fs::remove_file(&small);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the browser run failed:\n{stdout}\n{stderr}");

    // What the browser did, seen from here.
    let result: Value = stdout
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .and_then(|r| serde_json::from_str(r).ok())
        .expect("the script's result");
    let keys = "select count(*) from api_keys where name = 'portal-test' and revoked_at is null";
    assert_eq!(app.count(keys).await, 1);
    let user = result["user"].as_str().unwrap_or_default();
    let theirs = format!("select external_user_id, last_name from users where id = '{user}'");
    let row = app.db().await.query_one(&theirs, &[]).await.expect(&theirs);
    let (external, last): (Option<String>, Option<String>) = (row.get(0), row.get(1));
    assert_eq!(external.as_deref(), Some("ada-42"), "the create form's own id");
    assert_eq!(last.as_deref(), Some("Lovelace"));
    let imported = format!(
        "select count(*) from sync_runs where user_id = '{user}' and source = 'xml_import' and status in ('success', 'partial')"
    );
    assert_eq!(app.count(&imported).await, 2, "the export, and the small one");
    let ranked = format!(
        "select count(*) from source_priorities where user_id = '{user}' and kind = 'data_source'"
    );
    assert!(app.count(&ranked).await >= 2, "the reordered sources are the user's own ranking");
    let revoked = format!(
        "select count(*) from connect_links where user_id = '{user}' and revoked_at is not null"
    );
    assert_eq!(app.count(&revoked).await, 1, "the link made and revoked in the portal");
    let tests = received.lock().map(|l| l.len()).unwrap_or_default();
    assert!(tests >= 1, "the receiver got no test event");
    for name in [
        "login",
        "overview",
        "settings",
        "user",
        "webhook",
        "phone-overview",
        "phone-user",
        "phone-settings",
    ] {
        assert!(shots.dir.join(format!("{name}.png")).is_file(), "no screenshot {name}");
    }
    shots.done();
}
