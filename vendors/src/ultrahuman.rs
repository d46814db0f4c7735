//! Ultrahuman (Ring AIR, M1 CGM): the OAuth 2 Partner API. Facts and their sources:
//! `docs/vendors/ultrahuman.md`.
//!
//! One endpoint gives every metric of one local day; there are no webhooks, so connections are
//! pulled on a schedule. Two envelopes are reported (`data.metric_data[]` and
//! `data.metrics{<date>: []}`): both are read. Times are Unix seconds; the second envelope
//! names the user's zone.

use chrono::{DateTime, Duration, NaiveDate, Utc};
use ingest::{Interval, Normalised, SleepSession, Stage, StageTotals, VendorNight};
use schema::catalogue::providers::{Capabilities, LiveSyncMode, Provider};
use schema::catalogue::series_types::{SeriesId, id};
use serde::Deserialize;
use serde_json::Value;

use crate::normal::record;
use crate::normal::{Device, lenient, lenient_number, lenient_record, lenient_records, offset_at};
use crate::{Account, Mapping, Notifications, Pages};
use crate::{
    Call, CallAuth, ClientAuth, Connected, Endpoints, Info, Notice, OAuthSpec, Vendor, Window,
};

pub(crate) struct Ultrahuman;

const METRICS: &str = "metrics";
crate::normal::collections! { Metrics = METRICS }

const HR: SeriesId = id("heart_rate");
const HRV_RMSSD: SeriesId = id("heart_rate_variability_rmssd");
const SKIN: SeriesId = id("skin_temperature");
const SKIN_DEVIATION: SeriesId = id("skin_temperature_deviation");
const OXYGEN: SeriesId = id("oxygen_saturation");
const STEPS: SeriesId = id("steps");
const RESTING_HR: SeriesId = id("resting_heart_rate");
const RECOVERY: SeriesId = id("recovery_score");
const VO2_MAX: SeriesId = id("vo2_max");
const ACTIVE_TIME: SeriesId = id("active_time");
const GLUCOSE: SeriesId = id("blood_glucose");

const RING: Device = Device {
    provider: "ultrahuman",
    model: "Ultrahuman Ring",
    manufacturer: "Ultrahuman",
    source: "Ultrahuman",
    device_type: "ring",
};

static INFO: Info = Info {
    provider: Provider {
        slug: "ultrahuman",
        name: "Ultrahuman",
        has_cloud_api: true,
        live_sync_mode: Some(LiveSyncMode::Pull),
        live_sync_configurable: false,
        capabilities: Capabilities {
            rest_pull: true,
            webhook_stream: false,
            webhook_ping: false,
            webhook_callback: false,
            max_historical_days: None,
        },
    },
    oauth: OAuthSpec::standard(
        // `authorise`: the spelling the examples and live use follow (the text says both).
        "https://auth.ultrahuman.com/authorise",
        "https://partner.ultrahuman.com/api/partners/oauth/token",
        &["ring_data", "cgm_data", "profile"],
        false,
        ClientAuth::Body,
    ),
    api_url: "https://partner.ultrahuman.com/api/partners/v1",
    collections: COLLECTIONS,
    settings: &[],
    notification_bytes: crate::SMALL_NOTIFICATIONS,
    history: crate::History::Pull,
    proof: crate::Proof::None,
};

impl Vendor for Ultrahuman {
    fn info(&self) -> &'static Info {
        &INFO
    }
}

impl Pages for Ultrahuman {
    /// One local day a call, from the window's first UTC date to the day after its last (a
    /// user ahead of UTC is on it already; a day not begun yet answers empty). The page token
    /// is the next day to read.
    fn page_url(
        &self,
        api_url: &str,
        collection: &str,
        (start, _): Window,
        next: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        // One endpoint: any name reads it (as it always has).
        let path = match Collection::parse(collection).unwrap_or(Collection::Metrics) {
            Collection::Metrics => "user_data/metrics",
        };
        let mut url = url::Url::parse(&format!("{}/{path}", api_url.trim_end_matches('/')))?;
        let first = start.date_naive().format("%Y-%m-%d").to_string();
        url.query_pairs_mut().append_pair("date", next.unwrap_or(&first));
        Ok(url)
    }

    fn next_page(&self, _: &Value, current: Option<&str>, (start, end): Window) -> Option<String> {
        let day = match current {
            Some(c) => NaiveDate::parse_from_str(c, "%Y-%m-%d").ok()?,
            None => start.date_naive(),
        };
        let next = day.succ_opt()?;
        let last = end.date_naive().succ_opt()?;
        (next <= last).then(|| next.format("%Y-%m-%d").to_string())
    }
}

impl Mapping for Ultrahuman {
    fn map_page(&self, collection: &str, page: &Value, out: &mut Normalised) {
        // One endpoint: a page of any name reads as its metrics (as it always has).
        let collection = Collection::parse(collection).unwrap_or(Collection::Metrics);
        let data = page.get("data").unwrap_or(&Value::Null);
        if let Some(zone) = data.get("latest_time_zone").and_then(Value::as_str) {
            out.zone = Some(zone.to_string());
        }
        let mut items: Vec<&Value> = crate::normal::rows(data, "metric_data").iter().collect();
        if let Some(days) = data.get("metrics").and_then(Value::as_object) {
            items.extend(days.values().filter_map(Value::as_array).flatten());
        }
        // Nights first (a stable sort: the rest keep their order).
        items.sort_by_cached_key(|i| !is_sleep(i));
        let reason = "unreadable Ultrahuman metric";
        match collection {
            Collection::Metrics => {
                let kind = (collection.name(), reason);
                crate::normal::each(out, kind, items.into_iter(), metric);
            }
        }
    }
}

impl Account for Ultrahuman {
    fn user_url(&self, api_url: &str) -> Option<String> {
        Some(format!("{}/user_data/user_info", api_url.trim_end_matches('/')))
    }

    fn user_id(&self, body: &Value) -> Option<String> {
        body.get("user_id").or_else(|| body.pointer("/data/user_id")).map(crate::normal::id_text)
    }

    /// `POST /api/partners/oauth/revoke` beside the token endpoint, with the app's credentials
    /// in the form.
    fn revoke(&self, c: &Connected<'_>) -> Vec<Call> {
        let Some(base) = c.ends.token_url.strip_suffix("/token") else { return Vec::new() };
        let Ok(url) = url::Url::parse(&format!("{base}/revoke")) else { return Vec::new() };
        let call = Call::new(reqwest::Method::POST, url, CallAuth::None).form(&[
            ("token", c.access_token),
            ("client_id", &c.ends.client_id),
            ("client_secret", &c.ends.client_secret),
        ]);
        vec![call]
    }
}

impl Notifications for Ultrahuman {
    /// Ultrahuman sends no notifications.
    fn webhook_verified(
        &self,
        _: &Endpoints,
        _: &dyn Fn(&str) -> Option<String>,
        _: &[u8],
    ) -> bool {
        false
    }

    fn webhook_notices(&self, _: &Value) -> Vec<Notice> {
        Vec::new()
    }
}

fn instant(seconds: Option<f64>) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp(seconds? as i64, 0)
}

/// One metric of the day: its `type` (any case) and its `object`, whatever that is.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Metric {
    #[serde(rename = "type", deserialize_with = "lenient")]
    kind: Option<String>,
    #[serde(deserialize_with = "lenient_record")]
    object: Option<Figures>,
}

/// A metric's `object`: the fields of every kind read (each kind has some of them).
#[derive(Deserialize, Default)]
#[serde(default)]
struct Figures {
    #[serde(deserialize_with = "lenient_records")]
    values: Option<Vec<Point>>,
    #[serde(deserialize_with = "lenient_number")]
    day_start_timestamp: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    value: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    total: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    avg: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    bedtime_start: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    bedtime_end: Option<f64>,
    #[serde(deserialize_with = "lenient_record")]
    sleep_graph: Option<Graph>,
    #[serde(deserialize_with = "lenient_records")]
    sleep_stages: Option<Vec<StageTime>>,
    #[serde(deserialize_with = "lenient_record")]
    temperature_deviation: Option<Deviation>,
}

/// `{value, timestamp}` of a series.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Point {
    #[serde(deserialize_with = "lenient_number")]
    value: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    timestamp: Option<f64>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Graph {
    #[serde(deserialize_with = "lenient_records")]
    data: Option<Vec<Span>>,
}

/// One span of the hypnogram.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Span {
    #[serde(deserialize_with = "lenient_number")]
    start: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    end: Option<f64>,
    #[serde(rename = "type", deserialize_with = "lenient")]
    kind: Option<String>,
}

/// A stage's total, in seconds.
#[derive(Deserialize, Default)]
#[serde(default)]
struct StageTime {
    #[serde(rename = "type", deserialize_with = "lenient")]
    kind: Option<String>,
    #[serde(deserialize_with = "lenient_number")]
    stage_time: Option<f64>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Deviation {
    #[serde(deserialize_with = "lenient_number")]
    celsius: Option<f64>,
}

/// `values: [{value, timestamp}]` of a series.
fn series(object: &Figures, out: &mut Normalised, id: SeriesId) {
    for v in object.values.iter().flatten() {
        let (Some(at), Some(value)) = (instant(v.timestamp), v.value) else {
            continue;
        };
        let offset = offset_at(out, at);
        RING.push(out, id, (at, Some(offset)), value, false);
    }
}

/// A day-level value at noon of the day that starts at `day_start_timestamp`.
fn day_value(
    object: &Figures,
    out: &mut Normalised,
    id: SeriesId,
    value: Option<f64>,
    total: bool,
) {
    let (Some(start), Some(value)) = (instant(object.day_start_timestamp), value) else {
        return;
    };
    let at = start + Duration::hours(12);
    let offset = offset_at(out, at);
    RING.push(out, id, (at, Some(offset)), value, total);
}

/// A figure of the night (`avg_sleep_hrv`): inside the night that ends on the day starting at
/// `day_start_timestamp`, where the night's summary averages it; without that night, at the
/// day's noon.
fn night_value(object: &Figures, out: &mut Normalised, id: SeriesId, value: Option<f64>) {
    let (Some(start), Some(value)) = (instant(object.day_start_timestamp), value) else {
        return;
    };
    let noon = start + Duration::hours(12);
    let offset = offset_at(out, noon);
    let day = (noon + Duration::minutes(i64::from(offset))).date_naive();
    let (at, zone) = crate::normal::in_night_of(out, day).unwrap_or((noon, Some(offset)));
    RING.push(out, id, (at, zone), value, false);
}

/// Whether a metric is a night (read first: the night's figures are stored inside them).
fn is_sleep(item: &Value) -> bool {
    let kind = record::<Metric>(item).and_then(|m| m.kind);
    kind.is_some_and(|t| t.eq_ignore_ascii_case("sleep"))
}

fn metric(item: &Value, out: &mut Normalised) -> Option<()> {
    let item: Metric = record(item)?;
    let kind = item.kind?.to_ascii_lowercase();
    let object = &item.object?;
    match kind.as_str() {
        "hr" => series(object, out, HR),
        "hrv" => series(object, out, HRV_RMSSD),
        "temp" => series(object, out, SKIN),
        "spo2" => series(object, out, OXYGEN),
        "glucose" => series(object, out, GLUCOSE),
        "steps" => {
            series(object, out, STEPS);
            day_value(object, out, STEPS, object.total, true);
        }
        "night_rhr" => day_value(object, out, RESTING_HR, object.avg, false),
        "avg_sleep_hrv" => night_value(object, out, HRV_RMSSD, object.value),
        "recovery_index" => day_value(object, out, RECOVERY, object.value, false),
        "vo2_max" => day_value(object, out, VO2_MAX, object.value, false),
        "active_minutes" => day_value(object, out, ACTIVE_TIME, object.value, true),
        "sleep" => sleep(object, out)?,
        // Scores and composites of Ultrahuman's own (movement, metabolic), and sleep figures
        // the night's session already holds.
        _ => {}
    }
    Some(())
}

fn stage(kind: &str) -> Option<Stage> {
    Some(match kind {
        "deep_sleep" => Stage::Deep,
        "light_sleep" => Stage::Light,
        "rem_sleep" => Stage::Rem,
        "awake" => Stage::Awake,
        _ => return None,
    })
}

/// A night between its documented `bedtime_start` and `bedtime_end`: its hypnogram
/// (`sleep_graph`) as the timeline where there is one, its stage totals (`sleep_stages`,
/// seconds) kept as such (no order is made up for totals alone); its temperature deviation
/// inside it, on the day one wakes up.
fn sleep(object: &Figures, out: &mut Normalised) -> Option<()> {
    let start = instant(object.bedtime_start)?;
    let end = instant(object.bedtime_end)?;
    if end <= start {
        return None;
    }
    let offset = offset_at(out, end);
    let graph = object.sleep_graph.as_ref().and_then(|g| g.data.as_ref());
    let intervals: Vec<Interval> = graph
        .into_iter()
        .flatten()
        .filter_map(|g| {
            let (s, e) = (instant(g.start)?, instant(g.end)?);
            let stage = stage(g.kind.as_deref()?)?;
            (e > s).then_some(Interval { start: s, end: e, stage })
        })
        .collect();
    let total = |kind: &str| {
        object
            .sleep_stages
            .iter()
            .flatten()
            .filter(|s| s.kind.as_deref() == Some(kind))
            .filter_map(|s| s.stage_time)
            .map(|t| t.max(0.0) as i64)
            .reduce(|a, b| a + b)
    };
    let night = VendorNight {
        totals: StageTotals {
            light: total("light_sleep"),
            deep: total("deep_sleep"),
            rem: total("rem_sleep"),
            awake: total("awake"),
            asleep: None,
        },
        ..VendorNight::new(start, end)
    };
    let source = RING.source(out);
    out.note_offset(end, Some(offset));
    out.sleep.push(SleepSession {
        source,
        intervals,
        zone_offset: Some(offset),
        // One night a wake-up day: a revised bedtime is the same night.
        external_id: Some(format!("sleep-{}", crate::normal::wake_day(end, Some(offset)))),
        vendor: Some(night),
    });
    let at = crate::normal::night_instant(start, end, Some(offset));
    if let Some(d) = object.temperature_deviation.as_ref().and_then(|t| t.celsius) {
        RING.push(out, SKIN_DEVIATION, (at, Some(offset)), d, false);
    }
    Some(())
}

#[cfg(test)]
mod tests;
