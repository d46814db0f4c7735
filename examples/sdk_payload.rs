//! Prints a generated SDK sync payload (see `ingest::payloads`), for load tests and manual tries:
//!
//!     cargo run --release --example sdk_payload -- --records 100 --platform ios > body.json
//!
//! Options: `--records N` (default 100), `--platform ios|health_connect|samsung` (default ios),
//! `--no-sleep`, `--no-workout`, `--seed N`, `--day N` (start N days later: distinct data).

use ingest::payloads::{Platform, Spec, payload};

fn main() {
    let mut spec = Spec::new(Platform::Ios, 100);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--records" => spec.records = args.next().and_then(|v| v.parse().ok()).unwrap_or(100),
            "--seed" => spec.seed = args.next().and_then(|v| v.parse().ok()).unwrap_or(7),
            "--day" => {
                let days = args.next().and_then(|v| v.parse().ok()).unwrap_or(0);
                spec.start += chrono::Duration::days(days);
            }
            "--no-sleep" => spec.sleep = false,
            "--no-workout" => spec.workout = false,
            "--platform" => {
                spec.platform = match args.next().as_deref() {
                    Some("health_connect") => Platform::HealthConnect,
                    Some("samsung") => Platform::Samsung,
                    _ => Platform::Ios,
                }
            }
            other => {
                eprintln!("unknown option {other}");
                std::process::exit(2);
            }
        }
    }
    println!("{}", payload(&spec));
}
