//! Verifies a wearhouse webhook with the official Standard Webhooks library
//! (`cargo add standardwebhooks http serde_json`). In your receiver, pass the raw body and the
//! request headers.

use standardwebhooks::Webhook;

/// The event, once its signature and timestamp (5 minutes of tolerance) hold; an error means
/// answer 400 and do not process it.
pub fn verify(
    secret: &str,
    headers: &http::HeaderMap,
    body: &[u8],
) -> Result<serde_json::Value, String> {
    let webhook = Webhook::new(secret).map_err(|e| format!("the secret: {e:?}"))?;
    webhook.verify(body, headers).map_err(|e| format!("not from wearhouse: {e:?}"))?;
    serde_json::from_slice(body).map_err(|e| format!("the body: {e}"))
}
