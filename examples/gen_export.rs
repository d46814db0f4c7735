//! Writes a generated Apple Health export (see `ingest::export::generate`):
//!
//!     cargo run --release --example gen_export -- --days 1650 --out export.xml
//!     cargo run --release --example gen_export -- --days 730 --zip --out export.zip
//!     cargo run --release --example gen_export -- --days 700 --shape varied --out export.xml
//!     cargo run --release --example gen_export -- --days 1650 --out export.xml --routes dir
//!
//! `--routes DIR` also writes the workouts' route files, `DIR/workout-routes/route_….gpx`, as an
//! iPhone puts them beside `export.xml`.
//!
//! About 0.6 MB of XML a day; `--days 1650` is about 1 GB. `--shape varied`: many small records
//! of many types from many apps (see `Shape`).

use std::io::{BufWriter, Write};

use ingest::export::generate::{ExportSpec, workout_routes, write_export};

fn main() -> std::io::Result<()> {
    let mut spec = ExportSpec::new(30);
    let (mut out, mut zip, mut routes) = (None, false, None);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--days" => spec.days = args.next().and_then(|v| v.parse().ok()).unwrap_or(30),
            "--seed" => spec.seed = args.next().and_then(|v| v.parse().ok()).unwrap_or(7),
            "--out" => out = args.next(),
            "--shape" => match args.next().unwrap_or_default().parse() {
                Ok(shape) => spec.shape = shape,
                Err(e) => {
                    eprintln!("{e}");
                    std::process::exit(2);
                }
            },
            "--zip" => zip = true,
            "--routes" => routes = args.next(),
            other => {
                eprintln!("unknown option {other}");
                std::process::exit(2);
            }
        }
    }
    let records = if zip {
        // An iPhone's export.zip: the XML under apple_health_export/, deflated.
        let Some(path) = &out else {
            eprintln!("--zip needs --out");
            std::process::exit(2);
        };
        let mut z = zip::ZipWriter::new(std::fs::File::create(path)?);
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        z.start_file("apple_health_export/export_cda.xml", options)?;
        z.write_all(b"<?xml version=\"1.0\"?><ClinicalDocument/>")?;
        z.start_file("apple_health_export/export.xml", options)?;
        let mut w = BufWriter::with_capacity(1 << 20, &mut z);
        let n = write_export(&mut w, &spec)?;
        w.flush()?;
        drop(w);
        z.finish()?;
        n
    } else {
        let sink: Box<dyn Write> = match &out {
            Some(path) => Box::new(std::fs::File::create(path)?),
            None => Box::new(std::io::stdout().lock()),
        };
        let mut w = BufWriter::with_capacity(1 << 20, sink);
        let n = write_export(&mut w, &spec)?;
        w.flush()?;
        n
    };
    if let Some(dir) = routes {
        let dir = std::path::Path::new(&dir);
        std::fs::create_dir_all(dir.join("workout-routes"))?;
        for (name, gpx) in workout_routes(&spec) {
            std::fs::write(dir.join(name), gpx)?;
        }
    }
    eprintln!("{records} records over {} days", spec.days);
    Ok(())
}
