//! One block's samples as bytes, losslessly: every field of every sample comes back as it went
//! in, in the same order.
//!
//! Layout (version 2), after a version byte and the sample count (LEB128):
//! - times, microseconds since the epoch, and values, `f64`: each column as the smallest of
//!   ([`Column`]) `pco` (its delta encoding makes a steady cadence cost next to nothing; a few
//!   dozen bytes of header), or plain: times as varint deltas in the coarsest unit that divides
//!   them all, whole values as varint deltas, other values as their 8 bytes. A sparse series'
//!   day of a handful of samples costs a few bytes a sample plain, where pco's headers alone
//!   cost tens. Bit-exact: `-0.0`, subnormals and any finite value;
//! - zone offsets as runs of (minutes or none, length);
//! - daily-total flags as runs of (none, false or true, length);
//! - batch lineage: the distinct batch ids, then runs of (index, length); no ids (and no runs)
//!   when no sample has a batch.
//!
//! Version 1 (still read) had both columns in `pco`, without a tag. Each column is
//! length-prefixed. A corrupt or truncated block is an error, never a panic or an allocation
//! its header alone asks for.

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

const VERSION: u8 = 2;
/// Blocks whose columns are both `pco`, untagged.
const VERSION_PCO: u8 = 1;
/// The most samples a block holds (a day of samples every 100 ms is 864,000): a header asking
/// for more is corrupt.
pub(super) const MAX_SAMPLES: usize = 4_000_000;
/// Offsets' "none".
const NO_OFFSET: i16 = i16::MIN;

/// The block's bytes.
pub fn encode(samples: &[BlockSample]) -> Result<Vec<u8>, CodecError> {
    encode_as(samples, VERSION)
}

/// The block's bytes in `version`'s layout.
fn encode_as(samples: &[BlockSample], version: u8) -> Result<Vec<u8>, CodecError> {
    let mut out = vec![version];
    put_varint(&mut out, samples.len() as u64);
    if samples.is_empty() {
        return Ok(out);
    }
    let times: Vec<i64> = samples.iter().map(|s| s.ts.timestamp_micros()).collect();
    let values: Vec<f64> = samples.iter().map(|s| s.value).collect();
    if version == VERSION_PCO {
        put_column(&mut out, &compress(&times)?);
        put_column(&mut out, &compress(&values)?);
    } else {
        Column::smallest_times(&times)?.put(&mut out);
        Column::smallest_values(&values)?.put(&mut out);
    }
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
    if version != VERSION_PCO && batches == [Uuid::nil()] {
        // No sample has a batch: no lineage at all.
        put_varint(&mut out, 0);
        return Ok(out);
    }
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
    if version != VERSION && version != VERSION_PCO {
        return Err(CodecError::Version(version));
    }
    let n = usize::try_from(r.varint()?).map_err(|_| CodecError::Corrupt("count"))?;
    if n > MAX_SAMPLES {
        return Err(CodecError::Corrupt("count"));
    }
    if n == 0 {
        return Ok(Vec::new());
    }
    let (times, values): (Vec<i64>, Vec<f64>) = if version == VERSION_PCO {
        (decompress(r.column()?, n, "times")?, decompress(r.column()?, n, "values")?)
    } else {
        (Column::times(&mut r, n)?, Column::values(&mut r, n)?)
    };
    let offsets = r.runs(n, "offsets")?;
    let flags = r.runs(n, "flags")?;
    let k = usize::try_from(r.varint()?).map_err(|_| CodecError::Corrupt("batches"))?;
    if k > n || (k == 0 && version == VERSION_PCO) {
        return Err(CodecError::Corrupt("batches"));
    }
    let mut batches = Vec::with_capacity(k.max(1));
    for _ in 0..k {
        let raw: [u8; 16] = r.take(16)?.try_into().map_err(|_| CodecError::Truncated)?;
        batches.push(Uuid::from_bytes(raw));
    }
    let index = if k == 0 {
        // No lineage: every sample without a batch.
        batches.push(Uuid::nil());
        vec![0; n]
    } else {
        r.runs(n, "batch runs")?
    };
    if !r.is_done() {
        return Err(CodecError::Corrupt("length"));
    }
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

/// How a column of times or values is stored: a tag byte, then its bytes (length-prefixed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tag {
    /// `pco`.
    Pco = 0,
    /// Times: the unit (its place in [`TIME_UNITS`], a byte), then the first time and each difference
    /// from the one before, in units, zigzag varints (any order: differences may be negative).
    TimeDeltas = 1,
    /// Whole values within ±2^53 (none `-0.0`): the first and each difference, zigzag varints.
    WholeDeltas = 2,
    /// Values as their 8 bytes, little-endian.
    Raw = 3,
}

/// A column's tag and bytes.
struct Column {
    tag: Tag,
    bytes: Vec<u8>,
}

/// Units times are tried in, coarsest first: a second, a millisecond, a microsecond.
const TIME_UNITS: [i64; 3] = [1_000_000, 1_000, 1];
/// Whole values up to this magnitude are exact as `i64` and their differences fit.
const WHOLE_LIMIT: f64 = 9_007_199_254_740_992.0;

impl Column {
    fn put(&self, out: &mut Vec<u8>) {
        out.push(self.tag as u8);
        put_column(out, &self.bytes);
    }

    /// The smaller of `pco` and `plain`.
    fn smaller(pco: Vec<u8>, plain: Column) -> Column {
        if plain.bytes.len() < pco.len() { plain } else { Column { tag: Tag::Pco, bytes: pco } }
    }

    fn smallest_times(times: &[i64]) -> Result<Column, CodecError> {
        let index = TIME_UNITS.iter().position(|u| times.iter().all(|t| t % u == 0)).unwrap_or(2);
        let unit = TIME_UNITS[index.min(TIME_UNITS.len() - 1)];
        let mut bytes = vec![index as u8];
        put_deltas(&mut bytes, times.iter().map(|t| t / unit));
        Ok(Column::smaller(compress(times)?, Column { tag: Tag::TimeDeltas, bytes }))
    }

    fn smallest_values(values: &[f64]) -> Result<Column, CodecError> {
        let whole = |v: &f64| {
            v.fract() == 0.0 && v.abs() <= WHOLE_LIMIT && !(*v == 0.0 && v.is_sign_negative())
        };
        let plain = if values.iter().all(whole) {
            let mut bytes = Vec::new();
            put_deltas(&mut bytes, values.iter().map(|v| *v as i64));
            Column { tag: Tag::WholeDeltas, bytes }
        } else {
            Column { tag: Tag::Raw, bytes: values.iter().flat_map(|v| v.to_le_bytes()).collect() }
        };
        Ok(Column::smaller(compress(values)?, plain))
    }

    fn times(r: &mut Reader<'_>, n: usize) -> Result<Vec<i64>, CodecError> {
        let tag = r.byte()?;
        let bytes = r.column()?;
        if tag == Tag::Pco as u8 {
            return decompress(bytes, n, "times");
        }
        if tag != Tag::TimeDeltas as u8 {
            return Err(CodecError::Corrupt("times"));
        }
        let mut column = Reader::new(bytes);
        let unit =
            *TIME_UNITS.get(usize::from(column.byte()?)).ok_or(CodecError::Corrupt("times"))?;
        let out = column
            .deltas(n, "times")?
            .into_iter()
            .map(|u| u.checked_mul(unit).ok_or(CodecError::Corrupt("times")))
            .collect::<Result<Vec<_>, _>>()?;
        column.done("times")?;
        Ok(out)
    }

    fn values(r: &mut Reader<'_>, n: usize) -> Result<Vec<f64>, CodecError> {
        let tag = r.byte()?;
        let bytes = r.column()?;
        if tag == Tag::Pco as u8 {
            return decompress(bytes, n, "values");
        }
        let mut column = Reader::new(bytes);
        let out = if tag == Tag::WholeDeltas as u8 {
            column.deltas(n, "values")?.into_iter().map(|v| v as f64).collect()
        } else if tag == Tag::Raw as u8 {
            (0..n).map(|_| column.f64()).collect::<Result<Vec<_>, _>>()?
        } else {
            return Err(CodecError::Corrupt("values"));
        };
        column.done("values")?;
        Ok(out)
    }
}

/// Zigzag varints of the first value and each difference from the one before (wrapping, so
/// any `i64`s round-trip).
fn put_deltas(out: &mut Vec<u8>, values: impl Iterator<Item = i64>) {
    let mut last = 0_i64;
    for v in values {
        let d = v.wrapping_sub(last);
        put_varint(out, ((d << 1) ^ (d >> 63)) as u64);
        last = v;
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

    /// `n` values [`put_deltas`] wrote.
    fn deltas(&mut self, n: usize, what: &'static str) -> Result<Vec<i64>, CodecError> {
        let mut out = Vec::with_capacity(n.min(self.bytes.len()));
        let mut last = 0_i64;
        for _ in 0..n {
            let z = self.varint().map_err(|_| CodecError::Corrupt(what))?;
            let d = ((z >> 1) as i64) ^ -((z & 1) as i64);
            last = last.wrapping_add(d);
            out.push(last);
        }
        Ok(out)
    }

    /// An error unless every byte was read.
    fn done(&self, what: &'static str) -> Result<(), CodecError> {
        if self.is_done() { Ok(()) } else { Err(CodecError::Corrupt(what)) }
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
