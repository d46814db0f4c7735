//! A raw chunk → a normalised batch: records in parallel slices on rayon's pool, then merged;
//! workouts, activity summaries and sleep sessions after.

use rayon::prelude::*;

use super::reader::RawChunk;
use super::records::{self, MenstrualItem, Partial};
use super::workouts;
use crate::batch::Normalised;

/// Records per parallel task.
const SLICE: usize = 4096;

/// A chunk of the export, normalised.
#[derive(Debug, Default)]
pub struct ExportBatch {
    pub normalised: Normalised,
    pub menstrual: Vec<MenstrualItem>,
    /// Bytes of the export read when the chunk closed.
    pub position: u64,
}

pub fn normalise(chunk: &RawChunk) -> ExportBatch {
    let partials: Vec<Partial> = (0..chunk.records.len())
        .collect::<Vec<_>>()
        .par_chunks(SLICE)
        .map(|indices| {
            let mut p = Partial::new();
            for &i in indices {
                let (tag, flags) = chunk.record(i);
                records::record(tag, flags, &mut p);
            }
            p
        })
        .collect();
    let mut out = Partial::new();
    out.n.samples.reserve(chunk.records.len());
    let mut stages = Vec::new();
    for p in partials {
        let map: Vec<usize> = p
            .n
            .sources
            .list
            .iter()
            .map(|s| {
                out.n.sources.intern(s.device_model.as_deref(), s.source.as_deref(), || s.clone())
            })
            .collect();
        stages.extend(p.stages.into_iter().map(|mut s| {
            s.source = map.get(s.source).copied().unwrap_or_default();
            s
        }));
        out.menstrual.extend(p.menstrual);
        out.n.absorb(p.n);
    }
    out.n.report.received("records", chunk.records.len() as u64);
    out.n.report.received("workouts", chunk.workouts.len() as u64);
    out.n.report.received("activity_summaries", chunk.summaries.len() as u64);
    for w in &chunk.workouts {
        workouts::workout(w, &mut out);
    }
    for s in &chunk.summaries {
        workouts::activity_summary(s, &mut out);
    }
    out.n.sleep.extend(crate::sleep::sessions(stages));
    ExportBatch { normalised: out.n, menstrual: out.menstrual, position: chunk.position }
}
