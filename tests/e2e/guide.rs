//! `docs/integrate.md` cannot rot: each of its blocks is a file of the repository (checked
//! here, byte for byte), and the files run against the real service: the curl quickstart, then
//! the webhook it caused is verified by the official Standard Webhooks libraries for Python,
//! JavaScript and Rust, which all refuse it once tampered with. The generated clients' scenarios
//! run in `clients.rs`.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};

use crate::util::{ADMIN_EMAIL, ADMIN_PASSWORD, TestApp, run_tool};

#[path = "../../docs/integrate/verify.rs"]
mod verify_rs;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

#[test]
fn every_block_of_the_guide_is_its_file() {
    let guide = std::fs::read_to_string(format!("{ROOT}/docs/integrate.md")).expect("guide");
    let mut checked = 0;
    for part in guide.split("<!-- snippet: ").skip(1) {
        let (path, rest) = part.split_once(" -->\n```").expect("a block after the marker");
        let (_lang, rest) = rest.split_once('\n').expect("the block's first line");
        let (block, _) = rest.split_once("```\n").expect("the block's end");
        let file = std::fs::read_to_string(format!("{ROOT}/{path}")).expect(path);
        assert!(block == file, "the block of {path} in docs/integrate.md differs from the file");
        checked += 1;
    }
    assert_eq!(checked, 6, "the guide's blocks");
}

/// Runs `program args` from the repository's root with `envs`; what it wrote to stdout.
async fn run(program: &str, args: &[&str], envs: &[(&str, &str)]) -> Result<String, String> {
    run_tool(Path::new(ROOT), program, args, envs).await.map(|said| said.stdout)
}

#[tokio::test]
async fn the_quickstart_runs_and_its_webhook_verifies_in_three_languages() {
    let app = TestApp::spawn().await;
    // A receiver that keeps what arrives.
    let seen: Arc<Mutex<Vec<(HeaderMap, String)>>> = Arc::default();
    let keep = seen.clone();
    let receiver = axum::Router::new().route(
        "/hooks",
        axum::routing::post(move |headers: HeaderMap, body: String| {
            let keep = keep.clone();
            async move {
                if let Ok(mut k) = keep.lock() {
                    k.push((headers, body));
                }
                StatusCode::NO_CONTENT
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let hook_url = format!("http://{}/hooks", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, receiver).await });

    let envs = [
        ("WEARHOUSE_URL", app.base.as_str()),
        ("ADMIN_EMAIL", ADMIN_EMAIL),
        ("ADMIN_PASSWORD", ADMIN_PASSWORD),
        ("WEBHOOK_URL", hook_url.as_str()),
    ];
    let out = run("bash", &["docs/integrate/quickstart.sh"], &envs)
        .await
        .unwrap_or_else(|e| panic!("the quickstart failed: {e}"));
    assert!(out.contains("\"heart_rate\""), "the samples read back: {out}");
    // The connect link it made opens (under PUBLIC_URL; its token asked of this service).
    let link = out.lines().find_map(|l| l.strip_prefix("CONNECT_LINK=")).expect("a connect link");
    let token = link.rsplit('/').next().unwrap_or_default();
    let r = app.http.get(app.url(&format!("/api/v1/connect/{token}"))).send().await.expect("page");
    assert_eq!(r.status(), 200, "{link}");
    let secret = out
        .lines()
        .find_map(|l| l.strip_prefix("WEBHOOK_SECRET="))
        .expect("the secret printed")
        .to_string();

    let mut delivery = None;
    for _ in 0..300 {
        delivery = seen.lock().ok().and_then(|s| s.first().cloned());
        if delivery.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (headers, body) = delivery.expect("a webhook arrived");

    let dir =
        std::env::temp_dir().join(format!("wearhouse-guide-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("dir");
    let as_json: serde_json::Map<String, serde_json::Value> =
        ["webhook-id", "webhook-timestamp", "webhook-signature"]
            .iter()
            .map(|h| {
                let v = headers.get(*h).and_then(|v| v.to_str().ok()).unwrap_or_default();
                (h.to_string(), serde_json::Value::from(v))
            })
            .collect();
    let headers_file = dir.join("headers.json");
    std::fs::write(&headers_file, serde_json::Value::Object(as_json).to_string()).expect("write");
    // The JavaScript snippet, bundled with its package from tests/clients/ts (NODE_PATH).
    let bundle = dir.join("verify.bundle.mjs");
    let esbuild = format!("{ROOT}/tests/clients/ts/node_modules/.bin/esbuild");
    let node_path = format!("{ROOT}/tests/clients/ts/node_modules");
    run(
        &esbuild,
        &[
            "docs/integrate/verify.mjs",
            "--bundle",
            "--platform=node",
            "--format=esm",
            "--log-level=warning",
            &format!("--outfile={}", bundle.display()),
        ],
        &[("NODE_PATH", &node_path)],
    )
    .await
    .unwrap_or_else(|e| panic!("bundling verify.mjs: {e}"));

    let verdicts = async |body: &str| {
        let body_file = dir.join("body.json");
        std::fs::write(&body_file, body).expect("write");
        let (h, b) =
            (headers_file.to_str().unwrap_or_default(), body_file.to_str().unwrap_or_default());
        let envs = [("WEBHOOK_SECRET", secret.as_str())];
        let python = run("python3", &["docs/integrate/verify.py", h, b], &envs).await;
        let js = run("node", &[bundle.to_str().unwrap_or_default(), h, b], &envs).await;
        let rust = verify_rs::verify(&secret, &headers, body.as_bytes())
            .map(|e| e["type"].as_str().unwrap_or_default().to_string() + "\n");
        [python, js, rust]
    };
    let event_type = serde_json::from_str::<serde_json::Value>(&body).expect("json")["type"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(event_type.ends_with(".created"), "{body}");
    for (language, verdict) in ["python", "javascript", "rust"].iter().zip(verdicts(&body).await) {
        assert_eq!(verdict.as_deref(), Ok(format!("{event_type}\n").as_str()), "{language}");
    }
    let tampered = body.replacen("\"type\"", "\"type\" ", 1);
    for (language, verdict) in
        ["python", "javascript", "rust"].iter().zip(verdicts(&tampered).await)
    {
        assert!(verdict.is_err(), "{language} accepted a tampered body");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
