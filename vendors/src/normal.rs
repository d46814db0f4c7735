//! What every vendor's mapping does the same way: the vendor's device as the batch's data
//! source, and samples pushed with their offset noted.

use chrono::{DateTime, Utc};
use ingest::{Normalised, Sample};
use schema::catalogue::series_types::by_id;
use schema::data_sources::NewDataSource;

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
        series: i16,
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

/// Drops a record that does not read, and reports it with the start of it.
pub(crate) fn unreadable(out: &mut Normalised, reason: &'static str, row: &serde_json::Value) {
    out.report.drop(reason, Some(row.to_string().chars().take(200).collect()));
}

/// An id the vendor sends as a number or a string, as a string.
pub(crate) fn id_text(v: &serde_json::Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_string)
}

/// The test helper both mappings' tests use: the samples of one series.
#[cfg(test)]
pub(crate) fn values(out: &Normalised, series: i16) -> Vec<(DateTime<Utc>, f64, Option<i16>)> {
    out.samples
        .iter()
        .filter(|s| s.series_type_id == series)
        .map(|s| (s.ts, s.value, s.zone_offset))
        .collect()
}

/// An RFC 3339 instant, in UTC.
#[cfg(test)]
pub(crate) fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).map(|t| t.with_timezone(&Utc)).unwrap_or_default()
}
