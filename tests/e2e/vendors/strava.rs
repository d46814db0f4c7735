//! Strava's API v3 (`docs/vendors/strava.md`): credentials in the form, comma-separated scopes,
//! pages until an empty one, the `hub.challenge` handshake, unsigned events sent to a URL with our token.

use serde_json::json;

use super::mock::{Page, VendorApi};
use super::{Case, Expected, Notification, conformance};

pub(crate) fn api() -> VendorApi {
    let pages = vec![
        Page::get("/api/v3/athlete", json!({"id": 134815})),
        Page::get("/api/v3/athlete/activities", json!([{"id": 154504250376_i64, "name": "Evening Ride",
            "distance": 24000.0, "elapsed_time": 3600, "sport_type": "Ride", "start_date": "2026-03-10T16:00:00Z",
            "utc_offset": 3600.0, "average_heartrate": 138.0, "max_heartrate": 171.0}]))
        .with("page", "1"),
    ];
    let mut api = VendorApi::new("/oauth/token", pages, "/api/v3/athlete/activities");
    api.open = vec!["/oauth/deauthorize"];
    api
}

fn webhook(real: bool) -> Notification {
    // Strava signs nothing: it posts to the URL registered with our token; what is refused
    // besides is a body that is no event.
    let body = if real {
        json!({"aspect_type": "create", "event_time": 1773160000, "object_id": 154504250376_i64,
            "object_type": "activity", "owner_id": 134815, "subscription_id": 1, "updates": {}})
    } else {
        json!({"aspect_type": "create", "event_time": 1773160000})
    };
    Notification::json(&body, Vec::new())
}

fn deregistration(_: u32) -> Notification {
    let body = json!({"aspect_type": "update", "event_time": 1773170000, "object_id": 134815,
        "object_type": "athlete", "owner_id": 134815, "subscription_id": 1, "updates": {"authorized": "false"}});
    Notification::json(&body, Vec::new())
}

#[tokio::test]
async fn strava() {
    conformance(Case {
        slug: "strava",
        api: api(),
        api_prefix: "/api/v3",
        vars: vec![("WEBHOOK_TOKEN", "STRAVA".into())],
        authorize: "https://www.strava.com/oauth/authorize",
        scope: Some("read,activity:read_all,profile:read_all"),
        pkce: false,
        vendor_user: "134815",
        connect_calls: vec!["GET /api/v3/athlete "],
        revoke_calls: vec!["POST /oauth/deauthorize?access_token=access-1"],
        handshakes: vec![(
            "hub.mode=subscribe&hub.challenge=15f7d1a9&hub.verify_token=STRAVA",
            200,
        )],
        webhook: Some(webhook),
        deregistration: Some(deregistration),
        backfills: false,
        hook_query: "token=STRAVA",
        expected: Expected {
            series: Vec::new(),
            // The list has no calories (only an activity's detail has).
            workouts: vec![("cycling", 3600, None, Some(24000.0))],
            sleep_sessions: 0,
        },
    })
    .await;
}
