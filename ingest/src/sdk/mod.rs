//! The mobile SDK's sync payload: envelope, records, sleep stages and workouts, parsed with
//! simd-json (in place, borrowing strings from the body) and normalised item by item. A bad
//! item is counted with its reason and never fails the rest; a bad envelope fails the batch.

pub mod envelope;
mod fields;
mod records;
mod sleep_items;
mod sources;
mod workouts;

use simd_json::BorrowedValue;
use simd_json::prelude::*;

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

fn list<'v>(
    data: Option<&'v BorrowedValue<'v>>,
    key: &'static str,
) -> Result<&'v [BorrowedValue<'v>], EnvelopeError> {
    match data.and_then(|d| d.get(key)) {
        None => Ok(&[]),
        Some(v) if v.is_null() => Ok(&[]),
        Some(v) => v.as_array().map(Vec::as_slice).ok_or(EnvelopeError::List(key)),
    }
}

/// Parses and normalises one SDK sync body. The body is modified in place (simd-json).
pub fn normalise(body: &mut [u8]) -> Result<Normalised, EnvelopeError> {
    let doc = simd_json::to_borrowed_value(body).map_err(|e| EnvelopeError::Json(e.to_string()))?;
    if !doc.is_object() {
        return Err(EnvelopeError::NotAnObject);
    }
    let provider_name = doc.get("provider").and_then(|p| p.as_str());
    let (provider, origin) = provider_name
        .and_then(envelope::sdk_provider)
        .ok_or_else(|| EnvelopeError::Provider(envelope::unsupported_message(provider_name)))?;
    let data = match doc.get("data") {
        None => None,
        Some(d) if d.is_null() => None,
        Some(d) if d.is_object() => Some(d),
        Some(_) => return Err(EnvelopeError::Data),
    };
    let (records, sleep, workouts) =
        (list(data, "records")?, list(data, "sleep")?, list(data, "workouts")?);

    let mut out = Normalised { provider: provider.slug, ..Default::default() };
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
    sleep_items::sessions(stages, &mut out);
    Ok(out)
}

#[cfg(test)]
mod tests;
