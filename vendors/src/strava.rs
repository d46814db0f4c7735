//! Strava: API v3. Facts and their sources: `docs/vendors/strava.md`.
//!
//! Strava holds activities only (no sleep, daily totals, HRV or SpO2): each activity becomes a
//! workout. Times are UTC (`start_date`); the offset is `utc_offset` in seconds;
//! `start_date_local` is wall-clock time printed with a `Z` and is not read.

use chrono::{DateTime, Duration, Utc};
use ingest::{Normalised, Workout};
use schema::catalogue::providers::{Capabilities, LiveSyncMode, Provider};
use schema::workouts::{WorkoutFigures, WorkoutRow};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::normal::Device;
use crate::{Account, Mapping, Notifications, Pages};
use crate::{
    Call, CallAuth, ClientAuth, Connected, Endpoints, Handshake, Info, Notice, OAuthSpec, Vendor,
    Window,
};

pub(crate) struct Strava;

const ACTIVITIES: &str = "athlete/activities";
crate::normal::collections! {
    Activities = ACTIVITIES,
}
/// The most Strava gives a page.
const PER_PAGE: usize = 200;

const DEVICE: Device = Device {
    provider: "strava",
    model: "Strava",
    manufacturer: "Strava",
    source: "Strava",
    device_type: "app",
};

static INFO: Info = Info {
    provider: Provider {
        slug: "strava",
        name: "Strava",
        has_cloud_api: true,
        live_sync_mode: Some(LiveSyncMode::Webhook),
        live_sync_configurable: true,
        capabilities: Capabilities {
            rest_pull: true,
            webhook_stream: false,
            webhook_ping: true,
            webhook_callback: false,
            max_historical_days: None,
        },
    },
    oauth: OAuthSpec::standard(
        // Strava separates scopes with commas: one scope parameter, as it expects it.
        "https://www.strava.com/oauth/authorize",
        "https://www.strava.com/oauth/token",
        &["read,activity:read_all,profile:read_all"],
        false,
        ClientAuth::Body,
    ),
    api_url: "https://www.strava.com/api/v3",
    collections: COLLECTIONS,
    settings: &[],
    notification_bytes: crate::SMALL_NOTIFICATIONS,
    history: crate::History::Pull,
    proof: crate::Proof::UrlToken,
};

impl Vendor for Strava {
    fn info(&self) -> &'static Info {
        &INFO
    }
}

impl Pages for Strava {
    /// `after`/`before` in epoch seconds, `page` from 1.
    fn page_url(
        &self,
        api_url: &str,
        collection: &str,
        (start, end): Window,
        next: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        let mut url = url::Url::parse(&format!("{}/{collection}", api_url.trim_end_matches('/')))?;
        url.query_pairs_mut()
            .append_pair("after", &start.timestamp().to_string())
            .append_pair("before", &end.timestamp().to_string())
            .append_pair("page", next.unwrap_or("1"))
            .append_pair("per_page", &PER_PAGE.to_string());
        Ok(url)
    }

    /// Pages go on until an empty one (a short page need not be the last, `strava.md` §2.1).
    fn next_page(&self, page: &Value, current: Option<&str>, _: Window) -> Option<String> {
        let n = page.as_array()?.len();
        let current: u32 = current.and_then(|c| c.parse().ok()).unwrap_or(1);
        (n > 0).then(|| (current + 1).to_string())
    }

    /// Strava's 15-minute windows reset at :00, :15, :30 and :45 and its daily one at midnight
    /// UTC; its answer says which is spent (`X-RateLimit-Limit` and `X-RateLimit-Usage`,
    /// `short,daily`, and the same for reads in `X-ReadRateLimit-*`). A 429 waits for the reset
    /// of the window spent (the next quarter hour when it cannot tell), unless the answer says
    /// otherwise (`Retry-After`).
    fn rate_limit_wait(&self, headers: &reqwest::header::HeaderMap) -> Option<i64> {
        let said = headers.get("retry-after").and_then(|v| v.to_str().ok()?.trim().parse().ok());
        Some(said.unwrap_or_else(|| limit_reset(headers, Utc::now())))
    }
}

impl Mapping for Strava {
    fn map_page(&self, collection: &str, page: &Value, out: &mut Normalised) {
        let Some(Collection::Activities) = Collection::parse(collection) else { return };
        let rows = page.as_array().map(Vec::as_slice).unwrap_or_default();
        let kind = Collection::Activities.name();
        crate::normal::each(out, (kind, "unreadable Strava activity"), rows.iter(), activity);
    }
}

impl Account for Strava {
    fn user_url(&self, api_url: &str) -> Option<String> {
        Some(format!("{}/athlete", api_url.trim_end_matches('/')))
    }

    fn user_id(&self, body: &Value) -> Option<String> {
        body.get("id").map(crate::normal::id_text)
    }

    /// `POST /oauth/deauthorize?access_token=…` beside the token endpoint.
    fn revoke(&self, c: &Connected<'_>) -> Vec<Call> {
        let Some(base) = c.ends.token_url.strip_suffix("/oauth/token") else { return Vec::new() };
        let Ok(mut url) = url::Url::parse(&format!("{base}/oauth/deauthorize")) else {
            return Vec::new();
        };
        url.query_pairs_mut().append_pair("access_token", c.access_token);
        vec![Call::new(reqwest::Method::POST, url, CallAuth::None)]
    }
}

impl Notifications for Strava {
    /// `GET ?hub.mode=subscribe&hub.challenge=…&hub.verify_token=…`: the token given when
    /// subscribing, echoed; the answer `{"hub.challenge": …}`.
    fn webhook_challenge(
        &self,
        ends: &Endpoints,
        query: &dyn Fn(&str) -> Option<String>,
    ) -> Handshake {
        crate::webhook::echo(
            ends.webhook_token.as_deref(),
            query("hub.verify_token"),
            query("hub.challenge"),
            "hub.challenge",
        )
    }

    /// Strava does not sign its events: they come to the callback URL registered with our
    /// `?token=` (checked before this, [`crate::Proof::UrlToken`]), and must be events.
    fn webhook_verified(
        &self,
        _: &Endpoints,
        _: &dyn Fn(&str) -> Option<String>,
        body: &[u8],
    ) -> bool {
        serde_json::from_slice::<Value>(body)
            .ok()
            .is_some_and(|v| v.get("owner_id").is_some() && v.get("object_type").is_some())
    }

    /// An activity created or changed: the week before the event is pulled (an activity can be
    /// uploaded days after it happened). An athlete with `updates.authorized: "false"` (and, as
    /// other systems read it, `aspect_type: delete`) removed the app.
    fn webhook_notices(&self, body: &Value) -> Vec<Notice> {
        let owner = body.get("owner_id").map(crate::normal::id_text);
        let Some(owner) = owner else { return Vec::new() };
        match body.get("object_type").and_then(Value::as_str) {
            Some("activity") => {
                let at = body
                    .get("event_time")
                    .and_then(Value::as_i64)
                    .and_then(|t| DateTime::from_timestamp(t, 0));
                at.map(|at| Notice::Pull(owner, (at - Duration::days(7), at + Duration::hours(1))))
                    .into_iter()
                    .collect()
            }
            Some("athlete") => {
                let revoked = body.pointer("/updates/authorized").and_then(Value::as_str)
                    == Some("false")
                    || body.get("aspect_type").and_then(Value::as_str) == Some("delete");
                if revoked { vec![Notice::Deregistered(owner)] } else { Vec::new() }
            }
            _ => Vec::new(),
        }
    }
}

/// Seconds from `now` to the next quarter hour (at least one).
fn until_quarter_hour(now: DateTime<Utc>) -> i64 {
    let into = now.timestamp().rem_euclid(900);
    (900 - into).max(1)
}

/// Seconds from `now` to the reset of the limit a 429 says is spent: midnight UTC when a daily
/// usage has reached its limit, else the next quarter hour.
fn limit_reset(headers: &reqwest::header::HeaderMap, now: DateTime<Utc>) -> i64 {
    let pair = |name: &str| -> Option<(i64, i64)> {
        let text = headers.get(name)?.to_str().ok()?;
        let (a, b) = text.split_once(',')?;
        Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
    };
    let daily_spent = [("x-ratelimit-limit", "x-ratelimit-usage"), ("x-readratelimit-limit", "x-readratelimit-usage")]
        .iter()
        .any(|(limit, usage)| matches!((pair(limit), pair(usage)), (Some((_, max)), Some((_, used))) if used >= max));
    if daily_spent {
        let into = now.timestamp().rem_euclid(86_400);
        (86_400 - into).max(1)
    } else {
        until_quarter_hour(now)
    }
}

#[derive(Deserialize)]
struct Activity {
    id: Value,
    sport_type: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    start_date: String,
    elapsed_time: i64,
    utc_offset: Option<f64>,
    distance: Option<f64>,
    total_elevation_gain: Option<f64>,
    average_speed: Option<f64>,
    max_speed: Option<f64>,
    average_heartrate: Option<f64>,
    max_heartrate: Option<f64>,
    calories: Option<f64>,
    kilojoules: Option<f64>,
    name: Option<String>,
    elev_high: Option<f64>,
    elev_low: Option<f64>,
}

/// Strava's sport types that are not the unified name in snake case.
fn kind(sport: &str) -> Option<&'static str> {
    let known = [
        ("Run", "running"),
        ("TrailRun", "trail_running"),
        ("VirtualRun", "running"),
        ("Ride", "cycling"),
        ("VirtualRide", "cycling"),
        ("MountainBikeRide", "cycling"),
        ("GravelRide", "cycling"),
        ("EBikeRide", "cycling"),
        ("Walk", "walking"),
        ("Hike", "hiking"),
        ("Swim", "swimming"),
        ("WeightTraining", "strength_training"),
        ("Rowing", "rowing"),
        ("Yoga", "yoga"),
        ("Workout", "generic"),
    ];
    if let Some((_, k)) = known.iter().find(|(s, _)| *s == sport) {
        return Some(k);
    }
    let mut snake = String::new();
    for (i, c) in sport.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            snake.push('_');
        }
        snake.push(c.to_ascii_lowercase());
    }
    schema::catalogue::workout_types::unified(Some(&snake))
}

fn activity(row: &Value, out: &mut Normalised) -> Option<()> {
    let a = Activity::deserialize(row).ok()?;
    let start = DateTime::parse_from_rfc3339(&a.start_date).ok()?.with_timezone(&Utc);
    let seconds = i32::try_from(a.elapsed_time).ok().filter(|s| *s > 0)?;
    let end = start.checked_add_signed(Duration::try_seconds(a.elapsed_time)?)?;
    let offset = a.utc_offset.and_then(|s| i16::try_from((s / 60.0).round() as i64).ok());
    let sport = a.sport_type.or(a.kind);
    let source = DEVICE.source(out);
    out.note_offset(end, offset);
    let row = WorkoutRow {
        data_source_id: uuid::Uuid::nil(),
        external_id: Some(crate::normal::id_text(&a.id)),
        figures: WorkoutFigures {
            kind: sport.as_deref().and_then(kind).map(str::to_string),
            start_time: start,
            end_time: end,
            zone_offset: offset,
            duration_seconds: seconds,
            // Only the detail has calories; a ride's kilojoules are work done, not energy burned.
            calories_kcal: a.calories,
            distance_meters: a.distance,
            steps: None,
            avg_heart_rate_bpm: a.average_heartrate,
            max_heart_rate_bpm: a.max_heartrate,
            min_heart_rate_bpm: None,
            avg_speed_m_per_s: a.average_speed,
            max_speed_m_per_s: a.max_speed,
            elevation_gain_meters: a.total_elevation_gain,
            notes: a.name,
        },
        max_altitude_meters: a.elev_high,
        min_altitude_meters: a.elev_low,
        statistics: json!({"kilojoules": a.kilojoules, "sport_type": sport}),
        route: None,
    };
    out.workouts.push(Workout { source, row });
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn activities_become_workouts_at_their_offset_and_pages_follow_while_full() {
        let page = json!([{"id": 154504250376_i64, "name": "Morning Run", "distance": 5012.3,
            "moving_time": 1560, "elapsed_time": 1612, "total_elevation_gain": 12.0,
            "sport_type": "TrailRun", "type": "Run", "start_date": "2026-03-10T05:30:00Z",
            "start_date_local": "2026-03-10T07:30:00Z", "timezone": "(GMT+02:00) Europe/Helsinki",
            "utc_offset": 7200.0, "average_speed": 3.11, "max_speed": 4.2,
            "average_heartrate": 151.2, "max_heartrate": 178.0, "elev_high": 50.0, "elev_low": 38.0}]);
        let mut out = Normalised { provider: "strava", ..Normalised::default() };
        Strava.map_page(ACTIVITIES, &page, &mut out);
        let w = &out.workouts[0].row;
        assert_eq!(w.figures.kind.as_deref(), Some("trail_running"));
        assert_eq!((w.figures.zone_offset, w.figures.duration_seconds), (Some(120), 1612));
        assert_eq!(w.figures.end_time, crate::normal::at("2026-03-10T05:56:52Z"));
        assert_eq!(
            (w.figures.distance_meters, w.figures.avg_heart_rate_bpm),
            (Some(5012.3), Some(151.2))
        );
        assert_eq!(w.external_id.as_deref(), Some("154504250376"));
        assert_eq!(
            Strava.next_page(&page, None, crate::normal::any_window()).as_deref(),
            Some("2"),
            "until an empty page"
        );
        assert_eq!(Strava.next_page(&json!([]), Some("3"), crate::normal::any_window()), None);
    }

    #[test]
    fn a_429_waits_for_the_next_quarter_hour() {
        let at = |s: &str| crate::normal::at(s);
        assert_eq!(until_quarter_hour(at("2026-03-10T10:14:00Z")), 60);
        assert_eq!(until_quarter_hour(at("2026-03-10T10:15:00Z")), 900);
        assert_eq!(until_quarter_hour(at("2026-03-10T10:59:59Z")), 1);
        // The daily limit spent (Strava's documented headers): midnight UTC.
        let mut h = reqwest::header::HeaderMap::new();
        h.insert("x-ratelimit-limit", "600,30000".parse().expect("header"));
        h.insert("x-ratelimit-usage", "314,27536".parse().expect("header"));
        assert_eq!(limit_reset(&h, at("2026-03-10T22:00:00Z")), 900, "the 15 minutes");
        h.insert("x-readratelimit-limit", "300,3000".parse().expect("header"));
        h.insert("x-readratelimit-usage", "12,3000".parse().expect("header"));
        assert_eq!(limit_reset(&h, at("2026-03-10T22:00:00Z")), 2 * 3600, "the day's reads");
    }

    #[test]
    fn events_ask_for_pulls_or_end_the_connection() {
        let created = json!({"aspect_type": "create", "event_time": 1773120000, "object_id": 1,
            "object_type": "activity", "owner_id": 134815, "subscription_id": 120475, "updates": {}});
        let pulls = Strava.webhook_notices(&created);
        let [Notice::Pull(owner, (from, to))] = pulls.as_slice() else { panic!("{pulls:?}") };
        assert_eq!(owner, "134815");
        assert_eq!(*to - *from, Duration::days(7) + Duration::hours(1));
        let gone = json!({"aspect_type": "update", "event_time": 1773120000, "object_id": 134815,
            "object_type": "athlete", "owner_id": 134815, "updates": {"authorized": "false"}});
        assert_eq!(Strava.webhook_notices(&gone), [Notice::Deregistered("134815".into())]);
    }
}
