//! Fitbit: the Fitbit Web API. Facts and their sources: `docs/vendors/fitbit.md`.
//!
//! Google turned the legacy Web API off in November 2026 (§0 of the facts): this adapter serves
//! deployments with access to it, or a compatible proxy (`FITBIT_API_URL`); new deployments
//! need Google Health API access, which it does not speak.
//!
//! Fitbit writes local wall-clock times without an offset (sleep, weight) and local days
//! everywhere; the profile, read first, names the user's zone, which the pull reads them in
//! (each at its own offset, daylight saving included; the profile's current offset when the
//! zone is unknown). No `Accept-Language` is sent, so every value is metric (distances in km).

use chrono::{DateTime, Duration, NaiveDate, NaiveDateTime, Utc};
use ingest::{Interval, Normalised, SleepSession, Stage, StageTotals, VendorNight};
use schema::catalogue::providers::{Capabilities, LiveSyncMode, Provider};
use schema::catalogue::series_types::{SeriesId, id};
use serde_json::{Value, json};

use crate::normal::{Device, MapRow, local_instant, local_noon, record};
use crate::{Account, Mapping, Notifications, Pages};
use crate::{
    Call, CallAuth, ClientAuth, Connected, Endpoints, Handshake, Info, Notice, OAuthSpec, Vendor,
    Window,
};
use pages::{
    Activity, DayFigures, DayLevel, DayTotal, Level, Minutes, Profile, SleepLog, WeightLog,
};

mod pages;

pub(crate) struct Fitbit;

const PROFILE: &str = "profile";
const SLEEP: &str = "sleep";
const ACTIVITIES: &str = "activities";
const STEPS: &str = "steps";
const CALORIES: &str = "calories";
const DISTANCE: &str = "distance";
const HEART: &str = "heart";
const HRV: &str = "hrv";
const SPO2: &str = "spo2";
const SKIN: &str = "temp-skin";
const WEIGHT: &str = "weight";
// The profile first: it gives the offset the others are read with.
crate::normal::collections! {
    Profile = PROFILE,
    Sleep = SLEEP,
    Activities = ACTIVITIES,
    Steps = STEPS,
    Calories = CALORIES,
    Distance = DISTANCE,
    Heart = HEART,
    Hrv = HRV,
    Spo2 = SPO2,
    Skin = SKIN,
    Weight = WEIGHT,
}

/// Ranges of dates stay under Fitbit's smallest maximum (30 days for HRV, SpO2 and skin
/// temperature) with the day either side added: 26 days and two make 29 dates.
const STEP_DAYS: i64 = 26;

const RESTING_HR: SeriesId = id("resting_heart_rate");
const HRV_RMSSD: SeriesId = id("heart_rate_variability_rmssd");
const STEP_COUNT: SeriesId = id("steps");
const TOTAL_ENERGY: SeriesId = id("total_energy");
const WALKED: SeriesId = id("distance_walking_running");
const OXYGEN: SeriesId = id("oxygen_saturation");
const SKIN_DEVIATION: SeriesId = id("skin_temperature_deviation");
const BODY_WEIGHT: SeriesId = id("weight");
const BMI: SeriesId = id("body_mass_index");
const BODY_FAT: SeriesId = id("body_fat_percentage");

const TRACKER: Device = Device {
    provider: "fitbit",
    model: "Fitbit",
    manufacturer: "Fitbit",
    source: "Fitbit",
    device_type: "watch",
};

static INFO: Info = Info {
    provider: Provider {
        slug: "fitbit",
        name: "Fitbit",
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
        "https://www.fitbit.com/oauth2/authorize",
        "https://api.fitbit.com/oauth2/token",
        &[
            "activity",
            "heartrate",
            "sleep",
            "oxygen_saturation",
            "temperature",
            "weight",
            "profile",
        ],
        true,
        ClientAuth::Basic,
    ),
    api_url: "https://api.fitbit.com",
    collections: COLLECTIONS,
    settings: &[],
    notification_bytes: crate::SMALL_NOTIFICATIONS,
    history: crate::History::Pull,
    proof: crate::Proof::Signature,
};

impl Vendor for Fitbit {
    fn info(&self) -> &'static Info {
        &INFO
    }
}

impl Pages for Fitbit {
    /// The activity list is read from the window's first day on, through all its pages, in one
    /// go; the ranges of dates in steps.
    fn window_step(&self, collection: &str) -> Option<Duration> {
        use Collection::*;
        match Collection::parse(collection) {
            Some(Activities | Profile) => None,
            Some(Sleep | Steps | Calories | Distance | Heart | Hrv | Spo2 | Skin | Weight)
            | None => Some(Duration::days(STEP_DAYS)),
        }
    }

    /// Local dates, a day either side of the window; the activity list from its first day,
    /// then by Fitbit's own `pagination.next` (only under the configured API URL).
    fn page_url(
        &self,
        api_url: &str,
        collection: &str,
        (start, end): Window,
        next: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        let base = api_url.trim_end_matches('/');
        if let Some(next) = next {
            return url::Url::parse(&format!("{base}{next}"));
        }
        let day = |t: DateTime<Utc>| t.date_naive().format("%Y-%m-%d").to_string();
        let (from, to) = (day(start - Duration::days(1)), day(end + Duration::days(1)));
        use Collection::*;
        // An unknown name is asked for as the weight log.
        let path = match Collection::parse(collection) {
            Some(Profile) => "1/user/-/profile.json".to_string(),
            Some(Sleep) => format!("1.2/user/-/sleep/date/{from}/{to}.json"),
            Some(Activities) => {
                let mut url = url::Url::parse(&format!("{base}/1/user/-/activities/list.json"))?;
                url.query_pairs_mut()
                    .append_pair("afterDate", &from)
                    .append_pair("sort", "asc")
                    .append_pair("limit", "100")
                    .append_pair("offset", "0");
                return Ok(url);
            }
            Some(Steps | Calories | Distance | Heart) => {
                format!("1/user/-/activities/{collection}/date/{from}/{to}.json")
            }
            Some(Hrv | Spo2) => format!("1/user/-/{collection}/date/{from}/{to}.json"),
            Some(Skin) => format!("1/user/-/temp/skin/date/{from}/{to}.json"),
            Some(Weight) | None => format!("1/user/-/body/log/weight/date/{from}/{to}.json"),
        };
        url::Url::parse(&format!("{base}/{path}"))
    }

    /// The path and query of the activity list's `pagination.next`: the next page is asked of
    /// the configured API, never of a host a page names (with the user's token).
    fn next_page(&self, page: &Value, _: Option<&str>, _: Window) -> Option<String> {
        let next = url::Url::parse(page.pointer("/pagination/next")?.as_str()?).ok()?;
        Some(format!("{}?{}", next.path(), next.query()?))
    }

    /// `Retry-After`, else `Fitbit-Rate-Limit-Reset` (seconds to the top of the hour).
    fn rate_limit_wait(&self, headers: &reqwest::header::HeaderMap) -> Option<i64> {
        ["retry-after", "fitbit-rate-limit-reset"]
            .iter()
            .find_map(|name| headers.get(*name)?.to_str().ok()?.trim().parse::<i64>().ok())
    }
}

impl Mapping for Fitbit {
    fn map_page(&self, collection: &str, page: &Value, out: &mut Normalised) {
        let Some(collection) = Collection::parse(collection) else { return };
        let rows = |key| crate::normal::rows(page, key);
        let (rows, map): (&[Value], MapRow) = match collection {
            Collection::Profile => (std::slice::from_ref(page), profile),
            Collection::Sleep => (rows("sleep"), sleep),
            Collection::Activities => (rows("activities"), activity),
            Collection::Steps => (rows("activities-steps"), steps),
            Collection::Calories => (rows("activities-calories"), calories),
            Collection::Distance => (rows("activities-distance"), distance),
            Collection::Heart => (rows("activities-heart"), heart),
            Collection::Hrv => (rows("hrv"), hrv),
            // A range is a bare array; one day a bare object.
            Collection::Spo2 if page.is_object() => (std::slice::from_ref(page), spo2),
            Collection::Spo2 => (rows("spo2"), spo2),
            Collection::Skin => (rows("tempSkin"), skin),
            Collection::Weight => (rows("weight"), weight),
        };
        let kind = (collection.name(), "unreadable Fitbit record");
        crate::normal::each(out, kind, rows.iter(), map);
    }
}

impl Account for Fitbit {
    fn user_url(&self, api_url: &str) -> Option<String> {
        Some(format!("{}/1/user/-/profile.json", api_url.trim_end_matches('/')))
    }

    fn user_id(&self, body: &Value) -> Option<String> {
        body.pointer("/user/encodedId").and_then(Value::as_str).map(str::to_string)
    }

    fn token_user_id(&self, token: &Value) -> Option<String> {
        token.get("user_id").and_then(Value::as_str).map(str::to_string)
    }

    /// A subscription to every collection, named by the user's id here (Fitbit's ids are
    /// at most 50 characters; a UUID is 36). 409: one exists already.
    fn on_connect(&self, c: &Connected<'_>) -> Vec<Call> {
        let path = format!("1/user/-/apiSubscriptions/{}.json", c.user_id);
        let Some(url) = crate::calls::at(&c.ends.api_url, &path) else { return Vec::new() };
        let mut call =
            Call::new(reqwest::Method::POST, url, CallAuth::Bearer(c.access_token.to_string()));
        call.also_ok = &[409];
        vec![call]
    }

    /// `POST /oauth2/revoke` (RFC 7009) beside the token endpoint, with the app's credentials:
    /// it ends every token of the user.
    fn revoke(&self, c: &Connected<'_>) -> Vec<Call> {
        let Some(base) = c.ends.token_url.strip_suffix("/token") else { return Vec::new() };
        let Ok(url) = url::Url::parse(&format!("{base}/revoke")) else { return Vec::new() };
        vec![
            Call::new(reqwest::Method::POST, url, CallAuth::Basic)
                .form(&[("token", c.access_token)]),
        ]
    }
}

impl Notifications for Fitbit {
    /// Fitbit checks the subscriber with two `GET ?verify=`: the code it was given must get
    /// 204, a wrong one 404.
    fn webhook_challenge(
        &self,
        ends: &Endpoints,
        query: &dyn Fn(&str) -> Option<String>,
    ) -> Handshake {
        let (Some(expected), Some(given)) = (ends.webhook_token.as_deref(), query("verify")) else {
            return Handshake::Refused;
        };
        if crate::webhook::same(expected.as_bytes(), given.as_bytes()) {
            Handshake::Status(204)
        } else {
            Handshake::Status(404)
        }
    }

    /// `X-Fitbit-Signature`: base64 of HMAC-SHA1 over the raw body, keyed with the client
    /// secret and `&`.
    fn webhook_verified(
        &self,
        ends: &Endpoints,
        header: &dyn Fn(&str) -> Option<String>,
        body: &[u8],
    ) -> bool {
        let Some(signature) = header("x-fitbit-signature") else { return false };
        let key = format!("{}&", ends.client_secret);
        crate::webhook::hmac_sha1(&key, &[body], &signature, crate::webhook::Encoding::Base64)
    }

    /// `[{collectionType, date, ownerId, …}]`: the owner's day that changed (a day either side
    /// in UTC), or `userRevokedAccess`.
    fn webhook_notices(&self, body: &Value) -> Vec<Notice> {
        let mut out = Vec::new();
        for n in crate::normal::rows(body, "notifications") {
            let Some(owner) = n.get("ownerId").and_then(Value::as_str).map(str::to_string) else {
                continue;
            };
            if n.get("collectionType").and_then(Value::as_str) == Some("userRevokedAccess") {
                out.push(Notice::Deregistered(owner));
                continue;
            }
            let day = n
                .get("date")
                .and_then(Value::as_str)
                .and_then(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").ok())
                .and_then(|d| d.and_hms_opt(0, 0, 0))
                .map(|d| d.and_utc());
            if let Some(day) = day {
                out.push(Notice::Pull(owner, (day - Duration::days(1), day + Duration::days(2))));
            }
        }
        out
    }
}

/// The user's zone and current offset, from the profile: what the other collections' local
/// times are read with.
fn profile(page: &Value, out: &mut Normalised) -> Option<()> {
    let user = record::<Profile>(page)?.user?;
    let millis = user.offset_millis?;
    out.note_offset(Utc::now(), crate::normal::minutes(millis / 1000));
    out.zone = user.timezone;
    Some(())
}

fn local(s: &str) -> Option<NaiveDateTime> {
    NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f").ok()
}

fn stage(level: &str) -> Option<Stage> {
    Some(match level {
        "deep" => Stage::Deep,
        "light" => Stage::Light,
        "rem" => Stage::Rem,
        "wake" | "awake" | "restless" => Stage::Awake,
        "asleep" => Stage::Sleeping,
        _ => return None,
    })
}

fn levels(list: Option<&Vec<Level>>, out: &Normalised) -> Vec<Interval> {
    list.into_iter()
        .flatten()
        .filter_map(|l| {
            let (start, _) = local_instant(out, local(&l.date_time)?)?;
            let end = start.checked_add_signed(Duration::try_seconds(l.seconds)?)?;
            Some(Interval { start, end, stage: stage(&l.level)? })
        })
        .filter(|i| i.end > i.start)
        .collect()
}

/// A sleep log between its documented `startTime` and `endTime`: its levels (the short wake
/// periods laid over them) as the timeline, its stage totals (`levels.summary`, minutes), time
/// asleep and in bed, and `isMainSleep` (a log that is not the main sleep is a nap).
fn sleep(row: &Value, out: &mut Normalised) -> Option<()> {
    let log: SleepLog = record(row)?;
    let log_id = log.log_id?;
    let (start, _) = local_instant(out, local(log.start_time.as_deref()?)?)?;
    let (end, offset) = local_instant(out, local(log.end_time.as_deref()?)?)?;
    if end <= start {
        return None;
    }
    let levels_of = log.levels.unwrap_or_default();
    let base = levels(levels_of.data.as_ref(), out);
    let short = levels(levels_of.short_data.as_ref(), out);
    let intervals = crate::normal::overlay(base, &short);
    let minutes = |v: Option<f64>| v.map(|m| (m * 60.0) as i64);
    let summary_of = levels_of.summary.unwrap_or_default();
    let summary = |level: Option<Minutes>| minutes(level.and_then(|l| l.minutes));
    let night = VendorNight {
        totals: StageTotals {
            light: summary(summary_of.light),
            deep: summary(summary_of.deep),
            rem: summary(summary_of.rem),
            awake: summary(summary_of.wake),
            asleep: minutes(log.minutes_asleep),
        },
        in_bed: minutes(log.time_in_bed),
        is_nap: log.is_main_sleep.map(|main| !main),
        ..VendorNight::new(start, end)
    };
    let source = TRACKER.source(out);
    out.sleep.push(SleepSession {
        source,
        intervals,
        zone_offset: Some(offset),
        external_id: Some(log_id),
        vendor: Some(night),
    });
    Some(())
}

/// Fitbit's activity names that are not the unified name in lower case (others are read
/// with their spaces as underscores).
const ACTIVITY_NAMES: [(&str, &str); 12] = [
    ("Run", "running"),
    ("Treadmill", "running"),
    ("Walk", "walking"),
    ("Outdoor_Bike", "cycling"),
    ("Bike", "cycling"),
    ("Spinning", "cycling"),
    ("Swim", "swimming"),
    ("Hike", "hiking"),
    ("Weights", "strength_training"),
    ("Yoga", "yoga"),
    ("Sport", "other"),
    ("Workout", "other"),
];

/// Metres in `unit` (Fitbit's `distanceUnit`; metric without `Accept-Language`).
fn metres(value: f64, unit: Option<&str>) -> f64 {
    match unit {
        Some("Mile" | "mile" | "Miles") => value * 1609.344,
        Some("Meter" | "meter" | "Meters") => value,
        _ => value * 1000.0,
    }
}

fn activity(row: &Value, out: &mut Normalised) -> Option<()> {
    let a: Activity = record(row)?;
    let started = DateTime::parse_from_rfc3339(a.start_time.as_deref()?).ok()?;
    let offset = crate::normal::minutes(i64::from(started.offset().local_minus_utc()));
    let start = started.with_timezone(&Utc);
    let end = start.checked_add_signed(Duration::try_milliseconds(a.duration?)?)?;
    let name = a.activity_name.as_deref();
    TRACKER.workout(out, (start, end), offset, |w| {
        w.external_id = a.log_id.clone();
        w.figures.kind = name
            .and_then(|n| crate::normal::workout_kind(&ACTIVITY_NAMES, &n.replace(' ', "_")))
            .map(str::to_string);
        w.figures.calories_kcal = a.calories;
        w.figures.distance_meters = a.distance.map(|d| metres(d, a.distance_unit.as_deref()));
        w.figures.steps = a.steps.and_then(|s| i32::try_from(s as i64).ok());
        w.figures.avg_heart_rate_bpm = a.average_heart_rate;
        w.figures.elevation_gain_meters = a.elevation_gain;
        w.statistics = json!({"activityName": name, "logType": a.log_type,
                              "activeDuration_ms": a.active_duration});
    })
}

/// A `{dateTime, value}` day of a daily series, its value in `unit`s of the series; zero is a
/// day without data (Fitbit answers every day of a range).
fn day_total(row: &Value, out: &mut Normalised, series: SeriesId, factor: f64) -> Option<()> {
    let d: DayTotal = record(row)?;
    let day = NaiveDate::parse_from_str(d.date_time.as_deref()?, "%Y-%m-%d").ok()?;
    let value = d.value?;
    if value > 0.0 {
        let (at, offset) = local_noon(out, day)?;
        TRACKER.push(out, series, (at, Some(offset)), value * factor, true);
    }
    Some(())
}

fn steps(row: &Value, out: &mut Normalised) -> Option<()> {
    day_total(row, out, STEP_COUNT, 1.0)
}

/// `caloriesOut`: active and basal, kcal.
fn calories(row: &Value, out: &mut Normalised) -> Option<()> {
    day_total(row, out, TOTAL_ENERGY, 1.0)
}

/// Kilometres.
fn distance(row: &Value, out: &mut Normalised) -> Option<()> {
    day_total(row, out, WALKED, 1000.0)
}

/// A `{dateTime, value: {…}}` day: its local date (the first ten characters of `dateTime`) and
/// the figure `pick` reads of its value.
fn day_figure(
    row: &Value,
    pick: fn(&DayFigures) -> Option<f64>,
) -> Option<(NaiveDate, Option<f64>)> {
    let d: DayLevel = record(row)?;
    let day = NaiveDate::parse_from_str(d.date_time.as_deref()?.get(..10)?, "%Y-%m-%d").ok()?;
    Some((day, d.value.as_ref().and_then(pick)))
}

/// A day-keyed level at the day's noon.
fn heart(row: &Value, out: &mut Normalised) -> Option<()> {
    let (day, value) = day_figure(row, |v| v.resting_heart_rate)?;
    if let Some(v) = value {
        let (at, offset) = local_noon(out, day)?;
        TRACKER.push(out, RESTING_HR, (at, Some(offset)), v, false);
    }
    Some(())
}

/// A figure of the main sleep that ended on the day `dateTime` (Fitbit: "applies specifically
/// to a user's main sleep … provided at the end of a period of sleep"): inside that night, with
/// its offset, where the night's summary averages it; without the night in this pull, at the
/// day's noon.
fn night_level(
    row: &Value,
    out: &mut Normalised,
    series: SeriesId,
    pick: fn(&DayFigures) -> Option<f64>,
) -> Option<()> {
    let (day, value) = day_figure(row, pick)?;
    let Some(v) = value else { return Some(()) };
    let (at, offset) = crate::normal::in_night_or_noon(out, day)?;
    TRACKER.push(out, series, (at, offset), v, false);
    Some(())
}

/// The main sleep's RMSSD (ms).
fn hrv(row: &Value, out: &mut Normalised) -> Option<()> {
    night_level(row, out, HRV_RMSSD, |v| v.daily_rmssd)
}

/// The main sleep's average SpO2 (%).
fn spo2(row: &Value, out: &mut Normalised) -> Option<()> {
    night_level(row, out, OXYGEN, |v| v.avg)
}

/// `nightlyRelative`: the main sleep's deviation from the user's baseline, °C.
fn skin(row: &Value, out: &mut Normalised) -> Option<()> {
    night_level(row, out, SKIN_DEVIATION, |v| v.nightly_relative)
}

/// A weight log at its local date and time: kg, BMI, and body fat where logged with it.
fn weight(row: &Value, out: &mut Normalised) -> Option<()> {
    let w: WeightLog = record(row)?;
    let date = w.date.as_deref()?;
    let time = w.time.as_deref().unwrap_or("23:59:59");
    let local = NaiveDateTime::parse_from_str(&format!("{date}T{time}"), "%Y-%m-%dT%H:%M:%S");
    let (at, offset) = local_instant(out, local.ok()?)?;
    for (series, value) in [(BODY_WEIGHT, w.weight), (BMI, w.bmi), (BODY_FAT, w.fat)] {
        if let Some(v) = value {
            TRACKER.push(out, series, (at, Some(offset)), v, false);
        }
    }
    Some(())
}

#[cfg(test)]
mod tests;
