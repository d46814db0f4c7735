//! A workout route of an export: `workout-routes/route_….gpx`, as Apple Health writes it —
//! `<trkpt lat lon>` with `<ele>`, `<time>` and, in `<extensions>`, `<hAcc>` (horizontal
//! accuracy in metres) — read into the points every route is kept as.

use std::io::BufRead;

use quick_xml::events::Event;
use schema::workouts::RoutePoint;

use super::attrs::{self, Attrs};

/// The largest route file read: a day-long ride at one point a second is about 30 MB.
pub(super) const MAX_ROUTE_BYTES: u64 = 64 << 20;
/// The most points one route keeps.
pub(super) const MAX_ROUTE_POINTS: usize = 200_000;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum RouteError {
    #[error("larger than {MAX_ROUTE_BYTES} bytes or {MAX_ROUTE_POINTS} points")]
    TooLarge,
    #[error("malformed GPX at byte {offset}: {reason}")]
    Malformed { offset: u64, reason: String },
    #[error("no track point with a readable position")]
    NoPoints,
}

impl RouteError {
    /// The reason an import reports the file under.
    pub(super) fn code(&self) -> &'static str {
        match self {
            RouteError::TooLarge => "route.too_large",
            RouteError::Malformed { .. } | RouteError::NoPoints => "route.unreadable",
        }
    }
}

/// Which text a track point's child holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Elevation,
    Time,
    HorizontalAccuracy,
}

#[derive(Debug, Default)]
struct Open {
    lat: Option<f64>,
    lon: Option<f64>,
    ele: Option<f64>,
    time: Option<String>,
    h_acc: Option<f64>,
}

/// The route's points, in the file's order.
pub(super) fn read_route(input: impl BufRead) -> Result<Vec<RoutePoint>, RouteError> {
    let mut xml = quick_xml::Reader::from_reader(input.take(MAX_ROUTE_BYTES + 1));
    let mut buf = Vec::new();
    let mut points = Vec::new();
    let mut open: Option<Open> = None;
    let mut field: Option<Field> = None;
    loop {
        buf.clear();
        let event = xml.read_event_into(&mut buf).map_err(|e| RouteError::Malformed {
            offset: xml.error_position(),
            reason: e.to_string(),
        })?;
        if xml.buffer_position() > MAX_ROUTE_BYTES {
            return Err(RouteError::TooLarge);
        }
        match event {
            Event::Start(e) if e.local_name().as_ref() == b"trkpt" => open = Some(point(&e)),
            Event::Empty(e) if e.local_name().as_ref() == b"trkpt" => {
                open = Some(point(&e));
                close(&mut open, &mut points)?;
            }
            Event::Start(e) => {
                field = match e.local_name().as_ref() {
                    b"ele" => Some(Field::Elevation),
                    b"time" => Some(Field::Time),
                    b"hAcc" => Some(Field::HorizontalAccuracy),
                    _ => None,
                };
            }
            Event::Text(t) => {
                if let (Some(p), Some(f)) = (open.as_mut(), field) {
                    let text = String::from_utf8_lossy(&t).trim().to_string();
                    match f {
                        Field::Elevation => p.ele = text.parse().ok(),
                        Field::HorizontalAccuracy => p.h_acc = text.parse().ok(),
                        Field::Time => {
                            p.time = chrono::DateTime::parse_from_rfc3339(&text).ok().map(|_| text)
                        }
                    }
                }
            }
            Event::End(e) => {
                field = None;
                if e.local_name().as_ref() == b"trkpt" {
                    close(&mut open, &mut points)?;
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if points.is_empty() {
        return Err(RouteError::NoPoints);
    }
    Ok(points)
}

/// A track point opened, with its position.
fn point(tag: &[u8]) -> Open {
    let mut p = Open::default();
    for (k, v) in Attrs::of_tag(tag) {
        match k {
            b"lat" => p.lat = attrs::number(v),
            b"lon" => p.lon = attrs::number(v),
            _ => {}
        }
    }
    p
}

/// Ends the open track point: kept when its position is readable.
fn close(open: &mut Option<Open>, points: &mut Vec<RoutePoint>) -> Result<(), RouteError> {
    let Some(p) = open.take() else { return Ok(()) };
    let (Some(lat), Some(lon)) = (p.lat, p.lon) else { return Ok(()) };
    if let Some(point) = RoutePoint::new(p.time, lat, lon, p.ele, p.h_acc) {
        if points.len() == MAX_ROUTE_POINTS {
            return Err(RouteError::TooLarge);
        }
        points.push(point);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const APPLE: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<gpx version="1.1" creator="Apple Health Export" xmlns="http://www.topografix.com/GPX/1/1" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/1/1/gpx.xsd">
<metadata>
<time>2024-01-02T07:31:10Z</time>
</metadata>
<trk>
<name>Route 2024-01-02 8:31am</name>
<trkseg>
<trkpt lon="21.012230" lat="52.229676"><ele>110.5</ele><time>2024-01-02T07:31:12Z</time><extensions><speed>2.9</speed><course>84.1</course><hAcc>3.1</hAcc><vAcc>2.4</vAcc></extensions></trkpt>
<trkpt lon="21.012290" lat="52.229701"><ele>110.7</ele><time>2024-01-02T07:31:13Z</time><extensions><speed>3.0</speed><course>84.3</course><hAcc>3.0</hAcc><vAcc>2.4</vAcc></extensions></trkpt>
<trkpt lon="200.0" lat="52.2"><ele>1</ele><time>2024-01-02T07:31:14Z</time></trkpt>
<trkpt lat="52.229760" lon="21.012400"/>
</trkseg>
</trk>
</gpx>
"#;

    #[test]
    fn reads_apple_track_points_in_the_sdk_shape() {
        let points = read_route(APPLE.as_bytes()).unwrap_or_default();
        assert_eq!(points.len(), 3, "{points:?}");
        assert_eq!(
            points[0],
            RoutePoint {
                timestamp: Some("2024-01-02T07:31:12Z".into()),
                latitude: 52.229676,
                longitude: 21.01223,
                altitude_m: Some(110.5),
                horizontal_accuracy_m: Some(3.1),
            }
        );
        // The point with a longitude out of range is left out; a bare point keeps its position.
        assert_eq!(points[2].latitude, 52.22976);
        assert_eq!((points[2].timestamp.as_deref(), points[2].altitude_m), (None, None));
        // Metadata's <time> is not a point's.
        assert!(points.iter().all(|p| p.timestamp.as_deref() != Some("2024-01-02T07:31:10Z")));
    }

    #[test]
    fn unreadable_and_oversized_routes_say_so() {
        assert_eq!(read_route(&b"<gpx><trk></trk></gpx>"[..]), Err(RouteError::NoPoints));
        let cut = &APPLE.as_bytes()[..APPLE.find("<ele>").unwrap_or(0) + 8];
        // A file that stops inside a point keeps nothing of it; one that stops in a tag fails.
        assert!(matches!(read_route(cut), Err(RouteError::NoPoints)));
        assert!(matches!(
            read_route(&b"<gpx><trkpt lat=\"1\" lon=\"2\"></gpx>"[..]),
            Err(RouteError::Malformed { .. })
        ));
        let many =
            format!("<gpx>{}</gpx>", r#"<trkpt lat="1" lon="2"/>"#.repeat(MAX_ROUTE_POINTS + 1));
        assert_eq!(read_route(many.as_bytes()), Err(RouteError::TooLarge));
    }
}
