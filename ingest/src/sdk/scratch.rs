//! simd-json's scratch buffers (the padded copy of the input, the structural indexes, the
//! string buffer), kept by each thread for its next body: a fleet's SDK bodies are megabytes,
//! and each parse's fresh buffers, two and a half times the body, were pages the allocator took
//! from the kernel and gave back every time. The accept path's check and the worker's parse
//! both use them.

use std::cell::RefCell;

use simd_json::Buffers;

/// Bodies up to this size leave their buffers to the thread's next body (at most ~3x this held
/// per thread between bodies); larger ones parse with buffers of their own, freed after.
const KEEP_UP_TO: usize = 8 << 20;

thread_local! {
    static BUFFERS: RefCell<Option<Buffers>> = const { RefCell::new(None) };
}

/// Runs `parse` with scratch buffers for a body of `len` bytes.
pub(crate) fn with<T>(len: usize, parse: impl FnOnce(&mut Buffers) -> T) -> T {
    if len > KEEP_UP_TO {
        return parse(&mut Buffers::new(len));
    }
    BUFFERS.with(|cell| match cell.try_borrow_mut() {
        Ok(mut kept) => parse(kept.get_or_insert_with(|| Buffers::new(len))),
        Err(_) => parse(&mut Buffers::new(len)),
    })
}
