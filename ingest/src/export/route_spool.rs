//! The workout routes of an archive, kept on disk until the import ends: a route may come
//! before its workout (`workout-routes/` is often zipped before `export.xml`), and a thousand
//! of them would not fit in memory. Each route is written once, as the JSON array it is stored
//! as, to an unnamed temporary file; only its place in the file is remembered.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufRead, Write};
use std::os::unix::fs::FileExt;

use schema::workouts::RoutePoint;

use super::gpx;
use super::reader::ExportError;
use crate::report::Report;

#[derive(Debug, Default)]
pub struct RouteSpool {
    file: Option<File>,
    /// The route file's path, as `FileReference`s name it → its JSON's offset and length.
    index: HashMap<String, (u64, usize)>,
    len: u64,
}

impl RouteSpool {
    /// Reads a route file of the archive and keeps its points; an unreadable route is reported,
    /// not kept. Fails only when the temporary file cannot be written.
    pub fn add(
        &mut self,
        path: &str,
        gpx: &mut dyn BufRead,
        report: &mut Report,
    ) -> Result<(), ExportError> {
        report.received("route_files", 1);
        let points = match gpx::read_route(gpx) {
            Ok(points) => points,
            Err(e) => {
                report.drop(e.code(), Some(format!("{path}: {e}")));
                return Ok(());
            }
        };
        self.keep(path, &points).map_err(|e| ExportError::Io(format!("keeping a route: {e}")))
    }

    fn keep(&mut self, path: &str, points: &[RoutePoint]) -> io::Result<()> {
        let json = serde_json::to_vec(points)?;
        let file = match &mut self.file {
            Some(f) => f,
            None => self.file.insert(tempfile::tempfile()?),
        };
        file.write_all(&json)?;
        self.index.insert(path.to_string(), (self.len, json.len()));
        self.len += json.len() as u64;
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The route of a workout whose `FileReference`s name `files`, as stored (a JSON array of
    /// points, the files' in their order); `None` when a file was not in the archive.
    pub fn route(&self, files: &[String]) -> io::Result<Option<String>> {
        let mut parts = Vec::with_capacity(files.len());
        for path in files {
            let (Some(&(at, len)), Some(file)) = (self.index.get(path), &self.file) else {
                return Ok(None);
            };
            let mut json = vec![0; len];
            file.read_exact_at(&mut json, at)?;
            parts.push(json);
        }
        let json = match parts.len() {
            0 => return Ok(None),
            1 => parts.pop().unwrap_or_default(),
            _ => {
                let mut points: Vec<RoutePoint> = Vec::new();
                for part in parts {
                    points.extend(serde_json::from_slice::<Vec<RoutePoint>>(&part)?);
                }
                serde_json::to_vec(&points)?
            }
        };
        String::from_utf8(json).map(Some).map_err(io::Error::other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpx(points: &[(f64, f64)]) -> String {
        let pts: String = points
            .iter()
            .map(|(lat, lon)| format!(r#"<trkpt lat="{lat}" lon="{lon}"/>"#))
            .collect();
        format!("<gpx><trk><trkseg>{pts}</trkseg></trk></gpx>")
    }

    #[test]
    fn routes_come_back_by_their_files_in_order() {
        let mut spool = RouteSpool::default();
        let mut report = Report::default();
        for (path, pts) in [("/a.gpx", vec![(1.0, 2.0)]), ("/b.gpx", vec![(3.0, 4.0), (5.0, 6.0)])]
        {
            let mut data = gpx(&pts).into_bytes();
            spool.add(path, &mut &data[..], &mut report).unwrap_or_default();
            data.clear();
        }
        spool.add("/bad.gpx", &mut &b"<gpx/>"[..], &mut report).unwrap_or_default();
        assert_eq!(report.received["route_files"], 3);
        assert_eq!(
            report.dropped["route.unreadable"].examples,
            vec!["/bad.gpx: no track point with a readable position"]
        );
        let route = |files: &[&str]| {
            let files: Vec<String> = files.iter().map(|f| f.to_string()).collect();
            let json = spool.route(&files).unwrap_or_default()?;
            let points: Vec<RoutePoint> = serde_json::from_str(&json).unwrap_or_default();
            Some(points.iter().map(|p| (p.latitude, p.longitude)).collect::<Vec<_>>())
        };
        assert_eq!(route(&["/b.gpx"]), Some(vec![(3.0, 4.0), (5.0, 6.0)]));
        assert_eq!(route(&["/b.gpx", "/a.gpx"]), Some(vec![(3.0, 4.0), (5.0, 6.0), (1.0, 2.0)]));
        assert_eq!(route(&["/a.gpx", "/missing.gpx"]), None);
        assert_eq!(route(&["/bad.gpx"]), None);
        assert_eq!(route(&[]), None);
    }
}
