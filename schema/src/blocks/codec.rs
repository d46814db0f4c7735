//! One block's samples as bytes, losslessly: every field of every sample comes back as it went
//! in, in the same order.
//!
//! Layout (version 1), after a version byte and the sample count (LEB128):
//! - times, microseconds since the epoch, compressed by `pco` (its delta encoding makes a
//!   steady cadence cost next to nothing);
//! - values, `f64`, compressed by `pco` (bit-exact: `-0.0`, subnormals and any finite value);
//! - zone offsets as runs of (minutes or none, length);
//! - daily-total flags as runs of (none, false or true, length);
//! - batch lineage: the distinct batch ids, then runs of (index, length).
//!
//! Each compressed column is length-prefixed. A corrupt or truncated block is an error, never a
//! panic or an allocation its header alone asks for.

use chrono::{DateTime, Utc};
use uuid::Uuid;

/// One stored sample of a block (its user, series and source are the block's).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlockSample {
    pub ts: DateTime<Utc>,
    pub value: f64,
    pub zone_offset: Option<i16>,
    pub is_daily_total: Option<bool>,
    /// The batch (SDK batch, import or pull) that stored it; none for rows stored without one
    /// (kept in the block as the nil id, which no batch has).
    pub batch_id: Option<Uuid>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CodecError {
    #[error("a sample block ends early")]
    Truncated,
    #[error("a sample block of version {0}, which this build does not read")]
    Version(u8),
    #[error("a sample block's {0} does not read")]
    Corrupt(&'static str),
    #[error("a sample block's column could not be compressed: {0}")]
    Compress(String),
    #[error("a sample's time is out of range")]
    Time,
}

const VERSION: u8 = 1;
/// The most samples a block holds (a day of samples every 100 ms is 864,000): a header asking
/// for more is corrupt.
pub const MAX_SAMPLES: usize = 4_000_000;
/// Offsets' "none".
const NO_OFFSET: i16 = i16::MIN;

/// The block's bytes.
pub fn encode(samples: &[BlockSample]) -> Result<Vec<u8>, CodecError> {
    let mut out = vec![VERSION];
    put_varint(&mut out, samples.len() as u64);
    if samples.is_empty() {
        return Ok(out);
    }
    let times: Vec<i64> = samples.iter().map(|s| s.ts.timestamp_micros()).collect();
    let values: Vec<f64> = samples.iter().map(|s| s.value).collect();
    put_column(&mut out, &compress(&times)?);
    put_column(&mut out, &compress(&values)?);
    put_runs(&mut out, samples.iter().map(|s| s.zone_offset.unwrap_or(NO_OFFSET) as u16 as u64));
    put_runs(&mut out, samples.iter().map(|s| flag_code(s.is_daily_total)));
    let mut batches: Vec<Uuid> = Vec::new();
    let index: Vec<u64> = samples
        .iter()
        .map(|s| {
            let batch = s.batch_id.unwrap_or_else(Uuid::nil);
            match batches.iter().position(|b| *b == batch) {
                Some(i) => i as u64,
                None => {
                    batches.push(batch);
                    (batches.len() - 1) as u64
                }
            }
        })
        .collect();
    put_varint(&mut out, batches.len() as u64);
    for b in &batches {
        out.extend_from_slice(b.as_bytes());
    }
    put_runs(&mut out, index.into_iter());
    Ok(out)
}

/// The samples of a block's bytes.
pub fn decode(bytes: &[u8]) -> Result<Vec<BlockSample>, CodecError> {
    let mut r = Reader::new(bytes);
    let version = r.byte()?;
    if version != VERSION {
        return Err(CodecError::Version(version));
    }
    let n = usize::try_from(r.varint()?).map_err(|_| CodecError::Corrupt("count"))?;
    if n > MAX_SAMPLES {
        return Err(CodecError::Corrupt("count"));
    }
    if n == 0 {
        return Ok(Vec::new());
    }
    let times: Vec<i64> = decompress(r.column()?, n, "times")?;
    let values: Vec<f64> = decompress(r.column()?, n, "values")?;
    let offsets = r.runs(n, "offsets")?;
    let flags = r.runs(n, "flags")?;
    let k = usize::try_from(r.varint()?).map_err(|_| CodecError::Corrupt("batches"))?;
    if k == 0 || k > n {
        return Err(CodecError::Corrupt("batches"));
    }
    let mut batches = Vec::with_capacity(k);
    for _ in 0..k {
        let raw: [u8; 16] = r.take(16)?.try_into().map_err(|_| CodecError::Truncated)?;
        batches.push(Uuid::from_bytes(raw));
    }
    let index = r.runs(n, "batch runs")?;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let ts = DateTime::from_timestamp_micros(times[i]).ok_or(CodecError::Time)?;
        let offset = offsets[i] as u16 as i16;
        let batch = usize::try_from(index[i]).ok().and_then(|b| batches.get(b));
        out.push(BlockSample {
            ts,
            value: values[i],
            zone_offset: (offset != NO_OFFSET).then_some(offset),
            is_daily_total: flag(flags[i]).ok_or(CodecError::Corrupt("flags"))?,
            batch_id: Some(*batch.ok_or(CodecError::Corrupt("batch runs"))?)
                .filter(|b| !b.is_nil()),
        });
    }
    Ok(out)
}

fn flag_code(flag: Option<bool>) -> u64 {
    match flag {
        None => 0,
        Some(false) => 1,
        Some(true) => 2,
    }
}

fn flag(code: u64) -> Option<Option<bool>> {
    match code {
        0 => Some(None),
        1 => Some(Some(false)),
        2 => Some(Some(true)),
        _ => None,
    }
}

fn compress<T: pco::data_types::Number>(column: &[T]) -> Result<Vec<u8>, CodecError> {
    pco::standalone::simple_compress(column, &pco::ChunkConfig::default())
        .map_err(|e| CodecError::Compress(e.to_string()))
}

fn decompress<T: pco::data_types::Number>(
    bytes: &[u8],
    n: usize,
    what: &'static str,
) -> Result<Vec<T>, CodecError> {
    let column =
        pco::standalone::simple_decompress(bytes).map_err(|_| CodecError::Corrupt(what))?;
    if column.len() != n {
        return Err(CodecError::Corrupt(what));
    }
    Ok(column)
}

pub(super) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn put_column(out: &mut Vec<u8>, bytes: &[u8]) {
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Runs of equal values: how many runs, then (value, length) each.
fn put_runs(out: &mut Vec<u8>, values: impl Iterator<Item = u64>) {
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for v in values {
        match runs.last_mut() {
            Some((last, n)) if *last == v => *n += 1,
            _ => runs.push((v, 1)),
        }
    }
    put_varint(out, runs.len() as u64);
    for (v, n) in runs {
        put_varint(out, v);
        put_varint(out, n);
    }
}

pub(super) struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    pub(super) fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes, at: 0 }
    }

    pub(super) fn is_done(&self) -> bool {
        self.at >= self.bytes.len()
    }

    pub(super) fn f64(&mut self) -> Result<f64, CodecError> {
        let raw: [u8; 8] = self.take(8)?.try_into().map_err(|_| CodecError::Truncated)?;
        Ok(f64::from_le_bytes(raw))
    }

    pub(super) fn byte(&mut self) -> Result<u8, CodecError> {
        let b = *self.bytes.get(self.at).ok_or(CodecError::Truncated)?;
        self.at += 1;
        Ok(b)
    }

    pub(super) fn varint(&mut self) -> Result<u64, CodecError> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(CodecError::Corrupt("varint"))
    }

    pub(super) fn take(&mut self, n: usize) -> Result<&'a [u8], CodecError> {
        let end = self.at.checked_add(n).ok_or(CodecError::Truncated)?;
        let slice = self.bytes.get(self.at..end).ok_or(CodecError::Truncated)?;
        self.at = end;
        Ok(slice)
    }

    fn column(&mut self) -> Result<&'a [u8], CodecError> {
        let n = usize::try_from(self.varint()?).map_err(|_| CodecError::Truncated)?;
        self.take(n)
    }

    /// Runs expanding to exactly `n` values.
    fn runs(&mut self, n: usize, what: &'static str) -> Result<Vec<u64>, CodecError> {
        let count = self.varint()?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..count {
            let (v, len) = (self.varint()?, self.varint()?);
            let len = usize::try_from(len).map_err(|_| CodecError::Corrupt(what))?;
            if len == 0 || out.len() + len > n {
                return Err(CodecError::Corrupt(what));
            }
            out.resize(out.len() + len, v);
        }
        if out.len() != n {
            return Err(CodecError::Corrupt(what));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
