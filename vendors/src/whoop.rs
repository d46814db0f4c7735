//! WHOOP (strap): developer API v2. Facts and their sources: `docs/vendors/whoop.md`.
//!
//! WHOOP has no heart-rate series, no steps and no hypnogram: a night is its documented start
//! and end with its stage totals, a day is a physiological cycle (sleep to sleep) with its
//! energy, and the morning's recovery carries resting heart rate, HRV (RMSSD), SpO2 and skin
//! temperature, which belong to the night it follows. Times are UTC with the user's offset
//! beside them (`timezone_offset`); energy is in kilojoules, durations in milliseconds.

use chrono::{DateTime, Duration, FixedOffset, Utc};
use ingest::{Normalised, SleepSession, Workout};
use schema::catalogue::providers::{Capabilities, LiveSyncMode, Provider};
use schema::catalogue::series_types::{SeriesId, id};
use schema::workouts::{WorkoutFigures, WorkoutRow};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::normal::Device;
use crate::{Account, Mapping, Notifications, Pages};
use crate::{
    Call, CallAuth, ClientAuth, Connected, Endpoints, Info, Notice, OAuthSpec, Vendor, Window,
};

pub(crate) struct Whoop;

const SLEEP: &str = "v2/activity/sleep";
const WORKOUT: &str = "v2/activity/workout";
const CYCLE: &str = "v2/cycle";
const RECOVERY: &str = "v2/recovery";
crate::normal::collections! {
    Sleep = SLEEP,
    Workout = WORKOUT,
    Cycle = CYCLE,
    Recovery = RECOVERY,
}

/// kJ → kcal.
const KJ_PER_KCAL: f64 = 4.184;

const RESPIRATORY_RATE: SeriesId = id("respiratory_rate");
const TOTAL_ENERGY: SeriesId = id("total_energy");
const RECOVERY_SCORE: SeriesId = id("recovery_score");
const RESTING_HEART_RATE: SeriesId = id("resting_heart_rate");
const HRV_RMSSD: SeriesId = id("heart_rate_variability_rmssd");
const SPO2: SeriesId = id("oxygen_saturation");
const SKIN_TEMPERATURE: SeriesId = id("skin_temperature");

static INFO: Info = Info {
    provider: Provider {
        slug: "whoop",
        name: "Whoop",
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
        // `offline` for a refresh token; `read:profile` for the user's id (webhooks name it).
        "https://api.prod.whoop.com/oauth/oauth2/auth",
        "https://api.prod.whoop.com/oauth/oauth2/token",
        &[
            "offline",
            "read:recovery",
            "read:cycles",
            "read:workout",
            "read:sleep",
            "read:profile",
            "read:body_measurement",
        ],
        false,
        ClientAuth::Body,
    ),
    api_url: "https://api.prod.whoop.com/developer",
    collections: COLLECTIONS,
    settings: &[],
    notification_bytes: crate::SMALL_NOTIFICATIONS,
    history: crate::History::Pull,
    proof: crate::Proof::TimedSignature,
};

impl Vendor for Whoop {
    fn info(&self) -> &'static Info {
        &INFO
    }
}

impl Pages for Whoop {
    /// `start` inclusive, `end` exclusive, 25 a page (the most WHOOP gives), `nextToken`.
    fn page_url(
        &self,
        api_url: &str,
        collection: &str,
        (start, end): Window,
        next: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        let mut url = url::Url::parse(&format!("{}/{collection}", api_url.trim_end_matches('/')))?;
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("start", &start.to_rfc3339());
            q.append_pair("end", &end.to_rfc3339());
            q.append_pair("limit", "25");
            if let Some(token) = next {
                q.append_pair("nextToken", token);
            }
        }
        Ok(url)
    }

    fn next_page(&self, page: &Value, _: Option<&str>, _: Window) -> Option<String> {
        page.get("next_token").and_then(Value::as_str).filter(|t| !t.is_empty()).map(str::to_string)
    }
}

impl Mapping for Whoop {
    fn map_page(&self, collection: &str, page: &Value, out: &mut Normalised) {
        let rows =
            page.get("records").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        let Some(collection) = Collection::parse(collection) else { return };
        let map: crate::normal::MapRow = match collection {
            Collection::Sleep => sleep,
            Collection::Workout => workout,
            Collection::Cycle => cycle,
            Collection::Recovery => recovery,
        };
        let kind = collection.name();
        crate::normal::each(out, (kind, "unreadable Whoop record"), rows.iter(), map);
    }
}

impl Account for Whoop {
    fn user_url(&self, api_url: &str) -> Option<String> {
        Some(format!("{}/v2/user/profile/basic", api_url.trim_end_matches('/')))
    }

    fn user_id(&self, body: &Value) -> Option<String> {
        body.get("user_id").map(crate::normal::id_text)
    }

    /// `DELETE /v2/user/access` with the user's token.
    fn revoke(&self, c: &Connected<'_>) -> Vec<Call> {
        let auth = CallAuth::Bearer(c.access_token.to_string());
        crate::calls::at(&c.ends.api_url, "v2/user/access")
            .map(|url| Call::new(reqwest::Method::DELETE, url, auth))
            .into_iter()
            .collect()
    }
}

impl Notifications for Whoop {
    /// `X-WHOOP-Signature`: base64 of HMAC-SHA256 with the client secret over
    /// `X-WHOOP-Signature-Timestamp` and the raw body.
    fn webhook_verified(
        &self,
        ends: &Endpoints,
        header: &dyn Fn(&str) -> Option<String>,
        body: &[u8],
    ) -> bool {
        let names = ("x-whoop-signature", "x-whoop-signature-timestamp");
        crate::webhook::timestamped(
            header,
            names,
            crate::webhook::Encoding::Base64,
            &ends.client_secret,
            body,
        )
    }

    /// `{user_id, id, type, trace_id}` names no time: the user's last three days are pulled,
    /// which reads the changed sleep, workout or recovery whatever it is.
    fn webhook_notices(&self, body: &Value) -> Vec<Notice> {
        let Some(user) = body.get("user_id").map(crate::normal::id_text) else {
            return Vec::new();
        };
        let now = Utc::now();
        vec![Notice::Pull(user, (now - Duration::days(3), now))]
    }
}

/// The strap.
const STRAP: Device = Device {
    provider: "whoop",
    model: "WHOOP",
    manufacturer: "WHOOP",
    source: "Whoop",
    device_type: "band",
};

fn strap(out: &mut Normalised) -> usize {
    STRAP.source(out)
}

/// `+hh:mm`, `-hh:mm` or `Z`, in minutes east of UTC.
fn offset(s: Option<&str>) -> Option<i16> {
    let s = s?;
    if s == "Z" {
        return Some(0);
    }
    let t = DateTime::<FixedOffset>::parse_from_rfc3339(&format!("2000-01-01T00:00:00{s}")).ok()?;
    i16::try_from(t.offset().local_minus_utc() / 60).ok()
}

fn utc(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s).ok().map(|t| t.with_timezone(&Utc))
}

fn push(
    out: &mut Normalised,
    series: SeriesId,
    at: DateTime<Utc>,
    offset: Option<i16>,
    value: f64,
    total: bool,
) {
    STRAP.push(out, series, (at, offset), value, total);
}

#[derive(Deserialize)]
struct Span {
    id: Value,
    start: String,
    end: Option<String>,
    timezone_offset: Option<String>,
    score_state: Option<String>,
    score: Option<Value>,
    /// Sleep: whether WHOOP calls it a nap.
    nap: Option<bool>,
}

fn scored(s: &Span) -> Option<&Value> {
    (s.score_state.as_deref() == Some("SCORED")).then_some(s.score.as_ref()).flatten()
}

/// A duration in milliseconds, as whole seconds.
fn seconds(v: &Value, key: &str) -> Option<i64> {
    v.get(key).and_then(Value::as_f64).map(|m| (m / 1000.0).floor() as i64)
}

/// A night (or nap) between its documented `start` and `end`. WHOOP gives stage totals
/// (`score.stage_summary`), no timeline: the totals are kept as such and no interval is made up.
/// The night's breathing rate is stored inside it, on the day one wakes up.
fn sleep(row: &Value, out: &mut Normalised) -> Option<()> {
    let s = Span::deserialize(row).ok()?;
    let (start, end) = (utc(&s.start)?, utc(s.end.as_deref()?)?);
    if end <= start {
        return None;
    }
    let zone = offset(s.timezone_offset.as_deref());
    let score = scored(&s);
    let mut night = ingest::VendorNight::new(start, end);
    night.is_nap = s.nap;
    if let Some(stages) = score.and_then(|sc| sc.get("stage_summary")) {
        let milli = |k: &str| stages.get(k).and_then(Value::as_f64);
        let asleep = [
            "total_light_sleep_time_milli",
            "total_slow_wave_sleep_time_milli",
            "total_rem_sleep_time_milli",
        ]
        .iter()
        .map(|k| milli(k))
        .sum::<Option<f64>>();
        night.totals = ingest::StageTotals {
            light: seconds(stages, "total_light_sleep_time_milli"),
            deep: seconds(stages, "total_slow_wave_sleep_time_milli"),
            rem: seconds(stages, "total_rem_sleep_time_milli"),
            awake: seconds(stages, "total_awake_time_milli"),
            asleep: asleep.map(|ms| (ms / 1000.0).floor() as i64),
        };
        night.in_bed = seconds(stages, "total_in_bed_time_milli");
    }
    let source = strap(out);
    out.note_offset(end, zone);
    let external_id = Some(crate::normal::id_text(&s.id));
    out.sleep.push(SleepSession {
        source,
        intervals: Vec::new(),
        zone_offset: zone,
        external_id,
        vendor: Some(night),
    });
    if let Some(rate) = score.and_then(|sc| sc.get("respiratory_rate")).and_then(Value::as_f64) {
        let at = crate::normal::night_instant(start, end, zone);
        push(out, RESPIRATORY_RATE, at, zone, rate, false);
    }
    Some(())
}

fn workout(row: &Value, out: &mut Normalised) -> Option<()> {
    let s = Span::deserialize(row).ok()?;
    let (start, end) = (utc(&s.start)?, utc(s.end.as_deref()?)?);
    let seconds = i32::try_from((end - start).num_seconds()).ok().filter(|s| *s > 0)?;
    let zone = offset(s.timezone_offset.as_deref());
    let sport = row.get("sport_name").and_then(Value::as_str);
    let score = scored(&s).cloned().unwrap_or(Value::Null);
    let f = |k: &str| score.get(k).and_then(Value::as_f64);
    let source = strap(out);
    out.note_offset(end, zone);
    let row = WorkoutRow {
        data_source_id: uuid::Uuid::nil(),
        external_id: s.id.as_str().map(str::to_string),
        figures: WorkoutFigures {
            kind: schema::catalogue::workout_types::unified(sport).map(str::to_string),
            start_time: start,
            end_time: end,
            zone_offset: zone,
            duration_seconds: seconds,
            calories_kcal: f("kilojoule").map(|kj| kj / KJ_PER_KCAL),
            distance_meters: f("distance_meter"),
            steps: None,
            avg_heart_rate_bpm: f("average_heart_rate"),
            max_heart_rate_bpm: f("max_heart_rate"),
            min_heart_rate_bpm: None,
            avg_speed_m_per_s: None,
            max_speed_m_per_s: None,
            elevation_gain_meters: f("altitude_gain_meter"),
            notes: None,
        },
        max_altitude_meters: None,
        min_altitude_meters: None,
        statistics: json!({"strain": f("strain"), "zone_durations": score.get("zone_durations"),
                           "sport_name": sport}),
        route: None,
    };
    out.workouts.push(Workout { source, row });
    Some(())
}

/// A physiological cycle: its energy as a daily total at its middle, with its offset. WHOOP's
/// day runs from one sleep to the next, so it begins the evening before the day it mostly is;
/// counted at its start, each day's energy would land on the day before.
fn cycle(row: &Value, out: &mut Normalised) -> Option<()> {
    let s = Span::deserialize(row).ok()?;
    let start = utc(&s.start)?;
    let zone = offset(s.timezone_offset.as_deref());
    // A cycle still running has no total yet.
    let Some(end) = s.end.as_deref().and_then(utc) else { return Some(()) };
    if let Some(kj) = scored(&s).and_then(|sc| sc.get("kilojoule")).and_then(Value::as_f64) {
        let middle = start + (end - start) / 2;
        push(out, TOTAL_ENERGY, middle, zone, kj / KJ_PER_KCAL, true);
    }
    Some(())
}

#[derive(Deserialize)]
struct Recovery {
    created_at: String,
    sleep_id: Option<Value>,
    score_state: Option<String>,
    score: Option<Value>,
}

/// The morning's recovery belongs to its sleep (`sleep_id`): its resting heart rate, HRV
/// (RMSSD), SpO2 and skin temperature are the night's, so they are stored inside that night with
/// its offset, where the night's and the wake-up day's summaries find them. A sleep this pull
/// did not read: at the time WHOOP made the recovery, at the user's offset then.
fn recovery(row: &Value, out: &mut Normalised) -> Option<()> {
    let r = Recovery::deserialize(row).ok()?;
    if r.score_state.as_deref() != Some("SCORED") {
        return Some(());
    }
    let sleep_id = r.sleep_id.as_ref().map(crate::normal::id_text);
    let night = sleep_id.and_then(|id| crate::normal::night_by_id(out, &id));
    let (at, zone) = match night {
        Some((n, zone)) => (crate::normal::night_instant(n.start, n.end, zone), zone),
        None => {
            let at = utc(&r.created_at)?;
            (at, Some(crate::normal::offset_at(out, at)))
        }
    };
    let score = r.score.unwrap_or(Value::Null);
    let values = [
        (RECOVERY_SCORE, "recovery_score"),
        (RESTING_HEART_RATE, "resting_heart_rate"),
        (HRV_RMSSD, "hrv_rmssd_milli"),
        (SPO2, "spo2_percentage"),
        (SKIN_TEMPERATURE, "skin_temp_celsius"),
    ];
    for (series, key) in values {
        if let Some(v) = score.get(key).and_then(Value::as_f64) {
            push(out, series, at, zone, v, false);
        }
    }
    Some(())
}

#[cfg(test)]
mod tests;
