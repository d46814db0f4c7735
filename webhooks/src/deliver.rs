//! One HTTP attempt: a POST of the message body with the Standard Webhooks headers. Only a 2xx
//! answer within the time-out is a success. Nothing of the secret reaches a log.

use std::time::{Duration, Instant};

use schema::webhook_deliveries::{Attempt, Due};

use crate::schedule::retry_after;

/// Longest response body kept in the attempt history.
const RESPONSE_KEEP: usize = 1_000;
/// The most of a receiver's answer that is read: a receiver streaming an endless body costs
/// the sender nothing more.
const RESPONSE_READ: usize = 16 << 10;

/// The attempt, and the receiver's `Retry-After` when it gave one.
pub(crate) async fn send(
    http: &reqwest::Client,
    due: &Due,
    secrets: &[String],
    timeout: Duration,
    allow_private: bool,
) -> (Attempt, Option<Duration>) {
    let refuse = |why: String| {
        let attempt = Attempt {
            url: due.url.clone(),
            response: why,
            status_code: 0,
            duration_ms: 0,
            ok: false,
        };
        (attempt, None)
    };
    if !crate::guard::literal_allowed(&due.url, allow_private) {
        return refuse(
            "not sent: the URL points at a private, loopback or link-local address".into(),
        );
    }
    let body = due.payload.to_string();
    let timestamp = chrono::Utc::now().timestamp();
    let secrets: Vec<&str> = secrets.iter().map(String::as_str).collect();
    let signature =
        match crate::sign::header(&secrets, due.message_id.as_str(), timestamp, body.as_bytes()) {
            Ok(s) => s,
            Err(e) => return refuse(format!("not sent: {e}")),
        };
    let started = Instant::now();
    let result = http
        .post(&due.url)
        .timeout(timeout)
        .header("content-type", "application/json")
        .header("webhook-id", due.message_id.as_str())
        .header("webhook-timestamp", timestamp.to_string())
        .header("webhook-signature", signature)
        .body(body)
        .send()
        .await;
    let (status_code, response, ok, wait) = match result {
        Ok(resp) => {
            let status = resp.status();
            let wait = resp
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(retry_after);
            let text = read_capped(resp, RESPONSE_READ).await;
            let kept: String = text.chars().take(RESPONSE_KEEP).collect();
            (i32::from(status.as_u16()), kept, status.is_success(), wait)
        }
        Err(e) if e.is_timeout() => {
            (0, format!("no response within {} s", timeout.as_secs()), false, None)
        }
        Err(e) => (0, format!("request failed: {}", error_chain(&e)), false, None),
    };
    let duration_ms = i32::try_from(started.elapsed().as_millis()).unwrap_or(i32::MAX);
    (Attempt { url: due.url.clone(), response, status_code, duration_ms, ok }, wait)
}

/// The start of a response body, at most `max` bytes of it (lossy UTF-8); the rest is not read.
async fn read_capped(mut resp: reqwest::Response, max: usize) -> String {
    let mut body = Vec::new();
    while body.len() < max {
        match resp.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk[..chunk.len().min(max - body.len())]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}
