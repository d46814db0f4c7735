//! A normalised batch: what a parser (SDK JSON, XML export) hands to the writer. Sources are
//! referred to by index until the writer has their database ids.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use schema::catalogue::series_types::{SeriesId, SeriesType};
use schema::data_sources::NewDataSource;
use schema::workouts::WorkoutRow;

use crate::report::Report;
pub(crate) use crate::sleep::SleepSession;

#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub source: usize,
    pub series_type_id: SeriesId,
    pub ts: DateTime<Utc>,
    pub value: f64,
    /// Minutes east of UTC, as the client sent it.
    pub zone_offset: Option<i16>,
    pub is_daily_total: Option<bool>,
}

impl Sample {
    /// An intraday sample: additive series mark it `is_daily_total = false`, levels leave it
    /// null (pre-aggregated daily totals come only from providers' daily endpoints).
    pub fn new(
        source: usize,
        series: &SeriesType,
        ts: DateTime<Utc>,
        value: f64,
        zone_offset: Option<i16>,
    ) -> Sample {
        Sample {
            source,
            series_type_id: series.id,
            ts,
            value,
            zone_offset,
            is_daily_total: series.is_additive().then_some(false),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Workout {
    pub source: usize,
    /// `data_source_id` is filled in by the writer.
    pub row: WorkoutRow,
}

/// The data sources of a batch, interned by identity (device model and source name).
#[derive(Debug, Clone, Default)]
pub struct Sources {
    pub list: Vec<NewDataSource>,
    index: HashMap<String, usize>,
    key: String,
}

impl Sources {
    /// The source at a batch index; an index past the list is a bug, said as an error.
    pub fn get(&self, i: usize) -> Result<&NewDataSource, schema::Error> {
        self.list
            .get(i)
            .ok_or(schema::Error::Inconsistent("a source index past the batch's sources"))
    }

    /// The index of the source with this identity; `make` describes it when first seen.
    pub fn intern(
        &mut self,
        device_model: Option<&str>,
        source: Option<&str>,
        make: impl FnOnce() -> NewDataSource,
    ) -> usize {
        self.key.clear();
        self.key.push_str(device_model.unwrap_or(""));
        self.key.push('|');
        self.key.push_str(source.unwrap_or(""));
        if let Some(&i) = self.index.get(self.key.as_str()) {
            return i;
        }
        let i = self.list.len();
        self.list.push(make());
        self.index.insert(self.key.clone(), i);
        i
    }
}

/// Everything a batch holds, normalised.
#[derive(Debug, Clone, Default)]
pub struct Normalised {
    pub provider: &'static str,
    pub sources: Sources,
    pub samples: Vec<Sample>,
    pub workouts: Vec<Workout>,
    pub sleep: Vec<SleepSession>,
    pub report: Report,
    /// The zone offset of the latest item that had one: the best guess for items without.
    pub latest_offset: LatestOffset,
    /// The user's time zone (an IANA name), when a vendor names it: local times are read in it.
    pub zone: Option<String>,
}

/// The zone offset of the latest item that had one. Of items at the same instant, the one
/// noted last wins. The one rule for SDK batches and export chunks alike.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LatestOffset(Option<(DateTime<Utc>, i16)>);

impl LatestOffset {
    pub fn note(&mut self, at: DateTime<Utc>, offset: Option<i16>) {
        if let Some(o) = offset
            && self.0.is_none_or(|(t, _)| at >= t)
        {
            self.0 = Some((at, o));
        }
    }

    /// Notes what another batch found.
    pub fn merge(&mut self, other: LatestOffset) {
        if let Some((at, o)) = other.0 {
            self.note(at, Some(o));
        }
    }

    pub fn offset(&self) -> Option<i16> {
        self.0.map(|(_, o)| o)
    }

    /// When and what: the latest item's time and offset.
    pub fn get(&self) -> Option<(DateTime<Utc>, i16)> {
        self.0
    }
}

impl Normalised {
    /// A batch of samples only: no workouts or sleep, whose writes need the user to themselves.
    pub(crate) fn only_samples(&self) -> bool {
        self.workouts.is_empty() && self.sleep.is_empty()
    }

    /// Moves another batch of the same provider into this one, re-indexing its sources.
    pub fn absorb(&mut self, other: Normalised) {
        let map: Vec<usize> = other
            .sources
            .list
            .into_iter()
            .map(|s| {
                let (model, source) = (s.device_model.clone(), s.source.clone());
                self.sources.intern(model.as_deref(), source.as_deref(), || s)
            })
            .collect();
        let at = |i: usize| map.get(i).copied().unwrap_or_default();
        self.samples.extend(other.samples.into_iter().map(|mut s| {
            s.source = at(s.source);
            s
        }));
        self.workouts.extend(other.workouts.into_iter().map(|mut w| {
            w.source = at(w.source);
            w
        }));
        self.sleep.extend(other.sleep.into_iter().map(|mut s| {
            s.source = at(s.source);
            s
        }));
        self.report.merge(other.report);
        self.latest_offset.merge(other.latest_offset);
    }

    pub fn note_offset(&mut self, at: DateTime<Utc>, offset: Option<i16>) {
        self.latest_offset.note(at, offset);
    }
}
