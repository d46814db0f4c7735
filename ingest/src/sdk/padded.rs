//! An SDK body with room after it for simd-json's reads past the end: the parser then works on
//! the body where it lies instead of a padded copy of it (a 5 MB copy per parse, and the pages
//! under it, twice per batch: the accept path's check and the worker's parse).

/// Bytes past the JSON that the parser may read (their content does not matter).
pub const PADDING: usize = simd_json::INPUT_PADDING;

/// A JSON body followed by [`PADDING`] bytes.
#[derive(Debug, Clone)]
pub struct PaddedJson {
    bytes: Vec<u8>,
    len: usize,
}

impl PaddedJson {
    /// Takes `bytes` as the body. The padding goes into the vector's spare room when it has
    /// [`PADDING`] bytes of it (make it with [`PaddedJson::capacity_for`]); else the vector
    /// grows once.
    pub fn new(mut bytes: Vec<u8>) -> PaddedJson {
        let len = bytes.len();
        bytes.resize(len + PADDING, b' ');
        PaddedJson { bytes, len }
    }

    /// A copy of `json`, padded.
    pub fn copy_of(json: &[u8]) -> PaddedJson {
        let mut bytes = Vec::with_capacity(Self::capacity_for(json.len()));
        bytes.extend_from_slice(json);
        PaddedJson::new(bytes)
    }

    /// The capacity a vector for a body of `len` bytes needs to be padded in place.
    pub fn capacity_for(len: usize) -> usize {
        len + PADDING
    }

    /// The JSON (after a parse, with its strings unescaped in place).
    pub fn json(&self) -> &[u8] {
        self.bytes.get(..self.len).unwrap_or_default()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The whole buffer, padding included, and the JSON's length: what the parser takes.
    pub(crate) fn parts_mut(&mut self) -> (&mut [u8], usize) {
        (&mut self.bytes, self.len)
    }

    /// The vector back (padding included): tests check its allocation is the one handed in.
    #[cfg(test)]
    pub(crate) fn into_vec(self) -> Vec<u8> {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pads_in_place_when_there_is_room_and_keeps_the_json() {
        let mut v = Vec::with_capacity(PaddedJson::capacity_for(3));
        v.extend_from_slice(b"[1]");
        let at = v.as_ptr();
        let p = PaddedJson::new(v);
        assert_eq!(p.json(), b"[1]");
        assert_eq!(p.len(), 3);
        let back = p.into_vec();
        assert_eq!(back.as_ptr(), at);
        assert_eq!(PaddedJson::new(Vec::new()).json(), b"");
        assert_eq!(PaddedJson::copy_of(b"{}").json(), b"{}");
    }
}
