//! Withings (scales, blood-pressure monitors, watches, sleep mats): the Public Health Data
//! API. Facts and their sources: `docs/vendors/withings.md`.
//!
//! Every answer is HTTP 200 with `{status, body}`: `status` 0 is success, 601 its rate limit,
//! the 100s, 200 and 401 a token it refuses. The token call wants `action=requesttoken` and
//! wraps its answer the same way. Measures are integers with a power of ten
//! (`value × 10^unit`, SI units); times are Unix seconds and zones IANA names. Notifications
//! are unsigned forms sent to a URL with our token; they only say whose data to fetch again.

use chrono::{DateTime, Duration, NaiveDate, Utc};
use futures::future::BoxFuture;
use ingest::{Interval, Normalised, SleepSession, Stage, StageTotals, VendorNight};
use schema::catalogue::providers::{Capabilities, LiveSyncMode, Provider};
use schema::catalogue::series_types::{SeriesId, id};
use serde_json::{Value, json};

use crate::normal::{Device, local_noon, offset_at, record, zone_offset};
use crate::{Account, Mapping, Notifications, Pages};
use crate::{
    Call, CallAuth, ClientAuth, Connected, Endpoints, Handshake, Info, Notice, OAuthSpec,
    PageError, Vendor, Window,
};
use pages::{ActivityDay, MeasureGroup, Minute, NightData, Segment, Span, WorkoutData};

mod pages;

pub(crate) struct Withings;

const MEASURES: &str = "getmeas";
const ACTIVITY: &str = "getactivity";
const WORKOUTS: &str = "getworkouts";
const NIGHTS: &str = "getsummary";
const SLEEP: &str = "sleep";
const INTRADAY: &str = "getintradayactivity";
// Those with zones first: sleep and intraday data are read at the offset they give; the
// nights (Sleep v2 Getsummary) before their stage segments, which join them.
crate::normal::collections! {
    Measures = MEASURES,
    Activity = ACTIVITY,
    Workouts = WORKOUTS,
    Nights = NIGHTS,
    Sleep = SLEEP,
    Intraday = INTRADAY,
}

const ACTIVITY_FIELDS: &str = "steps,distance,elevation,calories,totalcalories";
const WORKOUT_FIELDS: &str =
    "calories,hr_average,hr_min,hr_max,steps,distance,elevation,pause_duration,spo2_average";
const SLEEP_FIELDS: &str = "hr,rr,rmssd";
const NIGHT_FIELDS: &str = "total_timeinbed,total_sleep_time,asleepduration,lightsleepduration,\
                            deepsleepduration,remsleepduration,wakeupduration";
const INTRADAY_FIELDS: &str = "heart_rate,spo2_auto";

const HR: SeriesId = id("heart_rate");
const HRV_RMSSD: SeriesId = id("heart_rate_variability_rmssd");
const BREATHING: SeriesId = id("respiratory_rate");
const OXYGEN: SeriesId = id("oxygen_saturation");
const STEPS: SeriesId = id("steps");
const ENERGY: SeriesId = id("energy");
const TOTAL_ENERGY: SeriesId = id("total_energy");
const WALKED: SeriesId = id("distance_walking_running");
const FLOORS: SeriesId = id("flights_climbed");

/// Measure types (`meastype`) wearhouse keeps: the series and the factor from Withings' SI
/// unit to the series' unit.
const MEASURE_TYPES: [(i64, SeriesId, f64); 13] = [
    (1, id("weight"), 1.0),
    (4, id("height"), 100.0), // m → cm
    (5, id("lean_body_mass"), 1.0),
    (6, id("body_fat_percentage"), 1.0),
    (8, id("body_fat_mass"), 1.0),
    (9, id("blood_pressure_diastolic"), 1.0),
    (10, id("blood_pressure_systolic"), 1.0),
    (11, HR, 1.0),
    (12, id("body_temperature"), 1.0),
    (54, OXYGEN, 1.0),
    (71, id("body_temperature"), 1.0),
    (73, id("skin_temperature"), 1.0),
    (123, id("vo2_max"), 1.0),
];

const DEVICE: Device = Device {
    provider: "withings",
    model: "Withings",
    manufacturer: "Withings",
    source: "Withings",
    device_type: "scale",
};

static INFO: Info = Info {
    provider: Provider {
        slug: "withings",
        name: "Withings",
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
    oauth: OAuthSpec {
        authorize_url: "https://account.withings.com/oauth2_user/authorize2",
        token_url: "https://wbsapi.withings.net/v2/oauth2",
        // Withings separates scopes with commas: one scope parameter, as it expects it.
        scopes: &["user.info,user.metrics,user.activity,user.sleepevents"],
        pkce: false,
        client_auth: ClientAuth::Body,
        token_params: &[("action", "requesttoken")],
        token_envelope: Some(token_envelope),
    },
    api_url: "https://wbsapi.withings.net",
    collections: COLLECTIONS,
    settings: &[],
    notification_bytes: crate::SMALL_NOTIFICATIONS,
    history: crate::History::Pull,
    proof: crate::Proof::UrlToken,
};

/// Adds one record, read in the page's zone, to the batch.
type ZonedRow = fn(&Value, Option<&str>, &mut Normalised) -> Option<()>;

/// `status` codes that mean the token or grant is no good.
fn refused(status: i64) -> bool {
    matches!(status, 100..=102 | 200 | 401)
}

/// `{status: 0, body}` → the body; a refused grant (its auth codes, 503 "invalid params" for a
/// spent code or refresh token) → `invalid_grant`; anything else is worth a retry.
fn token_envelope(answer: &Value) -> Result<Value, &'static str> {
    match answer.get("status").and_then(Value::as_i64) {
        Some(0) => Ok(answer.get("body").cloned().unwrap_or(Value::Null)),
        Some(s) if refused(s) || s == 503 => Err("invalid_grant"),
        _ => Err("temporarily_unavailable"),
    }
}

impl Vendor for Withings {
    fn info(&self) -> &'static Info {
        &INFO
    }

    /// `action=revoke`, signed with a nonce Withings gives first (the only revocation it offers):
    /// it ends the tokens and every notification subscription of the user.
    fn revoke_at_vendor<'a>(
        &'a self,
        http: &'a reqwest::Client,
        c: Connected<'a>,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if let Err(why) = revoke(http, &c).await {
                tracing::warn!(provider = "withings", why, "the vendor did not revoke the token");
            }
        })
    }
}

impl Pages for Withings {
    /// Sleep stages and intraday data: at most 24 hours a call.
    fn window_step(&self, collection: &str) -> Option<Duration> {
        use Collection::*;
        match Collection::parse(collection) {
            Some(Sleep | Intraday) => Some(Duration::days(1)),
            Some(Measures | Activity | Workouts | Nights) | None => None,
        }
    }

    /// Every call is `action=…` on its service, with Unix-second bounds, or local days (a day
    /// either side) for the day-keyed services; `offset` for the next page.
    fn page_url(
        &self,
        api_url: &str,
        collection: &str,
        (start, end): Window,
        next: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        use Collection::*;
        let parsed = Collection::parse(collection);
        // Its service, its fields, and whether it is asked for by local days. An unknown name
        // is asked for as intraday data, with itself as the action.
        let (path, fields, by_day) = match parsed {
            Some(Measures) => ("measure", None, false),
            Some(Activity) => ("v2/measure", Some(ACTIVITY_FIELDS), true),
            Some(Workouts) => ("v2/measure", Some(WORKOUT_FIELDS), true),
            Some(Sleep) => ("v2/sleep", Some(SLEEP_FIELDS), false),
            Some(Nights) => ("v2/sleep", Some(NIGHT_FIELDS), true),
            Some(Intraday) | None => ("v2/measure", Some(INTRADAY_FIELDS), false),
        };
        let mut url = url::Url::parse(&format!("{}/{path}", api_url.trim_end_matches('/')))?;
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("action", if parsed == Some(Sleep) { "get" } else { collection });
            if let Some(fields) = fields {
                q.append_pair("data_fields", fields);
            }
            if by_day {
                let day = |t: DateTime<Utc>| t.date_naive().format("%Y-%m-%d").to_string();
                q.append_pair("startdateymd", &day(start - Duration::days(1)));
                q.append_pair("enddateymd", &day(end + Duration::days(1)));
            } else {
                q.append_pair("startdate", &start.timestamp().to_string());
                q.append_pair("enddate", &end.timestamp().to_string());
            }
            if parsed == Some(Measures) {
                q.append_pair("category", "1");
            }
            if let Some(offset) = next {
                q.append_pair("offset", offset);
            }
        }
        Ok(url)
    }

    /// `more` (0/1 or a boolean) with `offset`.
    fn next_page(&self, page: &Value, _: Option<&str>, _: Window) -> Option<String> {
        let body = page.get("body")?;
        let more = body.get("more").is_some_and(|m| m.as_bool().unwrap_or(m.as_i64() == Some(1)));
        more.then(|| body.get("offset").map(crate::normal::id_text)).flatten()
    }

    fn page_error(&self, page: &Value) -> Option<PageError> {
        match page.get("status").and_then(Value::as_i64) {
            Some(0) => None,
            Some(601) => Some(PageError::RateLimited(60)),
            Some(s) if refused(s) => Some(PageError::TokenRefused),
            Some(s) => {
                let why = page.get("error").and_then(Value::as_str).unwrap_or("an error");
                Some(PageError::Failed(format!("answered status {s} ({why})")))
            }
            None => Some(PageError::Failed("answered without a status".into())),
        }
    }
}

impl Mapping for Withings {
    fn map_page(&self, collection: &str, page: &Value, out: &mut Normalised) {
        let body = page.get("body").unwrap_or(&Value::Null);
        let zone = body.get("timezone").and_then(Value::as_str);
        // The zone Withings names reads what it gives without one (sleep, intraday).
        if let Some(z) = zone {
            out.zone = Some(z.to_string());
        }
        // An unknown collection adds nothing (but the zone its page names).
        let Some(collection) = Collection::parse(collection) else { return };
        let kind = collection.name();
        let (rows, map): (Vec<&Value>, ZonedRow) = match collection {
            Collection::Measures => (list(body, "measuregrps"), measure_group),
            Collection::Activity => (list(body, "activities"), activity_day),
            Collection::Workouts => (list(body, "series"), workout),
            Collection::Nights => (list(body, "series"), night),
            Collection::Sleep => {
                let rows = list(body, "series");
                out.report.received(kind, rows.len() as u64);
                return sleep(&rows, out);
            }
            Collection::Intraday => return intraday(body.get("series"), out),
        };
        let reason = "unreadable Withings record";
        crate::normal::each(out, (kind, reason), rows.into_iter(), |r, out| map(r, zone, out));
    }
}

impl Account for Withings {
    /// A cheap call that needs the token: the user's devices.
    fn user_url(&self, api_url: &str) -> Option<String> {
        Some(format!("{}/v2/user?action=getdevice", api_url.trim_end_matches('/')))
    }

    /// `userid`, a number or a string depending on the source.
    fn token_user_id(&self, token: &Value) -> Option<String> {
        token.get("userid").map(crate::normal::id_text)
    }

    /// A subscription per category (`appli`): weight and body, temperature, blood pressure and
    /// SpO2, activity, sleep, and the user's own actions (46: an unlinked app). Withings checks
    /// the callback (HTTPS, a domain name, answering `HEAD`) before it takes one.
    fn on_connect(&self, c: &Connected<'_>) -> Vec<Call> {
        let Some(url) = crate::calls::at(&c.ends.api_url, "notify") else { return Vec::new() };
        ["1", "2", "4", "16", "44", "46"]
            .iter()
            .map(|appli| {
                let auth = CallAuth::Bearer(c.access_token.to_string());
                Call::new(reqwest::Method::POST, url.clone(), auth).form(&[
                    ("action", "subscribe"),
                    ("callbackurl", c.webhook_url),
                    ("appli", appli),
                ])
            })
            .collect()
    }
}

impl Notifications for Withings {
    /// Withings checks a callback with `HEAD` (answered here through `GET`) before it
    /// subscribes it: nothing to verify.
    fn webhook_challenge(&self, _: &Endpoints, _: &dyn Fn(&str) -> Option<String>) -> Handshake {
        Handshake::Status(200)
    }

    /// A form: `userid`, `appli`, then `startdate`/`enddate` or `date`, or `action`.
    fn webhook_body(&self, body: &[u8]) -> Option<Value> {
        let fields: serde_json::Map<String, Value> = url::form_urlencoded::parse(body)
            .map(|(k, v)| (k.into_owned(), Value::String(v.into_owned())))
            .collect();
        (!fields.is_empty()).then_some(Value::Object(fields))
    }

    /// Withings does not sign notifications: they come to the callback URL subscribed with our
    /// `?token=` (checked before this, [`crate::Proof::UrlToken`]), and must be notifications.
    fn webhook_verified(
        &self,
        _: &Endpoints,
        _: &dyn Fn(&str) -> Option<String>,
        body: &[u8],
    ) -> bool {
        self.webhook_body(body)
            .is_some_and(|v| v.get("userid").is_some() && v.get("appli").is_some())
    }

    fn webhook_notices(&self, body: &Value) -> Vec<Notice> {
        let text = |k: &str| body.get(k).and_then(Value::as_str);
        let Some(user) = text("userid").map(str::to_string) else { return Vec::new() };
        // `appli` 46: the user unlinked the app or deleted the account.
        if text("appli") == Some("46") {
            return match text("action") {
                Some("unlink" | "delete") => vec![Notice::Deregistered(user)],
                _ => Vec::new(),
            };
        }
        let instant =
            |k: &str| text(k)?.parse::<i64>().ok().and_then(|t| DateTime::from_timestamp(t, 0));
        let hour = Duration::hours(1);
        let window = |from: DateTime<Utc>, to: DateTime<Utc>| {
            Some((from.checked_sub_signed(hour)?, to.checked_add_signed(hour)?))
        };
        match (instant("startdate"), instant("enddate")) {
            (Some(from), Some(to)) if from <= to => {
                window(from, to).map(|w| Notice::Pull(user, w)).into_iter().collect()
            }
            _ => Vec::new(),
        }
    }
}

/// `{status, body: {nonce}}` and the signed revocation after it.
async fn revoke(http: &reqwest::Client, c: &Connected<'_>) -> Result<(), String> {
    let Some(user) = c.vendor_user else { return Err("the user's Withings id is unknown".into()) };
    let (id, secret) = (&c.ends.client_id, &c.ends.client_secret);
    let base =
        c.ends.token_url.strip_suffix("/oauth2").ok_or("WITHINGS_TOKEN_URL is not …/v2/oauth2")?;
    let timestamp = Utc::now().timestamp().to_string();
    let nonce_call = Call::new(
        reqwest::Method::POST,
        url::Url::parse(&format!("{base}/signature")).map_err(|e| e.to_string())?,
        CallAuth::None,
    )
    .form(&[
        ("action", "getnonce"),
        ("client_id", id),
        ("timestamp", &timestamp),
        ("signature", &sign(secret, &["getnonce", id, &timestamp])),
    ]);
    let answer = crate::calls::send(http, c.ends, nonce_call).await?;
    let nonce = answer
        .pointer("/body/nonce")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("no nonce: {answer}"))?;
    let revoke_call = Call::new(
        reqwest::Method::POST,
        url::Url::parse(&c.ends.token_url).map_err(|e| e.to_string())?,
        CallAuth::None,
    )
    .form(&[
        ("action", "revoke"),
        ("client_id", id),
        ("nonce", nonce),
        ("signature", &sign(secret, &["revoke", id, nonce])),
        ("userid", user),
    ]);
    let answer = crate::calls::send(http, c.ends, revoke_call).await?;
    match answer.get("status").and_then(Value::as_i64) {
        Some(0) => Ok(()),
        other => Err(format!("answered status {other:?}")),
    }
}

/// Withings' request signature: hex HMAC-SHA256 with the client secret over the values, in the
/// order of their keys, joined by commas.
fn sign(secret: &str, values: &[&str]) -> String {
    use hmac::Mac;
    let Ok(mut mac) = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()) else {
        return String::new();
    };
    mac.update(values.join(",").as_bytes());
    hex::encode(mac.finalize().into_bytes())
}

fn list<'a>(body: &'a Value, key: &str) -> Vec<&'a Value> {
    match body.get(key) {
        Some(Value::Array(rows)) => rows.iter().collect(),
        // Intraday and (per one page of the spec) sleep series come keyed by time.
        Some(Value::Object(map)) => map.values().collect(),
        _ => Vec::new(),
    }
}

fn at(seconds: Option<f64>) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp(seconds? as i64, 0)
}

/// A group of measures taken at once (a weighing, a blood-pressure reading); `attrib` 1 is a
/// measure the device could not tie to the user, and is left out.
fn measure_group(row: &Value, zone: Option<&str>, out: &mut Normalised) -> Option<()> {
    let group: MeasureGroup = record(row)?;
    if group.attrib == Some(1) {
        return Some(());
    }
    let when = at(group.date)?;
    let offset = zone.and_then(|z| zone_offset(z, when));
    for m in group.measures? {
        let (Some(kind), Some(value), Some(unit)) =
            (m.kind, m.value, m.unit.and_then(|u| i32::try_from(u).ok()))
        else {
            continue;
        };
        if let Some((_, series, factor)) = MEASURE_TYPES.iter().find(|(t, _, _)| *t == kind) {
            let real = value as f64 * 10f64.powi(unit) * factor;
            DEVICE.push(out, *series, (when, offset), real, false);
        }
    }
    Some(())
}

/// A day's totals, on its local day in its zone.
fn activity_day(row: &Value, zone: Option<&str>, out: &mut Normalised) -> Option<()> {
    let d: ActivityDay = record(row)?;
    let day = NaiveDate::parse_from_str(d.date.as_deref()?, "%Y-%m-%d").ok()?;
    if let Some(z) = d.timezone.as_deref().or(zone) {
        out.zone = Some(z.to_string());
    }
    let (when, offset) = local_noon(out, day)?;
    for (series, value) in [
        (STEPS, d.steps),
        (WALKED, d.distance),
        (FLOORS, d.elevation),
        (ENERGY, d.calories),
        (TOTAL_ENERGY, d.totalcalories),
    ] {
        if let Some(v) = value {
            DEVICE.push(out, series, (when, Some(offset)), v, true);
        }
    }
    Some(())
}

/// Withings' workout categories that are not the unified name.
fn kind(category: i64) -> &'static str {
    match category {
        1 | 306 => "walking",
        2 | 307 => "running",
        3 => "hiking",
        6 | 308 | 523 => "cycling",
        7 => "swimming",
        16 => "strength_training",
        28 => "yoga",
        187 => "rowing",
        498 => "trail_running",
        550 => "high_intensity_interval_training",
        _ => "other",
    }
}

fn workout(row: &Value, zone: Option<&str>, out: &mut Normalised) -> Option<()> {
    let row: Span<WorkoutData> = record(row)?;
    let (start, end) = (at(row.startdate)?, at(row.enddate)?);
    let zone = row.timezone.as_deref().or(zone);
    let offset = zone.and_then(|z| zone_offset(z, start));
    let data = row.data.unwrap_or_default();
    let category = row.category.unwrap_or(36);
    DEVICE.workout(out, (start, end), offset, |w| {
        w.external_id = row.id;
        w.figures.kind = schema::catalogue::workout_types::unified(Some(kind(category))).map(str::to_string);
        // The time moving: the pauses are left out.
        let pauses = data.pause_duration.unwrap_or(0.0) as i32;
        w.figures.duration_seconds = (w.figures.duration_seconds - pauses.max(0)).max(1);
        w.figures.calories_kcal = data.calories;
        w.figures.distance_meters = data.distance;
        w.figures.steps = data.steps.and_then(|s| i32::try_from(s as i64).ok());
        w.figures.avg_heart_rate_bpm = data.hr_average;
        w.figures.max_heart_rate_bpm = data.hr_max;
        w.figures.min_heart_rate_bpm = data.hr_min;
        w.statistics = json!({"category": category, "spo2_average": data.spo2_average,
                              "elevation_floors": data.elevation, "pause_duration_s": data.pause_duration});
    })
}

/// Withings' sleep states: 0 awake, 1 light, 2 deep, 3 REM, 4 manual and 5 unspecified
/// (asleep); 15, out of bed, is no sleep.
fn stage(state: i64) -> Option<Stage> {
    Some(match state {
        0 => Stage::Awake,
        1 => Stage::Light,
        2 => Stage::Deep,
        3 => Stage::Rem,
        4 | 5 => Stage::Sleeping,
        _ => return None,
    })
}

/// A night as Withings summarises it (Sleep v2 Getsummary): its documented `startdate` and
/// `enddate`, its zone (which then reads the stage segments and intraday data), its stage totals
/// (seconds; `asleepduration` alone for a night from an external source), and its time in bed.
/// Its stage segments join it when they come.
fn night(row: &Value, _: Option<&str>, out: &mut Normalised) -> Option<()> {
    let row: Span<NightData> = record(row)?;
    let (start, end) = (at(row.startdate)?, at(row.enddate)?);
    if end <= start {
        return None;
    }
    if let Some(z) = &row.timezone {
        out.zone = Some(z.clone());
    }
    let offset = row.timezone.as_deref().and_then(|z| zone_offset(z, end));
    let data = row.data.unwrap_or_default();
    let secs = crate::normal::seconds;
    let night = VendorNight {
        totals: StageTotals {
            light: secs(data.lightsleepduration),
            deep: secs(data.deepsleepduration),
            rem: secs(data.remsleepduration),
            awake: secs(data.wakeupduration),
            asleep: secs(data.total_sleep_time).or_else(|| secs(data.asleepduration)),
        },
        in_bed: secs(data.total_timeinbed),
        // Its segments come a day a call, over the pull's window, not the night's.
        partial_timeline: true,
        ..VendorNight::new(start, end)
    };
    let source = DEVICE.source(out);
    out.note_offset(end, offset);
    out.sleep.push(SleepSession {
        source,
        intervals: Vec::new(),
        zone_offset: offset,
        external_id: row.id,
        vendor: Some(night),
    });
    Some(())
}

/// The stage segments of one call (24 hours): those within a night Withings summarised join it
/// as its timeline; the others become sessions split where more than two hours pass without one
/// (a night cut by the call's bounds is joined when stored). And the night's heart rate,
/// breathing rate and HRV keyed by time.
fn sleep(rows: &[&Value], out: &mut Normalised) {
    let rows: Vec<Segment> = rows.iter().filter_map(|r| record(r)).collect();
    let mut segments: Vec<Interval> = rows
        .iter()
        .filter_map(|r| {
            let (start, end) = (at(r.startdate)?, at(r.enddate)?);
            let stage = stage(r.state?)?;
            (end > start).then_some(Interval { start, end, stage })
        })
        .collect();
    segments.sort();
    segments.retain(|seg| {
        let summarised = out
            .sleep
            .iter_mut()
            .find(|s| s.vendor.is_some_and(|n| n.start <= seg.start && seg.end <= n.end));
        match summarised {
            Some(night) => {
                // Calls overlap at their bounds: a segment joins once.
                if !night.intervals.contains(seg) {
                    night.intervals.push(*seg);
                }
                false
            }
            None => true,
        }
    });
    let mut sessions: Vec<Vec<Interval>> = Vec::new();
    for s in segments {
        match sessions.last_mut() {
            Some(last) if last.last().is_some_and(|l| s.start <= l.end + Duration::hours(2)) => {
                last.push(s)
            }
            _ => sessions.push(vec![s]),
        }
    }
    // Sleep pages name no zone: the user's, where the pull saw it, else none (the store then
    // takes the user's last known offset), never UTC by default.
    let known = out.zone.is_some() || out.latest_offset.offset().is_some();
    for intervals in sessions {
        let source = DEVICE.source(out);
        let offset = intervals.last().filter(|_| known).map(|i| offset_at(out, i.end));
        out.sleep.push(SleepSession {
            source,
            intervals,
            zone_offset: offset,
            external_id: None,
            vendor: None,
        });
    }
    for row in &rows {
        for (series, values) in [(HR, &row.hr), (BREATHING, &row.rr), (HRV_RMSSD, &row.rmssd)] {
            for (at, v) in values.iter().flatten() {
                keyed(out, series, at, *v);
            }
        }
    }
}

/// A value keyed by its time (`"<unix seconds>"`).
fn keyed(out: &mut Normalised, series: SeriesId, at: &str, value: Option<f64>) {
    let (Some(when), Some(v)) =
        (at.parse::<i64>().ok().and_then(|t| DateTime::from_timestamp(t, 0)), value)
    else {
        return;
    };
    let offset = offset_at(out, when);
    DEVICE.push(out, series, (when, Some(offset)), v, false);
}

/// Intraday data: `{"<unix seconds>": {heart_rate, spo2_auto, …}}`, each key with the
/// fields measured then.
fn intraday(series: Option<&Value>, out: &mut Normalised) {
    let minutes: Vec<(&String, Minute)> = series
        .and_then(Value::as_object)
        .map(|m| m.iter().filter_map(|(k, v)| Some((k, record(v)?))).collect())
        .unwrap_or_default();
    out.report.received(INTRADAY, minutes.len() as u64);
    for (at, minute) in &minutes {
        keyed(out, HR, at, minute.heart_rate);
    }
    for (at, minute) in &minutes {
        keyed(out, OXYGEN, at, minute.spo2_auto);
    }
}

#[cfg(test)]
mod tests;
