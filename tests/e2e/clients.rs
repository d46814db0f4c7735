//! Clients generated from the served OpenAPI document work against the real service: the Python
//! client of `openapi-python-client` (from PyPI) and the TypeScript one of `openapi-typescript` +
//! `openapi-fetch` (from npm, `tests/clients/ts`'s lockfile), both installed by `scripts/test.sh`,
//! each run an integrator's first steps (`tests/clients/scenario.py`, `tests/clients/ts/scenario.ts`,
//! type-checked by tsc against the generated types). A generator warning fails the test: it means
//! part of the API is missing from the client.

use std::process::Command;

use crate::util::{ADMIN_EMAIL, ADMIN_PASSWORD, Auth, TestApp};

#[tokio::test]
async fn the_generated_python_client_runs_the_scenario() {
    let app = TestApp::spawn().await;
    let doc = app.get("/openapi.json", &Auth::None).await;
    assert_eq!(doc.status, 200);
    let dir = std::env::temp_dir().join(format!("wearhouse-py-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("dir");
    let spec = dir.join("openapi.json");
    std::fs::write(&spec, doc.body.to_string()).expect("write");
    // No formatter hooks: ruff is not needed to use the client.
    let config = dir.join("config.yaml");
    std::fs::write(&config, "post_hooks: []\n").expect("write");
    let client = dir.join("client");
    let generated = Command::new("python3")
        .args(["-m", "openapi_python_client", "generate", "--path"])
        .arg(&spec)
        .arg("--output-path")
        .arg(&client)
        .arg("--config")
        .arg(&config)
        .output()
        .expect("python3");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&generated.stdout),
        String::from_utf8_lossy(&generated.stderr)
    );
    assert!(generated.status.success(), "{said}");
    assert!(!said.to_lowercase().contains("warning"), "the generator warned: {said}");

    let scenario = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/scenario.py");
    let ran = tokio::process::Command::new("python3")
        .arg(scenario)
        .env("PYTHONPATH", &client)
        .env("WEARHOUSE_URL", &app.base)
        .env("ADMIN_EMAIL", ADMIN_EMAIL)
        .env("ADMIN_PASSWORD", ADMIN_PASSWORD)
        .output()
        .await
        .expect("python3");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        ran.status.success(),
        "the scenario failed:\n{}{}",
        String::from_utf8_lossy(&ran.stdout),
        String::from_utf8_lossy(&ran.stderr)
    );
}

/// Runs `program args` in `dir`; its output, or a failure that shows it.
fn run(dir: &std::path::Path, program: &str, args: &[&str]) -> String {
    let out = Command::new(program).args(args).current_dir(dir).output().expect(program);
    let said =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{program} {args:?} failed:\n{said}");
    said
}

#[tokio::test]
async fn the_generated_typescript_client_runs_the_scenario() {
    let app = TestApp::spawn().await;
    let doc = app.get("/openapi.json", &Auth::None).await;
    assert_eq!(doc.status, 200);
    let ts = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/ts"));
    let generated = ts.join("generated");
    std::fs::create_dir_all(&generated).expect("dir");
    std::fs::write(generated.join("openapi.json"), doc.body.to_string()).expect("write");
    let bin = |tool: &str| format!("node_modules/.bin/{tool}");
    let said = run(
        ts,
        &bin("openapi-typescript"),
        &["generated/openapi.json", "-o", "generated/schema.d.ts"],
    );
    assert!(!said.to_lowercase().contains("warn"), "the generator warned: {said}");
    // The scenario type-checks against the generated types: a field renamed or retyped in the
    // document fails here, as it would in an integrator's build.
    run(ts, &bin("tsc"), &["-p", "."]);
    run(
        ts,
        &bin("esbuild"),
        &[
            "scenario.ts",
            "--bundle",
            "--platform=node",
            "--format=esm",
            "--log-level=warning",
            "--outfile=generated/scenario.mjs",
        ],
    );
    let ran = tokio::process::Command::new("node")
        .arg(generated.join("scenario.mjs"))
        .env("WEARHOUSE_URL", &app.base)
        .env("ADMIN_EMAIL", ADMIN_EMAIL)
        .env("ADMIN_PASSWORD", ADMIN_PASSWORD)
        .output()
        .await
        .expect("node");
    assert!(
        ran.status.success(),
        "the scenario failed:\n{}{}",
        String::from_utf8_lossy(&ran.stdout),
        String::from_utf8_lossy(&ran.stderr)
    );
}
