//! Apple Health export uploads against the real S3 server (Garage): presigned POST forms,
//! multipart uploads through presigned PUTs, direct uploads, bucket events, the CLI.

use std::io::Write;
use std::time::Duration;

use ingest::export::generate::{ExportSpec, write_export};
use reqwest::multipart::{Form, Part};
use serde_json::{Value, json};

use crate::util::{Auth, BUCKET_EVENTS_SECRET, Mode, TestApp};

pub(crate) fn export(days: u32) -> Vec<u8> {
    let mut out = Vec::new();
    write_export(&mut out, &ExportSpec::new(days)).expect("generate");
    out
}

pub(crate) fn zipped(xml: &[u8]) -> Vec<u8> {
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    z.start_file("apple_health_export/export_cda.xml", opts).expect("zip");
    z.write_all(b"<ClinicalDocument/>").expect("zip");
    z.start_file("apple_health_export/export.xml", opts).expect("zip");
    z.write_all(xml).expect("zip");
    z.finish().expect("zip").into_inner()
}

fn base(user: &str) -> String {
    format!("/api/v1/users/{user}/import/phonehealth/xml/storage")
}

/// Waits for an import to end; returns its status and its sync run.
pub(crate) async fn wait_import(
    app: &TestApp,
    key: &Auth,
    user: &str,
    task: &str,
) -> (String, Value) {
    for _ in 0..600 {
        let s = import_status(app, task).await;
        if s == "done" || s == "failed" {
            let runs = app.get(&format!("/api/v1/users/{user}/sync/runs"), key).await;
            let run = runs
                .body
                .as_array()
                .and_then(|a| a.iter().find(|r| r["run_id"] == task))
                .cloned()
                .unwrap_or_default();
            return (s, run);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("import {task} did not finish");
}

async fn samples(app: &TestApp, user: &str) -> i64 {
    app.count(&format!("select count(*) from samples where user_id = '{user}'")).await
}

/// `wearhouse import --user <user> <path>`, which must succeed; what it printed.
async fn cli_import(app: &TestApp, user: &str, path: &std::path::Path) -> String {
    let out = app
        .binary(&["import", "--user", user, path.to_str().unwrap_or_default()])
        .output()
        .await
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}: {stderr}", path.display());
    String::from_utf8_lossy(&out.stdout).to_string()
}

async fn bucket_event(app: &TestApp, key: &str, etag: &str, secret: &str) -> crate::util::Resp {
    let event = json!({"Records": [{"eventName": "s3:ObjectCreated:Put", "s3": {
        "bucket": {"name": app.settings.s3.s3_bucket}, "object": {"key": key, "size": 1, "eTag": etag}}}]});
    app.post("/api/v1/internal/storage/events", &Auth::Bearer(secret.into()), event).await
}

/// Opens a multipart upload of `file`, signs every part and PUTs it; returns the key, the
/// upload id and the parts with their ETags, ready to complete.
async fn upload_parts(
    app: &TestApp,
    key: &Auth,
    user: &str,
    file: &[u8],
) -> (String, String, Value) {
    let created = app
        .post(&format!("{}/multipart/create", base(user)), key, json!({"file_size": file.len()}))
        .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let (object_key, upload_id) = (created.str("key"), created.str("upload_id"));
    let part_size = created.body["part_size"].as_u64().expect("part size") as usize;
    let numbers: Vec<usize> = (1..=file.len().div_ceil(part_size)).collect();
    let body = json!({"key": object_key, "upload_id": upload_id, "part_numbers": numbers});
    let signed = app.post(&format!("{}/multipart/sign", base(user)), key, body).await;
    assert_eq!(signed.status, 200, "{}", signed.body);
    let http = reqwest::Client::new();
    let mut parts = Vec::new();
    for (i, chunk) in file.chunks(part_size).enumerate() {
        let url = signed.body["urls"][i]["url"].as_str().expect("url");
        let r = http.put(url).body(chunk.to_vec()).send().await.expect("put");
        assert!(r.status().is_success(), "{}", r.status());
        parts.push(
            json!({"part_number": i + 1, "etag": r.headers()["etag"].to_str().expect("etag")}),
        );
    }
    (object_key, upload_id, Value::Array(parts))
}

#[tokio::test]
async fn presigned_post_form_then_bucket_event_imports_once() {
    let app = TestApp::spawn_with(Mode::All, |s| {
        s.s3.upload_completion_mode = wearhouse::config::CompletionMode::BucketEvent
    })
    .await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;

    let r = app.post(&base(&user), &key, json!({"filename": "export.xml", "expiration_seconds": 120, "max_file_size": 10_000_000})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["expires_in"], 120);
    assert_eq!(r.body["max_file_size"], 10_000_000);
    assert_eq!(r.body["bucket"], app.settings.s3.s3_bucket.clone().unwrap_or_default());
    let file_key = r.str("file_key");
    assert!(file_key.starts_with(&format!("{user}/raw/")));

    // A plain HTTP client posts the form: every field, then the file.
    let mut form = Form::new();
    for (k, v) in r.body["form_fields"].as_object().expect("fields") {
        form = form.text(k.clone(), v.as_str().unwrap_or_default().to_string());
    }
    form = form.part("file", Part::bytes(export(2)).file_name("export.xml"));
    let upload = reqwest::Client::new()
        .post(r.str("upload_url"))
        .multipart(form)
        .send()
        .await
        .expect("upload");
    assert!(
        upload.status().is_success(),
        "{} {}",
        upload.status(),
        upload.text().await.unwrap_or_default()
    );
    let etag =
        upload.headers().get("etag").and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
    assert!(!etag.is_empty());

    // The bucket reports the object: imported once, however often the event arrives.
    let ev = bucket_event(&app, &file_key, &etag, BUCKET_EVENTS_SECRET).await;
    assert_eq!(ev.status, 200, "{}", ev.body);
    let task = ev.body["queued"][0].as_str().expect("queued").to_string();
    let again = bucket_event(&app, &file_key, &etag, BUCKET_EVENTS_SECRET).await;
    assert_eq!(again.body["queued"], json!([]));
    assert_eq!(again.body["ignored"], 1);
    let (status, run) = wait_import(&app, &key, &user, &task).await;
    assert_eq!(status, "done", "{run}");
    assert_eq!(run["source"], "xml_import");
    assert!(samples(&app, &user).await > 1000);
    assert_eq!(
        app.count(&format!("select count(*) from imports where user_id = '{user}'")).await,
        1
    );

    bucket_event(&app, &file_key, &etag, "wrong")
        .await
        .assert_error(401, "Could not validate credentials");

    // Bounds are 422s.
    for (field, body) in [
        ("expiration_seconds", json!({"expiration_seconds": 59})),
        ("expiration_seconds", json!({"expiration_seconds": 3601})),
        ("max_file_size", json!({"max_file_size": 1023})),
        ("max_file_size", json!({"max_file_size": 5_368_709_121_i64})),
    ] {
        let r = app.post(&base(&user), &key, body).await;
        assert_eq!(r.status, 422, "{}", r.body);
        assert_eq!(r.body["detail"][0]["loc"], json!(["body", field]));
    }
    app.post(&base(&user), &key, json!({"filename": "x".repeat(201)}))
        .await
        .assert_invalid(&["body", "filename"], "string_too_long");
    // Bad credentials, in the contract's words.
    for bad in [Auth::None, Auth::Key("sk-nope".into()), Auth::Bearer("garbage".into())] {
        app.post(&base(&user), &bad, json!({}))
            .await
            .assert_error(401, "Could not validate credentials");
    }
}

#[tokio::test]
async fn multipart_upload_through_presigned_puts() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let other = app.user(&key, json!({})).await;
    // An export.zip of two parts of 5 MiB: the deflated export beside a stored (uncompressed)
    // attachment, as real exports carry electrocardiograms and routes.
    let file = two_part_zip(20, zip::CompressionMethod::Deflated);
    assert!(file.len() > 5 * 1024 * 1024);

    app.post(&format!("{}/multipart/create", base(&user)), &key, json!({"file_size": 1000}))
        .await
        .assert_invalid(&["body", "file_size"], "greater_than_equal");
    let created = app
        .post(
            &format!("{}/multipart/create", base(&user)),
            &key,
            json!({"file_size": file.len(), "filename": "export.zip"}),
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let (object_key, upload_id) = (created.str("key"), created.str("upload_id"));
    let part_size = created.body["part_size"].as_u64().expect("part size") as usize;
    assert_eq!(part_size, 5 * 1024 * 1024);
    let parts: Vec<&[u8]> = file.chunks(part_size).collect();
    assert_eq!(parts.len(), 2);

    let sign = |numbers: Value, k: &str| {
        let body = json!({"key": k, "upload_id": upload_id, "part_numbers": numbers});
        let app = &app;
        let auth = key.clone();
        let user = user.clone();
        async move { app.post(&format!("{}/multipart/sign", base(&user)), &auth, body).await }
    };
    sign(json!([0]), &object_key)
        .await
        .assert_invalid(&["body", "part_numbers", "0"], "greater_than_equal");
    sign(json!([3]), &object_key)
        .await
        .assert_invalid(&["body", "part_numbers", "0"], "less_than_equal");
    sign(json!([1, 1]), &object_key)
        .await
        .assert_invalid(&["body", "part_numbers", "1"], "value_error");
    sign(json!([1]), &format!("{other}/raw/theirs.zip"))
        .await
        .assert_error(403, "The object key does not belong to this user");
    let signed = sign(json!([1, 2]), &object_key).await;
    assert_eq!(signed.status, 200, "{}", signed.body);

    // PUT each part to its presigned URL; the ETags come back in the answers.
    let http = reqwest::Client::new();
    let mut etags = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let url = signed.body["urls"][i]["url"].as_str().expect("url");
        assert_eq!(signed.body["urls"][i]["part_number"], i + 1);
        let r = http.put(url).body(part.to_vec()).send().await.expect("put part");
        assert!(r.status().is_success(), "{}", r.status());
        etags.push(r.headers()["etag"].to_str().expect("etag").to_string());
    }
    let complete = |parts: Value, upload: &str| {
        let body = json!({"key": object_key, "upload_id": upload, "parts": parts});
        let app = &app;
        let auth = key.clone();
        let user = user.clone();
        async move { app.post(&format!("{}/multipart/complete", base(&user)), &auth, body).await }
    };
    complete(
        json!([{"part_number": 1, "etag": etags[0]}, {"part_number": 2, "etag": "\"wrong\""}]),
        &upload_id,
    )
    .await
    .assert_error(400, "Completed parts do not match the parts stored for this multipart upload");
    complete(json!([{"part_number": 1, "etag": etags[0]}]), &upload_id).await.assert_error(
        400,
        "Completed parts do not match the parts stored for this multipart upload",
    );
    complete(json!([{"part_number": 1, "etag": etags[0]}]), "no-such-upload")
        .await
        .assert_error(404, "Multipart upload not found");

    let parts_json =
        json!([{"part_number": 1, "etag": etags[0]}, {"part_number": 2, "etag": etags[1]}]);
    let done = complete(parts_json.clone(), &upload_id).await;
    assert_eq!(done.status, 202, "{}", done.body);
    assert_eq!(done.body["status"], "processing");
    let task = done.str("task_id");
    // Completing again (a retry that missed the answer) gives the same task.
    let again = complete(parts_json, &upload_id).await;
    assert_eq!((again.status, again.str("task_id")), (202, task.clone()));
    let (status, run) = wait_import(&app, &key, &user, &task).await;
    assert_eq!(status, "done", "{run}");
    assert_eq!(run["counts"]["workouts_saved"], 10);
    assert!(samples(&app, &user).await > 10_000);

    // Abort: 200, and 200 again when already gone; not for another user's key.
    let opened = app
        .post(
            &format!("{}/multipart/create", base(&user)),
            &key,
            json!({"file_size": 6 * 1024 * 1024}),
        )
        .await;
    let abort = json!({"key": opened.str("key"), "upload_id": opened.str("upload_id")});
    for _ in 0..2 {
        let r = app.post(&format!("{}/multipart/abort", base(&user)), &key, abort.clone()).await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(r.body["status"], "aborted");
    }
    app.post(
        &format!("{}/multipart/abort", base(&user)),
        &key,
        json!({"key": format!("{other}/raw/x"), "upload_id": "u"}),
    )
    .await
    .assert_error(403, "The object key does not belong to this user");
}

#[tokio::test]
async fn bucket_event_mode_completes_without_processing() {
    let app = TestApp::spawn_with(Mode::All, |s| {
        s.s3.upload_completion_mode = wearhouse::config::CompletionMode::BucketEvent
    })
    .await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let mut file = export(10);
    file.resize(6 * 1024 * 1024, b'\n');
    let (object_key, upload_id, parts) = upload_parts(&app, &key, &user, &file).await;
    let done = app
        .post(
            &format!("{}/multipart/complete", base(&user)),
            &key,
            json!({"key": object_key, "upload_id": upload_id, "parts": parts}),
        )
        .await;
    assert_eq!(done.status, 200, "{}", done.body);
    assert_eq!(done.body["status"], "completed");
    assert!(done.body.get("task_id").is_none());
    // Nothing is processed until the bucket says so.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        app.count(&format!("select count(*) from imports where user_id = '{user}'")).await,
        0
    );
}

#[tokio::test]
async fn client_mode_ignores_bucket_events_and_errors_are_in_the_contract() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let r = bucket_event(&app, &format!("{user}/raw/some.xml"), "e", BUCKET_EVENTS_SECRET).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!((r.body["queued"].clone(), r.body["ignored"].clone()), (json!([]), json!(1)));
    // Nothing would process a form upload in this mode: the form is not offered.
    app.post(&base(&user), &key, json!({})).await.assert_error(400, api::FORM_NEEDS_BUCKET_EVENTS);
    // Only the user's own SDK token, a developer token or an API key may upload.
    let other = app.user(&key, json!({})).await;
    let token = app
        .post(&format!("/api/v1/users/{other}/token"), &key, json!({}))
        .await
        .str("access_token");
    app.post(&base(&user), &Auth::Bearer(token), json!({}))
        .await
        .assert_error(403, "Token does not match user_id");
    // Wrong platform, unknown user.
    let r = app
        .post(&format!("/api/v1/users/{user}/import/PhoneHealth/xml/storage"), &key, json!({}))
        .await;
    r.assert_invalid(&["path", "platform"], "enum");
    let missing = uuid::Uuid::new_v4();
    app.post(&base(&missing.to_string()), &key, json!({}))
        .await
        .assert_error(404, &format!("User with ID: {missing} not found."));

    // Without object storage: 503 on every storage route.
    let bare = TestApp::spawn_with(Mode::All, |s| s.s3.s3_bucket = None).await;
    let key = bare.api_key().await;
    let user = bare.user(&key, json!({})).await;
    bare.post(&base(&user), &key, json!({}))
        .await
        .assert_error(503, "Object storage is not configured");
    bare.post(
        &format!("{}/multipart/create", base(&user)),
        &key,
        json!({"file_size": 6 * 1024 * 1024}),
    )
    .await
    .assert_error(503, "Object storage is not configured");

    // Storage unreachable: 502 (the client may retry).
    let down =
        TestApp::spawn_with(Mode::All, |s| s.s3.s3_endpoint = Some("http://127.0.0.1:9".into()))
            .await;
    let key = down.api_key().await;
    let user = down.user(&key, json!({})).await;
    down.post(
        &format!("{}/multipart/create", base(&user)),
        &key,
        json!({"file_size": 6 * 1024 * 1024}),
    )
    .await
    .assert_error(502, "Object storage failed; retry later");
}

#[tokio::test]
async fn complete_is_refused_while_the_queue_is_down() {
    // A Redis of this test's own, stopped before the complete.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("port")
        .local_addr()
        .expect("addr")
        .port();
    let mut redis = tokio::process::Command::new("redis-server")
        .args(["--port", &port.to_string(), "--save", "", "--appendonly", "no"])
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start redis-server");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let app =
        TestApp::spawn_with(Mode::ApiOnly, |s| s.redis_url = format!("redis://127.0.0.1:{port}"))
            .await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let mut file = export(5);
    file.resize(5 * 1024 * 1024 + 10, b'\n');
    let (object_key, upload_id, parts) = upload_parts(&app, &key, &user, &file).await;
    redis.kill().await.expect("stop redis");
    let body = json!({"key": object_key, "upload_id": upload_id, "parts": parts});
    app.post(&format!("{}/multipart/complete", base(&user)), &key, body.clone())
        .await
        .assert_error(
            503,
            "Unable to queue upload processing; the multipart upload remains incomplete",
        );
    // The upload is still open: signing works, and no import exists.
    let again = app
        .post(
            &format!("{}/multipart/sign", base(&user)),
            &key,
            json!({"key": object_key, "upload_id": upload_id, "part_numbers": [1]}),
        )
        .await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(
        app.count(&format!("select count(*) from imports where user_id = '{user}'")).await,
        0
    );
}

#[tokio::test]
async fn direct_uploads_store_nothing_twice_and_truncated_files_fail() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let url = app.url(&format!("/api/v1/users/{user}/import/phonehealth/xml/direct"));
    let upload = |bytes: Vec<u8>, name: &'static str| {
        let form = Form::new().part("file", Part::bytes(bytes).file_name(name));
        let req = key.apply(app.http.post(url.clone())).multipart(form);
        async move { crate::util::Resp::read(req.send().await.expect("upload")).await }
    };
    let xml = export(3);
    // Watch the user's sync stream for the import's terminal event.
    let stream = key
        .apply(app.http.get(app.url(&format!("/api/v1/users/{user}/sync/stream"))))
        .send()
        .await
        .expect("stream");
    let mut events = Box::pin(stream.bytes_stream());
    let first = upload(zipped(&xml), "export.zip").await;
    assert_eq!(first.status, 202, "{}", first.body);
    let task = first.str("task_id");
    let (status, run) = wait_import(&app, &key, &user, &task).await;
    assert_eq!(status, "done", "{run}");
    let mut seen = String::new();
    crate::jobs::read_until(&mut events, &mut seen, &format!("\"run_id\":\"{task}\"")).await;
    let event = seen.split("\n\n").find(|e| e.contains(&task)).unwrap_or_default().to_string();
    assert!(
        event.contains("event: sync.status") && event.contains("\"source\":\"xml_import\""),
        "{event}"
    );
    let stored = samples(&app, &user).await;
    let workouts =
        app.count(&format!("select count(*) from workouts where user_id = '{user}'")).await;
    let sleep =
        app.count(&format!("select count(*) from sleep_sessions where user_id = '{user}'")).await;
    assert!(stored > 1000 && workouts == 2 && sleep > 0);

    // The same export again (as plain XML this time): nothing stored twice.
    let second = upload(xml.clone(), "export.xml").await;
    let (status, run) = wait_import(&app, &key, &user, &second.str("task_id")).await;
    assert_eq!(status, "done", "{run}");
    assert_eq!(run["counts"]["samples_inserted"], 0);
    assert_eq!(samples(&app, &user).await, stored);
    assert_eq!(
        app.count(&format!("select count(*) from workouts where user_id = '{user}'")).await,
        workouts
    );
    assert_eq!(
        app.count(&format!("select count(*) from sleep_sessions where user_id = '{user}'")).await,
        sleep
    );

    // A truncated file fails with a clear reason.
    let cut = upload(xml[..xml.len() * 2 / 3].to_vec(), "export.xml").await;
    let (status, run) = wait_import(&app, &key, &user, &cut.str("task_id")).await;
    assert_eq!(status, "failed");
    assert_eq!(run["status"], "failed");
    let error = run["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("byte") && (error.contains("truncated") || error.contains("malformed")),
        "{error}"
    );

    // Over the size limit: 413.
    let big = upload(vec![b' '; 9 * 1024 * 1024], "export.xml").await;
    assert_eq!(big.status, 413, "{}", big.body);
}

#[tokio::test]
async fn the_cli_imports_a_file_from_disk() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let dir = std::env::temp_dir().join(format!("wearhouse-cli-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("export.zip");
    std::fs::write(&path, zipped(&export(4))).expect("write");
    let stdout = cli_import(&app, &user, &path).await;
    assert!(stdout.contains("workouts: 2 new"), "{stdout}");
    let first = samples(&app, &user).await;
    let stdout = cli_import(&app, &user, &path).await;
    assert!(stdout.contains("samples: 0 new, 0 changed"), "{stdout}");
    assert_eq!(samples(&app, &user).await, first);
    let _ = std::fs::remove_dir_all(dir);
}

/// An import whose object is gone fails, and so does its sync run (which used to stay `queued`
/// for ever while the import said `failed`).
#[tokio::test]
async fn an_import_of_a_missing_object_fails_with_its_run() {
    let app = TestApp::spawn_with(Mode::All, |s| {
        s.s3.upload_completion_mode = wearhouse::config::CompletionMode::BucketEvent
    })
    .await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let ev =
        bucket_event(&app, &format!("{user}/raw/gone.zip"), "\"0ff1ce\"", BUCKET_EVENTS_SECRET)
            .await;
    assert_eq!(ev.status, 200, "{}", ev.body);
    let task = ev.body["queued"][0].as_str().expect("queued").to_string();
    let (status, run) = wait_import(&app, &key, &user, &task).await;
    assert_eq!(status, "failed");
    assert_eq!(run["status"], "failed", "{run}");
    assert_eq!(run["stage"], "completed", "{run}");
    assert_eq!(run["error"], "the uploaded object does not exist", "{run}");
}

/// Reads `data`, then fails as a dropped connection does.
struct DropsHalfWay(std::io::Cursor<Vec<u8>>);

impl std::io::Read for DropsHalfWay {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self.0.read(buf)? {
            0 => Err(std::io::Error::new(std::io::ErrorKind::ConnectionReset, "connection reset")),
            n => Ok(n),
        }
    }
}

/// An import that stops on an error a retry can get past is queued again, and so is its run
/// (which used to say `failed` while the import waited for its next attempt); the last attempt
/// fails both.
#[tokio::test]
async fn an_interrupted_import_is_queued_again_with_its_run() {
    let app = TestApp::spawn_with(Mode::ApiOnly, |_| {}).await;
    let key = app.api_key().await;
    let (user, db, id) = queued_import(&app, &key).await;
    let xml = export(2);
    let half = xml[..xml.len() / 2].to_vec();
    let run_of = |body: Value| {
        body.as_array()
            .and_then(|a| a.iter().find(|r| r["run_id"] == id.to_string()))
            .cloned()
            .unwrap_or_default()
    };
    for attempt in 1..=ingest::import_job::MAX_ATTEMPTS {
        let import = claimed(&db, id).await;
        assert_eq!(import.attempts, attempt);
        let input = Box::new(DropsHalfWay(std::io::Cursor::new(half.clone())));
        let final_run = ingest::import_job::run_claimed(
            &db,
            &schema::Reads::primary_only(db.clone()),
            &import,
            Ok(input),
            false,
            ingest::import_job::heartbeat_for(ingest::import_job::STALE_AFTER),
        )
        .await;
        let status = import_status(&app, &id.to_string()).await;
        let run = run_of(app.get(&format!("/api/v1/users/{user}/sync/runs"), &key).await.body);
        if attempt < ingest::import_job::MAX_ATTEMPTS {
            assert!(final_run.is_none());
            assert_eq!(status, "queued");
            assert_eq!(run["status"], "queued", "{run}");
            assert_eq!(run["stage"], "queued", "{run}");
            assert!(run["error"].as_str().is_some_and(|e| e.contains("connection reset")), "{run}");
        } else {
            assert_eq!(final_run.map(|r| r.status.as_str()), Some("failed"));
            assert_eq!(status, "failed");
            assert_eq!(run["status"], "failed", "{run}");
        }
    }
}

/// A new user with an import queued for them (as the CLI queues one): the user, a pool, the id.
async fn queued_import(app: &TestApp, key: &Auth) -> (String, schema::Db, schema::ids::ImportId) {
    use schema::imports::{ImportOrigin, NewImport};
    let user = app.user(key, json!({})).await;
    let db = schema::Db::connect(&app.settings.database_url, 2).await.expect("db");
    let new = NewImport {
        user_id: user.parse().expect("uuid"),
        bucket: "b",
        key: "k",
        etag: "e",
        size: None,
        origin: ImportOrigin::Cli,
    };
    let id = schema::imports::queue(&db, &new).await.expect("queue").expect("new");
    (user, db, id)
}

async fn claimed(db: &schema::Db, id: schema::ids::ImportId) -> schema::imports::Import {
    use ingest::import_job::{MAX_ATTEMPTS, STALE_AFTER};
    match schema::imports::claim(db, id, STALE_AFTER, MAX_ATTEMPTS).await.expect("claim") {
        schema::imports::Claim::Claimed(import) => import,
        other => panic!("not claimable: {other:?}"),
    }
}

/// An import whose worker dies every time (killed, out of memory) is not claimed for ever:
/// the claim after the last attempt fails it, with its run.
#[tokio::test]
async fn an_import_that_keeps_stopping_its_worker_is_parked_as_failed() {
    use ingest::import_job::{MAX_ATTEMPTS, STALE_AFTER};
    use schema::imports::Claim;
    let app = TestApp::spawn_with(Mode::ApiOnly, |_| {}).await;
    let key = app.api_key().await;
    let (_, db, id) = queued_import(&app, &key).await;
    let die = "update imports set heartbeat_at = now() - interval '1 hour' where id = $1";
    for attempt in 1..=MAX_ATTEMPTS {
        assert_eq!(claimed(&db, id).await.attempts, attempt);
        // Alive: nobody else takes it.
        let again = schema::imports::claim(&db, id, STALE_AFTER, MAX_ATTEMPTS).await;
        assert!(matches!(again, Ok(Claim::Nothing)), "{again:?}");
        // The worker dies without a word: its heartbeat stops.
        app.db().await.execute(die, &[&id]).await.expect("stale");
    }
    let parked = schema::imports::claim(&db, id, STALE_AFTER, MAX_ATTEMPTS).await.expect("claim");
    let Claim::Parked(run) = parked else { panic!("not parked: {parked:?}") };
    assert_eq!(run.status.as_str(), "failed");
    assert!(run.error.as_deref().is_some_and(|e| e.contains("taken 3 times")), "{run:?}");
    let status = import_status(&app, &id.to_string()).await;
    assert_eq!(status, "failed");
    let again = schema::imports::claim(&db, id, STALE_AFTER, MAX_ATTEMPTS).await;
    assert!(matches!(again, Ok(Claim::Nothing)), "{again:?}");
}

/// An import's status, empty when there is no such import.
async fn import_status(app: &TestApp, task: &str) -> String {
    app.db()
        .await
        .query_opt("select status::text from imports where id = $1::text::uuid", &[&task])
        .await
        .expect("query")
        .map(|r| r.get(0))
        .unwrap_or_default()
}

pub(crate) async fn upload_direct(app: &TestApp, key: &Auth, user: &str, file: Vec<u8>) -> String {
    let url = app.url(&format!("/api/v1/users/{user}/import/phonehealth/xml/direct"));
    let form = Form::new().part("file", Part::bytes(file).file_name("export.zip"));
    let r = crate::util::Resp::read(
        key.apply(app.http.post(url)).multipart(form).send().await.expect("upload"),
    )
    .await;
    assert_eq!(r.status, 202, "{}", r.body);
    r.str("task_id")
}

/// Imports have their own lane and consumers: an import in progress does not hold up SDK
/// batches, even with a single batch consumer (they used to share one stream and its
/// consumers, so a worker busy with imports processed no batch).
#[tokio::test]
async fn sdk_batches_flow_while_an_import_runs() {
    let app = TestApp::spawn_with(Mode::ApiOnly, |_| {}).await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let task = upload_direct(&app, &key, &user, zipped(&export(2))).await;
    // Hold the import's run: the import stops at its first progress report, until released.
    let mut held = app.db().await;
    let lock = held.transaction().await.expect("tx");
    lock.execute("select 1 from sync_runs where id = $1::text::uuid for update", &[&task])
        .await
        .expect("lock");
    let _worker =
        app.binary(&["worker"]).env("WORKER_CONCURRENCY", "1").spawn().expect("spawn a worker");
    for _ in 0..600 {
        if import_status(&app, &task).await == "processing" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(import_status(&app, &task).await, "processing");

    let body = crate::fixtures::body(
        vec![crate::fixtures::at(
            "HeartRate",
            "2026-03-10T07:00:00Z",
            60.0,
            "count/min",
            None,
            &crate::fixtures::watch(),
        )],
        vec![],
        vec![],
    );
    app.sync_and_wait(&user, &key, &body).await;
    assert_eq!(import_status(&app, &task).await, "processing");

    lock.rollback().await.expect("release");
    let (status, run) = wait_import(&app, &key, &user, &task).await;
    assert_eq!(status, "done", "{run}");
}

/// A hostile export fails at once (no retry) with the bound it broke.
#[tokio::test]
async fn a_hostile_export_fails_at_once_with_its_reason() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    // One text node of 9 MiB: about 9 KB zipped.
    let mut xml = b"<HealthData>".to_vec();
    xml.extend(std::iter::repeat_n(b'x', 9 << 20));
    xml.extend(b"</HealthData>");
    let task = upload_direct(&app, &key, &user, zipped(&xml)).await;
    let (status, run) = wait_import(&app, &key, &user, &task).await;
    assert_eq!(status, "failed", "{run}");
    let error = run["error"].as_str().unwrap_or_default();
    assert!(error.contains("larger than 8388608 bytes"), "{error}");
    let attempts =
        app.count(&format!("select attempts::bigint from imports where id = '{task}'")).await;
    assert_eq!(attempts, 1);
}

/// Direct uploads are held in memory while they arrive: only `DIRECT_UPLOAD_CONCURRENCY` at
/// once; another is answered 503 with `Retry-After` meanwhile, and taken once a place is free.
#[tokio::test]
async fn direct_uploads_beyond_the_concurrency_are_deferred() {
    let app = TestApp::spawn_with(Mode::ApiOnly, |s| s.s3.direct_upload_concurrency = 1).await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let url = app.url(&format!("/api/v1/users/{user}/import/phonehealth/xml/direct"));
    // A slow upload: its body trickles in until the test lets it end.
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Vec<u8>, std::io::Error>>(4);
    let chunks =
        futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|c| (c, rx)) });
    let form = Form::new()
        .part("file", Part::stream(reqwest::Body::wrap_stream(chunks)).file_name("export.xml"));
    let slow = tokio::spawn(key.apply(app.http.post(url.clone())).multipart(form).send());
    tx.send(Ok(b"<HealthData>".to_vec())).await.expect("send");
    tokio::time::sleep(Duration::from_millis(500)).await;

    let small = || Form::new().part("file", Part::bytes(export(1)).file_name("export.xml"));
    let r = crate::util::Resp::read(
        key.apply(app.http.post(url.clone())).multipart(small()).send().await.expect("upload"),
    )
    .await;
    assert_eq!(r.status, 503, "{}", r.body);
    assert_eq!(r.headers.get("retry-after").and_then(|v| v.to_str().ok()), Some("5"));

    tx.send(Ok(b"</HealthData>".to_vec())).await.expect("send");
    drop(tx);
    let first = slow.await.expect("join").expect("the slow upload");
    assert_eq!(first.status(), 202);
    let r = crate::util::Resp::read(
        key.apply(app.http.post(url)).multipart(small()).send().await.expect("upload"),
    )
    .await;
    assert_eq!(r.status, 202, "{}", r.body);
}

/// A 6 MiB export.zip: two parts.
/// An export.zip over two 5 MiB parts: `days` of export (stored with `method`) beside a 6 MiB
/// stored attachment.
pub(crate) fn two_part_zip(days: u32, method: zip::CompressionMethod) -> Vec<u8> {
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    z.start_file("apple_health_export/electrocardiograms/ecg.csv", stored).expect("zip");
    z.write_all(&vec![b'0'; 6 * 1024 * 1024]).expect("zip");
    let export_options = zip::write::SimpleFileOptions::default().compression_method(method);
    z.start_file("apple_health_export/export.xml", export_options).expect("zip");
    z.write_all(&export(days)).expect("zip");
    z.finish().expect("zip").into_inner()
}

/// `complete` is recoverable: a retry after a failure at any step ends in exactly one import
/// (it used to answer 404 once storage had completed the upload, or 202 without a task once
/// the upload was recorded but the import not queued).
#[tokio::test]
async fn a_complete_retried_after_a_partial_failure_ends_in_one_import() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let storage = app.settings.s3.storage().expect("storage");
    let complete = |object_key: String, upload_id: String, parts: Value| {
        let (app, key, user) = (&app, key.clone(), user.clone());
        async move {
            let body = json!({"key": object_key, "upload_id": upload_id, "parts": parts});
            app.post(&format!("{}/multipart/complete", base(&user)), &key, body).await
        }
    };

    // Storage completed the upload, then the service stopped before recording anything.
    let file = two_part_zip(2, zip::CompressionMethod::Stored);
    let (object_key, upload_id, parts) = upload_parts(&app, &key, &user, &file).await;
    let stored = storage.list_parts(&object_key, &upload_id).await.expect("parts");
    storage.complete(&object_key, &upload_id, &stored).await.expect("complete in storage");
    let r = complete(object_key.clone(), upload_id.clone(), parts.clone()).await;
    assert_eq!(r.status, 202, "{}", r.body);
    let task = r.str("task_id");
    let (status, run) = wait_import(&app, &key, &user, &task).await;
    assert_eq!(status, "done", "{run}");
    // Asked again: the same import.
    let again = complete(object_key.clone(), upload_id.clone(), parts).await;
    assert_eq!(again.str("task_id"), task);

    // The upload was recorded as completed, but the import never queued.
    let (object_key, upload_id, parts) = upload_parts(&app, &key, &user, &file).await;
    let stored = storage.list_parts(&object_key, &upload_id).await.expect("parts");
    storage.complete(&object_key, &upload_id, &stored).await.expect("complete in storage");
    app.db()
        .await
        .execute("update uploads set status = 'completed' where upload_id = $1", &[&upload_id])
        .await
        .expect("record");
    let r = complete(object_key.clone(), upload_id, parts).await;
    assert_eq!(r.status, 202, "{}", r.body);
    let task = r.str("task_id");
    assert_eq!(wait_import(&app, &key, &user, &task).await.0, "done");
    let imports =
        app.count(&format!("select count(*) from imports where object_key = '{object_key}'")).await;
    assert_eq!(imports, 1);
}

/// Part URLs are signed for the part's length: the store refuses a part of any other size, so
/// nothing beyond what `create` announced reaches the bucket. And the stored object must be the
/// size announced: another is discarded with a 400.
#[tokio::test]
async fn parts_and_uploads_of_another_size_than_announced_are_refused() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let file = two_part_zip(2, zip::CompressionMethod::Stored);
    let announced = file.len() + 1000;
    let created = app
        .post(&format!("{}/multipart/create", base(&user)), &key, json!({"file_size": announced}))
        .await;
    let (object_key, upload_id) = (created.str("key"), created.str("upload_id"));
    let part_size = created.body["part_size"].as_u64().expect("part size") as usize;
    let body = json!({"key": object_key, "upload_id": upload_id, "part_numbers": [1, 2]});
    let signed = app.post(&format!("{}/multipart/sign", base(&user)), &key, body).await;
    let url = |i: usize| signed.body["urls"][i]["url"].as_str().expect("url").to_string();
    // A connection per request: the store may close one after refusing a body it did not read,
    // and a pooled connection it closed fails the next request.
    let http = reqwest::Client::builder().pool_max_idle_per_host(0).build().expect("client");
    // More than the part's length, and less: refused by the store (which may also answer
    // before reading the body and close the connection).
    let mut longer = file[..part_size].to_vec();
    longer.extend_from_slice(&[0; 4096]);
    for (i, bytes) in [(0, longer), (1, file[part_size..].to_vec())] {
        let status = http.put(url(i)).body(bytes).send().await.map(|r| r.status());
        assert!(
            status.as_ref().map_or(true, |s| s.is_client_error()),
            "part {} of another length: {status:?}",
            i + 1
        );
    }
    // The first part as signed goes in; completing with it alone is the wrong size.
    let r = http.put(url(0)).body(file[..part_size].to_vec()).send().await.expect("put");
    assert!(r.status().is_success(), "{}", r.status());
    let etag = r.headers()["etag"].to_str().expect("etag").to_string();
    let parts = json!([{"part_number": 1, "etag": etag}]);
    let body = json!({"key": object_key, "upload_id": upload_id, "parts": parts});
    let r = app.post(&format!("{}/multipart/complete", base(&user)), &key, body).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.detail().contains("not the"), "{}", r.body);
    let storage = app.settings.s3.storage().expect("storage");
    assert_eq!(storage.head(&object_key).await.expect("head"), None);
    assert_eq!(app.count("select count(*) from imports").await, 0);
}

/// An export of many small records of many types, for `seed` (same keys, other values).
fn varied(days: u32, seed: u64) -> Vec<u8> {
    varied_at(days, seed, 0)
}

/// [`varied`] with every timestamp at `offset_minutes` east of UTC (the same local times).
fn varied_at(days: u32, seed: u64, offset_minutes: i32) -> Vec<u8> {
    let spec = ExportSpec {
        shape: ingest::export::generate::Shape::Varied,
        seed,
        offset_minutes,
        ..ExportSpec::new(days)
    };
    let mut out = Vec::new();
    write_export(&mut out, &spec).expect("generate");
    out
}

#[tokio::test]
async fn chunks_written_side_by_side_keep_rollups_exact() {
    // An import's chunks of new samples are written by two transactions at once (the user's
    // row in share mode); anything that meets a stored key takes the user's row exclusively.
    // Whatever the interleaving, every sample is stored once and the rollups equal a recount.
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let dir = std::env::temp_dir().join(format!("wearhouse-par-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = |seed: u64| dir.join(format!("export-{seed}.xml"));
    for seed in [7, 8] {
        // 60 days: about 88,000 records, three chunks whose days meet at their edges.
        std::fs::write(path(seed), varied(60, seed)).expect("write");
    }
    let import = |user: String, seed: u64| {
        let file = path(seed);
        let app = &app;
        async move { cli_import(app, &user, &file).await }
    };
    let user = app.user(&key, json!({})).await;
    let first = import(user.clone(), 7).await;
    let stored = samples(&app, &user).await;
    assert!(stored > 80_000, "{stored} samples; {first}");
    assert!(first.contains(&format!("samples: {stored} new, 0 changed")), "{first}");
    let (differing, rows) = crate::sdk_sync::rollups_against_samples(&app, &user).await;
    assert!(rows > 1000, "{rows} rollup rows");
    assert_eq!(differing, 0, "rollups differ from a recount after the first import");

    // The same keys with other values: every chunk meets stored keys and is rewritten.
    // (A few values come out equal by chance: "changed" and "unchanged" add up to all.)
    let second = import(user.clone(), 8).await;
    assert!(second.contains("samples: 0 new, ") && !second.contains(" 0 changed"), "{second}");
    assert_eq!(samples(&app, &user).await, stored);
    assert_eq!(crate::sdk_sync::rollups_against_samples(&app, &user).await.0, 0);

    // Two imports of one user at once, of overlapping keys: the race is lost somewhere,
    // never the data.
    let other = app.user(&key, json!({})).await;
    let (a, b) = tokio::join!(import(other.clone(), 7), import(other.clone(), 8));
    assert_eq!(samples(&app, &other).await, stored, "{a}\n{b}");
    let (differing, _) = crate::sdk_sync::rollups_against_samples(&app, &other).await;
    assert_eq!(differing, 0, "rollups differ from a recount after two imports at once");
    let _ = std::fs::remove_dir_all(dir);
}

/// How many chunks the CLI's import was written in.
fn chunks_of(output: &str) -> u64 {
    let n = output.split(" chunks)").next().and_then(|s| s.rsplit(' ').next());
    n.and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("no chunk count in {output}"))
}

#[tokio::test]
async fn an_import_beside_a_busy_api_yields_in_smaller_chunks_and_stores_the_same() {
    // While the API's sessions are at work, an import cuts its chunks 32 times smaller and
    // rests after each (`ingest::pace`). Where its chunks are cut changes nothing stored: the
    // same export into two users, one beside an idle API and one beside a busy one.
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let dir =
        std::env::temp_dir().join(format!("wearhouse-pace-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("export.xml");
    // A watch's 30 days: tens of thousands of records, nights of sleep and workouts.
    std::fs::write(&file, export(30)).expect("write");
    let idle_user = app.user(&key, json!({})).await;
    let idle = cli_import(&app, &idle_user, &file).await;

    let busy = BusyApi::start(&app.settings.database_url).await;
    let busy_user = app.user(&key, json!({})).await;
    let paced = cli_import(&app, &busy_user, &file).await;
    busy.stop().await;

    assert!(chunks_of(&paced) >= 4 * chunks_of(&idle), "idle: {idle}\nbusy: {paced}");
    let figures = |user: String| {
        let app = &app;
        async move {
            let sleep = app
                .count(&format!(
                    "select count(*) * 1000000 + coalesce(sum(sleep_seconds), 0)
                       from sleep_sessions where user_id = '{user}'"
                ))
                .await;
            (stored_figures(app, &user).await, sleep)
        }
    };
    let (idle_figures, paced_figures) =
        (figures(idle_user).await, figures(busy_user.clone()).await);
    let ((samples, _, workouts), sleep) = idle_figures;
    assert!(samples > 30_000 && workouts > 10 && sleep > 20_000_000, "{idle_figures:?}");
    assert_eq!(idle_figures, paced_figures, "idle: {idle}\nbusy: {paced}");
    assert_eq!(samples_line(&idle), samples_line(&paced));
    let (differing, _) = crate::sdk_sync::rollups_against_samples(&app, &busy_user).await;
    assert_eq!(differing, 0, "rollups differ from a recount after a paced import");
    let _ = std::fs::remove_dir_all(dir);
}

/// A session under the API's name at work all along (one statement that lasts), until
/// [`BusyApi::stop`]: the API busy with reads, as an import's pacing sees it.
struct BusyApi {
    url: String,
    statement: tokio::task::JoinHandle<Result<(), tokio_postgres::Error>>,
}

const BUSY_STATEMENT: &str = "select pg_sleep(600)";

impl BusyApi {
    async fn start(url: &str) -> BusyApi {
        let api = crate::util::connect(url).await;
        let name = schema::db::Role::Api.application_name();
        api.batch_execute(&format!("set application_name = '{name}'")).await.expect("name");
        let statement = tokio::spawn(async move { api.batch_execute(BUSY_STATEMENT).await });
        BusyApi { url: url.to_string(), statement }
    }

    async fn stop(self) {
        let admin = crate::util::connect(&self.url).await;
        admin
            .execute(
                "select pg_cancel_backend(pid) from pg_stat_activity where query = $1",
                &[&BUSY_STATEMENT],
            )
            .await
            .expect("cancel");
        let ended = self.statement.await.expect("busy session");
        assert!(ended.is_err(), "the busy session was cancelled, not finished");
    }
}

#[tokio::test]
async fn an_import_yields_to_the_apis_reads_on_a_replica() {
    // With the read routes on a replica the primary sees no API reads, but the replica replays
    // the import's writes on the cores its reads want: the import counts the API's sessions on
    // the replica too (`DATABASE_REPLICA_URLS`), and cuts its chunks small while they are busy.
    let primary = crate::own_postgres::OwnPostgres::start().await;
    let replica = primary.replica().await;
    // The busy statement below holds a snapshot: the replica's replay waits for it rather than
    // cancel it after 30 s when the import's pruning conflicts with it.
    replica.execute("postgres", "alter system set max_standby_streaming_delay = -1").await;
    replica.execute("postgres", "select pg_reload_conf()").await;
    let (primary_url, replica_url) = (primary.url("wearhouse"), replica.url("wearhouse"));
    let app = TestApp::spawn_with(Mode::ApiOnly, |s| {
        s.database_url = primary_url;
        s.database_replica_urls = vec![replica_url.clone()];
    })
    .await;
    let key = app.api_key().await;
    let dir =
        std::env::temp_dir().join(format!("wearhouse-rpace-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("export.xml");
    std::fs::write(&file, export(30)).expect("write");
    let idle_user = app.user(&key, json!({})).await;
    let idle = cli_import(&app, &idle_user, &file).await;

    let busy = BusyApi::start(&replica_url).await;
    let busy_user = app.user(&key, json!({})).await;
    let paced = cli_import(&app, &busy_user, &file).await;
    busy.stop().await;

    assert!(chunks_of(&paced) >= 4 * chunks_of(&idle), "idle: {idle}\nbusy: {paced}");
    assert_eq!(samples_line(&idle), samples_line(&paced));
    let (idle_figures, paced_figures) =
        (stored_figures(&app, &idle_user).await, stored_figures(&app, &busy_user).await);
    assert!(idle_figures.0 > 30_000, "{idle_figures:?}");
    assert_eq!(idle_figures, paced_figures);
    let _ = std::fs::remove_dir_all(dir);
}

/// What the CLI said of the import's samples, workouts and sleep (its counts, not its speed).
fn samples_line(output: &str) -> &str {
    output.split_once("; ").map_or(output, |(_, rest)| rest)
}

#[tokio::test]
async fn new_samples_in_hours_already_stored_keep_rollups_exact() {
    // A chunk's hours between a series' first and last are copied in as new rollup rows; when
    // another import stored samples in those hours already, the copy meets their rows and the
    // chunk's hours are added to them instead. The same export seven minutes earlier in UTC:
    // new samples in the hours (and days) of the first import's.
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let dir = std::env::temp_dir().join(format!("wearhouse-hrs-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("dir");
    let user = app.user(&key, json!({})).await;
    let mut outputs = Vec::new();
    for offset_minutes in [0, 7] {
        let file = dir.join(format!("export-{offset_minutes}.xml"));
        std::fs::write(&file, varied_at(60, 7, offset_minutes)).expect("write");
        outputs.push(cli_import(&app, &user, &file).await);
    }
    let stored = samples(&app, &user).await;
    let first = outputs[0].split("samples: ").nth(1).and_then(|s| s.split(' ').next());
    let first: i64 = first.and_then(|n| n.parse().ok()).expect("first import's count");
    assert!(first > 80_000, "{outputs:?}");
    assert_eq!(stored, 2 * first, "{outputs:?}");
    let (differing, _) = crate::sdk_sync::rollups_against_samples(&app, &user).await;
    assert_eq!(differing, 0, "rollups differ from a recount: {outputs:?}");
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn chunks_for_a_writer_are_made_empty_and_once() {
    // An import makes the hypertable chunks its chunk of samples needs before it writes them,
    // in a transaction of its own: the chunk is there, empty, and a second call makes nothing.
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user: schema::ids::UserId = app.user(&key, json!({})).await.parse().expect("uuid");
    let db = schema::Db::connect(&app.settings.database_url, 2).await.expect("db");
    let chunks = "select count(*) from show_chunks('samples')";
    let before = app.count(chunks).await;
    let day = |d: u32| chrono::NaiveDate::from_ymd_opt(2031, 3, d).expect("day");
    let times = [day(4), day(4), day(5)].map(|d| d.and_hms_opt(13, 30, 0).expect("time").and_utc());
    // 2031-03-04 and 03-05 share a week-long chunk: one day asks for it and makes it.
    let known = schema::sample_chunks::Chunks::new();
    let made = known.make(&db, user, times).await.expect("make");
    assert!((1..=2).contains(&made), "{made} days made chunks");
    assert_eq!(app.count(chunks).await, before + 1);
    assert_eq!(app.count("select count(*) from samples").await, 0, "placeholders left behind");
    // Asked again, it finds the chunk, makes nothing, and knows its whole range from then on:
    // another day of its week (Thursday 02-27 to 03-05) needs no look-up, a later week does.
    assert_eq!(known.make(&db, user, times).await.expect("again"), 0);
    assert!(
        known.covers(times[2])
            && known.covers(day(1).and_hms_opt(0, 0, 0).expect("time").and_utc())
    );
    assert!(!known.covers(day(20).and_hms_opt(0, 0, 0).expect("time").and_utc()));
    // Another writer, knowing nothing, finds it in the catalogue and makes nothing either.
    let fresh = schema::sample_chunks::Chunks::new();
    assert_eq!(fresh.make(&db, user, times).await.expect("another writer"), 0);
    assert!(fresh.covers(times[0]));
    assert_eq!(app.count(chunks).await, before + 1);
}

#[tokio::test]
async fn a_writer_whose_known_chunk_was_dropped_still_stores() {
    // A range once known is trusted; its chunk dropped meanwhile (delete_after_days), the
    // write makes it again and loses nothing.
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user: schema::ids::UserId = app.user(&key, json!({})).await.parse().expect("uuid");
    let db = schema::Db::connect(&app.settings.database_url, 2).await.expect("db");
    let ts = chrono::NaiveDate::from_ymd_opt(2032, 7, 14)
        .and_then(|d| d.and_hms_opt(9, 0, 0))
        .expect("time")
        .and_utc();
    let known = schema::sample_chunks::Chunks::new();
    known.make(&db, user, [ts]).await.expect("make");
    known.make(&db, user, [ts]).await.expect("learn");
    assert!(known.covers(ts));
    app.count(
        "select count(*) from drop_chunks('samples', newer_than => '2032-07-01'::timestamptz)",
    )
    .await;
    assert_eq!(known.make(&db, user, [ts]).await.expect("trusted"), 0);
    let client = db.client().await.expect("client");
    client
        .execute(
            "insert into samples (user_id, series_type_id, data_source_id, ts, value)
             values ($1, 1, $1, $2, 60)",
            &[&user, &ts],
        )
        .await
        .expect("a write into the dropped chunk's range");
    assert_eq!(app.count("select count(*) from samples where ts = '2032-07-14 09:00Z'").await, 1);
}

/// `xml` as `export.zip` written to a pipe by Python's `zipfile`, the way streaming zippers and
/// macOS Archive Utility write archives: deflated, each entry's sizes in a data descriptor
/// after its data.
fn zipped_to_a_stream(xml: &[u8], dir: &std::path::Path) -> Vec<u8> {
    let path = dir.join("export-for-zip.xml");
    std::fs::write(&path, xml).expect("write");
    let script = "import sys, zipfile\n\
        z = zipfile.ZipFile(sys.stdout.buffer, 'w', zipfile.ZIP_DEFLATED)\n\
        z.writestr('apple_health_export/export_cda.xml', '<ClinicalDocument/>')\n\
        z.write(sys.argv[1], 'apple_health_export/export.xml')\n\
        z.close()\n";
    let out = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(&path)
        .stdout(std::process::Stdio::piped())
        .output()
        .expect("python3");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Flag bit 3 of the first local header: sizes after the data.
    assert!(out.stdout.get(6).is_some_and(|f| f & 0x08 != 0), "no data descriptor");
    out.stdout
}

/// A user's samples, their rounded sum, and workouts.
async fn stored_figures(app: &TestApp, user: &str) -> (i64, i64, i64) {
    let sum = app
        .count(&format!(
            "select coalesce(round(sum(value))::bigint, 0) from samples where user_id = '{user}'"
        ))
        .await;
    let workouts =
        app.count(&format!("select count(*) from workouts where user_id = '{user}'")).await;
    (samples(app, user).await, sum, workouts)
}

#[tokio::test]
async fn an_archive_with_data_descriptors_imports_like_its_xml() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let dir = std::env::temp_dir().join(format!("wearhouse-dd-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("dir");
    let xml = export(3);
    std::fs::write(dir.join("export.xml"), &xml).expect("write");
    std::fs::write(dir.join("export.zip"), zipped_to_a_stream(&xml, &dir)).expect("write");
    let mut figures = Vec::new();
    for file in ["export.xml", "export.zip"] {
        let user = app.user(&key, json!({})).await;
        cli_import(&app, &user, &dir.join(file)).await;
        figures.push(stored_figures(&app, &user).await);
    }
    // And through the upload route.
    let user = app.user(&key, json!({})).await;
    let zip = std::fs::read(dir.join("export.zip")).expect("read");
    let task = upload_direct(&app, &key, &user, zip).await;
    let (status, run) = wait_import(&app, &key, &user, &task).await;
    assert_eq!(status, "done", "{run}");
    figures.push(stored_figures(&app, &user).await);
    assert!(figures[0].0 > 1000, "{figures:?}");
    assert_eq!(figures[0], figures[1], "the zip stores what its XML stores");
    assert_eq!(figures[0], figures[2], "uploaded, the zip stores what its XML stores");
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn a_us_unit_export_stores_the_si_values_of_its_metric_twin() {
    // Miles, mph, inches, pounds and °F on one side; km, km/hr, cm, kg and °C on the other.
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let dir = std::env::temp_dir().join(format!("wearhouse-us-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("dir");
    let mut per_series = Vec::new();
    for metric in [false, true] {
        let spec = ExportSpec {
            shape: ingest::export::generate::Shape::Varied,
            metric,
            ..ExportSpec::new(4)
        };
        let mut xml = Vec::new();
        write_export(&mut xml, &spec).expect("generate");
        let path = dir.join(format!("export-{metric}.xml"));
        std::fs::write(&path, &xml).expect("write");
        let user = app.user(&key, json!({})).await;
        let stdout = cli_import(&app, &user, &path).await;
        assert!(stdout.contains("dropped: 0"), "{stdout}");
        let rows = app
            .db()
            .await
            .query(
                "select series_type_id, count(*), sum(value) from samples where user_id = $1
                 group by 1 order by 1",
                &[&user.parse::<uuid::Uuid>().expect("uuid")],
            )
            .await
            .expect("query");
        let figures: Vec<(i16, i64, f64)> =
            rows.iter().map(|r| (r.get(0), r.get(1), r.get(2))).collect();
        per_series.push(figures);
    }
    let (us, metric) = (&per_series[0], &per_series[1]);
    assert!(us.len() >= 20, "{us:?}");
    assert_eq!(us.len(), metric.len());
    for ((sa, na, va), (sb, nb, vb)) in us.iter().zip(metric) {
        assert_eq!((sa, na), (sb, nb));
        assert!(
            (va - vb).abs() <= 1e-6 * va.abs().max(1.0),
            "series {sa}: {va} in US units, {vb} metric"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// `tests/tools/zip_export.py` writing `entries` to a pipe (`out` = `-`: every entry's sizes
/// in a data descriptor) or to the file `out` in `dir` (sizes in the headers).
fn python_zip(dir: &std::path::Path, out: &str, entries: &[String]) -> Vec<u8> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/tools/zip_export.py");
    let path = if out == "-" { out.to_string() } else { dir.join(out).display().to_string() };
    let run = std::process::Command::new("python3")
        .arg(script)
        .arg(&path)
        .args(entries)
        .output()
        .expect("python3");
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    if out == "-" { run.stdout } else { std::fs::read(&path).expect("read the zip") }
}

/// The routes of a user's workouts through the API: (has_route, route points) per workout,
/// oldest first.
async fn routes_read(app: &TestApp, key: &Auth, user: &str) -> Vec<(bool, Vec<Value>)> {
    let path = format!(
        "/api/v1/users/{user}/events/workouts?start_date=2023-12-01&end_date=2024-02-01&limit=100"
    );
    let list = app.get(&path, key).await;
    assert_eq!(list.status, 200, "{}", list.body);
    let mut out = Vec::new();
    for w in list.body["data"].as_array().cloned().unwrap_or_default().iter().rev() {
        let id = w["id"].as_str().unwrap_or_default();
        let route = app.get(&format!("/api/v1/users/{user}/events/workouts/{id}/route"), key).await;
        assert_eq!(route.status, 200, "{}", route.body);
        assert_eq!(route.body["workout_id"], w["id"]);
        let points = route.body["points"].as_array().cloned().unwrap_or_default();
        out.push((w["has_route"].as_bool().unwrap_or_default(), points));
    }
    out
}

/// An export as a phone or a Mac hands it over — `export.xml` beside `export_cda.xml`,
/// `workout-routes/` and `electrocardiograms/` — in every kind of zip, through the CLI and the
/// upload route: the same figures as the bare XML, and each workout with its route, in the
/// SDK's shape, whether the routes come before or after the export.
#[tokio::test]
async fn every_kind_of_archive_imports_its_workouts_with_their_routes() {
    use ingest::export::generate::{ROUTE_START, ROUTE_STEP_SECONDS, workout_routes};
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let dir =
        std::env::temp_dir().join(format!("wearhouse-routes-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("dir");
    let spec = ExportSpec::new(4);
    let mut xml = Vec::new();
    write_export(&mut xml, &spec).expect("generate");
    let write = |name: &str, bytes: &[u8]| {
        std::fs::write(dir.join(name), bytes).expect("write");
        dir.join(name).display().to_string()
    };
    let export = write("export.xml", &xml);
    let cda = write("export_cda.xml", b"<ClinicalDocument/>");
    let ecg = write("ecg.csv", b"Name,Ada\nClassification,Sinus Rhythm\n\n-12.3\n-11.9\n");
    let routes: Vec<(String, String)> = workout_routes(&spec)
        .iter()
        .enumerate()
        .map(|(i, (name, gpx))| (name.clone(), write(&format!("{i}.gpx"), gpx)))
        .collect();
    let at = |method: &str, name: &str, path: &str| {
        format!("{method}:apple_health_export/{name}={path}")
    };
    let routes_as = |method: &str| -> Vec<String> {
        routes.iter().map(|(name, path)| at(method, name, path)).collect()
    };

    // The bare XML: the figures every archive must store, and no route.
    let bare_user = app.user(&key, json!({})).await;
    let user = bare_user.clone();
    cli_import(&app, &user, std::path::Path::new(&export)).await;
    let expected = stored_figures(&app, &user).await;
    assert_eq!(expected.2, 2, "{expected:?}");
    let bare = routes_read(&app, &key, &user).await;
    assert!(bare.iter().all(|(has, points)| !has && points.is_empty()), "{bare:?}");
    let bare_run = app.get(&format!("/api/v1/users/{user}/sync/runs"), &key).await.body[0].clone();

    let macos = [
        vec!["dir:apple_health_export/".to_string()],
        routes_as("deflate"),
        vec![
            at("deflate", "electrocardiograms/ecg_2024-01-02_08.00.csv", &ecg),
            at("deflate", "export.xml", &export),
            at("deflate", "export_cda.xml", &cda),
        ],
    ]
    .concat();
    let stored_streamed = [
        vec![at("store", "export.xml", &export), at("store", "export_cda.xml", &cda)],
        routes_as("store"),
    ]
    .concat();
    let mixed_zip64 = [
        vec!["--zip64".to_string(), at("deflate", "export.xml", &export)],
        routes_as("store"),
        vec![at("store", "electrocardiograms/ecg.csv", &ecg)],
    ]
    .concat();
    let seekable = [routes_as("store"), vec![at("deflate", "export.xml", &export)]].concat();
    // The zip after its bare XML: the stored workouts get their routes, once.
    let path = dir.join("later.zip");
    std::fs::write(&path, python_zip(&dir, "-", &macos)).expect("write");
    for given in ["2 given a route", "0 given a route"] {
        let stdout = cli_import(&app, &bare_user, &path).await;
        assert!(stdout.contains(given), "{stdout}");
    }
    assert!(routes_read(&app, &key, &bare_user).await.iter().all(|(has, p)| *has && !p.is_empty()));
    // (what it stands for, output, entries, ECG files, through the upload route, not the CLI)
    let variants = [
        (
            "macOS Archive Utility: deflated, sizes after the data, routes first",
            "-",
            macos,
            1,
            false,
        ),
        ("a streaming zipper storing every entry, routes last", "-", stored_streamed, 0, true),
        ("a deflated export then stored routes, zip64, streamed", "-", mixed_zip64, 1, false),
        ("a seekable zip, stored routes first", "seekable.zip", seekable, 0, true),
    ];
    for (what, out, entries, ecgs, upload) in variants {
        let archive = python_zip(&dir, out, &entries);
        let user = app.user(&key, json!({})).await;
        if upload {
            let task = upload_direct(&app, &key, &user, archive).await;
            let (status, run) = wait_import(&app, &key, &user, &task).await;
            assert_eq!(status, "done", "{what}: {run}");
        } else {
            let path = dir.join("archive.zip");
            std::fs::write(&path, archive).expect("write");
            let stdout = cli_import(&app, &user, &path).await;
            assert!(stdout.contains("2 given a route"), "{what}: {stdout}");
        }
        let runs = app.get(&format!("/api/v1/users/{user}/sync/runs"), &key).await;
        let run = runs.body[0].clone();
        // What the XML alone drops (stand hours), nothing more: every route file was read.
        assert_eq!(run["status"], bare_run["status"], "{what}: {run}");
        let counts = &run["counts"];
        assert_eq!(counts["dropped"], bare_run["counts"]["dropped"], "{what}: {counts}");
        assert_eq!(counts["received"]["route_files"], 2, "{what}: {counts}");
        // ECG recordings are walked past and counted: no series of ours holds them.
        assert_eq!(counts["received"]["electrocardiograms"].as_i64().unwrap_or(0), ecgs, "{what}");
        assert_eq!(counts["workout_routes_saved"], 2, "{what}: {counts}");
        assert_eq!(stored_figures(&app, &user).await, expected, "{what}");
        let read = routes_read(&app, &key, &user).await;
        assert_eq!(read.len(), 2, "{what}");
        for ((has, points), minutes) in read.iter().zip([30, 50]) {
            assert!(has, "{what}");
            assert_eq!(points.len() as i64, minutes * 60 / ROUTE_STEP_SECONDS, "{what}");
            let first = &points[0];
            assert_eq!(first["latitude"], ROUTE_START.0, "{what}: {first}");
            assert_eq!(first["longitude"], ROUTE_START.1, "{what}: {first}");
            assert_eq!(first["altitude_m"], 100.0, "{what}: {first}");
            assert_eq!(first["horizontal_accuracy_m"], 3.1, "{what}: {first}");
            assert!(
                first["timestamp"].as_str().is_some_and(|t| t.ends_with("T17:00:00Z")),
                "{what}: the workout starts at 18:00 +01:00: {first}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// A file that is no export, or a broken one, fails its import with a reason a person can act
/// on, in its sync run (through the upload route) and on the CLI, and is not tried again; a
/// record in a unit that does not fit its type is reported by name, the rest stored.
#[tokio::test]
async fn broken_files_fail_with_a_reason_a_person_can_act_on() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let dir =
        std::env::temp_dir().join(format!("wearhouse-broken-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("dir");
    let xml = export(2);
    let xml_path = dir.join("export.xml");
    std::fs::write(&xml_path, &xml).expect("write");
    let export_entry = format!("apple_health_export/export.xml={}", xml_path.display());
    let deflated = python_zip(&dir, "-", &[format!("deflate:{export_entry}")]);
    let stored = python_zip(&dir, "-", &[format!("store:{export_entry}")]);
    // Inside the first heart-rate record's tag.
    let in_tag = xml.windows(8).position(|w| w == b"<Record ").unwrap_or(0) + 40;
    let mut cases: Vec<(&str, Vec<u8>, String)> = vec![
        (
            "a PDF",
            b"%PDF-1.4\n%\xE2\xE3\xCF\xD3 a scanned letter".to_vec(),
            "not an Apple Health export: the file is neither a zip archive nor XML".into(),
        ),
        (
            "a zip without export.xml",
            {
                let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
                let opts = zip::write::SimpleFileOptions::default();
                z.start_file("apple_health_export/export_cda.xml", opts).expect("zip");
                z.write_all(b"<ClinicalDocument/>").expect("zip");
                z.finish().expect("zip").into_inner()
            },
            "the zip holds no export.xml".into(),
        ),
        (
            "XML that is no export",
            b"<?xml version=\"1.0\"?>\n<plist version=\"1.0\"><dict/></plist>\n".to_vec(),
            "not an Apple Health export: no <HealthData> element".into(),
        ),
        (
            "an export cut inside a tag",
            xml[..in_tag].to_vec(),
            format!("the file ends at byte {in_tag} before </HealthData>: it is truncated"),
        ),
    ];
    for (what, zip) in [("a deflated zip cut short", deflated), ("a stored zip cut short", stored)]
    {
        let cut = zip[..zip.len() / 2].to_vec();
        let reason = format!("the zip ends at byte {} before its end: it is truncated", cut.len());
        cases.push((what, cut, reason));
    }
    for (what, file, reason) in cases {
        // Through the upload route: the run fails with the reason, once.
        let user = app.user(&key, json!({})).await;
        let task = upload_direct(&app, &key, &user, file.clone()).await;
        let (status, run) = wait_import(&app, &key, &user, &task).await;
        assert_eq!(status, "failed", "{what}: {run}");
        assert_eq!(run["status"], "failed", "{what}: {run}");
        assert_eq!(run["error"], reason.as_str(), "{what}: {run}");
        let attempts =
            app.count(&format!("select attempts::bigint from imports where id = '{task}'")).await;
        assert_eq!(attempts, 1, "{what}: not tried again");
        // On the CLI: the same reason, and a failing exit.
        let path = dir.join("broken");
        std::fs::write(&path, &file).expect("write");
        let out = app
            .binary(&["import", "--user", &user, path.to_str().unwrap_or_default()])
            .output()
            .await
            .expect("run");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{what}");
        assert!(stderr.contains(&reason), "{what}: {stderr}");
    }

    // Body mass in litres: that record is dropped and named, the rest stored.
    let odd = String::from_utf8_lossy(&xml).replacen(
        "</HealthData>",
        r#" <Record type="HKQuantityTypeIdentifierBodyMass" sourceName="Scale" unit="L" creationDate="2024-01-01 08:00:00 +0100" startDate="2024-01-01 08:00:00 +0100" endDate="2024-01-01 08:00:00 +0100" value="65"/>
</HealthData>"#,
        1,
    );
    let user = app.user(&key, json!({})).await;
    let task = upload_direct(&app, &key, &user, odd.into_bytes()).await;
    let (status, run) = wait_import(&app, &key, &user, &task).await;
    assert_eq!(status, "done", "{run}");
    assert_eq!(run["status"], "partial", "{run}");
    assert_eq!(
        run["dropped"]["record.unknown_unit"]["examples"],
        json!([
            "HKQuantityTypeIdentifierBodyMass: unit 'L' is not supported for weight (stored in kg)"
        ]),
        "{run}"
    );
    assert!(samples(&app, &user).await > 1000);
    let _ = std::fs::remove_dir_all(dir);
}
