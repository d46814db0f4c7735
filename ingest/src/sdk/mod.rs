//! The mobile SDK's sync payload: envelope, records, sleep stages and workouts, parsed with
//! simd-json's serde deserializer (in place, strings borrowed from the body, no document tree)
//! into lenient wire types, then normalised item by item. A bad item is counted with its reason
//! and never fails the rest; a bad envelope fails the batch.

pub mod envelope;
mod fields;
mod padded;
mod records;
mod scratch;
mod sleep_items;
mod sources;
mod wire;
mod workouts;

use serde::Deserialize as _;
use wire::{Envelope, List, Obj};

pub use padded::{PADDING, PaddedJson};

use crate::batch::Normalised;

/// Why a whole batch could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvelopeError {
    #[error("the body is not valid JSON: {0}")]
    Json(String),
    #[error("the body is not a JSON object")]
    NotAnObject,
    #[error("{0}")]
    Provider(String),
    #[error("`data` must be an object")]
    Data,
    #[error("`data.{0}` must be an array")]
    List(&'static str),
}

fn check<T>(list: &List<T>, key: &'static str) -> Result<(), EnvelopeError> {
    match list {
        List::Other => Err(EnvelopeError::List(key)),
        List::Items(_) => Ok(()),
    }
}

/// Parses and normalises one SDK sync body (a padded copy of it: see [`normalise_padded`]).
pub fn normalise(body: &[u8]) -> Result<Normalised, EnvelopeError> {
    normalise_padded(&mut PaddedJson::copy_of(body))
}

/// Parses and normalises one SDK sync body where it lies (simd-json unescapes its strings in
/// place).
pub fn normalise_padded(body: &mut PaddedJson) -> Result<Normalised, EnvelopeError> {
    let json_error = |e: simd_json::Error| EnvelopeError::Json(e.to_string());
    // serde would also read a struct from an array: only an object is an envelope.
    if body.json().iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(match scratch::with_tape(body, |tape| ((), tape)) {
            Ok(()) => EnvelopeError::NotAnObject,
            Err(e) => json_error(e),
        });
    }
    let doc = scratch::with_tape(body, |tape| {
        let mut de = simd_json::Deserializer::from_tape(tape);
        let doc = Envelope::deserialize(&mut de);
        (doc, de.into_tape())
    })
    .and_then(|doc| doc)
    .map_err(json_error)?;
    let provider_name = doc.provider.str();
    let (provider, origin) = provider_name
        .and_then(envelope::sdk_provider)
        .ok_or_else(|| EnvelopeError::Provider(envelope::unsupported_message(provider_name)))?;
    let data = match &doc.data {
        Obj::Value(d) => Some(d),
        Obj::Null => None,
        Obj::Other(_) => return Err(EnvelopeError::Data),
    };
    let mut out = Normalised { provider: provider.slug, ..Default::default() };
    let Some(data) = data else { return Ok(out) };
    check(&data.records, "records")?;
    check(&data.sleep, "sleep")?;
    check(&data.workouts, "workouts")?;
    let (records, sleep, workouts) =
        (data.records.items(), data.sleep.items(), data.workouts.items());

    out.report.received("records", records.len() as u64);
    out.report.received("sleep", sleep.len() as u64);
    out.report.received("workouts", workouts.len() as u64);
    out.samples.reserve(records.len());
    for r in records {
        records::record(r, origin, &mut out);
    }
    for w in workouts {
        workouts::workout(w, origin, &mut out);
    }
    let mut stages = Vec::with_capacity(sleep.len());
    for s in sleep {
        sleep_items::item(s, &mut out, &mut stages);
    }
    out.sleep.extend(crate::sleep::sessions(stages));
    Ok(out)
}

#[cfg(test)]
mod tests;
