//! Paced read load: `--readers` concurrent readers together send `--rate` requests a second
//! for `--seconds`, each reader on its own fixed schedule (open loop). A request's latency is
//! measured from the moment it was *due*, so a slow answer that delays the next request is
//! counted against the service, not hidden (no coordinated omission). Complements `wrk`, which
//! only measures at saturation, where latency is queueing by construction.
//!
//!     cargo run --release --example read_load -- --port 8091 --key <api key> \
//!         --mode timeseries|activity|sleep|resolutions|1min|…|1day --rate 300 [--readers 50] \
//!         [--seconds 30] [--warmup 5] [--users 10000] [--timeline <file>]
//!
//! The first `--warmup` seconds run on the same schedule and are not counted: a service that has
//! just started plans each statement once on each pooled connection, and its first seconds of a
//! read it has not served yet measure that, not the read (a page at `5min` right after a start:
//! p99 100 ms for 40 requests, 11 ms after).
//!
//! `--timeline` writes a line per second of the run (the Unix second the requests were due in,
//! how many, their p50, p99 and max in ms): what a stall looks like and when it happened, to be
//! set beside what else the box was doing then.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

struct Args {
    port: u16,
    key: String,
    mode: String,
    rate: f64,
    readers: usize,
    seconds: u64,
    warmup: u64,
    users: u64,
    timeline: Option<String>,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        port: 8091,
        key: String::new(),
        mode: "timeseries".into(),
        rate: 200.0,
        readers: 50,
        seconds: 30,
        warmup: 5,
        users: 10_000,
        timeline: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        let bad = |e: &dyn std::fmt::Display| format!("{flag}: {e}");
        match flag.as_str() {
            "--port" => a.port = value.parse().map_err(|e| bad(&e))?,
            "--key" => a.key = value,
            "--mode" => a.mode = value,
            "--rate" => a.rate = value.parse().map_err(|e| bad(&e))?,
            "--readers" => a.readers = value.parse().map_err(|e| bad(&e))?,
            "--seconds" => a.seconds = value.parse().map_err(|e| bad(&e))?,
            "--warmup" => a.warmup = value.parse().map_err(|e| bad(&e))?,
            "--users" => a.users = value.parse().map_err(|e| bad(&e))?,
            "--timeline" => a.timeline = Some(value),
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(a)
}

/// A small deterministic generator per reader (xorshift): the same requests every run.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// Resolutions a `resolutions` run picks from.
const RESOLUTIONS: [&str; 5] = ["1min", "5min", "15min", "1hour", "1day"];
/// Window lengths in days a resolution read picks from.
const WINDOWS: [i64; 4] = [1, 7, 30, 365];

/// A random read of the generated data set (`benches/read/generate.sh`), as `read.lua` makes.
/// Modes: `timeseries` (a raw 30-day heart-rate page), `activity` / `sleep` (30-day summaries),
/// `events-sleep` / `events-workouts` (30 days of sessions),
/// `resolutions` (a heart-rate page at a random resolution over a random window of 1, 7, 30 or
/// 365 days, for an ordinary user or, one time in five, a heavy one with a sample a minute),
/// or one resolution (`1min` … `1day`) read that way.
fn path(mode: &str, users: u64, rng: &mut u64) -> String {
    let mut user = 6 + next(rng) % (users - 5);
    let year0 = DateTime::<Utc>::from_timestamp(1_761_955_200, 0).unwrap_or_default(); // 2025-11-01
    let start = year0 + chrono::Duration::days((next(rng) % 331) as i64);
    let day = |d: DateTime<Utc>| d.format("%Y-%m-%d").to_string();
    let id = |n: u64| format!("00000000-0000-4000-8000-{n:012x}");
    let resolution = match mode {
        "resolutions" => Some(RESOLUTIONS[(next(rng) % RESOLUTIONS.len() as u64) as usize]),
        r if RESOLUTIONS.contains(&r) => Some(r),
        _ => None,
    };
    if let Some(resolution) = resolution {
        if next(rng).is_multiple_of(5) {
            user = 1 + next(rng) % 5;
        }
        let days = WINDOWS[(next(rng) % WINDOWS.len() as u64) as usize];
        let start = if days == 365 { year0 } else { start };
        return format!(
            "/api/v1/users/{}/timeseries?types=heart_rate&limit=100&resolution={resolution}&start_time={}T00:00:00Z&end_time={}T00:00:00Z",
            id(user),
            day(start),
            day(start + chrono::Duration::days(days))
        );
    }
    match mode {
        "timeseries" => format!(
            "/api/v1/users/{}/timeseries?types=heart_rate&limit=100&start_time={}T00:00:00Z&end_time={}T00:00:00Z",
            id(user),
            day(start),
            day(start + chrono::Duration::days(30))
        ),
        events if events.starts_with("events-") => format!(
            "/api/v1/users/{}/events/{}?limit=100&start_date={}&end_date={}",
            id(user),
            events.trim_start_matches("events-"),
            day(start),
            day(start + chrono::Duration::days(29))
        ),
        summary => format!(
            "/api/v1/users/{}/summaries/{summary}?limit=100&start_date={}&end_date={}",
            id(user),
            day(start),
            day(start + chrono::Duration::days(29))
        ),
    }
}

#[tokio::main]
async fn main() -> Result<(), String> {
    let a = args()?;
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(a.readers)
        .build()
        .map_err(|e| e.to_string())?;
    let interval = Duration::from_secs_f64(a.readers as f64 / a.rate);
    let count = (a.rate * (a.seconds + a.warmup) as f64 / a.readers as f64).ceil() as usize;
    let begin = Instant::now() + Duration::from_millis(200);
    let wall_begin = Utc::now() + chrono::Duration::milliseconds(200);
    // What is due before this is the warm-up: sent, not counted.
    let start = begin + Duration::from_secs(a.warmup);
    let mut tasks = Vec::new();
    for r in 0..a.readers {
        let (client, key, mode) = (client.clone(), a.key.clone(), a.mode.clone());
        let base = format!("http://127.0.0.1:{}", a.port);
        let users = a.users;
        // Readers start spread over one interval, not all at once.
        let offset = interval.mul_f64(r as f64 / a.readers as f64);
        tasks.push(tokio::spawn(async move {
            let mut rng = 0x9E37_79B9_7F4A_7C15u64 ^ (r as u64 + 1).wrapping_mul(0xA076_1D64);
            let mut out: Vec<(f64, bool, u64)> = Vec::with_capacity(count);
            for i in 0..count {
                let due = begin + offset + interval * i as u32;
                tokio::time::sleep_until(due.into()).await;
                let url = format!("{base}{}", path(&mode, users, &mut rng));
                let ok = match client.get(url).header("X-Service-API-Key", &key).send().await {
                    Ok(resp) => resp.status().is_success() && resp.bytes().await.is_ok(),
                    Err(_) => false,
                };
                if due >= start {
                    let since = chrono::Duration::from_std(due - begin).unwrap_or_default();
                    let second = (wall_begin + since).timestamp() as u64;
                    out.push((due.elapsed().as_secs_f64() * 1000.0, ok, second));
                }
            }
            out
        }));
    }
    let mut latencies = Vec::new();
    let mut failed = 0;
    let mut seconds = std::collections::BTreeMap::<u64, Vec<f64>>::new();
    for t in tasks {
        for (ms, ok, second) in t.await.map_err(|e| e.to_string())? {
            latencies.push(ms);
            seconds.entry(second).or_default().push(ms);
            failed += usize::from(!ok);
        }
    }
    if let Some(file) = &a.timeline {
        let mut lines = String::new();
        for (second, mut ms) in seconds {
            ms.sort_by(f64::total_cmp);
            let (p50, p99, max) = (quantile(&ms, 0.5), quantile(&ms, 0.99), quantile(&ms, 1.0));
            lines += &format!("{second} {} {p50:.1} {p99:.1} {max:.1}\n", ms.len());
        }
        std::fs::write(file, lines).map_err(|e| format!("{file}: {e}"))?;
    }
    let took = start.elapsed().as_secs_f64();
    latencies.sort_by(f64::total_cmp);
    let q = |p: f64| quantile(&latencies, p);
    println!(
        "{} {} requests by {} readers at {:.0}/s offered ({:.0}/s done), failed: {failed}",
        latencies.len(),
        a.mode,
        a.readers,
        a.rate,
        latencies.len() as f64 / took
    );
    println!(
        "p50 {:.2} ms  p90 {:.2} ms  p99 {:.2} ms  p99.9 {:.2} ms  max {:.2} ms",
        q(0.50),
        q(0.90),
        q(0.99),
        q(0.999),
        q(1.0)
    );
    Ok(())
}

/// The `p` quantile of `sorted` (not empty), ascending.
fn quantile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)]
}
