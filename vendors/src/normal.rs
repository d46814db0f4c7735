//! What every vendor's mapping does the same way: the vendor's device as the batch's data
//! source, samples pushed with their offset noted, and a page's records read as typed rows as
//! leniently as `.get` on a `Value` reads them (a field of another type is `None`, not a record
//! lost).

use chrono::{DateTime, Duration, NaiveDate, NaiveDateTime, NaiveTime, Utc};
use ingest::{Interval, Normalised, Sample, VendorNight, Workout};
use schema::catalogue::series_types::{SeriesId, by_id};
use schema::data_sources::NewDataSource;
use schema::workouts::{WorkoutFigures, WorkoutRow};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// How a vendor's device is named as a data source (as the SDKs name it, where they do, so
/// the priority rule ranks a ring as a ring and a strap as a strap).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Device {
    pub provider: &'static str,
    pub model: &'static str,
    pub manufacturer: &'static str,
    pub source: &'static str,
    pub device_type: &'static str,
}

impl Device {
    /// The device's index among the batch's sources (one per user).
    pub(crate) fn source(&self, out: &mut Normalised) -> usize {
        out.sources.intern(Some(self.model), Some(self.source), || NewDataSource {
            provider: self.provider.into(),
            user_connection_id: None,
            device_model: Some(self.model.into()),
            device_manufacturer: Some(self.manufacturer.into()),
            software_version: None,
            source: Some(self.source.into()),
            device_type: Some(self.device_type.into()),
            original_source_name: Some(self.source.into()),
        })
    }

    /// A sample of `series` from the device; a daily total when `total`.
    pub(crate) fn push(
        &self,
        out: &mut Normalised,
        series: SeriesId,
        (at, offset): (DateTime<Utc>, Option<i16>),
        value: f64,
        total: bool,
    ) {
        let Some(t) = by_id(series) else { return };
        let source = self.source(out);
        let mut sample = Sample::new(source, t, at, value, offset);
        if total {
            sample.is_daily_total = Some(true);
        }
        out.note_offset(at, offset);
        out.samples.push(sample);
    }
}

impl Device {
    /// A workout of the device from `start` to `end` (at least a second), the rest of its row
    /// filled by `fill`.
    pub(crate) fn workout(
        &self,
        out: &mut Normalised,
        (start, end): (DateTime<Utc>, DateTime<Utc>),
        offset: Option<i16>,
        fill: impl FnOnce(&mut WorkoutRow),
    ) -> Option<()> {
        let seconds = i32::try_from((end - start).num_seconds()).ok().filter(|s| *s > 0)?;
        let source = self.source(out);
        out.note_offset(end, offset);
        let mut row = WorkoutRow {
            figures: WorkoutFigures {
                start_time: start,
                end_time: end,
                zone_offset: offset,
                duration_seconds: seconds,
                ..WorkoutFigures::default()
            },
            ..WorkoutRow::default()
        };
        fill(&mut row);
        out.workouts.push(Workout { source, row });
        Some(())
    }
}

/// A vendor's name of a sport as the unified workout type: from the vendor's own table of
/// names that are not the unified one, else the unified name the catalogue reads in it.
pub(crate) fn workout_kind(table: &[(&str, &'static str)], name: &str) -> Option<&'static str> {
    match table.iter().find(|(n, _)| *n == name) {
        Some((_, kind)) => Some(kind),
        None => schema::catalogue::workout_types::unified(Some(name)),
    }
}

/// Minutes east of UTC from seconds, when in range.
pub(crate) fn minutes(seconds: i64) -> Option<i16> {
    i16::try_from(seconds / 60).ok().filter(|m| m.abs() <= 18 * 60)
}

/// Minutes east of UTC, when in range (Polar and Suunto give offsets in minutes).
pub(crate) fn offset_minutes(m: i64) -> Option<i16> {
    i16::try_from(m).ok().filter(|m| m.abs() <= 18 * 60)
}

/// The instant of a wall-clock time at an offset (minutes east of UTC).
pub(crate) fn at_local(local: NaiveDateTime, offset: i16) -> Option<DateTime<Utc>> {
    Some(local.checked_sub_signed(Duration::minutes(i64::from(offset)))?.and_utc())
}

fn noon_of(day: NaiveDate) -> NaiveDateTime {
    day.and_time(NaiveTime::from_hms_opt(12, 0, 0).unwrap_or_default())
}

/// A day-level value's instant: local noon of its day, so it counts on the day the vendor
/// named whatever the exact offset.
pub(crate) fn noon(day: NaiveDate, offset: i16) -> Option<DateTime<Utc>> {
    at_local(noon_of(day), offset)
}

/// Where a figure of a whole night (its breathing rate, HRV, SpO2, the morning's recovery) is
/// stored: inside the night, where the night's summary reads its means (`[start, end)`), and
/// on the local day one wakes up, where the day's summaries count it. The night's middle, or
/// the start of the wake-up day when the middle falls on the day before (an evening's sleep).
pub(crate) fn night_instant(
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    offset: Option<i16>,
) -> DateTime<Utc> {
    let last = end - Duration::seconds(1);
    if last <= start {
        return start;
    }
    let offset_minutes = Duration::minutes(i64::from(offset.unwrap_or(0)));
    let day_starts = wake_day(end, offset).and_time(NaiveTime::MIN).and_utc() - offset_minutes;
    (start + (end - start) / 2).max(day_starts).min(last)
}

/// The local day one wakes up from a sleep that ends at `end` (its last second's day, so a
/// night that ends at midnight belongs to the day before), at `offset` (none: UTC).
pub(crate) fn wake_day(end: DateTime<Utc>, offset: Option<i16>) -> NaiveDate {
    let offset = Duration::minutes(i64::from(offset.unwrap_or(0)));
    (end - Duration::seconds(1) + offset).date_naive()
}

/// Where a figure a vendor gives for a day, meaning that day's night (Oura's SpO2, Fitbit's
/// HRV), belongs: inside the longest night (naps aside) of this batch that ends on the local
/// `day`, with its offset ([`night_instant`]). `None` when the batch holds no such night.
pub(crate) fn in_night_of(
    out: &Normalised,
    day: NaiveDate,
) -> Option<(DateTime<Utc>, Option<i16>)> {
    out.sleep
        .iter()
        .filter_map(|s| Some((s.vendor?, s.zone_offset)))
        .filter(|(n, zone)| n.is_nap != Some(true) && wake_day(n.end, *zone) == day)
        .max_by_key(|(n, _)| n.end - n.start)
        .map(|(n, zone)| (night_instant(n.start, n.end, zone), zone))
}

/// [`in_night_of`], else the local noon of `day`: where a figure of a day's night goes when the
/// batch may not hold the night.
pub(crate) fn in_night_or_noon(
    out: &Normalised,
    day: NaiveDate,
) -> Option<(DateTime<Utc>, Option<i16>)> {
    in_night_of(out, day).or_else(|| local_noon(out, day).map(|(at, offset)| (at, Some(offset))))
}

/// The vendor's night of this batch stored under `id`, with its offset.
pub(crate) fn night_by_id(out: &Normalised, id: &str) -> Option<(VendorNight, Option<i16>)> {
    let session = out.sleep.iter().find(|s| s.external_id.as_deref() == Some(id))?;
    Some((session.vendor?, session.zone_offset))
}

/// The offset to read wall-clock times of a vendor that gives none with: the latest one the
/// batch knows (collections that carry offsets are read first), else UTC.
pub(crate) fn guessed_offset(out: &Normalised) -> i16 {
    out.latest_offset.offset().unwrap_or(0)
}

fn zone(out: &Normalised) -> Option<chrono_tz::Tz> {
    out.zone.as_deref()?.parse().ok()
}

/// The instant of the user's local wall-clock time and its offset: in the user's zone when the
/// batch knows it (daylight saving included), else at the latest offset seen.
pub(crate) fn local_instant(
    out: &Normalised,
    local: NaiveDateTime,
) -> Option<(DateTime<Utc>, i16)> {
    use chrono::{Offset, TimeZone};
    if let Some(tz) = zone(out)
        && let Some(t) = tz.from_local_datetime(&local).earliest()
    {
        let offset = minutes(i64::from(t.offset().fix().local_minus_utc()))?;
        return Some((t.with_timezone(&Utc), offset));
    }
    let offset = guessed_offset(out);
    Some((at_local(local, offset)?, offset))
}

/// Local noon of the user's `day`, and its offset.
pub(crate) fn local_noon(out: &Normalised, day: NaiveDate) -> Option<(DateTime<Utc>, i16)> {
    local_instant(out, noon_of(day))
}

/// The user's offset at an instant: their zone's when the batch knows it, else the latest seen.
pub(crate) fn offset_at(out: &Normalised, at: DateTime<Utc>) -> i16 {
    zone(out)
        .and_then(|tz| {
            use chrono::Offset;
            minutes(i64::from(at.with_timezone(&tz).offset().fix().local_minus_utc()))
        })
        .unwrap_or_else(|| guessed_offset(out))
}

/// Minutes east of UTC of an IANA zone at an instant.
pub(crate) fn zone_offset(zone: &str, at: DateTime<Utc>) -> Option<i16> {
    use chrono::Offset;
    let tz: chrono_tz::Tz = zone.parse().ok()?;
    minutes(i64::from(at.with_timezone(&tz).offset().fix().local_minus_utc()))
}

/// An ISO 8601 duration of days, hours, minutes and seconds (`PT2H44M`, `PT210.026S`).
pub(crate) fn iso_duration(s: &str) -> Option<Duration> {
    let rest = s.strip_prefix('P')?;
    let (days, time) = match rest.split_once('T') {
        Some((d, t)) => (d, t),
        None => (rest, ""),
    };
    let mut millis: i64 = 0;
    let mut add = |part: &str, unit: char, ms: f64| -> Option<()> {
        if part.is_empty() {
            return Some(());
        }
        let mut number = String::new();
        let mut seen = false;
        for c in part.chars() {
            if c.is_ascii_digit() || c == '.' {
                number.push(c);
            } else if c == unit && !seen {
                seen = true;
            } else {
                return None;
            }
        }
        let v: f64 = number.parse().ok()?;
        millis = millis.checked_add((v * ms) as i64)?;
        Some(())
    };
    let split = |s: &str, units: &[char]| -> Option<Vec<(String, char)>> {
        let mut parts = Vec::new();
        let mut cur = String::new();
        for c in s.chars() {
            cur.push(c);
            if units.contains(&c) {
                parts.push((std::mem::take(&mut cur), c));
            }
        }
        cur.is_empty().then_some(parts)
    };
    for (part, unit) in split(days, &['D'])? {
        add(&part, unit, 86_400_000.0)?;
    }
    for (part, unit) in split(time, &['H', 'M', 'S'])? {
        let ms = match unit {
            'H' => 3_600_000.0,
            'M' => 60_000.0,
            _ => 1000.0,
        };
        add(&part, unit, ms)?;
    }
    Some(Duration::milliseconds(millis))
}

/// `base` with the intervals of `over` laid on top: where they overlap, `over` wins (Fitbit's
/// short wake periods cut into the stages they interrupt).
pub(crate) fn overlay(base: Vec<Interval>, over: &[Interval]) -> Vec<Interval> {
    let mut out = Vec::new();
    for b in base {
        let mut pieces = vec![b];
        for o in over {
            pieces = pieces
                .into_iter()
                .flat_map(|p| {
                    let mut left = Vec::new();
                    if o.end <= p.start || o.start >= p.end {
                        left.push(p);
                        return left;
                    }
                    if p.start < o.start {
                        left.push(Interval { end: o.start, ..p });
                    }
                    if o.end < p.end {
                        left.push(Interval { start: o.end, ..p });
                    }
                    left
                })
                .collect();
        }
        out.extend(pieces);
    }
    out.extend_from_slice(over);
    out.sort();
    out
}

/// A duration a vendor gives in seconds, as whole seconds; a negative one is not one.
pub(crate) fn seconds(v: Option<f64>) -> Option<i64> {
    v.filter(|s| *s >= 0.0).map(|s| s as i64)
}

/// A number the vendor may send as a JSON number or a string (Fitbit's `"1234"`).
pub(crate) fn number(v: &Value) -> Option<f64> {
    v.as_f64().or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
}

/// The rows of a page: its array, or the array under `key`.
pub(crate) fn rows<'a>(page: &'a Value, key: &str) -> &'a [Value] {
    page.as_array()
        .or_else(|| page.get(key).and_then(Value::as_array))
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// Adds one record of a page to the batch; `None` when it does not read.
pub(crate) type MapRow = fn(&Value, &mut Normalised) -> Option<()>;

/// Maps every row of a page of `kind` with `map`, counting them as received; a row that does
/// not read is dropped and reported (`reason`), never the page.
pub(crate) fn each<'a>(
    out: &mut Normalised,
    (kind, reason): (&'static str, &'static str),
    rows: impl ExactSizeIterator<Item = &'a Value>,
    mut map: impl FnMut(&Value, &mut Normalised) -> Option<()>,
) {
    out.report.received(kind, rows.len() as u64);
    for row in rows {
        if map(row, out).is_none() {
            unreadable(out, reason, row);
        }
    }
}

/// Drops a record that does not read, and reports it with the start of it.
pub(crate) fn unreadable(out: &mut Normalised, reason: &'static str, row: &Value) {
    out.report.drop(reason, Some(row.to_string().chars().take(200).collect()));
}

/// An id the vendor sends as a number or a string, as a string.
pub(crate) fn id_text(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_string)
}

/// A record of a page read as `T` the way `.get` reads a `Value`: an object by its fields, and
/// anything else as an object without any (so a record whose fields are all optional reads as
/// empty, never as a struct laid out by position from an array). `None` when it does not read.
pub(crate) fn record<T: DeserializeOwned>(v: &Value) -> Option<T> {
    match v {
        Value::Object(_) => T::deserialize(v).ok(),
        _ => T::deserialize(&Value::Object(serde_json::Map::new())).ok(),
    }
}

/// A field read as [`number`] reads it: a JSON number or a numeric string, else `None` (never
/// an error that would cost the record). With `#[serde(default, deserialize_with = ...)]`.
pub(crate) fn lenient_number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Ok(number(&Value::deserialize(d)?))
}

/// A field of any type `T`, `None` when it is something else (`.get(..).and_then(as_str)`).
pub(crate) fn lenient<'de, D: Deserializer<'de>, T: DeserializeOwned>(
    d: D,
) -> Result<Option<T>, D::Error> {
    Ok(serde_json::from_value(Value::deserialize(d)?).ok())
}

/// A field holding a record, read as [`record`] reads one (`.pointer("/field/inner")`).
pub(crate) fn lenient_record<'de, D: Deserializer<'de>, T: DeserializeOwned>(
    d: D,
) -> Result<Option<T>, D::Error> {
    Ok(record(&Value::deserialize(d)?))
}

/// A field holding an array of records: those that read, each as [`record`] reads it; `None`
/// when it is not an array (`.get(..).and_then(as_array)`).
pub(crate) fn lenient_records<'de, D: Deserializer<'de>, T: DeserializeOwned>(
    d: D,
) -> Result<Option<Vec<T>>, D::Error> {
    let v = Value::deserialize(d)?;
    Ok(v.as_array().map(|a| a.iter().filter_map(record).collect()))
}

/// A field holding `{"<key>": number}` (values keyed by time): its entries in its order, each
/// value as [`number`] reads it; `None` when it is not an object (`.get(..).and_then(as_object)`).
pub(crate) fn lenient_keyed<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Keyed>, D::Error> {
    let v = Value::deserialize(d)?;
    Ok(v.as_object().map(|m| m.iter().map(|(k, v)| (k.clone(), number(v))).collect()))
}

/// The entries of `{"<key>": number}`, as [`lenient_keyed`] reads them.
pub(crate) type Keyed = Vec<(String, Option<f64>)>;

/// An id field read as [`id_text`] reads one: any value present, as text.
pub(crate) fn lenient_id<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(Some(id_text(&Value::deserialize(d)?)))
}

/// A vendor's collections as an enum `Collection` of `Variant = "name"` (the names are stored
/// with pages and cursors: they never change), with `name`, `parse`, `ALL` and the names in
/// order as `COLLECTIONS` (its `Info.collections`).
macro_rules! collections {
    ($($variant:ident = $name:expr),+ $(,)?) => {
        /// The collections a pull reads, in order.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        enum Collection {
            $($variant),+
        }

        impl Collection {
            const ALL: &'static [Collection] = &[$(Collection::$variant),+];

            /// The name it is listed and stored under.
            const fn name(self) -> &'static str {
                match self {
                    $(Collection::$variant => $name),+
                }
            }

            /// The collection named `name`, if it is one.
            fn parse(name: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|c| c.name() == name)
            }
        }

        static COLLECTIONS: &[&str] = &[$($name),+];
    };
}
pub(crate) use collections;

/// The test helper both mappings' tests use: the samples of one series.
#[cfg(test)]
pub(crate) fn values(out: &Normalised, series: SeriesId) -> Vec<(DateTime<Utc>, f64, Option<i16>)> {
    out.samples
        .iter()
        .filter(|s| s.series_type_id == series)
        .map(|s| (s.ts, s.value, s.zone_offset))
        .collect()
}

/// A window for tests of paging that does not depend on it.
#[cfg(test)]
pub(crate) fn any_window() -> crate::Window {
    (at("2026-03-09T00:00:00Z"), at("2026-03-10T00:00:00Z"))
}

/// An RFC 3339 instant, in UTC.
#[cfg(test)]
pub(crate) fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).map(|t| t.with_timezone(&Utc)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nights_figures_sit_inside_it_on_the_wake_up_day() {
        // 23:00-07:00 at +01:00: its middle, 03:00 local.
        let night = (at("2026-03-09T22:00:00Z"), at("2026-03-10T06:00:00Z"));
        assert_eq!(night_instant(night.0, night.1, Some(60)), at("2026-03-10T02:00:00Z"));
        // 19:00-03:00 at -05:00: the middle (23:00) is the evening before; the wake-up day
        // starts at 00:00 local.
        let early = (at("2026-03-10T00:00:00Z"), at("2026-03-10T08:00:00Z"));
        assert_eq!(night_instant(early.0, early.1, Some(-300)), at("2026-03-10T05:00:00Z"));
        // A nap: its middle.
        let nap = (at("2026-03-10T12:00:00Z"), at("2026-03-10T12:40:00Z"));
        assert_eq!(night_instant(nap.0, nap.1, Some(0)), at("2026-03-10T12:20:00Z"));
        // Always inside [start, end).
        for (s, e) in [night, early, nap] {
            for offset in [-720, -300, 0, 60, 540, 840] {
                let t = night_instant(s, e, Some(offset));
                assert!(s <= t && t < e, "{t} outside {s}..{e} at {offset}");
            }
        }
    }

    #[test]
    fn iso_durations_read_as_polar_writes_them() {
        assert_eq!(iso_duration("PT2H44M"), Some(Duration::minutes(164)));
        assert_eq!(iso_duration("PT210.026S"), Some(Duration::milliseconds(210_026)));
        assert_eq!(iso_duration("PT3H11M"), Some(Duration::minutes(191)));
        assert_eq!(iso_duration("P1DT1S"), Some(Duration::seconds(86_401)));
        assert_eq!(iso_duration("PT4S"), Some(Duration::seconds(4)));
        assert_eq!(iso_duration("2H"), None);
        assert_eq!(iso_duration("PT2X"), None);
    }

    #[test]
    fn an_overlay_cuts_into_what_it_covers() {
        use ingest::Stage;
        let t = |m: i64| at("2026-03-10T00:00:00Z") + Duration::minutes(m);
        let base = vec![Interval { start: t(0), end: t(60), stage: Stage::Light }];
        let over = [Interval { start: t(20), end: t(23), stage: Stage::Awake }];
        let got: Vec<(i64, i64, Stage)> = overlay(base, &over)
            .iter()
            .map(|i| ((i.start - t(0)).num_minutes(), (i.end - t(0)).num_minutes(), i.stage))
            .collect();
        assert_eq!(got, [(0, 20, Stage::Light), (20, 23, Stage::Awake), (23, 60, Stage::Light)]);
    }

    #[test]
    fn zones_give_the_offset_of_the_instant() {
        assert_eq!(zone_offset("Europe/Paris", at("2026-01-10T12:00:00Z")), Some(60));
        assert_eq!(zone_offset("Europe/Paris", at("2026-07-10T12:00:00Z")), Some(120));
        assert_eq!(zone_offset("Nowhere/Else", at("2026-07-10T12:00:00Z")), None);
        assert_eq!(
            noon(NaiveDate::from_ymd_opt(2026, 3, 10).unwrap_or_default(), 120),
            Some(at("2026-03-10T10:00:00Z"))
        );
        assert_eq!(noon(NaiveDate::MAX, -840), None, "no overflow");
        // Read in the user's zone: each side of a change of the clocks at its own offset.
        let mut out = Normalised { zone: Some("Europe/Paris".into()), ..Normalised::default() };
        let day = |d: u32| NaiveDate::from_ymd_opt(2026, 3, d).unwrap_or_default();
        assert_eq!(local_noon(&out, day(28)), Some((at("2026-03-28T11:00:00Z"), 60)));
        assert_eq!(local_noon(&out, day(30)), Some((at("2026-03-30T10:00:00Z"), 120)));
        out.zone = None;
        out.note_offset(at("2026-03-01T00:00:00Z"), Some(-300));
        assert_eq!(local_noon(&out, day(30)), Some((at("2026-03-30T17:00:00Z"), -300)));
    }
}
