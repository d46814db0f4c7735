//! Walking a zip as a stream, entry by entry, including entries written with a data descriptor
//! (general-purpose flag bit 3: sizes and CRC after the data), as macOS Archive Utility and
//! streaming zippers write them. The `zip` crate's stream reader needs the sizes in the local
//! header; a deflated entry needs none, since its deflate stream ends by itself. Every other
//! entry is handed to the `zip` crate with its header put back in front of the stream.

use std::io::{self, BufRead, Cursor, Read};

const LOCAL_HEADER: &[u8; 4] = b"PK\x03\x04";
const DESCRIPTOR: &[u8; 4] = b"PK\x07\x08";
const DEFLATE: u16 = 8;
const ZIP64_EXTRA: u16 = 0x0001;

/// A local file header, as read from the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LocalHeader {
    /// The header's bytes, to put back in front of the stream for the `zip` crate.
    pub raw: Vec<u8>,
    pub name: String,
    pub method: u16,
    /// Sizes and CRC follow the data (flag bit 3).
    pub descriptor: bool,
    /// A zip64 extra field: a data descriptor's sizes are 8 bytes each.
    pub zip64: bool,
}

impl LocalHeader {
    /// A directory: no data.
    pub(crate) fn is_directory(&self) -> bool {
        self.name.ends_with('/')
    }

    /// Whether this entry is read here (deflated, sizes after the data) rather than by `zip`.
    pub(crate) fn streams_by_itself(&self) -> bool {
        self.descriptor && self.method == DEFLATE
    }
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

/// The next entry's header, or `None` at the central directory (the entries are over).
pub(crate) fn next_header(r: &mut impl Read) -> io::Result<Option<LocalHeader>> {
    let mut fixed = [0u8; 30];
    r.read_exact(&mut fixed[..4])?;
    if &fixed[..4] != LOCAL_HEADER {
        return Ok(None);
    }
    r.read_exact(&mut fixed[4..])?;
    let flags = u16_at(&fixed, 6);
    let method = u16_at(&fixed, 8);
    let (name_len, extra_len) = (usize::from(u16_at(&fixed, 26)), usize::from(u16_at(&fixed, 28)));
    let mut rest = vec![0u8; name_len + extra_len];
    r.read_exact(&mut rest)?;
    let name = String::from_utf8_lossy(&rest[..name_len]).into_owned();
    let mut extra = &rest[name_len..];
    let mut zip64 = false;
    while extra.len() >= 4 {
        let (id, len) = (u16_at(extra, 0), usize::from(u16_at(extra, 2)));
        zip64 |= id == ZIP64_EXTRA;
        extra = extra.get(4 + len..).unwrap_or_default();
    }
    let mut raw = fixed.to_vec();
    raw.extend_from_slice(&rest);
    Ok(Some(LocalHeader { raw, name, method, descriptor: flags & 0x08 != 0, zip64 }))
}

/// The entry's data, inflated, read from `r` up to the end of its deflate stream.
pub(crate) fn inflate<R: BufRead>(r: R) -> flate2::bufread::DeflateDecoder<R> {
    flate2::bufread::DeflateDecoder::new(r)
}

/// Skips the data descriptor after an entry's data: an optional signature, the CRC, and the
/// two sizes (8 bytes each in zip64).
pub(crate) fn skip_descriptor(r: &mut impl Read, zip64: bool) -> io::Result<()> {
    let mut first = [0u8; 4];
    r.read_exact(&mut first)?;
    // Without the optional signature, those four bytes were the CRC.
    let crc = if &first == DESCRIPTOR { 4 } else { 0 };
    let sizes = if zip64 { 16 } else { 8 };
    io::copy(&mut r.take(crc + sizes), &mut io::sink()).map(|_| ())
}

/// After a directory's header with a data descriptor: skips the descriptor when it follows at
/// once and says the entry is empty (a directory holds no data); false, having read nothing,
/// when the bytes at hand do not show that.
pub(crate) fn skip_empty_descriptor(r: &mut impl BufRead, zip64: bool) -> io::Result<bool> {
    let sizes = if zip64 { 16 } else { 8 };
    let head = r.fill_buf()?;
    let signed = head.starts_with(DESCRIPTOR);
    let len = if signed { 4 } else { 0 } + 4 + sizes;
    let empty = head.len() >= len && head[len - 4 - sizes..len].iter().all(|b| *b == 0);
    if empty {
        r.consume(len);
    }
    Ok(empty)
}

/// The header put back in front of the rest of the stream, for the `zip` crate.
pub(crate) fn with_header_back<'r, R: Read>(
    header: &LocalHeader,
    rest: &'r mut R,
) -> impl Read + 'r {
    Cursor::new(header.raw.clone()).chain(rest)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    /// A zip as a streaming zipper writes it: deflated entries, sizes in data descriptors.
    fn streamed(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        for (name, data) in entries {
            let mut deflated = flate2::write::DeflateEncoder::new(Vec::new(), Default::default());
            deflated.write_all(data).unwrap_or_default();
            let deflated = deflated.finish().unwrap_or_default();
            out.extend_from_slice(LOCAL_HEADER);
            out.extend_from_slice(&[20, 0, 0x08, 0, 8, 0, 0, 0, 0, 0]);
            out.extend_from_slice(&[0; 12]); // crc and sizes: in the descriptor
            out.extend_from_slice(&(name.len() as u16).to_le_bytes());
            out.extend_from_slice(&[0, 0]);
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(&deflated);
            out.extend_from_slice(DESCRIPTOR);
            out.extend_from_slice(&[0; 12]);
        }
        out.extend_from_slice(b"PK\x01\x02 the central directory");
        out
    }

    #[test]
    fn walks_deflated_entries_with_descriptors() {
        let zip = streamed(&[("a/export_cda.xml", b"<cda/>"), ("a/export.xml", b"<HealthData/>")]);
        let mut r = io::BufReader::new(&zip[..]);
        let mut seen = Vec::new();
        while let Some(h) = next_header(&mut r).unwrap_or(None) {
            assert!(h.streams_by_itself() && !h.zip64);
            let mut data = String::new();
            inflate(&mut r).read_to_string(&mut data).unwrap_or_default();
            skip_descriptor(&mut r, h.zip64).unwrap_or_default();
            seen.push((h.name, data));
        }
        assert_eq!(
            seen,
            vec![
                ("a/export_cda.xml".to_string(), "<cda/>".to_string()),
                ("a/export.xml".to_string(), "<HealthData/>".to_string())
            ]
        );
    }
}
