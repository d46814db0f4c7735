//! What a user hands over for an import: a bare `export.xml`, or a zip holding it under any
//! folder with its siblings (`export_cda.xml`, `workout-routes/*.gpx`, `electrocardiograms/`),
//! written by any zipper: deflated or stored entries, zip64, sizes in the local header or in a
//! data descriptor after the data (macOS Archive Utility, streaming zippers).
//!
//! The zip is walked as a stream, entry by entry ([`super::zip_entries`]), in one pass and flat
//! memory. One kind of entry cannot be walked past that way: a stored (or otherwise not
//! deflated) entry whose size follows its data, since nothing in the stream says where it
//! ends. From there on the rest of the archive is spooled to a temporary file, at its offset in
//! the archive (the part already read is a hole), and read through the central directory.

use std::collections::HashSet;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;

use super::bounds::{InflationBounded, Limit};
use super::reader::ExportError;
use super::zip_entries::{self, LocalHeader};

/// The most of an archive spooled to disk (the upload routes take 5 GiB at most).
const MAX_SPOOL_BYTES: u64 = 6 << 30;

/// What an entry of the archive is to an import.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// `export.xml`, under any folder (not its sibling `export_cda.xml`).
    Export,
    /// A workout route, named as the export's `FileReference` names it:
    /// `/workout-routes/route_….gpx`.
    Route(String),
    /// An ECG recording (`electrocardiograms/*.csv`): no series of ours holds it.
    Electrocardiogram,
    Other,
}

impl Entry {
    pub fn of(name: &str) -> Entry {
        let file = name.rsplit('/').next().unwrap_or(name);
        // macOS Archive Utility's resource forks (`__MACOSX/…/._export.xml`) are not files.
        if name.starts_with("__MACOSX/") || file.starts_with("._") {
            return Entry::Other;
        }
        if file == "export.xml" {
            return Entry::Export;
        }
        let folder = |f: &str| {
            let at = name.rfind(&format!("{f}/"))?;
            (at == 0 || name[..at].ends_with('/')).then(|| &name[at..])
        };
        if file.ends_with(".gpx")
            && let Some(path) = folder("workout-routes")
        {
            return Entry::Route(format!("/{path}"));
        }
        if !file.is_empty() && folder("electrocardiograms").is_some() {
            return Entry::Electrocardiogram;
        }
        Entry::Other
    }
}

/// What is done with each entry: called with the entry and its inflated bytes, which it need
/// not read to the end.
pub type Visit<'v> = dyn FnMut(&Entry, &mut dyn BufRead) -> Result<(), ExportError> + 'v;

/// Walks what the user handed over (`input`, whose bytes read are counted in `read`), calling
/// `visit` for the export and every file beside it. A file that is no export, or an archive
/// without one, is refused.
pub fn walk(
    input: impl Read,
    read: Arc<AtomicU64>,
    visit: &mut Visit<'_>,
) -> Result<(), ExportError> {
    let counting = Counting { inner: input, count: read.clone() };
    let mut input = BufReader::with_capacity(1 << 20, counting);
    let head = input.fill_buf().map_err(|e| ExportError::Io(e.to_string()))?;
    if head.starts_with(b"PK\x03\x04") {
        return Zip::new(read).walk(Tracked { inner: input, at: 0 }, visit);
    }
    if !looks_like_xml(head) {
        return Err(ExportError::NeitherZipNorXml);
    }
    visit(&Entry::Export, &mut input)
}

/// Counts the bytes read through it: the file's, for progress and for the inflation bound.
struct Counting<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Relaxed);
        Ok(n)
    }
}

/// Whether a file's first bytes can start XML: `<` after an optional byte-order mark and
/// whitespace (an empty file is left to the XML reader, which says what is missing).
fn looks_like_xml(head: &[u8]) -> bool {
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    head.iter().find(|b| !b.is_ascii_whitespace()).is_none_or(|b| *b == b'<')
}

/// A reader that knows its offset in the archive.
struct Tracked<R> {
    inner: R,
    at: u64,
}

impl<R: Read> Read for Tracked<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.at += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Tracked<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amount: usize) {
        self.at += amount as u64;
        self.inner.consume(amount);
    }
}

/// One walk through a zip.
struct Zip {
    compressed: Arc<AtomicU64>,
    /// Bytes inflated over the whole archive, bounded against `compressed`.
    inflated: Arc<AtomicU64>,
    export_seen: bool,
    /// Entries visited from the stream, not to be visited again from the central directory.
    walked: HashSet<String>,
}

impl Zip {
    fn new(compressed: Arc<AtomicU64>) -> Zip {
        Zip { compressed, inflated: Arc::default(), export_seen: false, walked: HashSet::new() }
    }

    fn bounded<R: Read>(&self, r: R) -> BufReader<InflationBounded<R>> {
        let bounded = InflationBounded::new(r, self.compressed.clone(), self.inflated.clone());
        BufReader::with_capacity(1 << 20, bounded)
    }

    /// Visits an entry, unless it is a directory or a second export; with `to_end`, reads what
    /// the visit left of it (an entry whose end is found only by reading it).
    fn entry(
        &mut self,
        name: &str,
        data: impl Read,
        to_end: bool,
        visit: &mut Visit<'_>,
    ) -> Result<(), ExportError> {
        let entry = Entry::of(name);
        let mut data = self.bounded(data);
        let second_export = entry == Entry::Export && self.export_seen;
        if !name.ends_with('/') && !second_export {
            self.export_seen |= entry == Entry::Export;
            // An entry that stops early is a zip that stops early: say where in the file.
            visit(&entry, &mut data).map_err(|e| match e {
                ExportError::Truncated { .. } => self.truncated(),
                e => e,
            })?;
        }
        if to_end {
            io::copy(&mut data, &mut io::sink()).map_err(|e| self.io_error(e))?;
        }
        Ok(())
    }

    fn walk<R: BufRead>(
        mut self,
        mut r: Tracked<R>,
        visit: &mut Visit<'_>,
    ) -> Result<(), ExportError> {
        loop {
            let start = r.at;
            let Some(header) = zip_entries::next_header(&mut r).map_err(|e| self.io_error(e))?
            else {
                break;
            };
            if header.streams_by_itself() {
                // A deflate stream ends by itself; its sizes follow it.
                self.entry(&header.name, zip_entries::inflate(&mut r), true, visit)?;
                zip_entries::skip_descriptor(&mut r, header.zip64).map_err(|e| self.io_error(e))?;
            } else if header.descriptor
                && header.is_directory()
                && zip_entries::skip_empty_descriptor(&mut r, header.zip64)
                    .map_err(|e| self.io_error(e))?
            {
                // A directory written by a streaming zipper: its (empty) sizes follow at once.
            } else if header.descriptor {
                // Where this entry ends is written only after it, and in the central directory.
                return self.rest_from_central_directory(&header, start, r, visit);
            } else {
                let mut rest = zip_entries::with_header_back(&header, &mut r);
                let Some(file) =
                    zip::read::read_zipfile_from_stream(&mut rest).map_err(zip_error)?
                else {
                    break;
                };
                // Dropped, the `zip` crate's file skips what is left of it without inflating.
                self.entry(&header.name, file, false, visit)?;
            }
            self.walked.insert(header.name);
        }
        self.finish()
    }

    /// Spools the archive from `start` (where `header` began) to a temporary file at the same
    /// offsets, and visits the entries not walked yet through the central directory.
    fn rest_from_central_directory<R: Read>(
        mut self,
        header: &LocalHeader,
        start: u64,
        mut rest: R,
        visit: &mut Visit<'_>,
    ) -> Result<(), ExportError> {
        let mut spool = || -> io::Result<(std::fs::File, u64)> {
            let mut file = tempfile::tempfile()?;
            file.seek(SeekFrom::Start(start))?;
            file.write_all(&header.raw)?;
            let copied = io::copy(&mut (&mut rest).take(MAX_SPOOL_BYTES), &mut file)?;
            Ok((file, copied))
        };
        let (file, copied) =
            spool().map_err(|e| ExportError::Io(format!("spooling the zip: {e}")))?;
        if copied == MAX_SPOOL_BYTES {
            let limit = Limit::Spool { max: MAX_SPOOL_BYTES };
            return Err(ExportError::Refused { offset: start + copied, limit });
        }
        let config = zip::read::Config { archive_offset: zip::read::ArchiveOffset::Known(0) };
        // Without a central directory the zip stops before its end (or is no zip at all).
        let mut archive = zip::ZipArchive::with_config(config, file).map_err(|e| match e {
            zip::result::ZipError::InvalidArchive(_) => self.truncated(),
            e => zip_error(e),
        })?;
        for i in 0..archive.len() {
            let name = archive.name_for_index(i).unwrap_or_default().to_string();
            if self.walked.contains(&name) {
                continue;
            }
            let file = archive.by_index(i).map_err(zip_error)?;
            self.entry(&name, file, false, visit)?;
        }
        self.finish()
    }

    /// An I/O error under the zip reader: one of our bounds (at the bytes of the file read so
    /// far), the archive's end, or the input's.
    fn io_error(&self, e: io::Error) -> ExportError {
        match Limit::of_io(&e) {
            Some(limit) => ExportError::Refused { offset: self.compressed.load(Relaxed), limit },
            None if e.kind() == io::ErrorKind::UnexpectedEof => self.truncated(),
            None => zip_error(zip::result::ZipError::Io(e)),
        }
    }

    fn truncated(&self) -> ExportError {
        ExportError::ArchiveTruncated { at: self.compressed.load(Relaxed) }
    }

    fn finish(self) -> Result<(), ExportError> {
        if self.export_seen { Ok(()) } else { Err(ExportError::NoExportInZip) }
    }
}

/// A zip error: the input's (retriable) or the archive's (final).
fn zip_error(e: zip::result::ZipError) -> ExportError {
    match e {
        zip::result::ZipError::Io(io) if io.kind() == io::ErrorKind::UnexpectedEof => {
            ExportError::Zip(format!("the archive ends early: {io}"))
        }
        zip::result::ZipError::Io(io) => ExportError::Io(format!("reading the zip: {io}")),
        e => ExportError::Zip(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::export::generate::{ExportSpec, workout_routes, write_export};

    /// What a walk visited: each entry with its bytes (read to the end).
    fn walked(archive: &[u8]) -> Result<Vec<(Entry, Vec<u8>)>, ExportError> {
        let mut seen = Vec::new();
        let mut visit = |entry: &Entry, data: &mut dyn BufRead| {
            let mut bytes = Vec::new();
            data.read_to_end(&mut bytes).map_err(|e| ExportError::Io(e.to_string()))?;
            seen.push((entry.clone(), bytes));
            Ok(())
        };
        walk(archive, Arc::default(), &mut visit)?;
        Ok(seen)
    }

    /// `tests/tools/zip_export.py OUT ARGS…`: the archive, from a pipe when `out` is `-`, else
    /// from a file of that name in `dir`.
    fn python_zip(dir: &Path, out: &str, args: &[String]) -> Vec<u8> {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/tools/zip_export.py");
        let path = if out == "-" { out.into() } else { dir.join(out).display().to_string() };
        let run = std::process::Command::new("python3").arg(script).arg(&path).args(args).output();
        let run = run.unwrap_or_else(|e| panic!("python3: {e}"));
        assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
        if out == "-" {
            run.stdout
        } else {
            std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
        }
    }

    /// Sizes and a checksum of what was visited: comparable without printing megabytes.
    fn digest(visits: &[&Vec<u8>]) -> Vec<(usize, u32)> {
        visits.iter().map(|b| (b.len(), crc32(b))).collect()
    }

    fn crc32(b: &[u8]) -> u32 {
        let mut h = flate2::Crc::new();
        h.update(b);
        h.sum()
    }

    #[test]
    fn every_kind_of_archive_gives_the_export_and_its_routes() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let d = dir.path();
        let spec = ExportSpec::new(4);
        let mut xml = Vec::new();
        write_export(&mut xml, &spec).unwrap_or_default();
        let routes = workout_routes(&spec);
        assert_eq!(routes.len(), 2);
        let write = |name: &str, bytes: &[u8]| {
            std::fs::write(d.join(name), bytes).unwrap_or_else(|e| panic!("{e}"));
            d.join(name).display().to_string()
        };
        let export = write("export.xml", &xml);
        let cda = write("export_cda.xml", b"<ClinicalDocument/>");
        let ecg = write("ecg.csv", b"Name,Ada\nClassification,Sinus Rhythm\n\n-12.3\n-11.9\n");
        let gpx: Vec<String> =
            routes.iter().enumerate().map(|(i, (_, g))| write(&format!("{i}.gpx"), g)).collect();
        let folder = "apple_health_export";
        let entry =
            |method: &str, name: &str, path: &str| format!("{method}:{folder}/{name}={path}");
        let routes_in = |method: &str| -> Vec<String> {
            routes.iter().zip(&gpx).map(|((name, _), p)| entry(method, name, p)).collect()
        };
        let dirs = vec![format!("dir:{folder}/"), format!("dir:{folder}/workout-routes/")];
        // (what it stands for, output, entries in order)
        let variants: Vec<(&str, &str, Vec<String>)> = vec![
            (
                "macOS Archive Utility: deflated, sizes after the data, routes first",
                "-",
                [
                    dirs.clone(),
                    routes_in("deflate"),
                    vec![
                        entry("deflate", "electrocardiograms/ecg_2024-01-02.csv", &ecg),
                        entry("deflate", "export.xml", &export),
                        entry("deflate", "export_cda.xml", &cda),
                        format!("deflate:__MACOSX/{folder}/._export.xml={cda}"),
                    ],
                ]
                .concat(),
            ),
            (
                "a streaming zipper storing everything: sizes after the data, export first",
                "-",
                [
                    dirs.clone(),
                    vec![
                        entry("store", "export.xml", &export),
                        entry("store", "export_cda.xml", &cda),
                    ],
                    routes_in("store"),
                ]
                .concat(),
            ),
            (
                "deflated export, stored siblings after it, zip64",
                "-",
                [
                    vec![
                        "--zip64".to_string(),
                        entry("deflate", "export.xml", &export),
                        entry("store", "export_cda.xml", &cda),
                    ],
                    routes_in("store"),
                ]
                .concat(),
            ),
            (
                "a seekable zip of stored entries: sizes in the headers",
                "stored.zip",
                [vec![entry("store", "export.xml", &export)], routes_in("store")].concat(),
            ),
            (
                "a seekable zip64 of deflated entries, routes first",
                "zip64.zip",
                [
                    vec!["--zip64".to_string()],
                    routes_in("deflate"),
                    vec![entry("deflate", "export.xml", &export)],
                ]
                .concat(),
            ),
        ];
        for (what, out, args) in variants {
            let archive = python_zip(d, out, &args);
            let seen = walked(&archive).unwrap_or_else(|e| panic!("{what}: {e}"));
            let exports: Vec<&Vec<u8>> =
                seen.iter().filter(|(e, _)| *e == Entry::Export).map(|(_, b)| b).collect();
            assert_eq!(digest(&exports), digest(&[&xml]), "{what}");
            for (name, bytes) in &routes {
                let route = Entry::Route(format!("/{name}"));
                let found: Vec<&Vec<u8>> =
                    seen.iter().filter(|(e, _)| *e == route).map(|(_, b)| b).collect();
                assert_eq!(digest(&found), digest(&[bytes]), "{what}: {name}");
            }
        }
    }

    #[test]
    fn an_archive_cut_short_or_without_an_export_says_so() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("cda.xml");
        std::fs::write(&path, b"<ClinicalDocument/>").unwrap_or_else(|e| panic!("{e}"));
        let p = path.display();
        for out in ["-", "seekable.zip"] {
            let args =
                [format!("store:a/export_cda.xml={p}"), format!("deflate:a/export_cda2.xml={p}")];
            let archive = python_zip(dir.path(), out, &args);
            assert_eq!(walked(&archive).err(), Some(ExportError::NoExportInZip), "{out}");
        }
        // Cut inside the central directory that a stored entry with a descriptor needs.
        let args = [format!("store:a/export.xml={p}")];
        let archive = python_zip(dir.path(), "-", &args);
        let cut = &archive[..archive.len() - 30];
        let at = cut.len() as u64;
        assert_eq!(walked(cut).err(), Some(ExportError::ArchiveTruncated { at }));
    }

    #[test]
    fn entries_by_name() {
        let cases = [
            ("export.xml", Entry::Export),
            ("apple_health_export/export.xml", Entry::Export),
            ("Export von Ada/export.xml", Entry::Export),
            ("apple_health_export/export_cda.xml", Entry::Other),
            (
                "apple_health_export/workout-routes/route_2024-01-02_8.31am.gpx",
                Entry::Route("/workout-routes/route_2024-01-02_8.31am.gpx".into()),
            ),
            ("workout-routes/r.gpx", Entry::Route("/workout-routes/r.gpx".into())),
            ("apple_health_export/my-workout-routes/r.gpx", Entry::Other),
            ("apple_health_export/workout-routes/", Entry::Other),
            ("apple_health_export/electrocardiograms/ecg_2024-01-02.csv", Entry::Electrocardiogram),
            ("apple_health_export/electrocardiograms/", Entry::Other),
            ("__MACOSX/apple_health_export/._export.xml", Entry::Other),
            ("__MACOSX/apple_health_export/workout-routes/._r.gpx", Entry::Other),
        ];
        for (name, entry) in cases {
            assert_eq!(Entry::of(name), entry, "{name}");
        }
    }
}
