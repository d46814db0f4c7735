//! Suunto (watches): the Suunto Cloud API (API Zone). Facts and their sources:
//! `docs/vendors/suunto.md`.
//!
//! Every data call carries the app's API subscription key (`Ocp-Apim-Subscription-Key`,
//! `SUUNTO_SUBSCRIPTION_KEY`) besides the user's token. Webhooks carry the data itself (the
//! workout, or the 24/7 samples), so a notification is kept as a page and mapped like a
//! pulled one; users are named by their Suunto username, which the token response gives.

use base64::Engine;
use chrono::{DateTime, Duration, FixedOffset, NaiveDateTime, Utc};
use ingest::{Normalised, SleepSession, StageTotals, VendorNight};
use schema::catalogue::providers::{Capabilities, LiveSyncMode, Provider};
use schema::catalogue::series_types::{SeriesId, id};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::normal::{Device, MapRow, guessed_offset, record};
use crate::normal::{lenient, lenient_id, lenient_number, lenient_record, lenient_records};
use crate::{Account, Mapping, Notifications, Pages};
use crate::{
    Call, CallAuth, ClientAuth, Connected, Endpoints, Info, Notice, OAuthSpec, Vendor, Window,
};

pub(crate) struct Suunto;

const WORKOUTS: &str = "v3/workouts";
const SLEEP: &str = "247samples/sleep";
const ACTIVITY: &str = "247samples/activity";
const RECOVERY: &str = "247samples/recovery";
const DAILY: &str = "247/daily-activity-statistics";
crate::normal::collections! {
    Workouts = WORKOUTS,
    Sleep = SLEEP,
    Activity = ACTIVITY,
    Recovery = RECOVERY,
    Daily = DAILY,
}

/// The 24/7 services take at most 28 days a call.
const MAX_RANGE_DAYS: i64 = 28;
/// Workouts a page.
const PAGE: usize = 100;
/// J → kcal.
const J_PER_KCAL: f64 = 4184.0;

const HR: SeriesId = id("heart_rate");
const HRV_RMSSD: SeriesId = id("heart_rate_variability_rmssd");
const OXYGEN: SeriesId = id("oxygen_saturation");
const STEPS: SeriesId = id("steps");
const TOTAL_ENERGY: SeriesId = id("total_energy");
const RECOVERY_SCORE: SeriesId = id("recovery_score");

const WATCH: Device = Device {
    provider: "suunto",
    model: "Suunto",
    manufacturer: "Suunto",
    source: "Suunto",
    device_type: "watch",
};

static INFO: Info = Info {
    provider: Provider {
        slug: "suunto",
        name: "Suunto",
        has_cloud_api: true,
        live_sync_mode: Some(LiveSyncMode::Webhook),
        live_sync_configurable: true,
        capabilities: Capabilities {
            rest_pull: true,
            webhook_stream: true,
            webhook_ping: false,
            webhook_callback: false,
            max_historical_days: None,
        },
    },
    oauth: OAuthSpec::standard(
        "https://cloudapi-oauth.suunto.com/oauth/authorize",
        "https://cloudapi-oauth.suunto.com/oauth/token",
        // Suunto has no scopes: what the app gets is in its partner agreement.
        &[],
        false,
        ClientAuth::Basic,
    ),
    api_url: "https://cloudapi.suunto.com",
    collections: COLLECTIONS,
    settings: &["SUBSCRIPTION_KEY"],
    notification_bytes: 1 << 20,
    history: crate::History::Pull,
    proof: crate::Proof::Signature,
};

impl Vendor for Suunto {
    fn info(&self) -> &'static Info {
        &INFO
    }
}

impl Pages for Suunto {
    /// Workouts are read from the window's start on, through all their pages, in one go; the
    /// 24/7 services in steps.
    fn window_step(&self, collection: &str) -> Option<Duration> {
        use Collection::*;
        match Collection::parse(collection) {
            Some(Workouts) => None,
            Some(Sleep | Activity | Recovery | Daily) | None => {
                Some(Duration::days(MAX_RANGE_DAYS))
            }
        }
    }

    /// Workouts since the window's start (epoch ms), a page of 100 at `offset`; the 24/7
    /// samples `from`/`to` in epoch ms; daily statistics by UTC times without an offset.
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
            use Collection::*;
            match Collection::parse(collection) {
                Some(Workouts) => {
                    q.append_pair("since", &start.timestamp_millis().to_string());
                    q.append_pair("limit", &PAGE.to_string());
                    q.append_pair("offset", next.unwrap_or("0"));
                }
                Some(Daily) => {
                    let t = |t: DateTime<Utc>| t.format("%Y-%m-%dT%H:%M:%S").to_string();
                    q.append_pair("startdate", &t(start));
                    q.append_pair("enddate", &t(end));
                }
                Some(Sleep | Activity | Recovery) | None => {
                    q.append_pair("from", &start.timestamp_millis().to_string());
                    q.append_pair("to", &end.timestamp_millis().to_string());
                }
            }
        }
        Ok(url)
    }

    /// Workouts: another page while one is full.
    fn next_page(&self, page: &Value, current: Option<&str>, _: Window) -> Option<String> {
        let n = page.get("payload")?.as_array()?.len();
        let at: usize = current.and_then(|c| c.parse().ok()).unwrap_or(0);
        (n >= PAGE).then(|| (at + n).to_string())
    }

    /// The user's token and the app's subscription key.
    fn authorize(
        &self,
        request: reqwest::RequestBuilder,
        ends: &Endpoints,
        token: &str,
    ) -> reqwest::RequestBuilder {
        request
            .bearer_auth(token)
            .header("Ocp-Apim-Subscription-Key", ends.setting("SUBSCRIPTION_KEY"))
    }
}

impl Mapping for Suunto {
    fn map_page(&self, collection: &str, page: &Value, out: &mut Normalised) {
        let Some(collection) = Collection::parse(collection) else { return };
        let samples = || crate::normal::rows(page, "samples").iter().collect();
        let (rows, map): (Vec<&Value>, MapRow) = match collection {
            // A list, or one workout (`/v3/workouts/{key}` and the webhook).
            Collection::Workouts => match page.get("payload") {
                Some(Value::Array(rows)) => (rows.iter().collect(), workout),
                Some(one @ Value::Object(_)) => (vec![one], workout),
                _ => (Vec::new(), workout),
            },
            Collection::Sleep => (samples(), sleep),
            Collection::Activity => (samples(), activity),
            Collection::Recovery => (samples(), recovery),
            Collection::Daily => (crate::normal::rows(page, "statistics").iter().collect(), daily),
        };
        let kind = (collection.name(), "unreadable Suunto record");
        crate::normal::each(out, kind, rows.into_iter(), map);
    }
}

impl Account for Suunto {
    /// The token response's `user` (the Suunto username webhooks name), else the `user`
    /// claim of the access token (a JWT, read without checking: it only routes notifications).
    fn token_user_id(&self, token: &Value) -> Option<String> {
        if let Some(user) = token.get("user").and_then(Value::as_str) {
            return Some(user.to_string());
        }
        let jwt = token.get("access_token")?.as_str()?;
        let claims = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(jwt.split('.').nth(1)?.trim_end_matches('='))
            .ok()?;
        let claims: Value = serde_json::from_slice(&claims).ok()?;
        claims.get("user").and_then(Value::as_str).map(str::to_string)
    }

    /// `GET /oauth/deauthorize?client_id=…` beside the token endpoint, with the user's token.
    fn revoke(&self, c: &Connected<'_>) -> Vec<Call> {
        let Some(base) = c.ends.token_url.strip_suffix("/oauth/token") else { return Vec::new() };
        let Ok(mut url) = url::Url::parse(&format!("{base}/oauth/deauthorize")) else {
            return Vec::new();
        };
        url.query_pairs_mut().append_pair("client_id", &c.ends.client_id);
        vec![Call::new(reqwest::Method::GET, url, CallAuth::Bearer(c.access_token.to_string()))]
    }
}

impl Notifications for Suunto {
    /// `X-HMAC-SHA256-Signature`: HMAC-SHA256 of the raw body with the notification secret
    /// (`SUUNTO_WEBHOOK_SECRET`), hex (base64 taken too: Suunto's sample code is not clear).
    fn webhook_verified(
        &self,
        ends: &Endpoints,
        header: &dyn Fn(&str) -> Option<String>,
        body: &[u8],
    ) -> bool {
        let (Some(secret), Some(signature)) =
            (ends.webhook_secret.as_deref(), header("x-hmac-sha256-signature"))
        else {
            return false;
        };
        use crate::webhook::{Encoding, hmac_sha256};
        hmac_sha256(secret, &[body], &signature, Encoding::Hex)
            || hmac_sha256(secret, &[body], &signature, Encoding::Base64)
    }

    /// `{type, username, workout | samples}`: the data itself, kept as a page of the
    /// collection it would have been pulled from.
    fn webhook_notices(&self, body: &Value) -> Vec<Notice> {
        let Some(user) = body.get("username").and_then(Value::as_str).map(str::to_string) else {
            return Vec::new();
        };
        let (collection, page) = match body.get("type").and_then(Value::as_str) {
            Some("WORKOUT_CREATED") => {
                let Some(mut workout) = body.get("workout").cloned() else { return Vec::new() };
                if let (Some(w), Some(gear)) = (workout.as_object_mut(), body.get("gear")) {
                    w.insert("gear".into(), gear.clone());
                }
                (WORKOUTS, json!({ "payload": [workout] }))
            }
            Some("SUUNTO_247_SLEEP_CREATED") => (SLEEP, json!({ "samples": body.get("samples") })),
            Some("SUUNTO_247_ACTIVITY_CREATED") => {
                (ACTIVITY, json!({ "samples": body.get("samples") }))
            }
            Some("SUUNTO_247_RECOVERY_CREATED") => {
                (RECOVERY, json!({ "samples": body.get("samples") }))
            }
            _ => return Vec::new(),
        };
        vec![Notice::Data { user, collection, page }]
    }
}

/// Suunto's activity ids that name a unified type (its list, Activities.pdf, was not read:
/// these are the ids its apps show; any other id is kept in the statistics as `other`).
fn kind(activity: i64) -> &'static str {
    match activity {
        0 => "walking",
        1 => "running",
        2 | 10 => "cycling",
        3 => "cross_country_skiing",
        11 => "hiking",
        21 => "swimming",
        22 => "trail_running",
        _ => "other",
    }
}

/// A workout, as `/v3/workouts` lists it (epoch ms, seconds, minutes, metres, m/s, joules).
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct WorkoutRow {
    #[serde(deserialize_with = "lenient_number")]
    start_time: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    stop_time: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    total_time: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    time_offset_in_minutes: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    activity_id: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    workout_key: Option<String>,
    #[serde(deserialize_with = "lenient_number")]
    total_distance: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    total_ascent: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    total_descent: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    max_altitude: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    min_altitude: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    avg_speed: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    max_speed: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    energy_consumption: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    step_count: Option<f64>,
    #[serde(rename = "hrdata", deserialize_with = "lenient_record")]
    hr_data: Option<HrData>,
    /// Kept in the statistics as sent.
    gear: Option<Value>,
    tss: Option<Value>,
}

/// A workout's heart rate: the workout's own figures, else the older names.
#[derive(Deserialize, Default)]
#[serde(default)]
struct HrData {
    #[serde(rename = "workoutAvgHR", deserialize_with = "lenient_number")]
    workout_avg: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    avg: Option<f64>,
    #[serde(rename = "workoutMaxHR", deserialize_with = "lenient_number")]
    workout_max: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    hrmax: Option<f64>,
}

/// A workout: epoch-ms start, seconds of total time, offset in minutes, metres, m/s, bpm
/// (`hrmax`/`workoutMaxHR` are the workout's peak; `max` is the user's configured maximum).
fn workout(row: &Value, out: &mut Normalised) -> Option<()> {
    let w: WorkoutRow = record(row)?;
    let hr = w.hr_data.unwrap_or_default();
    let start = DateTime::from_timestamp_millis(w.start_time? as i64)?;
    let end = match w.stop_time {
        Some(ms) => DateTime::from_timestamp_millis(ms as i64)?,
        None => start
            .checked_add_signed(Duration::try_milliseconds((w.total_time? * 1000.0) as i64)?)?,
    };
    let offset = w.time_offset_in_minutes.and_then(|m| crate::normal::offset_minutes(m as i64));
    let activity = w.activity_id.map(|a| a as i64);
    WATCH.workout(out, (start, end), offset, |row| {
        row.external_id = w.workout_key;
        row.figures.kind =
            schema::catalogue::workout_types::unified(Some(kind(activity.unwrap_or(-1))))
                .map(str::to_string);
        row.figures.distance_meters = w.total_distance;
        row.figures.elevation_gain_meters = w.total_ascent;
        row.max_altitude_meters = w.max_altitude;
        row.min_altitude_meters = w.min_altitude;
        row.figures.avg_speed_m_per_s = w.avg_speed;
        row.figures.max_speed_m_per_s = w.max_speed;
        row.figures.avg_heart_rate_bpm = hr.workout_avg.or(hr.avg);
        row.figures.max_heart_rate_bpm = hr.workout_max.or(hr.hrmax);
        row.figures.calories_kcal = w.energy_consumption.filter(|e| *e > 0.0);
        row.figures.steps =
            w.step_count.filter(|s| *s > 0.0).and_then(|s| i32::try_from(s as i64).ok());
        row.statistics = json!({"activityId": activity, "totalDescent": w.total_descent,
                                "gear": w.gear, "tss": w.tss});
    })
}

/// An instant and its offset, when one is written.
type At = (DateTime<Utc>, Option<i16>);

fn instant(s: &str) -> Option<At> {
    let t = DateTime::<FixedOffset>::parse_from_rfc3339(s).ok()?;
    Some((t.with_timezone(&Utc), crate::normal::minutes(i64::from(t.offset().local_minus_utc()))))
}

/// A 24/7 sample (sleep, activity, recovery): its time and its `entryData`.
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Sample {
    #[serde(deserialize_with = "lenient")]
    timestamp: Option<String>,
    #[serde(deserialize_with = "lenient_record")]
    entry_data: Option<Entry>,
}

/// A sample's `entryData`: the fields of every kind read (each kind has some of them).
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "PascalCase")]
struct Entry {
    #[serde(deserialize_with = "lenient")]
    bedtime_start: Option<String>,
    #[serde(deserialize_with = "lenient")]
    bedtime_end: Option<String>,
    #[serde(deserialize_with = "lenient_number")]
    deep_sleep_duration: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    light_sleep_duration: Option<f64>,
    #[serde(rename = "REMSleepDuration", deserialize_with = "lenient_number")]
    rem_sleep_duration: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    duration: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    is_nap: Option<bool>,
    #[serde(deserialize_with = "lenient_id")]
    sleep_id: Option<String>,
    #[serde(rename = "AvgHRV", deserialize_with = "lenient_number")]
    avg_hrv: Option<f64>,
    #[serde(rename = "HR", deserialize_with = "lenient_number")]
    hr: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    step_count: Option<f64>,
    #[serde(rename = "SpO2", deserialize_with = "lenient_number")]
    spo2: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    energy_consumption: Option<f64>,
    #[serde(rename = "HRV", deserialize_with = "lenient_number")]
    hrv: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    balance: Option<f64>,
}

/// A night between its documented `BedtimeStart` and `BedtimeEnd`: Suunto gives stage totals
/// (seconds), no timeline, so the totals are kept as such and no interval is made up; awake is
/// what the night's `Duration` leaves of them; `IsNap` decides what is a nap. The night's HRV is
/// stored inside it, on the day one wakes up.
fn sleep(row: &Value, out: &mut Normalised) -> Option<()> {
    let e = record::<Sample>(row)?.entry_data?;
    let (start, offset) = instant(e.bedtime_start.as_deref()?)?;
    let (end, end_offset) = instant(e.bedtime_end.as_deref()?)?;
    if end <= start {
        return None;
    }
    let offset = end_offset.or(offset);
    let seconds = crate::normal::seconds;
    let (deep, light, rem) = (
        seconds(e.deep_sleep_duration),
        seconds(e.light_sleep_duration),
        seconds(e.rem_sleep_duration),
    );
    let asleep = [deep, light, rem].iter().flatten().sum::<i64>();
    let in_bed = seconds(e.duration);
    let night = VendorNight {
        totals: StageTotals {
            light,
            deep,
            rem,
            awake: in_bed.filter(|_| asleep > 0).map(|d| (d - asleep).max(0)),
            asleep: (asleep > 0).then_some(asleep),
        },
        in_bed,
        is_nap: e.is_nap,
        ..VendorNight::new(start, end)
    };
    let source = WATCH.source(out);
    out.note_offset(end, offset);
    out.sleep.push(SleepSession {
        source,
        intervals: Vec::new(),
        zone_offset: offset,
        external_id: e.sleep_id,
        vendor: Some(night),
    });
    if let Some(hrv) = e.avg_hrv.filter(|v| *v > 0.0) {
        let at = crate::normal::night_instant(start, end, offset);
        WATCH.push(out, HRV_RMSSD, (at, offset), hrv, false);
    }
    Some(())
}

/// A 24/7 sample's time and offset, and its `entryData` (empty where it has none).
fn timed(row: &Value) -> Option<(At, Entry)> {
    let s: Sample = record(row)?;
    Some((instant(s.timestamp.as_deref()?)?, s.entry_data.unwrap_or_default()))
}

/// A 24/7 sample: heart rate, steps, SpO2 (a fraction), energy (joules), HRV.
fn activity(row: &Value, out: &mut Normalised) -> Option<()> {
    let ((when, offset), e) = timed(row)?;
    let values = [
        (HR, e.hr),
        (STEPS, e.step_count),
        (OXYGEN, e.spo2.map(|f| if f <= 1.0 { f * 100.0 } else { f })),
        (TOTAL_ENERGY, e.energy_consumption.map(|j| j / J_PER_KCAL)),
        (HRV_RMSSD, e.hrv.filter(|v| *v > 0.0)),
    ];
    for (series, value) in values {
        if let Some(v) = value {
            WATCH.push(out, series, (when, offset), v, false);
        }
    }
    Some(())
}

/// Recovery: `Balance`, the resources left, 0–1, as a 0–100 score.
/// `Balance` (0–1, as 0–100). Suunto samples it through the day (its recovery pushes come
/// alone, without the night), so every reading is kept; that it is a level rather than one
/// morning's score is the audit's S6, left until it has a series of its own.
fn recovery(row: &Value, out: &mut Normalised) -> Option<()> {
    let ((when, offset), e) = timed(row)?;
    if let Some(b) = e.balance {
        WATCH.push(out, RECOVERY_SCORE, (when, offset), b * 100.0, false);
    }
    Some(())
}

/// A daily statistic: its `Name` and its `Sources`.
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "PascalCase")]
struct Statistic {
    #[serde(deserialize_with = "lenient")]
    name: Option<String>,
    #[serde(deserialize_with = "lenient_records")]
    sources: Option<Vec<StatisticSource>>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "PascalCase")]
struct StatisticSource {
    #[serde(deserialize_with = "lenient_records")]
    samples: Option<Vec<DaySample>>,
}

/// A day's value, at the start of the user's day in UTC (no offset written).
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "PascalCase")]
struct DaySample {
    #[serde(rename = "TimeISO8601", deserialize_with = "lenient")]
    time: Option<String>,
    #[serde(deserialize_with = "lenient_number")]
    value: Option<f64>,
}

/// `{Name, Sources: [{Samples: [{TimeISO8601, Value}]}]}` per statistic: a day's steps and
/// energy (joules, active and basal); each sample's time is the start of the user's day, in
/// UTC, and the total is put at noon of that day; a day without data is null.
fn daily(row: &Value, out: &mut Normalised) -> Option<()> {
    let stat: Statistic = record(row)?;
    let (series, factor) = match stat.name?.as_str() {
        "stepcount" => (STEPS, 1.0),
        "energyconsumption" => (TOTAL_ENERGY, 1.0 / J_PER_KCAL),
        _ => return Some(()),
    };
    let offset = guessed_offset(out);
    for source in stat.sources? {
        for s in source.samples.into_iter().flatten() {
            let Some(v) = s.value else { continue };
            let t = s.time?;
            let day_start =
                NaiveDateTime::parse_from_str(&t, "%Y-%m-%dT%H:%M:%S%.f").ok()?.and_utc();
            let when = day_start + Duration::hours(12);
            WATCH.push(out, series, (when, Some(offset)), v * factor, true);
        }
    }
    Some(())
}

#[cfg(test)]
mod tests;
