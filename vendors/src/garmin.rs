//! Garmin: the Health API (Connect Developer Program). Facts and where each comes from:
//! `docs/vendors/garmin.md` (Garmin's own specifications are partner-gated; the field lists
//! come from the reference system and third-party integrations, as that file says).
//!
//! Garmin sends data: each summary type is pushed to the receiver (the summaries themselves,
//! kept as the pull's page before the 2xx) or pinged (a callback URL naming an upload window,
//! pulled then). History is asked for by backfill and arrives the same way. Summaries are
//! re-sent when they change: they are keyed by `summaryId` and stored once.

use chrono::{DateTime, Duration, NaiveDate, Utc};
use ingest::{Interval, Normalised, SleepSession, Stage, StageTotals, VendorNight};
use schema::catalogue::providers::{Capabilities, LiveSyncMode, Provider};
use schema::catalogue::series_types::{SeriesId, id};
use serde_json::{Value, json};

use crate::normal::{Device, Keyed, noon, record};
use crate::{Account, Mapping, Notifications, Pages};
use crate::{
    Call, CallAuth, ClientAuth, Connected, Endpoints, Info, Notice, OAuthSpec, Vendor, Window,
};
use pages::{Levels, Summary};

mod pages;

pub(crate) struct Garmin;

const DAILIES: &str = "dailies";
const SLEEPS: &str = "sleeps";
const ACTIVITIES: &str = "activities";
const HRV: &str = "hrv";
const PULSE_OX: &str = "pulseox";
const RESPIRATION: &str = "respiration";
const STRESS: &str = "stressDetails";
const BODY: &str = "bodyComps";
const METRICS: &str = "userMetrics";
const SKIN: &str = "skinTemp";
const PRESSURE: &str = "bloodPressures";
// The summary types read (REST path segments); epochs are not: they repeat the dailies.
crate::normal::collections! {
    Dailies = DAILIES,
    Sleeps = SLEEPS,
    Activities = ACTIVITIES,
    Hrv = HRV,
    PulseOx = PULSE_OX,
    Respiration = RESPIRATION,
    Stress = STRESS,
    Body = BODY,
    Metrics = METRICS,
    Skin = SKIN,
    Pressure = PRESSURE,
}

/// A notification's keys that are not the REST path of their type.
fn collection(key: &str) -> Option<&'static str> {
    match key {
        "allDayRespiration" => Some(RESPIRATION),
        "pulseOx" => Some(PULSE_OX),
        // Activities the user edited at Garmin: the same summaries, sent again.
        "manuallyUpdatedActivities" => Some(ACTIVITIES),
        _ => Collection::parse(key).map(Collection::name),
    }
}

const HR: SeriesId = id("heart_rate");
const RESTING_HR: SeriesId = id("resting_heart_rate");
const HRV_RMSSD: SeriesId = id("heart_rate_variability_rmssd");
const OXYGEN: SeriesId = id("oxygen_saturation");
const BREATHING: SeriesId = id("respiratory_rate");
const STEPS: SeriesId = id("steps");
const ENERGY: SeriesId = id("energy");
const BASAL: SeriesId = id("basal_energy");
const WALKED: SeriesId = id("distance_walking_running");
const FLOORS: SeriesId = id("flights_climbed");
const STRESS_LEVEL: SeriesId = id("garmin_stress_level");
const BODY_BATTERY: SeriesId = id("garmin_body_battery");
const WEIGHT: SeriesId = id("weight");
const BODY_FAT: SeriesId = id("body_fat_percentage");
const BMI: SeriesId = id("body_mass_index");
const MUSCLE: SeriesId = id("skeletal_muscle_mass");
const VO2_MAX: SeriesId = id("vo2_max");
const FITNESS_AGE: SeriesId = id("garmin_fitness_age");
const SKIN_DEVIATION: SeriesId = id("skin_temperature_deviation");
const SYSTOLIC: SeriesId = id("blood_pressure_systolic");
const DIASTOLIC: SeriesId = id("blood_pressure_diastolic");

const WATCH: Device = Device {
    provider: "garmin",
    model: "Garmin",
    manufacturer: "Garmin",
    source: "Garmin Connect",
    device_type: "watch",
};

static INFO: Info = Info {
    provider: Provider {
        slug: "garmin",
        name: "Garmin",
        has_cloud_api: true,
        live_sync_mode: Some(LiveSyncMode::Webhook),
        // Garmin's terms allow pulls only in answer to its pings.
        live_sync_configurable: false,
        capabilities: Capabilities {
            rest_pull: true,
            webhook_stream: true,
            webhook_ping: true,
            webhook_callback: false,
            max_historical_days: None,
        },
    },
    oauth: OAuthSpec::standard(
        "https://connect.garmin.com/oauth2Confirm",
        "https://diauth.garmin.com/di-oauth2-service/oauth/token",
        // Garmin takes no scopes: the user picks permissions on its consent page.
        &[],
        true,
        ClientAuth::Body,
    ),
    api_url: "https://apis.garmin.com",
    collections: COLLECTIONS,
    settings: &[],
    // Pushes carry whole summaries, of many users at once.
    notification_bytes: 8 << 20,
    history: crate::History::Backfill,
    proof: crate::Proof::UrlToken,
};

impl Vendor for Garmin {
    fn info(&self) -> &'static Info {
        &INFO
    }
}

impl Pages for Garmin {
    /// 24 hours of upload time a request.
    fn window_step(&self, _: &str) -> Option<Duration> {
        Some(Duration::days(1))
    }

    /// Summaries uploaded within the window.
    fn page_url(
        &self,
        api_url: &str,
        collection: &str,
        (start, end): Window,
        _: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        let base = api_url.trim_end_matches('/');
        let mut url = url::Url::parse(&format!("{base}/wellness-api/rest/{collection}"))?;
        url.query_pairs_mut()
            .append_pair("uploadStartTimeInSeconds", &start.timestamp().to_string())
            .append_pair("uploadEndTimeInSeconds", &end.timestamp().to_string());
        Ok(url)
    }

    fn next_page(&self, _: &Value, _: Option<&str>, _: Window) -> Option<String> {
        None
    }

    /// 30 days a backfill request (sources say 30 or 90; the smaller holds either way).
    fn backfill_step(&self) -> Option<Duration> {
        Some(Duration::days(30))
    }

    /// `GET /wellness-api/rest/backfill/{type}?summaryStartTimeInSeconds=…` answers 202; the
    /// summaries come later by push or ping.
    fn backfill_url(
        &self,
        api_url: &str,
        collection: &str,
        (start, end): Window,
    ) -> Option<url::Url> {
        use Collection::*;
        // Its push key where that is not its REST path; an unknown name is asked for as itself.
        let path = match Collection::parse(collection) {
            Some(PulseOx) => "pulseOx",
            Some(
                Dailies | Sleeps | Activities | Hrv | Respiration | Stress | Body | Metrics | Skin
                | Pressure,
            )
            | None => collection,
        };
        let mut url = crate::calls::at(api_url, &format!("wellness-api/rest/backfill/{path}"))?;
        url.query_pairs_mut()
            .append_pair("summaryStartTimeInSeconds", &start.timestamp().to_string())
            .append_pair("summaryEndTimeInSeconds", &end.timestamp().to_string());
        Some(url)
    }
}

impl Mapping for Garmin {
    fn map_page(&self, collection: &str, page: &Value, out: &mut Normalised) {
        let Some(collection) = Collection::parse(collection) else { return };
        let map: MapSummary = match collection {
            Collection::Dailies => daily,
            Collection::Sleeps => sleep,
            Collection::Activities => activity,
            Collection::Hrv => hrv,
            Collection::PulseOx => {
                |s, out| offsets_map(s, s.time_offset_spo2_values.as_ref(), OXYGEN, out)
            }
            Collection::Respiration => {
                |s, out| offsets_map(s, s.time_offset_epoch_to_breaths.as_ref(), BREATHING, out)
            }
            Collection::Stress => stress,
            Collection::Body => body,
            Collection::Metrics => metrics,
            Collection::Skin => skin,
            Collection::Pressure => pressure,
        };
        let rows = crate::normal::rows(page, collection.name()).iter();
        let kind = (collection.name(), "unreadable Garmin summary");
        crate::normal::each(out, kind, rows, |row, out| map(&record(row)?, out));
    }
}

impl Account for Garmin {
    fn user_url(&self, api_url: &str) -> Option<String> {
        Some(format!("{}/wellness-api/rest/user/id", api_url.trim_end_matches('/')))
    }

    fn user_id(&self, body: &Value) -> Option<String> {
        body.get("userId").map(crate::normal::id_text)
    }

    /// `DELETE /wellness-api/rest/user/registration`: Garmin asks partners to call it when the
    /// user disconnects here.
    fn revoke(&self, c: &Connected<'_>) -> Vec<Call> {
        let auth = CallAuth::Bearer(c.access_token.to_string());
        crate::calls::at(&c.ends.api_url, "wellness-api/rest/user/registration")
            .map(|url| Call::new(reqwest::Method::DELETE, url, auth))
            .into_iter()
            .collect()
    }
}

impl Notifications for Garmin {
    /// Garmin signs nothing; its notifications carry the app's `garmin-client-id`, which must
    /// be ours (and they name users by an id only a connection here maps to a user).
    fn webhook_verified(
        &self,
        ends: &Endpoints,
        header: &dyn Fn(&str) -> Option<String>,
        _: &[u8],
    ) -> bool {
        header("garmin-client-id")
            .is_some_and(|id| crate::webhook::same(id.as_bytes(), ends.client_id.as_bytes()))
    }

    /// `{<summary type>: [entries]}`, entries of many users: pushed summaries become data per
    /// user and type; a ping (an entry with `callbackURL`) a pull of its upload window;
    /// `deregistrations` users who removed the app.
    fn webhook_notices(&self, body: &Value) -> Vec<Notice> {
        let Some(types) = body.as_object() else { return Vec::new() };
        let mut out = Vec::new();
        for (key, entries) in types {
            let entries = entries.as_array().map(Vec::as_slice).unwrap_or_default();
            if key == "deregistrations" {
                out.extend(entries.iter().filter_map(user).map(Notice::Deregistered));
                continue;
            }
            let Some(collection) = collection(key) else { continue };
            let mut pushed: std::collections::BTreeMap<String, Vec<Value>> = Default::default();
            for entry in entries {
                let Some(u) = user(entry) else { continue };
                match entry.get("callbackURL").and_then(Value::as_str) {
                    Some(callback) => {
                        if let Some(window) = upload_window(callback) {
                            out.push(Notice::Pull(u, window));
                        }
                    }
                    None => pushed.entry(u).or_default().push(entry.clone()),
                }
            }
            for (user, summaries) in pushed {
                out.push(Notice::Data { user, collection, page: Value::Array(summaries) });
            }
        }
        out
    }
}

fn user(entry: &Value) -> Option<String> {
    entry.get("userId").map(crate::normal::id_text)
}

/// The upload window a ping's callback URL names.
fn upload_window(callback: &str) -> Option<Window> {
    let url = url::Url::parse(callback).ok()?;
    let param = |name: &str| {
        url.query_pairs()
            .find(|(k, _)| k == name)
            .and_then(|(_, v)| v.parse::<i64>().ok())
            .and_then(|t| DateTime::from_timestamp(t, 0))
    };
    let (from, to) = (param("uploadStartTimeInSeconds")?, param("uploadEndTimeInSeconds")?);
    (from <= to).then_some((from, to.checked_add_signed(Duration::seconds(1))?))
}

/// Adds one summary, read, to the batch; `None` when it does not read.
type MapSummary = fn(&Summary, &mut Normalised) -> Option<()>;

fn instant(seconds: Option<f64>) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp(seconds? as i64, 0)
}

/// Minutes east of UTC from a summary's offset in seconds.
fn offset(seconds: Option<f64>) -> Option<i16> {
    crate::normal::minutes(seconds? as i64)
}

/// `{"<seconds after the start>": value}` of a summary; only where the summary has it must its
/// start read.
fn offsets_map(
    s: &Summary,
    map: Option<&Keyed>,
    series: SeriesId,
    out: &mut Normalised,
) -> Option<()> {
    let Some(map) = map else { return Some(()) };
    let start = instant(s.start_time_in_seconds)?;
    let zone = offset(s.start_time_offset_in_seconds);
    for (k, v) in map {
        let (Ok(seconds), Some(v)) = (k.parse::<i64>(), *v) else { continue };
        let Some(at) = start.checked_add_signed(Duration::try_seconds(seconds)?) else { continue };
        WATCH.push(out, series, (at, zone), v, false);
    }
    Some(())
}

/// The local day a summary is of, at noon.
fn day(s: &Summary) -> Option<(DateTime<Utc>, Option<i16>)> {
    let zone = offset(s.start_time_offset_in_seconds);
    let date = match s.calendar_date.as_deref() {
        Some(d) => NaiveDate::parse_from_str(d, "%Y-%m-%d").ok()?,
        None => instant(s.start_time_in_seconds)?
            .checked_add_signed(Duration::minutes(i64::from(zone.unwrap_or(0))))?
            .date_naive(),
    };
    Some((noon(date, zone.unwrap_or(0))?, zone))
}

/// A day: its totals (steps, distance, active and basal kcal, floors), resting heart rate, and
/// the day's heart rate every 15 s or so.
fn daily(s: &Summary, out: &mut Normalised) -> Option<()> {
    let at = day(s)?;
    for (series, value) in [
        (STEPS, s.steps),
        (WALKED, s.distance_in_meters),
        (ENERGY, s.active_kilocalories),
        (BASAL, s.bmr_kilocalories),
        (FLOORS, s.floors_climbed),
    ] {
        if let Some(v) = value {
            WATCH.push(out, series, at, v, true);
        }
    }
    if let Some(v) = s.resting_heart_rate_in_beats_per_minute {
        WATCH.push(out, RESTING_HR, at, v, false);
    }
    offsets_map(s, s.time_offset_heart_rate_samples.as_ref(), HR, out)
}

fn stage(key: &str) -> Option<Stage> {
    Some(match key {
        "deep" => Stage::Deep,
        "light" => Stage::Light,
        "rem" => Stage::Rem,
        "awake" => Stage::Awake,
        _ => return None,
    })
}

/// A night from `startTimeInSeconds`: its levels (UTC epoch intervals; unknown levels skipped)
/// as the timeline, its stage totals (seconds) kept as such, its naps as sessions of their own,
/// and its SpO2 and breathing samples. `durationInSeconds` covers time asleep only (the reference
/// system's finding), so the night ends at the latest of its levels, start + that duration, and
/// start + all its stages (awake included).
fn sleep(s: &Summary, out: &mut Normalised) -> Option<()> {
    let start = instant(s.start_time_in_seconds)?;
    let zone = offset(s.start_time_offset_in_seconds);
    let mut intervals = Vec::new();
    for (key, Levels(spans)) in s.sleep_levels_map.iter().flatten() {
        let Some(stage) = stage(key) else { continue };
        for span in spans.iter().flatten() {
            if let (Some(s), Some(e)) =
                (instant(span.start_time_in_seconds), instant(span.end_time_in_seconds))
                && e > s
            {
                intervals.push(Interval { start: s, end: e, stage });
            }
        }
    }
    intervals.sort();
    let secs = crate::normal::seconds;
    let totals = StageTotals {
        light: secs(s.light_sleep_duration_in_seconds),
        deep: secs(s.deep_sleep_duration_in_seconds),
        rem: secs(s.rem_sleep_in_seconds),
        awake: secs(s.awake_duration_in_seconds),
        asleep: None,
    };
    let staged =
        [totals.light, totals.deep, totals.rem, totals.awake].iter().flatten().sum::<i64>();
    let length = secs(s.duration_in_seconds).unwrap_or(0).max(staged);
    let end = intervals
        .iter()
        .map(|i| i.end)
        .chain(start.checked_add_signed(Duration::try_seconds(length)?))
        .max()?;
    if end <= start {
        return None;
    }
    let source = WATCH.source(out);
    out.note_offset(end, zone);
    let night = VendorNight { totals, is_nap: Some(false), ..VendorNight::new(start, end) };
    out.sleep.push(SleepSession {
        source,
        intervals,
        zone_offset: zone,
        external_id: s.summary_id.clone(),
        vendor: Some(night),
    });
    for nap in s.naps.iter().flatten() {
        let (Some(from), Some(seconds)) =
            (instant(nap.nap_start_time_in_seconds), nap.nap_duration_in_seconds)
        else {
            continue;
        };
        let Some(to) = from.checked_add_signed(Duration::try_seconds(seconds as i64)?) else {
            continue;
        };
        if to <= from {
            continue;
        }
        // Its own id, of its start: the night's would have the nap replace it, and a nap listed
        // again under another summary is the same nap.
        let id = Some(format!("garmin-nap:{}", from.timestamp()));
        let nap_night = VendorNight {
            totals: StageTotals { asleep: Some(seconds as i64), ..StageTotals::default() },
            is_nap: Some(true),
            ..VendorNight::new(from, to)
        };
        out.sleep.push(SleepSession {
            source,
            intervals: Vec::new(),
            zone_offset: offset(nap.nap_offset_in_seconds).or(zone),
            external_id: id,
            vendor: Some(nap_night),
        });
    }
    offsets_map(s, s.time_offset_sleep_spo2.as_ref(), OXYGEN, out)?;
    offsets_map(s, s.time_offset_sleep_respiration.as_ref(), BREATHING, out)
}

/// Garmin's activity types that are not the unified name in lower case.
const ACTIVITY_TYPES: [(&str, &str); 13] = [
    ("RUNNING", "running"),
    ("TREADMILL_RUNNING", "running"),
    ("TRAIL_RUNNING", "trail_running"),
    ("CYCLING", "cycling"),
    ("ROAD_BIKING", "cycling"),
    ("MOUNTAIN_BIKING", "cycling"),
    ("INDOOR_CYCLING", "cycling"),
    ("WALKING", "walking"),
    ("HIKING", "hiking"),
    ("LAP_SWIMMING", "swimming"),
    ("OPEN_WATER_SWIMMING", "swimming"),
    ("STRENGTH_TRAINING", "strength_training"),
    ("YOGA", "yoga"),
];

fn activity(s: &Summary, out: &mut Normalised) -> Option<()> {
    let start = instant(s.start_time_in_seconds)?;
    let end = start.checked_add_signed(Duration::try_seconds(s.duration_in_seconds? as i64)?)?;
    let zone = offset(s.start_time_offset_in_seconds);
    let sport = s.activity_type.as_deref();
    let id = s.summary_id.clone().or_else(|| s.activity_id.clone());
    WATCH.workout(out, (start, end), zone, |w| {
        w.external_id = id;
        w.figures.kind =
            sport.and_then(|s| crate::normal::workout_kind(&ACTIVITY_TYPES, s)).map(str::to_string);
        w.figures.calories_kcal = s.active_kilocalories;
        w.figures.distance_meters = s.distance_in_meters;
        w.figures.steps = s.steps.and_then(|s| i32::try_from(s as i64).ok());
        w.figures.avg_heart_rate_bpm = s.average_heart_rate_in_beats_per_minute;
        w.figures.max_heart_rate_bpm = s.max_heart_rate_in_beats_per_minute;
        w.figures.avg_speed_m_per_s = s.average_speed_in_meters_per_second;
        w.figures.max_speed_m_per_s = s.max_speed_in_meters_per_second;
        w.figures.elevation_gain_meters = s.elevation_gain_in_meters;
        w.figures.notes = s.activity_name.clone();
        w.statistics = json!({"activityType": sport, "deviceName": s.device_name,
            "averageRunCadenceInStepsPerMinute": s.average_run_cadence_in_steps_per_minute,
            "manual": s.manual});
    })
}

/// Stress every 3 minutes (negative values are Garmin's states, not stress: left out) and
/// Body Battery.
fn stress(s: &Summary, out: &mut Normalised) -> Option<()> {
    let start = instant(s.start_time_in_seconds)?;
    let zone = offset(s.start_time_offset_in_seconds);
    for (map, series) in [
        (&s.time_offset_stress_level_values, STRESS_LEVEL),
        (&s.time_offset_body_battery_values, BODY_BATTERY),
    ] {
        for (k, v) in map.iter().flatten() {
            let (Ok(seconds), Some(v)) = (k.parse::<i64>(), *v) else { continue };
            if v < 0.0 {
                continue;
            }
            let Some(at) = start.checked_add_signed(Duration::try_seconds(seconds)?) else {
                continue;
            };
            WATCH.push(out, series, (at, zone), v, false);
        }
    }
    Some(())
}

/// A body composition measure: grams → kg.
fn body(s: &Summary, out: &mut Normalised) -> Option<()> {
    let at =
        (instant(s.measurement_time_in_seconds)?, offset(s.measurement_time_offset_in_seconds));
    for (series, value, factor) in [
        (WEIGHT, s.weight_in_grams, 0.001),
        (MUSCLE, s.muscle_mass_in_grams, 0.001),
        (BODY_FAT, s.body_fat_in_percent, 1.0),
        (BMI, s.body_mass_index, 1.0),
    ] {
        if let Some(v) = value {
            WATCH.push(out, series, at, v * factor, false);
        }
    }
    Some(())
}

fn metrics(s: &Summary, out: &mut Normalised) -> Option<()> {
    let date = NaiveDate::parse_from_str(s.calendar_date.as_deref()?, "%Y-%m-%d").ok()?;
    let (at, zone) = crate::normal::local_noon(out, date)?;
    let at = (at, Some(zone));
    for (series, value) in [(VO2_MAX, s.vo2_max), (FITNESS_AGE, s.fitness_age)] {
        if let Some(v) = value {
            WATCH.push(out, series, at, v, false);
        }
    }
    Some(())
}

/// The night's skin temperature, as a deviation from the user's baseline (°C).
/// A night's skin temperature deviation (°C), at the end of the window it was measured over, so
/// it counts on the day of that window's `calendarDate`, not the evening before.
fn skin(s: &Summary, out: &mut Normalised) -> Option<()> {
    let start = instant(s.start_time_in_seconds)?;
    let last = s.duration_in_seconds.map_or(0, |d| (d as i64 - 1).max(0));
    let at = (
        start.checked_add_signed(Duration::try_seconds(last)?)?,
        offset(s.start_time_offset_in_seconds),
    );
    if let Some(v) = s.avg_deviation_celsius {
        WATCH.push(out, SKIN_DEVIATION, at, v, false);
    }
    Some(())
}

/// A night's HRV: its 5-minute values where Garmin gives them (they lie in the night), else
/// the night's average (`lastNightAvg`) inside the window it was measured over (the summary's
/// own start and duration: Garmin pushes it apart from the night's sleep summary).
fn hrv(s: &Summary, out: &mut Normalised) -> Option<()> {
    if s.hrv_values.as_ref().is_some_and(|m| !m.is_empty()) {
        return offsets_map(s, s.hrv_values.as_ref(), HRV_RMSSD, out);
    }
    let Some(avg) = s.last_night_avg else { return Some(()) };
    let start = instant(s.start_time_in_seconds)?;
    let end = start.checked_add_signed(Duration::try_seconds(s.duration_in_seconds? as i64)?)?;
    let zone = offset(s.start_time_offset_in_seconds);
    WATCH.push(out, HRV_RMSSD, (crate::normal::night_instant(start, end, zone), zone), avg, false);
    Some(())
}

fn pressure(s: &Summary, out: &mut Normalised) -> Option<()> {
    let at =
        (instant(s.measurement_time_in_seconds)?, offset(s.measurement_time_offset_in_seconds));
    for (series, value) in [(SYSTOLIC, s.systolic), (DIASTOLIC, s.diastolic), (HR, s.pulse)] {
        if let Some(v) = value {
            WATCH.push(out, series, at, v, false);
        }
    }
    Some(())
}

#[cfg(test)]
mod tests;
