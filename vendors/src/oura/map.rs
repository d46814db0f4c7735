//! Oura's collections into the normalised batch the SDK path also writes: the same sources,
//! samples, sessions and workouts, so dedup, rollups, events and source priority treat a ring's
//! data as they treat a phone's. Units per `docs/vendors/oura.md` §2: heart rate bpm, HRV ms
//! (RMSSD), calories kcal, temperatures °C deviations, SpO2 percent, scores 1–100. Times carry
//! the user's offset except heart rate (UTC).

use chrono::{DateTime, Duration, FixedOffset, NaiveDate, Utc};
use ingest::{Interval, Normalised, SleepSession, Stage, StageTotals, VendorNight, Workout};
use schema::catalogue::series_types::{SeriesId, id};
use schema::workouts::{WorkoutFigures, WorkoutRow};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::normal::Device;

/// The collections wearhouse reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Collection {
    Sleep,
    Workout,
    DailyActivity,
    HeartRate,
    DailyReadiness,
    DailySpo2,
}

impl Collection {
    /// Its path under `/v2/usercollection/`.
    pub const fn path(self) -> &'static str {
        match self {
            Collection::Sleep => "sleep",
            Collection::Workout => "workout",
            Collection::DailyActivity => "daily_activity",
            Collection::HeartRate => "heartrate",
            Collection::DailyReadiness => "daily_readiness",
            Collection::DailySpo2 => "daily_spo2",
        }
    }
}

const HEART_RATE: SeriesId = id("heart_rate");
const HRV_RMSSD: SeriesId = id("heart_rate_variability_rmssd");
const RESPIRATORY_RATE: SeriesId = id("respiratory_rate");
const STEPS: SeriesId = id("steps");
const ENERGY: SeriesId = id("energy");
const TOTAL_ENERGY: SeriesId = id("total_energy");
const SPO2: SeriesId = id("oxygen_saturation");
const RECOVERY_SCORE: SeriesId = id("recovery_score");
const TEMPERATURE_DEVIATION: SeriesId = id("skin_temperature_deviation");
const TEMPERATURE_TREND: SeriesId = id("skin_temperature_trend_deviation");

/// One 5-minute hypnogram epoch.
const EPOCH: i64 = 300;

/// The ring, named as the iOS SDK names an Oura ring in HealthKit.
const RING: Device = Device {
    provider: "oura",
    model: "Oura Ring",
    manufacturer: "Oura",
    source: "Oura",
    device_type: "ring",
};

fn ring(out: &mut Normalised) -> usize {
    RING.source(out)
}

/// An instant with the offset it was written with, in minutes east of UTC.
fn instant(s: &str) -> Option<(DateTime<Utc>, i16)> {
    let t = DateTime::<FixedOffset>::parse_from_rfc3339(s).ok()?;
    let minutes = i16::try_from(t.offset().local_minus_utc() / 60).ok()?;
    Some((t.with_timezone(&Utc), minutes))
}

fn push(
    out: &mut Normalised,
    series: SeriesId,
    at: (DateTime<Utc>, Option<i16>),
    value: f64,
    total: bool,
) {
    RING.push(out, series, at, value, total);
}

/// Adds one page (`{"data": [...], "next_token": ...}`) of `collection` to `out`; a row that
/// does not read is dropped and reported, never the page.
pub fn page(collection: Collection, page: &Value, out: &mut Normalised) {
    let rows = page.get("data").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let map: crate::normal::MapRow = match collection {
        Collection::Sleep => sleep,
        Collection::Workout => workout,
        Collection::DailyActivity => daily_activity,
        Collection::HeartRate => heart_rate,
        Collection::DailyReadiness => readiness,
        Collection::DailySpo2 => spo2,
    };
    let kind = (collection.path(), "unreadable Oura record");
    crate::normal::each(out, kind, rows.iter(), map);
}

#[derive(Deserialize)]
struct Series {
    interval: f64,
    items: Vec<Option<f64>>,
    timestamp: String,
}

/// A regularly spaced series (`{interval, items, timestamp}`; null items are gaps).
fn spaced(out: &mut Normalised, series: SeriesId, s: &Series) -> Option<()> {
    let (start, offset) = instant(&s.timestamp)?;
    // A few hours of 5-minute samples; anything else is no series (never an overflow).
    if !(1.0..=86_400.0).contains(&s.interval) || s.items.len() > 100_000 {
        return None;
    }
    let step = Duration::milliseconds((s.interval * 1000.0) as i64);
    for (i, v) in s.items.iter().enumerate() {
        let at =
            step.checked_mul(i32::try_from(i).ok()?).and_then(|d| start.checked_add_signed(d))?;
        if let Some(v) = v {
            push(out, series, (at, Some(offset)), *v, false);
        }
    }
    Some(())
}

#[derive(Deserialize)]
struct SleepPeriod {
    id: String,
    #[serde(rename = "type")]
    kind: Option<String>,
    bedtime_start: String,
    bedtime_end: String,
    sleep_phase_5_min: Option<String>,
    sleep_phase_30_sec: Option<String>,
    heart_rate: Option<Series>,
    hrv: Option<Series>,
    average_breath: Option<f64>,
    /// Seconds, as documented.
    time_in_bed: Option<f64>,
    total_sleep_duration: Option<f64>,
    light_sleep_duration: Option<f64>,
    deep_sleep_duration: Option<f64>,
    rem_sleep_duration: Option<f64>,
    awake_time: Option<f64>,
}

fn stage(c: char) -> Option<Stage> {
    Some(match c {
        '1' => Stage::Deep,
        '2' => Stage::Light,
        '3' => Stage::Rem,
        '4' => Stage::Awake,
        _ => return None,
    })
}

/// The hypnogram's epochs of `epoch` seconds from `start`, equal neighbours joined, the last
/// cut at `end`.
fn hypnogram(phases: &str, epoch: i64, start: DateTime<Utc>, end: DateTime<Utc>) -> Vec<Interval> {
    let mut out: Vec<Interval> = Vec::new();
    for (i, c) in phases.chars().enumerate() {
        let Some(stage) = stage(c) else { continue };
        let Some(from) = start.checked_add_signed(Duration::seconds(epoch * i as i64)) else {
            break;
        };
        let to = (from + Duration::seconds(epoch)).min(end);
        if from >= to {
            break;
        }
        match out.last_mut() {
            Some(last) if last.stage == stage && last.end == from => last.end = to,
            _ => out.push(Interval { start: from, end: to, stage }),
        }
    }
    out
}

/// A sleep period between its documented `bedtime_start` and `bedtime_end`, with its stage
/// totals, time in bed and type (`long_sleep` a night, `sleep` and `late_nap` naps), and its
/// hypnogram as the timeline (30-second epochs where given, else 5-minute ones). The period's
/// breathing rate is stored inside it, on the day one wakes up.
fn sleep(row: &Value, out: &mut Normalised) -> Option<()> {
    let p = SleepPeriod::deserialize(row).ok()?;
    // `rest`: a detection the user rejected; `deleted`: deleted by the user.
    if matches!(p.kind.as_deref(), Some("rest" | "deleted")) {
        return Some(());
    }
    let (start, offset) = instant(&p.bedtime_start)?;
    let (end, _) = instant(&p.bedtime_end)?;
    if end <= start {
        return None;
    }
    let intervals = match (p.sleep_phase_30_sec.as_deref(), p.sleep_phase_5_min.as_deref()) {
        (Some(fine), _) if !fine.is_empty() => hypnogram(fine, 30, start, end),
        (_, Some(coarse)) => hypnogram(coarse, EPOCH, start, end),
        _ => Vec::new(),
    };
    let secs = crate::normal::seconds;
    let night = VendorNight {
        totals: StageTotals {
            light: secs(p.light_sleep_duration),
            deep: secs(p.deep_sleep_duration),
            rem: secs(p.rem_sleep_duration),
            awake: secs(p.awake_time),
            asleep: secs(p.total_sleep_duration),
        },
        in_bed: secs(p.time_in_bed),
        is_nap: match p.kind.as_deref() {
            Some("long_sleep") => Some(false),
            Some("sleep" | "late_nap") => Some(true),
            _ => None,
        },
        ..VendorNight::new(start, end)
    };
    let source = ring(out);
    out.note_offset(end, Some(offset));
    out.sleep.push(SleepSession {
        source,
        intervals,
        zone_offset: Some(offset),
        external_id: Some(p.id),
        vendor: Some(night),
    });
    // One series that does not read costs only itself.
    if let Some(hr) = &p.heart_rate
        && spaced(out, HEART_RATE, hr).is_none()
    {
        out.report.warn("an Oura sleep heart-rate series that does not read", None);
    }
    if let Some(hrv) = &p.hrv
        && spaced(out, HRV_RMSSD, hrv).is_none()
    {
        out.report.warn("an Oura sleep HRV series that does not read", None);
    }
    if let Some(breath) = p.average_breath {
        let at = crate::normal::night_instant(start, end, Some(offset));
        push(out, RESPIRATORY_RATE, (at, Some(offset)), breath, false);
    }
    Some(())
}

#[derive(Deserialize)]
struct OuraWorkout {
    id: String,
    activity: String,
    start_datetime: String,
    end_datetime: String,
    calories: Option<f64>,
    distance: Option<f64>,
    intensity: Option<String>,
    source: Option<String>,
    label: Option<String>,
}

fn workout(row: &Value, out: &mut Normalised) -> Option<()> {
    let w = OuraWorkout::deserialize(row).ok()?;
    let (start, offset) = instant(&w.start_datetime)?;
    let (end, _) = instant(&w.end_datetime)?;
    let seconds = i32::try_from((end - start).num_seconds()).ok().filter(|s| *s > 0)?;
    let source = ring(out);
    out.note_offset(end, Some(offset));
    let row = WorkoutRow {
        data_source_id: uuid::Uuid::nil(),
        external_id: Some(w.id),
        figures: WorkoutFigures {
            kind: schema::catalogue::workout_types::unified(Some(&w.activity)).map(str::to_string),
            start_time: start,
            end_time: end,
            zone_offset: Some(offset),
            duration_seconds: seconds,
            calories_kcal: w.calories,
            distance_meters: w.distance,
            steps: None,
            avg_heart_rate_bpm: None,
            max_heart_rate_bpm: None,
            min_heart_rate_bpm: None,
            avg_speed_m_per_s: None,
            max_speed_m_per_s: None,
            elevation_gain_meters: None,
            notes: w.label,
        },
        max_altitude_meters: None,
        min_altitude_meters: None,
        statistics: json!({"intensity": w.intensity, "oura_source": w.source, "activity": w.activity}),
        route: None,
    };
    out.workouts.push(Workout { source, row });
    Some(())
}

#[derive(Deserialize)]
struct DailyActivity {
    timestamp: String,
    steps: Option<f64>,
    active_calories: Option<f64>,
    total_calories: Option<f64>,
}

/// A day's totals, at the day's own timestamp (04:00 local), as daily totals: they replace the
/// sum of intraday samples of the same source, never add to it.
fn daily_activity(row: &Value, out: &mut Normalised) -> Option<()> {
    let d = DailyActivity::deserialize(row).ok()?;
    let (at, offset) = instant(&d.timestamp)?;
    for (series, value) in
        [(STEPS, d.steps), (ENERGY, d.active_calories), (TOTAL_ENERGY, d.total_calories)]
    {
        if let Some(v) = value {
            push(out, series, (at, Some(offset)), v, true);
        }
    }
    Some(())
}

#[derive(Deserialize)]
struct HeartRateRow {
    bpm: f64,
    timestamp: String,
}

fn heart_rate(row: &Value, out: &mut Normalised) -> Option<()> {
    let r = HeartRateRow::deserialize(row).ok()?;
    // UTC: read at the user's offset the pull has seen (their sleep and days carry it), so
    // the sample counts on the user's day; none is invented when the pull saw none.
    let (at, _) = instant(&r.timestamp)?;
    let offset = out.latest_offset.offset().map(|_| crate::normal::offset_at(out, at));
    push(out, HEART_RATE, (at, offset), r.bpm, false);
    Some(())
}

#[derive(Deserialize)]
struct Readiness {
    timestamp: String,
    score: Option<f64>,
    temperature_deviation: Option<f64>,
    temperature_trend_deviation: Option<f64>,
}

fn readiness(row: &Value, out: &mut Normalised) -> Option<()> {
    let r = Readiness::deserialize(row).ok()?;
    let (at, offset) = instant(&r.timestamp)?;
    let values = [
        (RECOVERY_SCORE, r.score),
        (TEMPERATURE_DEVIATION, r.temperature_deviation),
        (TEMPERATURE_TREND, r.temperature_trend_deviation),
    ];
    for (series, value) in values {
        if let Some(v) = value {
            push(out, series, (at, Some(offset)), v, false);
        }
    }
    Some(())
}

#[derive(Deserialize)]
struct Spo2 {
    day: NaiveDate,
    spo2_percentage: Option<Spo2Value>,
}

#[derive(Deserialize)]
struct Spo2Value {
    average: Option<f64>,
}

/// The night's average SpO2 (Oura gives no time, only the day): inside the longest night this
/// pull read that ends on that local day, at its offset, where the night's summary and the day's
/// find it; else at the day's local noon.
fn spo2(row: &Value, out: &mut Normalised) -> Option<()> {
    let s = Spo2::deserialize(row).ok()?;
    let Some(v) = s.spo2_percentage.and_then(|p| p.average) else { return Some(()) };
    let (at, offset) = crate::normal::in_night_or_noon(out, s.day)?;
    push(out, SPO2, (at, offset), v, false);
    Some(())
}

#[cfg(test)]
mod tests;
