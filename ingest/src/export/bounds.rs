//! What one export may cost, whatever its bytes: a file of one 4 GB text node, an element that
//! never closes, or a zip that inflates a thousandfold must fail its import with a reason, not
//! fill the worker's memory or keep it busy for hours.
//!
//! The readers here sit under quick-xml (and the zip inflater) and stop with an I/O error that
//! carries a [`Limit`]; the export reader turns it back into `ExportError::Refused`.

use std::io::{self, BufRead, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The largest single XML event (a tag with its attributes, or a text node). Real exports'
/// largest are a few kilobytes (a record with its metadata, a clinical note).
pub(super) const MAX_EVENT_BYTES: u64 = 8 << 20;
/// The most a `Record` or `Workout` element may gather before it closes (its children, and
/// whatever follows an element that never closes).
pub(super) const MAX_OPEN_BYTES: usize = 96 << 20;
/// The most an archived export may inflate, relative to the compressed bytes read so far.
/// XML exports compress 10–30 times; deflate can reach about a thousand.
pub(super) const MAX_INFLATION: u64 = 200;
/// Inflation below this many bytes is never refused, whatever the ratio (the first buffer).
const INFLATION_FLOOR: u64 = 64 << 20;

/// A bound an export went past.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Limit {
    #[error("an XML element or text is larger than {max} bytes")]
    Event { max: u64 },
    #[error("a Record or Workout element holds more than {max} bytes before it closes")]
    Open { max: usize },
    #[error("the zip inflates to more than {ratio} times its compressed size")]
    Inflation { ratio: u64 },
    #[error("the rest of the zip, read through its central directory, is larger than {max} bytes")]
    Spool { max: u64 },
}

impl Limit {
    fn into_io(self) -> io::Error {
        io::Error::other(self)
    }

    /// The limit an I/O error (from quick-xml or the inflater) carries, if it is one of ours.
    pub(crate) fn of_io(e: &io::Error) -> Option<Limit> {
        e.get_ref().and_then(|inner| inner.downcast_ref::<Limit>()).cloned()
    }
}

/// Bounds the bytes consumed by one XML event: [`EventBounded::start_event`] before each event,
/// then reading past [`MAX_EVENT_BYTES`] fails.
pub(super) struct EventBounded<R> {
    inner: R,
    consumed: u64,
    max: u64,
}

impl<R> EventBounded<R> {
    pub(super) fn new(inner: R) -> EventBounded<R> {
        EventBounded::with_max(inner, MAX_EVENT_BYTES)
    }

    pub(super) fn with_max(inner: R, max: u64) -> EventBounded<R> {
        EventBounded { inner, consumed: 0, max }
    }

    pub(super) fn start_event(&mut self) {
        self.consumed = 0;
    }
}

impl<R: Read> Read for EventBounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.consumed += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for EventBounded<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.consumed > self.max {
            return Err(Limit::Event { max: self.max }.into_io());
        }
        self.inner.fill_buf()
    }

    fn consume(&mut self, amount: usize) {
        self.consumed += amount as u64;
        self.inner.consume(amount);
    }
}

/// Fails once the inflated bytes read through it exceed [`MAX_INFLATION`] times the
/// compressed bytes read so far (`compressed`, counted under the inflater). Readers of one
/// archive's entries may share their count of inflated bytes, so that the bound holds for the
/// whole archive, not entry by entry.
pub(super) struct InflationBounded<R> {
    inner: R,
    inflated: Arc<AtomicU64>,
    compressed: Arc<AtomicU64>,
    ratio: u64,
}

impl<R> InflationBounded<R> {
    /// Counting into `inflated`, beside the other readers of the archive.
    pub(super) fn new(
        inner: R,
        compressed: Arc<AtomicU64>,
        inflated: Arc<AtomicU64>,
    ) -> InflationBounded<R> {
        InflationBounded { inner, inflated, compressed, ratio: MAX_INFLATION }
    }
}

impl<R: Read> Read for InflationBounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let inflated = self.inflated.fetch_add(n as u64, Ordering::Relaxed) + n as u64;
        let allowed =
            self.compressed.load(Ordering::Relaxed).saturating_mul(self.ratio).max(INFLATION_FLOOR);
        if inflated > allowed {
            return Err(Limit::Inflation { ratio: self.ratio }.into_io());
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_past_the_bound_fails_and_the_next_one_starts_afresh() {
        let data = [b'a'; 100];
        let mut r = EventBounded::with_max(io::BufReader::with_capacity(8, &data[..]), 20);
        let mut seen = 0;
        let err = loop {
            match r.fill_buf() {
                Ok([]) => panic!("read past the bound"),
                Ok(b) => {
                    let n = b.len();
                    r.consume(n);
                    seen += n;
                }
                Err(e) => break e,
            }
        };
        assert_eq!(Limit::of_io(&err), Some(Limit::Event { max: 20 }));
        assert!(seen <= 28, "{seen}");
        r.start_event();
        assert!(r.fill_buf().is_ok());
    }

    #[test]
    fn inflation_is_bounded_by_the_compressed_bytes() {
        let compressed = Arc::new(AtomicU64::new(1));
        let zeros = io::repeat(0).take(INFLATION_FLOOR + 1);
        let mut r = InflationBounded::new(zeros, compressed.clone(), Arc::default());
        let err = io::copy(&mut r, &mut io::sink()).err();
        assert_eq!(err.as_ref().and_then(Limit::of_io), Some(Limit::Inflation { ratio: 200 }));

        compressed.store(INFLATION_FLOOR, Ordering::Relaxed);
        let zeros = io::repeat(0).take(INFLATION_FLOOR + 1);
        let mut r = InflationBounded::new(zeros, compressed, Arc::default());
        assert_eq!(io::copy(&mut r, &mut io::sink()).ok(), Some(INFLATION_FLOOR + 1));
    }
}
