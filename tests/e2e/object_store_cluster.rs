//! A clustered object store: three Garage nodes with replication factor 3
//! (`scripts/garage_cluster.sh`, `GARAGE_NODES=3 scripts/stack.sh`). One node stops in the
//! middle of a multipart upload, and the upload, then the import of what it uploaded, finish
//! as if nothing happened.

use serde_json::{Value, json};

use crate::import::wait_import;
use crate::util::{Mode, TestApp};

fn script(args: &[&str]) -> std::process::Command {
    let mut cmd = std::process::Command::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scripts/garage_cluster.sh"
    ));
    cmd.args(args);
    cmd
}

async fn cluster(args: &[&str]) {
    let cmd = tokio::process::Command::from(script(args));
    crate::own_postgres::run(cmd, &format!("garage_cluster.sh {args:?}")).await;
}

/// Node 2 started again when the test ends, however it ends.
struct Restart;
impl Drop for Restart {
    fn drop(&mut self) {
        let _ = script(&["start", "2"]).output();
    }
}

#[tokio::test]
async fn a_storage_node_stopped_during_an_upload_and_an_import_loses_nothing() {
    cluster(&["up"]).await;
    let env = format!(
        "{}/.cache/wearhouse/garage-cluster/s3.env",
        std::env::var("HOME").unwrap_or_default()
    );
    let s3 = crate::util::s3_settings_from(&env);
    let app = TestApp::spawn_with(Mode::All, |s| s.s3 = s3).await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let base = format!("/api/v1/users/{user}/import/phonehealth/xml/storage");
    let file = crate::import::two_part_zip(20, zip::CompressionMethod::Deflated);

    let created =
        app.post(&format!("{base}/multipart/create"), &key, json!({"file_size": file.len()})).await;
    assert_eq!(created.status, 201, "{}", created.body);
    let (object_key, upload_id) = (created.str("key"), created.str("upload_id"));
    let part_size = created.body["part_size"].as_u64().expect("part size") as usize;
    let chunks: Vec<&[u8]> = file.chunks(part_size).collect();
    assert_eq!(chunks.len(), 2);
    let body = json!({"key": object_key, "upload_id": upload_id, "part_numbers": [1, 2]});
    let signed = app.post(&format!("{base}/multipart/sign"), &key, body).await;
    assert_eq!(signed.status, 200, "{}", signed.body);

    let http = reqwest::Client::new();
    let mut parts = Vec::new();
    let _restart = Restart;
    for (i, chunk) in chunks.iter().enumerate() {
        if i == 1 {
            // Half-way: a storage node goes down (and is known to be down).
            cluster(&["stop", "2"]).await;
        }
        let url = signed.body["urls"][i]["url"].as_str().expect("url");
        let r = http.put(url).body(chunk.to_vec()).send().await.expect("put part");
        assert!(r.status().is_success(), "part {}: {}", i + 1, r.status());
        let etag = r.headers()["etag"].to_str().expect("etag").to_string();
        parts.push(json!({"part_number": i + 1, "etag": etag}));
    }
    let body = json!({"key": object_key, "upload_id": upload_id, "parts": Value::Array(parts)});
    let done = app.post(&format!("{base}/multipart/complete"), &key, body).await;
    assert_eq!(done.status, 202, "{}", done.body);
    let task = done.str("task_id");
    let (status, run) = wait_import(&app, &key, &user, &task).await;
    assert_eq!(status, "done", "{run}");
    assert_eq!(run["counts"]["workouts_saved"], 10);
    let samples =
        app.count(&format!("select count(*) from samples where user_id = '{user}'")).await;
    assert!(samples > 10_000, "{samples}");
    cluster(&["start", "2"]).await;
}
