//! Polar (watches): Open AccessLink API v3, its non-transactional endpoints. Facts and their
//! sources: `docs/vendors/polar.md`.
//!
//! A user must be registered with the app after OAuth (`POST /v3/users`), or Polar gives no
//! data; the token names the user (`x_user_id`) and has no refresh token. Polar mixes time
//! forms: sleep carries offsets, exercises a local time with its offset in minutes, and the
//! hypnogram, the night's samples and continuous heart rate only local clock times — those are
//! read with the offset of the night or, lacking one, the latest offset the pull has seen
//! (sleep and exercises are read first).

use chrono::{DateTime, Duration, FixedOffset, NaiveDate, NaiveDateTime, NaiveTime, Utc};
use ingest::{Interval, Normalised, SleepSession, Stage, StageTotals, VendorNight};
use schema::catalogue::providers::{Capabilities, LiveSyncMode, Provider};
use schema::catalogue::series_types::{SeriesId, id};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::normal::{Device, MapRow, at_local, guessed_offset, local_instant, local_noon};
use crate::{Account, Mapping, Notifications, Pages};
use crate::{
    Call, CallAuth, ClientAuth, Connected, Endpoints, Info, Notice, OAuthSpec, Vendor, Window,
};

pub(crate) struct Polar;

const SLEEP: &str = "v3/users/sleep";
const EXERCISES: &str = "v3/exercises";
const ACTIVITIES: &str = "v3/users/activities";
const HEART_RATE: &str = "v3/users/continuous-heart-rate";
const RECHARGE: &str = "v3/users/nightly-recharge";
const SPO2: &str = "v3/users/biosensing/spo2";
const SKIN_TEMPERATURE: &str = "v3/users/biosensing/skintemperature";
// In this order: the collections with offsets first.
crate::normal::collections! {
    Sleep = SLEEP,
    Exercises = EXERCISES,
    Activities = ACTIVITIES,
    HeartRate = HEART_RATE,
    Recharge = RECHARGE,
    Spo2 = SPO2,
    SkinTemperature = SKIN_TEMPERATURE,
}

impl Collection {
    /// Whether it is asked for by a `from`–`to` range of dates (the others list the last
    /// 28–30 days).
    fn by_range(self) -> bool {
        use Collection::*;
        match self {
            Activities | HeartRate | Spo2 | SkinTemperature => true,
            Sleep | Exercises | Recharge => false,
        }
    }
}

/// The longest `from`–`to` range Polar takes, in dates.
const MAX_RANGE_DAYS: i64 = 28;
/// A pull's step: with the day before added, its dates stay within the range.
const STEP_DAYS: i64 = 26;

const HR: SeriesId = id("heart_rate");
const HRV_RMSSD: SeriesId = id("heart_rate_variability_rmssd");
const BREATHING: SeriesId = id("respiratory_rate");
const STEPS: SeriesId = id("steps");
const ENERGY: SeriesId = id("energy");
const TOTAL_ENERGY: SeriesId = id("total_energy");
const DISTANCE: SeriesId = id("distance_walking_running");
const OXYGEN: SeriesId = id("oxygen_saturation");
const SKIN: SeriesId = id("skin_temperature");
const SKIN_DEVIATION: SeriesId = id("skin_temperature_deviation");

const WATCH: Device = Device {
    provider: "polar",
    model: "Polar",
    manufacturer: "Polar",
    source: "Polar Flow",
    device_type: "watch",
};

static INFO: Info = Info {
    provider: Provider {
        slug: "polar",
        name: "Polar",
        has_cloud_api: true,
        live_sync_mode: Some(LiveSyncMode::Webhook),
        live_sync_configurable: true,
        capabilities: Capabilities {
            rest_pull: true,
            webhook_stream: false,
            webhook_ping: true,
            webhook_callback: false,
            // Polar gives data uploaded after registration, at most the last 28–30 days.
            max_historical_days: Some(28),
        },
    },
    oauth: OAuthSpec::standard(
        "https://flow.polar.com/oauth2/authorization",
        "https://polarremote.com/v2/oauth2/token",
        &["accesslink.read_all"],
        false,
        ClientAuth::Basic,
    ),
    api_url: "https://www.polaraccesslink.com",
    collections: COLLECTIONS,
    settings: &[],
    notification_bytes: crate::SMALL_NOTIFICATIONS,
    history: crate::History::Pull,
    proof: crate::Proof::Signature,
};

impl Vendor for Polar {
    fn info(&self) -> &'static Info {
        &INFO
    }
}

impl Pages for Polar {
    /// The lists of the last 28–30 days are read once; the ranges in steps.
    fn window_step(&self, collection: &str) -> Option<Duration> {
        Collection::parse(collection)
            .is_some_and(Collection::by_range)
            .then(|| Duration::days(STEP_DAYS))
    }

    /// Lists of the last 28–30 days take no range; the others `from`/`to` dates, inclusive (a
    /// day either side, so the window is covered in any zone).
    fn page_url(
        &self,
        api_url: &str,
        collection: &str,
        (start, end): Window,
        _: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        let mut url = url::Url::parse(&format!("{}/{collection}", api_url.trim_end_matches('/')))?;
        let day = |t: DateTime<Utc>| t.date_naive().format("%Y-%m-%d").to_string();
        if Collection::parse(collection).is_some_and(Collection::by_range) {
            let from = (start - Duration::days(1)).max(end - Duration::days(MAX_RANGE_DAYS - 1));
            url.query_pairs_mut().append_pair("from", &day(from)).append_pair("to", &day(end));
        }
        Ok(url)
    }

    /// No collection is paged.
    fn next_page(&self, _: &Value, _: Option<&str>, _: Window) -> Option<String> {
        None
    }
}

impl Mapping for Polar {
    fn map_page(&self, collection: &str, page: &Value, out: &mut Normalised) {
        let Some(collection) = Collection::parse(collection) else { return };
        let (rows, map): (&[Value], MapRow) = match collection {
            Collection::Sleep => (crate::normal::rows(page, "nights"), sleep),
            Collection::Exercises => (crate::normal::rows(page, "exercises"), exercise),
            Collection::Activities => (crate::normal::rows(page, "activities"), activity),
            // One day's object, or a list of them (`heart_rates`).
            Collection::HeartRate if page.get("heart_rate_samples").is_some() => {
                (std::slice::from_ref(page), heart_rate)
            }
            Collection::HeartRate => (crate::normal::rows(page, "heart_rates"), heart_rate),
            Collection::Recharge => (crate::normal::rows(page, "recharges"), recharge),
            Collection::Spo2 => (crate::normal::rows(page, "spo2"), spo2),
            Collection::SkinTemperature => (crate::normal::rows(page, "skin_temperatures"), skin),
        };
        let kind = collection.name();
        crate::normal::each(out, (kind, "unreadable Polar record"), rows.iter(), map);
    }
}

impl Account for Polar {
    fn token_user_id(&self, token: &Value) -> Option<String> {
        token.get("x_user_id").map(crate::normal::id_text)
    }

    /// `POST /v3/users {"member-id": …}`: without it Polar gives no data; 409 is a user
    /// registered before (a reconnection).
    fn on_connect(&self, c: &Connected<'_>) -> Vec<Call> {
        let Some(url) = crate::calls::at(&c.ends.api_url, "v3/users") else { return Vec::new() };
        let mut call =
            Call::new(reqwest::Method::POST, url, CallAuth::Bearer(c.access_token.to_string()));
        call.json = Some(json!({ "member-id": c.user_id.to_string() }));
        call.also_ok = &[409];
        call.required = true;
        vec![call]
    }

    /// `DELETE /v3/users/{user-id}`: deregisters the user, which revokes the token.
    fn revoke(&self, c: &Connected<'_>) -> Vec<Call> {
        let Some(user) = c.vendor_user else { return Vec::new() };
        let auth = CallAuth::Bearer(c.access_token.to_string());
        crate::calls::at(&c.ends.api_url, &format!("v3/users/{user}"))
            .map(|url| Call::new(reqwest::Method::DELETE, url, auth))
            .into_iter()
            .collect()
    }
}

impl Notifications for Polar {
    /// `Polar-Webhook-Signature`: hex HMAC-SHA256 of the raw body with the webhook's
    /// `signature_secret_key` (`POLAR_WEBHOOK_SECRET`). The `PING` Polar sends when the webhook
    /// is created comes before the secret is known: it is taken unsigned, and asks for nothing.
    fn webhook_verified(
        &self,
        ends: &Endpoints,
        header: &dyn Fn(&str) -> Option<String>,
        body: &[u8],
    ) -> bool {
        if header("polar-webhook-event").as_deref() == Some("PING") {
            return serde_json::from_slice::<Value>(body)
                .is_ok_and(|v| v.get("event").and_then(Value::as_str) == Some("PING"));
        }
        let (Some(secret), Some(signature)) =
            (ends.webhook_secret.as_deref(), header("polar-webhook-signature"))
        else {
            return false;
        };
        crate::webhook::hmac_sha256(secret, &[body], &signature, crate::webhook::Encoding::Hex)
    }

    /// `{event, user_id, date | entity_id, timestamp, url}`: the user's data around the day
    /// named, or the time of the notification.
    fn webhook_notices(&self, body: &Value) -> Vec<Notice> {
        let Some(user) = body.get("user_id").map(crate::normal::id_text) else {
            return Vec::new();
        };
        if body.get("event").and_then(Value::as_str) == Some("PING") {
            return Vec::new();
        }
        let day = body
            .get("date")
            .and_then(Value::as_str)
            .and_then(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").ok())
            .and_then(|d| d.and_hms_opt(0, 0, 0))
            .map(|d| d.and_utc());
        let at = day.or_else(|| {
            body.get("timestamp")
                .and_then(Value::as_str)
                .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
                .map(|t| t.with_timezone(&Utc))
        });
        match at {
            Some(at) => vec![Notice::Pull(user, (at - Duration::days(1), at + Duration::days(2)))],
            None => Vec::new(),
        }
    }
}

fn instant(s: &str) -> Option<(DateTime<Utc>, i16)> {
    let t = DateTime::<FixedOffset>::parse_from_rfc3339(s).ok()?;
    Some((t.with_timezone(&Utc), crate::normal::minutes(i64::from(t.offset().local_minus_utc()))?))
}

/// `"HH:MM"` keys of one night that ends on `end_day` at `end_time` (local), as instants in
/// time order: a key later in the day than the end is of the evening before.
fn clock_series(
    map: &serde_json::Map<String, Value>,
    (end_day, end_time): (NaiveDate, NaiveTime),
    offset: i16,
) -> Vec<(DateTime<Utc>, &Value)> {
    let mut out: Vec<(DateTime<Utc>, &Value)> = map
        .iter()
        .filter_map(|(k, v)| {
            let t = NaiveTime::parse_from_str(k, "%H:%M").ok()?;
            let day = if t > end_time { end_day.pred_opt()? } else { end_day };
            Some((at_local(day.and_time(t), offset)?, v))
        })
        .collect();
    out.sort_by_key(|(t, _)| *t);
    out
}

#[derive(Deserialize)]
struct Night {
    date: String,
    sleep_start_time: String,
    sleep_end_time: String,
    hypnogram: Option<serde_json::Map<String, Value>>,
    heart_rate_samples: Option<serde_json::Map<String, Value>>,
    /// Stage totals, seconds.
    light_sleep: Option<f64>,
    deep_sleep: Option<f64>,
    rem_sleep: Option<f64>,
    unrecognized_sleep_stage: Option<f64>,
    total_interruption_duration: Option<f64>,
}

/// A sample keyed to the minute, moved into its night only when it falls less than a minute
/// outside it (its key cut the seconds off); one further out is left where it is.
fn clamp_minute(at: DateTime<Utc>, (start, end): (DateTime<Utc>, DateTime<Utc>)) -> DateTime<Utc> {
    let last = end - Duration::seconds(1);
    let minute = Duration::seconds(60);
    if at < start && start - at < minute {
        start
    } else if at > last && at - last < minute {
        last
    } else {
        at
    }
}

/// A night's id among its sessions (one night a date).
fn night_id(date: &str) -> String {
    format!("sleep-{date}")
}

/// Polar's stage codes: 0 wake, 1 REM, 2 lighter and 3 light non-REM, 4 deep, 5 unknown.
fn stage(code: i64) -> Option<Stage> {
    Some(match code {
        0 => Stage::Awake,
        1 => Stage::Rem,
        2 | 3 => Stage::Light,
        4 => Stage::Deep,
        5 => Stage::Unknown,
        _ => return None,
    })
}

/// A night between its documented `sleep_start_time` and `sleep_end_time`: the hypnogram's
/// runs as the timeline (each ends at the next key, the last at the night's end), its stage
/// totals (seconds; time asleep is every stage, unrecognised ones included, as Polar classifies
/// the whole span), and its heart-rate samples, within the night.
fn sleep(row: &Value, out: &mut Normalised) -> Option<()> {
    let n = Night::deserialize(row).ok()?;
    let (start, offset) = instant(&n.sleep_start_time)?;
    let (end, _) = instant(&n.sleep_end_time)?;
    if end <= start {
        return None;
    }
    let local_end = (end + Duration::minutes(i64::from(offset))).naive_utc();
    let ends = (local_end.date(), local_end.time());
    let mut intervals = Vec::new();
    if let Some(h) = &n.hypnogram {
        let runs = clock_series(h, ends, offset);
        for (i, (from, code)) in runs.iter().enumerate() {
            let to = runs.get(i + 1).map_or(end, |(t, _)| *t).min(end);
            let from = (*from).max(start);
            if let Some(stage) = code.as_i64().and_then(stage)
                && from < to
            {
                intervals.push(Interval { start: from, end: to, stage });
            }
        }
    }
    let secs = crate::normal::seconds;
    let stages = [n.light_sleep, n.deep_sleep, n.rem_sleep, n.unrecognized_sleep_stage];
    let night = VendorNight {
        totals: StageTotals {
            light: secs(n.light_sleep),
            deep: secs(n.deep_sleep),
            rem: secs(n.rem_sleep),
            awake: secs(n.total_interruption_duration),
            asleep: stages
                .iter()
                .any(Option::is_some)
                .then(|| stages.iter().filter_map(|s| secs(*s)).sum()),
        },
        ..VendorNight::new(start, end)
    };
    let source = WATCH.source(out);
    out.note_offset(end, Some(offset));
    out.sleep.push(SleepSession {
        source,
        intervals,
        zone_offset: Some(offset),
        external_id: Some(night_id(&n.date)),
        vendor: Some(night),
    });
    // Keys are minutes: one may fall within a minute before the second the night began.
    let within = |at: DateTime<Utc>| clamp_minute(at, (start, end));
    for (at, bpm) in
        n.heart_rate_samples.as_ref().map(|m| clock_series(m, ends, offset)).unwrap_or_default()
    {
        if let Some(bpm) = bpm.as_f64() {
            WATCH.push(out, HR, (within(at), Some(offset)), bpm, false);
        }
    }
    Some(())
}

#[derive(Deserialize)]
struct Exercise {
    id: Value,
    start_time: String,
    start_time_utc_offset: Option<i64>,
    duration: String,
    calories: Option<f64>,
    distance: Option<f64>,
    heart_rate: Option<Value>,
    sport: Option<String>,
    detailed_sport_info: Option<String>,
    device: Option<String>,
    training_load: Option<f64>,
}

/// Polar's sports that are not the unified name in lower case.
const SPORTS: [(&str, &str); 11] = [
    ("RUNNING", "running"),
    ("CYCLING", "cycling"),
    ("ROAD_BIKING", "cycling"),
    ("MOUNTAIN_BIKING", "cycling"),
    ("INDOOR_CYCLING", "cycling"),
    ("WALKING", "walking"),
    ("HIKING", "hiking"),
    ("SWIMMING", "swimming"),
    ("STRENGTH_TRAINING", "strength_training"),
    ("YOGA", "yoga"),
    ("OTHER", "other"),
];

/// An exercise: local start plus its offset in minutes, an ISO 8601 duration, kcal and metres.
fn exercise(row: &Value, out: &mut Normalised) -> Option<()> {
    let e = Exercise::deserialize(row).ok()?;
    let offset = e.start_time_utc_offset.and_then(crate::normal::offset_minutes);
    let local = NaiveDateTime::parse_from_str(&e.start_time, "%Y-%m-%dT%H:%M:%S%.f").ok()?;
    let start = at_local(local, offset.unwrap_or(0))?;
    let end = start.checked_add_signed(crate::normal::iso_duration(&e.duration)?)?;
    let hr = |k: &str| e.heart_rate.as_ref().and_then(|h| h.get(k)).and_then(Value::as_f64);
    WATCH.workout(out, (start, end), offset, |w| {
        w.external_id = Some(crate::normal::id_text(&e.id));
        w.figures.kind = e
            .sport
            .as_deref()
            .and_then(|s| crate::normal::workout_kind(&SPORTS, s))
            .map(str::to_string);
        w.figures.calories_kcal = e.calories;
        w.figures.distance_meters = e.distance;
        w.figures.avg_heart_rate_bpm = hr("average");
        w.figures.max_heart_rate_bpm = hr("maximum");
        w.statistics = json!({"sport": e.sport, "detailed_sport_info": e.detailed_sport_info,
                              "device": e.device, "training_load": e.training_load});
    })
}

#[derive(Deserialize)]
struct Activity {
    start_time: String,
    calories: Option<f64>,
    active_calories: Option<f64>,
    steps: Option<f64>,
    distance_from_steps: Option<f64>,
}

/// A day's totals (its bounds are device-local without an offset: the day is what counts).
fn activity(row: &Value, out: &mut Normalised) -> Option<()> {
    let a = Activity::deserialize(row).ok()?;
    let day = NaiveDate::parse_from_str(a.start_time.get(..10)?, "%Y-%m-%d").ok()?;
    let (at, offset) = local_noon(out, day)?;
    for (series, value) in [
        (STEPS, a.steps),
        (ENERGY, a.active_calories),
        (TOTAL_ENERGY, a.calories),
        (DISTANCE, a.distance_from_steps),
    ] {
        if let Some(v) = value {
            WATCH.push(out, series, (at, Some(offset)), v, true);
        }
    }
    Some(())
}

#[derive(Deserialize)]
struct HeartRateDay {
    date: NaiveDate,
    heart_rate_samples: Vec<HeartRateSample>,
}

#[derive(Deserialize)]
struct HeartRateSample {
    heart_rate: f64,
    sample_time: NaiveTime,
}

/// A day's 5-minute heart rate, on the device's clock.
fn heart_rate(row: &Value, out: &mut Normalised) -> Option<()> {
    let d = HeartRateDay::deserialize(row).ok()?;
    for s in &d.heart_rate_samples {
        let (at, offset) = local_instant(out, d.date.and_time(s.sample_time))?;
        WATCH.push(out, HR, (at, Some(offset)), s.heart_rate, false);
    }
    Some(())
}

#[derive(Deserialize)]
struct Recharge {
    date: NaiveDate,
    hrv_samples: Option<serde_json::Map<String, Value>>,
    breathing_samples: Option<serde_json::Map<String, Value>>,
}

/// A night's HRV (RMSSD, ms) and breathing rate samples (`"HH:MM"` keys); the night ends on
/// `date`. Read at that night's offset and end, within it, when the pull read the night (it
/// reads sleep first); else at the latest offset seen, noon splitting evening from morning.
fn recharge(row: &Value, out: &mut Normalised) -> Option<()> {
    let r = Recharge::deserialize(row).ok()?;
    let id = night_id(&r.date.to_string());
    let night = crate::normal::night_by_id(out, &id).and_then(|(n, offset)| Some((n, offset?)));
    let (ends, offset, bounds) = match night {
        Some((n, offset)) => {
            let local_end = (n.end + Duration::minutes(i64::from(offset))).naive_utc();
            ((local_end.date(), local_end.time()), offset, Some((n.start, n.end)))
        }
        None => ((r.date, NaiveTime::from_hms_opt(12, 0, 0)?), guessed_offset(out), None),
    };
    let within = |at: DateTime<Utc>| match bounds {
        Some(night) => clamp_minute(at, night),
        None => at,
    };
    for (series, map) in [(HRV_RMSSD, &r.hrv_samples), (BREATHING, &r.breathing_samples)] {
        let Some(map) = map else { continue };
        for (at, v) in clock_series(map, ends, offset) {
            if let Some(v) = v.as_f64() {
                WATCH.push(out, series, (within(at), Some(offset)), v, false);
            }
        }
    }
    Some(())
}

#[derive(Deserialize)]
struct Spo2 {
    test_time: i64,
    time_zone_offset: Option<i64>,
    blood_oxygen_percent: Option<f64>,
    test_status: Option<String>,
}

/// A spot test: Unix seconds, its offset in minutes, percent.
fn spo2(row: &Value, out: &mut Normalised) -> Option<()> {
    let s = Spo2::deserialize(row).ok()?;
    if s.test_status.as_deref().is_some_and(|t| t != "SPO2_TEST_PASSED") {
        return Some(());
    }
    let at = DateTime::from_timestamp(s.test_time, 0)?;
    let offset = s.time_zone_offset.and_then(crate::normal::offset_minutes);
    if let Some(v) = s.blood_oxygen_percent {
        WATCH.push(out, OXYGEN, (at, offset), v, false);
    }
    Some(())
}

#[derive(Deserialize)]
struct Skin {
    sleep_date: NaiveDate,
    sleep_time_skin_temperature_celsius: Option<f64>,
    deviation_from_baseline_celsius: Option<f64>,
}

/// The night's skin temperature (°C) and its deviation from the user's baseline.
fn skin(row: &Value, out: &mut Normalised) -> Option<()> {
    let s = Skin::deserialize(row).ok()?;
    let (at, offset) = local_noon(out, s.sleep_date)?;
    for (series, value) in [
        (SKIN, s.sleep_time_skin_temperature_celsius),
        (SKIN_DEVIATION, s.deviation_from_baseline_celsius),
    ] {
        if let Some(v) = value {
            WATCH.push(out, series, (at, Some(offset)), v, false);
        }
    }
    Some(())
}

#[cfg(test)]
mod tests;
