//! MCP at `/mcp`, driven by an independent client (PyPI's `mcp` package, installed by
//! `scripts/test.sh`; `tests/clients/mcp_calls.py`): it lists the tools and calls each, and every
//! answer is checked against what the REST API answers for the same user. A bad key, an unknown
//! user and a window too large are each a tool error that says what to do. Requests naming
//! another host, or sent by a page of another origin, are refused (DNS rebinding).

use serde_json::{Value, json};

use crate::fixtures::{at, body, evening_run, phone, rec, sleep, watch};
use crate::util::{Auth, TestApp, run_tool};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Ada's week: heart rate from the watch, steps from the watch and the phone for the same
/// hours (resolved by priority), a weight, a run and a night.
async fn ada(app: &TestApp, key: &Auth) -> String {
    let user = app
        .user(key, json!({"email": "ada@example.com", "first_name": "Ada", "last_name": "L"}))
        .await;
    app.user(key, json!({"email": "grace@example.com", "first_name": "Grace"})).await;
    let mut records = Vec::new();
    for (i, bpm) in [62.0, 64.0, 71.0, 90.0, 118.0, 75.0].iter().enumerate() {
        let t = format!("2026-03-10T06:{:02}:00Z", i * 10);
        records.push(at("HeartRate", &t, *bpm, "count/min", Some("+01:00"), &watch()));
    }
    for hour in 7..10 {
        let (a, b) =
            (format!("2026-03-10T{hour:02}:00:00Z"), format!("2026-03-10T{hour:02}:30:00Z"));
        records.push(rec("StepCount", &a, &b, 1000.0, "count", Some("+01:00"), &watch()));
        records.push(rec("StepCount", &a, &b, 900.0, "count", Some("+01:00"), &phone()));
    }
    records.push(at("BodyMass", "2026-03-11T07:00:00Z", 61.5, "kg", Some("+01:00"), &phone()));
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
    app.sync_and_wait(&user, key, &body(records, vec![evening_run("run-1", 10)], night)).await;
    user
}

/// What the REST API answers at `path`.
async fn rest(app: &TestApp, key: &Auth, path: &str) -> Value {
    let r = app.get(path, key).await;
    assert_eq!(r.status, 200, "{path}: {}", r.body);
    r.body
}

#[tokio::test]
async fn an_assistant_reads_what_the_api_answers_and_is_told_what_went_wrong() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = ada(&app, &key).await;
    let Auth::Key(raw_key) = &key else { panic!("an API key") };
    let u = |args: Value| {
        let mut args = args;
        args["user_id"] = json!(user);
        args
    };
    let week = json!({"start_date": "2026-03-08", "end_date": "2026-03-14"});
    // A key that may only mint SDK tokens reads nothing, through MCP as through the API.
    let admin = app.admin().await;
    let r = app
        .post("/api/v1/developer/api-keys", &admin, json!({"name": "sdk only", "scopes": ["sdk"]}))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let sdk_key = r.str("key");
    let calls = json!({"key": raw_key, "calls": [
        // Not "ada" alone: a user's id is hex and may hold it ("…999eada3…" did once).
        {"tool": "find_users", "arguments": {"query": "ada@"}},
        {"tool": "data_coverage", "arguments": u(json!({}))},
        {"tool": "timeseries", "arguments": u(json!({"types": ["heart_rate"],
            "start_time": "2026-03-10", "end_time": "2026-03-10", "resolution": "raw"}))},
        {"tool": "timeseries", "arguments": u(json!({"types": ["heart_rate", "steps"],
            "start_time": "2026-03-10", "end_time": "2026-03-10"}))},
        {"tool": "timeseries", "arguments": u(json!({"types": ["heart_rate"],
            "start_time": "2026-03-10", "end_time": "2026-03-10", "resolution": "raw", "max_points": 4}))},
        {"tool": "activity_summary", "arguments": u(week.clone())},
        {"tool": "sleep_summary", "arguments": u(week.clone())},
        {"tool": "recovery_summary", "arguments": u(week.clone())},
        {"tool": "body_summary", "arguments": u(json!({}))},
        {"tool": "workouts", "arguments": u(week.clone())},
        {"tool": "sleep_sessions", "arguments": u(week.clone())},
        {"tool": "health_scores", "arguments": u(week.clone())},
        // What goes wrong.
        {"tool": "activity_summary", "arguments": u(week.clone()), "key": "wh_not_a_key"},
        {"tool": "activity_summary", "arguments": {"user_id": uuid::Uuid::new_v4(),
            "start_date": "2026-03-08", "end_date": "2026-03-14"}},
        {"tool": "activity_summary", "arguments": u(json!({"start_date": "2025-01-01", "end_date": "2026-03-14"}))},
        {"tool": "timeseries", "arguments": u(json!({"types": ["heart_rate", "steps"],
            "start_time": "2025-03-10", "end_time": "2026-03-10"}))},
        {"tool": "workouts", "arguments": {"user_id": "../../developer/api-keys",
            "start_date": "2026-03-08", "end_date": "2026-03-14"}},
        {"tool": "sleep_summary", "arguments": u(week.clone()), "key": sdk_key},
    ]});

    let dir = std::env::temp_dir().join(format!("wearhouse-mcp-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join("calls.json"), calls.to_string()).expect("write");
    let script = format!("{ROOT}/tests/clients/mcp_calls.py");
    let url = format!("{}/mcp", app.base);
    let ran = run_tool(&dir, "python3", &[&script, &url, "calls.json", "answers.json"], &[]).await;
    let out = std::fs::read_to_string(dir.join("answers.json"));
    let _ = std::fs::remove_dir_all(&dir);
    ran.unwrap_or_else(|e| panic!("the MCP client failed:\n{e}"));
    let out: Value = serde_json::from_str(&out.expect("answers")).expect("json");

    // The tools, each with a description and a schema of its arguments.
    let tools = out["tools"].as_array().expect("tools");
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    for name in [
        "find_users",
        "data_coverage",
        "timeseries",
        "activity_summary",
        "sleep_summary",
        "recovery_summary",
        "body_summary",
        "workouts",
        "sleep_sessions",
        "health_scores",
    ] {
        let tool =
            tools.iter().find(|t| t["name"] == name).unwrap_or_else(|| panic!("{name}: {names:?}"));
        assert!(tool["description"].as_str().is_some_and(|d| d.len() > 40), "{tool}");
        assert_eq!(tool["input_schema"]["type"], "object", "{tool}");
    }
    assert!(tools.iter().any(|t| t["input_schema"]["properties"]["user_id"].is_object()));

    let answers = out["answers"].as_array().expect("answers");
    let ok = |i: usize| -> &Value {
        let a = &answers[i];
        assert_eq!(a["is_error"], false, "call {i}: {a}");
        &a["structured"]
    };
    let error = |i: usize| -> String {
        let a = &answers[i];
        assert_eq!(a["is_error"], true, "call {i}: {a}");
        a["text"].as_str().unwrap_or_default().to_string()
    };
    let base = format!("/api/v1/users/{user}");

    let found = ok(0);
    assert_eq!(found["total"], 1, "{found}");
    assert_eq!(found["users"][0]["id"], user.as_str());
    assert_eq!(found["truncated"], false);

    let coverage = ok(1);
    assert_eq!(coverage["samples"], rest(&app, &key, &format!("{base}/data-coverage")).await);
    assert_eq!(coverage["user"]["email"], "ada@example.com");

    // Raw heart rate: the API's samples, in its order, its local times, one unit named.
    let raw = ok(2);
    let page = rest(
        &app,
        &key,
        &format!("{base}/timeseries?types=heart_rate&start_time=2026-03-10&end_time=2026-03-10&filter_by_priority=true&limit=100"),
    )
    .await;
    let expect: Vec<Value> = page["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|s| json!([s["timestamp"], s["type"], s["value"]]))
        .collect();
    let got: Vec<Value> = raw["points"]
        .as_array()
        .expect("points")
        .iter()
        .map(|p| json!([p["timestamp"], p["type"], p["value"]]))
        .collect();
    assert_eq!(got, expect);
    assert_eq!(got.len(), 6);
    assert_eq!(raw["points"][0]["timestamp"], "2026-03-10T07:00:00+01:00", "local time");
    assert_eq!(raw["points"][0]["source"], "Apple Watch");
    assert_eq!(raw["units"]["heart_rate"], "bpm");
    assert_eq!(raw["truncated"], false);

    // Auto: a day of two series fits at 15min; the buckets are the API's, steps counted once.
    let auto = ok(3);
    assert_eq!(auto["resolution"], "15min", "{auto}");
    let page = rest(
        &app,
        &key,
        &format!("{base}/timeseries?types=heart_rate,steps&start_time=2026-03-10&end_time=2026-03-10&resolution=15min&filter_by_priority=true&limit=100"),
    )
    .await;
    let expect: Vec<Value> = page["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|s| json!([s["timestamp"], s["value"]]))
        .collect();
    let got: Vec<Value> = auto["points"]
        .as_array()
        .expect("points")
        .iter()
        .map(|p| json!([p["timestamp"], p["value"]]))
        .collect();
    assert_eq!(got, expect);
    let steps: f64 = auto["points"]
        .as_array()
        .expect("points")
        .iter()
        .filter(|p| p["type"] == "steps")
        .filter_map(|p| p["value"].as_f64())
        .sum();
    assert_eq!(steps, 3000.0, "the watch's steps, not the phone's as well");

    // Cut at max_points, with how to narrow.
    let cut = ok(4);
    assert_eq!(cut["point_count"], 4);
    assert_eq!(cut["truncated"], true);
    assert!(cut["hint"].as_str().is_some_and(|h| h.contains("coarser")), "{cut}");

    // Summaries, sessions and scores: the API's items as they are.
    let window = "start_date=2026-03-08&end_date=2026-03-14";
    for (i, path) in [
        (5, format!("{base}/summaries/activity?{window}")),
        (6, format!("{base}/summaries/sleep?{window}")),
        (7, format!("{base}/summaries/recovery?{window}")),
    ] {
        let days = &ok(i)["days"];
        assert_eq!(days, &rest(&app, &key, &path).await["data"], "call {i}");
    }
    assert_eq!(ok(5)["days"][0]["steps"], 3000, "the watch's steps only: {}", ok(5));
    assert_eq!(ok(6)["day_count"], 1, "one night: {}", ok(6));
    assert_eq!(ok(8)["body"], rest(&app, &key, &format!("{base}/summaries/body")).await);
    assert!(ok(8)["body"].to_string().contains("61.5"), "the weight: {}", ok(8));
    let workouts = ok(9);
    assert_eq!(
        workouts["items"],
        rest(&app, &key, &format!("{base}/events/workouts?{window}")).await["data"]
    );
    assert_eq!(workouts["items"][0]["type"], "running");
    assert_eq!(workouts["count"], 1);
    let nights = ok(10);
    assert_eq!(
        nights["items"],
        rest(&app, &key, &format!("{base}/events/sleep?{window}")).await["data"]
    );
    assert_eq!(nights["count"], 1);
    let scores = rest(&app, &key, &format!("{base}/health-scores?{window}&limit=200")).await;
    assert_eq!(ok(11)["scores"], scores["data"]);

    // Each failure is the tool's error, saying what to do.
    let refused = error(12);
    assert!(
        refused.contains("Not authenticated") && refused.contains("X-Service-API-Key"),
        "{refused}"
    );
    let unknown = error(13);
    assert!(
        unknown.to_lowercase().contains("not found") && unknown.contains("find_users"),
        "{unknown}"
    );
    let long = error(14);
    assert!(long.contains("at most 92 days"), "{long}");
    let dense = error(15);
    assert!(dense.contains("max_points") && dense.contains("shorter window"), "{dense}");
    let injected = error(16);
    assert!(injected.contains("not a user's id"), "{injected}");
    let scoped = error(17);
    assert!(scoped.contains("Not allowed") && scoped.contains("'read' scope"), "{scoped}");
}

#[tokio::test]
async fn requests_for_another_host_or_from_another_origin_are_refused() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let Auth::Key(key) = key else { panic!("an API key") };
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}});
    let post = |headers: &[(&str, &str)]| {
        let mut req = app
            .http
            .post(format!("{}/mcp", app.base))
            .header("X-Service-API-Key", &key)
            .header("accept", "application/json, text/event-stream")
            .json(&init);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        req.send()
    };
    let ok = post(&[]).await.expect("post");
    assert_eq!(ok.status(), 200);
    let answer: Value = ok.json().await.expect("json");
    assert_eq!(answer["result"]["serverInfo"]["name"], "wearhouse", "{answer}");
    assert!(answer["result"]["instructions"].as_str().is_some_and(|i| i.contains("find_users")));
    // The deployment's own origin (PUBLIC_URL) passes; a page elsewhere does not.
    let own = post(&[("origin", "http://127.0.0.1:8000")]).await.expect("post");
    assert_eq!(own.status(), 200);
    let other = post(&[("origin", "https://evil.example")]).await.expect("post");
    assert_eq!(other.status(), 403);
    // A name that resolves here only by a rebinding attack.
    let host = post(&[("host", "evil.example")]).await.expect("post");
    assert_eq!(host.status(), 403);
}
