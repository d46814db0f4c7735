//! Clients generated from the served OpenAPI document work against the real service: the Python
//! client of `openapi-python-client` (from PyPI) and the TypeScript one of `openapi-typescript` +
//! `openapi-fetch` (from npm, `tests/clients/ts`'s lockfile), both installed by `scripts/test.sh`,
//! each run an integrator's first steps (`tests/clients/scenario.py`, `tests/clients/ts/scenario.ts`,
//! type-checked by tsc against the generated types). A generator warning fails the test: it means
//! part of the API is missing from the client.

use std::path::Path;

use crate::util::{ADMIN_EMAIL, ADMIN_PASSWORD, Auth, TestApp, run_tool};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Runs a tool that must succeed; what it wrote.
async fn run(dir: &Path, program: &str, args: &[&str], envs: &[(&str, &str)]) -> String {
    run_tool(dir, program, args, envs).await.unwrap_or_else(|e| panic!("{e}")).all()
}

#[tokio::test]
async fn the_generated_python_client_runs_the_scenario() {
    let app = TestApp::spawn().await;
    let doc = app.get("/openapi.json", &Auth::None).await;
    assert_eq!(doc.status, 200);
    let dir = std::env::temp_dir().join(format!("wearhouse-py-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join("openapi.json"), doc.body.to_string()).expect("write");
    // No formatter hooks: ruff is not needed to use the client.
    std::fs::write(dir.join("config.yaml"), "post_hooks: []\n").expect("write");
    let generate = ["-m", "openapi_python_client", "generate", "--path", "openapi.json"];
    let options = ["--output-path", "client", "--config", "config.yaml"];
    let said = run(&dir, "python3", &[&generate[..], &options[..]].concat(), &[]).await;
    assert!(!said.to_lowercase().contains("warning"), "the generator warned: {said}");

    let scenario = format!("{ROOT}/tests/clients/scenario.py");
    let envs = [
        ("PYTHONPATH", "client"),
        ("WEARHOUSE_URL", app.base.as_str()),
        ("ADMIN_EMAIL", ADMIN_EMAIL),
        ("ADMIN_PASSWORD", ADMIN_PASSWORD),
    ];
    let ran = run_tool(&dir, "python3", &[&scenario], &envs).await;
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = ran {
        panic!("the scenario failed:\n{e}");
    }
}

#[tokio::test]
async fn the_generated_typescript_client_runs_the_scenario() {
    let app = TestApp::spawn().await;
    let doc = app.get("/openapi.json", &Auth::None).await;
    assert_eq!(doc.status, 200);
    let ts = Path::new(ROOT).join("tests/clients/ts");
    std::fs::create_dir_all(ts.join("generated")).expect("dir");
    std::fs::write(ts.join("generated/openapi.json"), doc.body.to_string()).expect("write");
    let bin = |tool: &str| format!("node_modules/.bin/{tool}");
    let said = run(
        &ts,
        &bin("openapi-typescript"),
        &["generated/openapi.json", "-o", "generated/schema.d.ts"],
        &[],
    )
    .await;
    assert!(!said.to_lowercase().contains("warn"), "the generator warned: {said}");
    // The scenario type-checks against the generated types: a field renamed or retyped in the
    // document fails here, as it would in an integrator's build.
    run(&ts, &bin("tsc"), &["-p", "."], &[]).await;
    let bundle = [
        "scenario.ts",
        "--bundle",
        "--platform=node",
        "--format=esm",
        "--log-level=warning",
        "--outfile=generated/scenario.mjs",
    ];
    run(&ts, &bin("esbuild"), &bundle, &[]).await;
    let envs = [
        ("WEARHOUSE_URL", app.base.as_str()),
        ("ADMIN_EMAIL", ADMIN_EMAIL),
        ("ADMIN_PASSWORD", ADMIN_PASSWORD),
    ];
    if let Err(e) = run_tool(&ts, "node", &["generated/scenario.mjs"], &envs).await {
        panic!("the scenario failed:\n{e}");
    }
}
