//! simd-json's scratch (the structural indexes, the string buffer, the stage-2 stack) and its
//! tape, kept by each thread for its next body: a fleet's SDK bodies are megabytes, and each
//! parse's fresh buffers — the tape alone is a node of 16 bytes for every JSON value — were
//! pages the allocator took from the kernel and gave back every time. The accept path's check
//! and the worker's parse both use them.

use std::cell::Cell;

use simd_json::{Buffers, Tape};

use super::padded::PaddedJson;

/// Bodies up to this size leave their buffers to the thread's next body (at most ~4x this held
/// per thread between bodies); larger ones parse with buffers of their own, freed after.
const KEEP_UP_TO: usize = 8 << 20;

/// What a thread keeps between parses; the tape empty.
struct Kept {
    buffers: Buffers,
    tape: Tape<'static>,
}

thread_local! {
    static KEPT: Cell<Option<Kept>> = const { Cell::new(None) };
}

/// Parses `body` into a tape and hands it to `read`, which hands it back (emptied or not) with
/// what it read. The tape borrows the body's strings; the allocation is kept for the thread's
/// next body.
pub(crate) fn with_tape<'de, T>(
    body: &'de mut PaddedJson,
    read: impl FnOnce(Tape<'de>) -> (T, Tape<'de>),
) -> Result<T, simd_json::Error> {
    let (input, len) = body.parts_mut();
    let keep = len <= KEEP_UP_TO;
    let kept = if keep { KEPT.take() } else { None };
    let Kept { mut buffers, tape } =
        kept.unwrap_or_else(|| Kept { buffers: Buffers::new(len), tape: Tape::null() });
    let mut tape: Tape<'de> = tape.reset();
    let parsed = simd_json::fill_tape_padded(input, len, &mut buffers, &mut tape);
    let (out, tape) = match parsed {
        Ok(()) => {
            let (out, tape) = read(tape);
            (Ok(out), tape)
        }
        Err(e) => (Err(e), tape),
    };
    if keep {
        KEPT.set(Some(Kept { buffers, tape: tape.reset() }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_tape_carries_nothing_from_one_body_to_the_next() {
        let len = |json: &[u8]| {
            let mut body = PaddedJson::copy_of(json);
            with_tape(&mut body, |tape| (tape.0.len(), tape))
        };
        assert_eq!(len(b"[1, 2, 3]").ok(), Some(4));
        assert!(len(b"[1, 2").is_err());
        assert_eq!(len(b"{}").ok(), Some(1));
        assert_eq!(len(br#"{"a": "\u0041"}"#).ok(), Some(3));
    }
}
