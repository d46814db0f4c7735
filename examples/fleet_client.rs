//! The fleet of `benches/load/fleet.sh`: posts SDK payloads as phones would, then waits until the
//! service has stored them. One process holds each body once in memory and posts from it over
//! kept-alive connections; a `curl` started per post (and the `bash` around it) took 15–19 % of
//! the two cores from the service under test, and a `psql` started every 50 ms to poll 3–4 %.
//!
//!     fleet_client post --port 8091 --key <api key> --posts <file> [--clients 4]
//!     fleet_client wait --database <url>
//!
//! `post` reads lines `<user id> <body file>` and prints a line per post as curl's
//! `%{http_code} %{time_total}` would (status, seconds). `wait` returns once no SDK batch is
//! queued, asking over one connection every 20 ms.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

fn usage() -> ! {
    eprintln!(
        "usage: fleet_client post --port P --key K --posts FILE [--clients N]\n       fleet_client wait --database URL"
    );
    std::process::exit(2)
}

/// The value after `--name`, if given.
fn flag(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned()
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("post") => {
            let port: u16 =
                flag(&args, "--port").and_then(|p| p.parse().ok()).unwrap_or_else(|| usage());
            let key = flag(&args, "--key").unwrap_or_else(|| usage());
            let posts = flag(&args, "--posts").unwrap_or_else(|| usage());
            let clients: usize =
                flag(&args, "--clients").and_then(|c| c.parse().ok()).unwrap_or(4).max(1);
            post(port, &key, &posts, clients).await
        }
        Some("wait") => wait(&flag(&args, "--database").unwrap_or_else(|| usage())).await,
        _ => usage(),
    }
}

async fn post(port: u16, key: &str, posts: &str, clients: usize) -> anyhow::Result<()> {
    // Each distinct body read once; every post of it shares the bytes.
    let mut bodies: HashMap<String, bytes::Bytes> = HashMap::new();
    let mut list = Vec::new();
    for line in std::fs::read_to_string(posts)?.lines() {
        let Some((user, path)) = line.split_once(' ') else { continue };
        if !bodies.contains_key(path) {
            bodies.insert(path.to_string(), std::fs::read(path)?.into());
        }
        list.push((user.to_string(), bodies[path].clone()));
    }
    let list = Arc::new(list);
    let next = Arc::new(AtomicUsize::new(0));
    let http = reqwest::Client::new();
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (list, next, http, key) = (list.clone(), next.clone(), http.clone(), key.to_string());
        tasks.push(tokio::spawn(async move {
            let mut out = Vec::new();
            while let Some((user, body)) = list.get(next.fetch_add(1, Ordering::Relaxed)) {
                let url = format!("http://127.0.0.1:{port}/api/v1/sdk/users/{user}/sync");
                let started = Instant::now();
                let sent = http
                    .post(url)
                    .header("X-Service-API-Key", &key)
                    .header("content-type", "application/json")
                    .body(body.clone())
                    .send()
                    .await;
                let status = match sent {
                    Ok(r) => {
                        let status = r.status().as_u16();
                        // The answer read whole, as a client would before its next post.
                        let _ = r.bytes().await;
                        status
                    }
                    Err(_) => 0,
                };
                out.push((status, started.elapsed()));
            }
            out
        }));
    }
    for task in tasks {
        for (status, took) in task.await? {
            println!("{status} {:.6}", took.as_secs_f64());
        }
    }
    Ok(())
}

async fn wait(database: &str) -> anyhow::Result<()> {
    let (client, connection) = tokio_postgres::connect(database, tokio_postgres::NoTls).await?;
    tokio::spawn(connection);
    let queued = client.prepare("select count(*) from sdk_batches where status = 'queued'").await?;
    loop {
        let n: i64 = client.query_one(&queued, &[]).await?.get(0);
        if n == 0 {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
