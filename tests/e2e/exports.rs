//! Exports of a user's whole record: the archive's JSON lines read back equal what the API
//! answers, every `fhir.ndjson` line validates as FHIR R4 with an independent validator
//! (`tests/clients/fhir_validate.py`, PyPI's `fhir.resources`), and deleting the user deletes
//! the export with its archive.

use std::io::Read;
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::fixtures::{at, body, evening_run, phone, rec, sleep, watch};
use crate::util::{Auth, TestApp, run_tool};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const ALL_TIME: &str = "start_date=1900-01-01&end_date=2199-12-31";

/// Every item of an API list, following its cursor.
async fn all_pages(app: &TestApp, key: &Auth, path: &str) -> Vec<Value> {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut url = format!("{path}&limit=100");
        if let Some(c) = &cursor {
            url.push_str(&format!("&cursor={c}"));
        }
        let r = app.get(&url, key).await;
        assert_eq!(r.status, 200, "{url}: {}", r.body);
        items.extend(r.body["data"].as_array().cloned().unwrap_or_default());
        match r.body["pagination"]["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => return items,
        }
    }
}

fn lines(file: &str) -> Vec<Value> {
    file.lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect()
}

/// Ada: heart rate, steps from two sources, a blood pressure reading, a weight, a run with a
/// route, a night.
async fn ada(app: &TestApp, key: &Auth) -> String {
    let user = app
        .user(
            key,
            json!({"email": "ada@example.com", "first_name": "Ada", "last_name": "Lovelace",
                          "external_user_id": "crm-17"}),
        )
        .await;
    let mut records = Vec::new();
    for (i, bpm) in [58.0, 61.0, 97.0, 143.0].iter().enumerate() {
        let t = format!("2026-03-10T06:{:02}:00Z", i * 15);
        records.push(at("HeartRate", &t, *bpm, "count/min", Some("+01:00"), &watch()));
    }
    for source in [watch(), phone()] {
        let (a, b) = ("2026-03-10T08:00:00Z", "2026-03-10T08:30:00Z");
        records.push(rec("StepCount", a, b, 1200.0, "count", Some("+01:00"), &source));
    }
    let bp = "2026-03-11T07:30:00Z";
    records.push(at("BloodPressureSystolic", bp, 118.0, "mmHg", Some("+01:00"), &phone()));
    records.push(at("BloodPressureDiastolic", bp, 76.0, "mmHg", Some("+01:00"), &phone()));
    records.push(at("BodyMass", "2026-03-11T07:00:00Z", 61.5, "kg", Some("+01:00"), &phone()));
    let mut run = evening_run("run-1", 10);
    run["route"] = json!([
        {"timestamp": "2026-03-10T18:00:00Z", "latitude": 51.5007, "longitude": -0.1246, "altitude": 11.0},
        {"timestamp": "2026-03-10T18:05:00Z", "latitude": 51.5033, "longitude": -0.1195, "altitude": 12.5},
    ]);
    let night = sleep(
        &[
            ("light", "2026-03-09T22:30:00Z", "2026-03-10T01:00:00Z"),
            ("deep", "2026-03-10T01:00:00Z", "2026-03-10T02:00:00Z"),
            ("rem", "2026-03-10T02:00:00Z", "2026-03-10T03:00:00Z"),
            ("awake", "2026-03-10T03:00:00Z", "2026-03-10T03:10:00Z"),
            ("light", "2026-03-10T03:10:00Z", "2026-03-10T05:30:00Z"),
        ],
        "+01:00",
        &watch(),
    );
    app.sync_and_wait(&user, key, &body(records, vec![run], night)).await;
    user
}

/// Asks for an export and waits until it is done; its answer.
async fn export(app: &TestApp, key: &Auth, user: &str) -> Value {
    let r = app.post(&format!("/api/v1/users/{user}/exports"), key, json!({})).await;
    assert_eq!(r.status, 202, "{}", r.body);
    assert_eq!(r.body["status"], "queued");
    let id = r.str("id");
    assert_eq!(r.body["task_id"], id.as_str(), "the sync run reports it");
    for _ in 0..300 {
        let r = app.get(&format!("/api/v1/users/{user}/exports/{id}"), key).await;
        assert_eq!(r.status, 200, "{}", r.body);
        match r.body["status"].as_str() {
            Some("done") => return r.body,
            Some("failed") => panic!("the export failed: {}", r.body),
            _ => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    panic!("the export did not finish");
}

/// The archive's files by name.
fn unzip(bytes: &[u8]) -> std::collections::BTreeMap<String, String> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("a zip");
    let mut files = std::collections::BTreeMap::new();
    for i in 0..zip.len() {
        let mut f = zip.by_index(i).expect("an entry");
        let mut text = String::new();
        f.read_to_string(&mut text).expect("text");
        files.insert(f.name().to_string(), text);
    }
    files
}

#[tokio::test]
async fn an_export_holds_what_the_api_answers_and_valid_fhir_and_goes_with_the_user() {
    // Data from every kind of source: the SDK (Ada's phone and watch), an Apple Health export
    // uploaded, and a cloud vendor's pull (a local Oura API).
    let (_oura, app) = crate::vendor_pulls::oura_and_app(3600).await;
    let key = app.api_key().await;
    let user = ada(&app, &key).await;
    let upload = crate::import::zipped(&crate::import::export(2));
    let task = crate::import::upload_direct(&app, &key, &user, upload).await;
    let (status, _) = crate::import::wait_import(&app, &key, &user, &task).await;
    assert_eq!(status, "done");
    crate::vendor_pulls::connect(&app, &user, "oura-access-1").await;
    let window = "summary_start_time=2026-03-09T00:00:00Z&summary_end_time=2026-03-11T00:00:00Z";
    let r = app
        .post(&format!("/api/v1/providers/oura/users/{user}/sync?{window}"), &key, json!({}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let (status, _) = crate::vendor_pulls::pull_done(&app, &r.str("task_id")).await;
    assert_eq!(status, "done");

    let done = export(&app, &key, &user).await;
    let url = done["download_url"].as_str().expect("a download URL").to_string();
    assert!(done["download_expires_at"].is_string());

    let zip = reqwest::get(&url).await.expect("download");
    assert_eq!(zip.status(), 200);
    let disposition = zip.headers().get("content-disposition").and_then(|v| v.to_str().ok());
    assert!(disposition.is_some_and(|d| d.contains(".zip")), "{disposition:?}");
    let bytes = zip.bytes().await.expect("bytes");
    assert_eq!(done["bytes"], bytes.len() as i64);
    let files = unzip(&bytes);
    let names: Vec<&str> = files.keys().map(String::as_str).collect();
    for name in [
        "user.json",
        "connections.json",
        "sources.json",
        "samples.jsonl",
        "workouts.jsonl",
        "routes.jsonl",
        "sleep.jsonl",
        "cycles.jsonl",
        "fhir.ndjson",
        "manifest.json",
    ] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }

    // The JSON lines read back equal the API's answers.
    let base = format!("/api/v1/users/{user}");
    let samples = all_pages(
        &app,
        &key,
        &format!(
            "{base}/timeseries?start_time=1900-01-01&end_time=2199-12-31&filter_by_priority=false"
        ),
    )
    .await;
    assert_eq!(lines(&files["samples.jsonl"]), samples);
    assert_eq!(done["counts"]["samples"], samples.len(), "{done}");
    let providers: std::collections::BTreeSet<&str> =
        samples.iter().filter_map(|s| s["source"]["provider"].as_str()).collect();
    assert_eq!(providers, ["oura", "phonehealth"].into(), "the SDK's, the upload's and the pull's");
    assert!(samples.len() > 100, "the upload's samples too: {}", samples.len());
    let workouts = all_pages(
        &app,
        &key,
        &format!("{base}/events/workouts?{ALL_TIME}&filter_by_priority=false"),
    )
    .await;
    assert_eq!(lines(&files["workouts.jsonl"]), workouts);
    assert_eq!(done["counts"]["workouts"], workouts.len());
    let nights =
        all_pages(&app, &key, &format!("{base}/events/sleep?{ALL_TIME}&filter_by_priority=false"))
            .await;
    assert_eq!(lines(&files["sleep.jsonl"]), nights);
    assert_eq!(done["counts"]["sleep_sessions"], nights.len());
    assert!(nights.iter().any(|n| n["source"]["provider"] == "oura"), "the pulled night");
    let cycles = all_pages(&app, &key, &format!("{base}/events/menstrual-cycles?{ALL_TIME}")).await;
    assert_eq!(lines(&files["cycles.jsonl"]), cycles);
    // The route of each workout that has one, as the API answers it.
    let mut routes = Vec::new();
    for w in workouts.iter().filter(|w| w["has_route"] == true) {
        let id = w["id"].as_str().expect("id");
        routes.push(app.get(&format!("{base}/events/workouts/{id}/route"), &key).await.body);
    }
    assert_eq!(lines(&files["routes.jsonl"]), routes);
    let run = routes.iter().find(|r| r["points"].as_array().map(Vec::len) == Some(2));
    assert!(run.is_some(), "the SDK run's two points: {routes:?}");
    let me: Value = serde_json::from_str(&files["user.json"]).expect("json");
    assert_eq!(me, app.get(&base, &key).await.body);
    let sources: Value = serde_json::from_str(&files["sources.json"]).expect("json");
    assert_eq!(sources, app.get(&format!("{base}/data-sources"), &key).await.body);
    let connections: Value = serde_json::from_str(&files["connections.json"]).expect("json");
    assert_eq!(connections, app.get(&format!("{base}/connections"), &key).await.body);

    // FHIR R4, validated independently.
    let fhir = lines(&files["fhir.ndjson"]);
    assert_eq!(fhir[0]["resourceType"], "Patient");
    assert_eq!(fhir[0]["id"], user.as_str());
    assert_eq!(done["counts"]["fhir_resources"], fhir.len() as i64);
    let code = |o: &Value| o["code"]["coding"][0]["code"].as_str().unwrap_or("").to_string();
    let codes: Vec<String> = fhir.iter().skip(1).map(code).collect();
    // Each kind is there: heart rates, steps, the blood pressure panel, the weight; a night and
    // a workout each one resource.
    for loinc in ["8867-4", "55423-8", "85354-9", "29463-7"] {
        assert!(codes.iter().any(|c| c == loinc), "{loinc} in the FHIR resources");
    }
    assert_eq!(codes.iter().filter(|c| *c == "93832-4").count(), nights.len());
    assert_eq!(codes.iter().filter(|c| *c == "73985-4").count(), workouts.len());
    let ada_bp =
        |o: &&Value| code(o) == "85354-9" && o["effectiveDateTime"] == "2026-03-11T08:30:00+01:00";
    let bp = fhir.iter().find(ada_bp).expect("Ada's reading as a panel");
    assert_eq!(bp["component"].as_array().map(Vec::len), Some(2), "{bp}");
    assert_eq!(bp["effectiveDateTime"], "2026-03-11T08:30:00+01:00");
    let dir =
        std::env::temp_dir().join(format!("wearhouse-fhir-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join("fhir.ndjson"), &files["fhir.ndjson"]).expect("write");
    let python = format!(
        "{}/.cache/wearhouse/fhir-venv/bin/python",
        std::env::var("HOME").unwrap_or_default()
    );
    let script = format!("{ROOT}/tests/clients/fhir_validate.py");
    let checked = run_tool(&dir, &python, &[&script, "fhir.ndjson"], &[]).await;
    let _ = std::fs::remove_dir_all(&dir);
    let said = checked.unwrap_or_else(|e| panic!("FHIR validation failed:\n{e}"));
    let report: Value = serde_json::from_str(said.stdout.trim()).expect("a report");
    assert_eq!(report["resources"], fhir.len(), "{report}");

    // Its progress is a sync run of its own, finished.
    let runs = app.get(&format!("{base}/sync/runs"), &key).await;
    let run =
        runs.body.as_array().and_then(|r| r.iter().find(|r| r["run_id"] == done["id"]).cloned());
    let run = run.unwrap_or_else(|| panic!("the export's run in {}", runs.body));
    assert_eq!(
        (run["source"].as_str(), run["status"].as_str()),
        (Some("export"), Some("success")),
        "{run}"
    );
    assert_eq!(run["counts"]["samples"], samples.len(), "{run}");

    // Listed, and gone with the user: its row and its archive.
    let list = app.get(&format!("{base}/exports"), &key).await;
    assert_eq!(list.body.as_array().map(Vec::len), Some(1), "{}", list.body);
    let storage = app.settings.s3.storage().expect("storage");
    let prefix = schema::users::object_prefix(user.parse().expect("uuid"));
    assert_eq!(storage.keys(&format!("{prefix}exports/")).await.expect("keys").len(), 1);
    let admin = app.admin().await;
    let r = app.call(Method::DELETE, &base, &admin, None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(app.count("select count(*) from exports").await, 0);
    let mut left = usize::MAX;
    for _ in 0..100 {
        left = storage.keys(&prefix).await.expect("keys").len();
        if left == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(left, 0, "the archive is deleted with the user");
}

#[tokio::test]
async fn exports_are_bounded_per_user_and_need_a_user_and_storage() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let r =
        app.post(&format!("/api/v1/users/{}/exports", uuid::Uuid::new_v4()), &key, json!({})).await;
    assert_eq!(r.status, 404, "{}", r.body);
    let user = app.user(&key, json!({})).await;
    // Two at once at most: the third, asked before a worker took the first two, waits its turn.
    let db = app.db().await;
    db.execute("update exports set status = 'processing', heartbeat_at = now()", &[])
        .await
        .expect("sql");
    let path = format!("/api/v1/users/{user}/exports");
    for _ in 0..2 {
        let r = app.post(&path, &key, json!({})).await;
        assert_eq!(r.status, 202, "{}", r.body);
        db.execute("update exports set status = 'processing', heartbeat_at = now() where status = 'queued'", &[])
            .await
            .expect("sql");
    }
    let r = app.post(&path, &key, json!({})).await;
    assert_eq!(r.status, 409, "{}", r.body);
    let r = app.get(&format!("{path}/{}", uuid::Uuid::new_v4()), &key).await;
    r.assert_error(404, "Export not found");

    let app = TestApp::spawn_with(crate::util::Mode::All, |s| s.s3.s3_bucket = None).await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let r = app.post(&format!("/api/v1/users/{user}/exports"), &key, json!({})).await;
    assert_eq!(r.status, 503, "{}", r.body);
}

#[tokio::test]
async fn an_export_whose_worker_died_is_taken_over_once_its_heartbeat_stops() {
    // A worker that died mid-export leaves it `processing`. Once its heartbeat has been silent
    // for twice WORKER_CLAIM_IDLE_SECONDS (2 s in tests: 4 s), as for an import, the sweeper
    // announces it again and a live worker makes it.
    let api = TestApp::spawn_with(crate::util::Mode::ApiOnly, |_| {}).await;
    let key = api.api_key().await;
    // No worker here to process batches: a user without records (an empty archive).
    let user = api.user(&key, json!({})).await;
    let r = api.post(&format!("/api/v1/users/{user}/exports"), &key, json!({})).await;
    assert_eq!(r.status, 202, "{}", r.body);
    let id = r.str("id");
    let db = api.db().await;
    let taken = "update exports set status = 'processing', attempts = 1, heartbeat_at = now(),
                   announced_at = now() - interval '1 hour' where id = $1::text::uuid";
    assert_eq!(db.execute(taken, &[&id]).await.expect("sql"), 1);

    let url = api.settings.database_url.clone();
    let _worker = TestApp::spawn_with(crate::util::Mode::All, |s| s.database_url = url).await;
    let mut last = Value::Null;
    for _ in 0..300 {
        last = api.get(&format!("/api/v1/users/{user}/exports/{id}"), &key).await.body;
        if last["status"] == "done" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(last["status"], "done", "{last}");
    let attempts =
        api.count(&format!("select attempts::bigint from exports where id = '{id}'")).await;
    assert_eq!(attempts, 2, "taken over once");
}
