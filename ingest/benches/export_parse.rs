//! Apple Health export parse + normalise: quick-xml cutting the file into raw-tag chunks,
//! rayon normalising each chunk on every core. Input: 100 days of a generated iPhone + Watch
//! export (`ingest::export::generate`), in memory.
//!
//! Run: `cargo bench -p ingest --bench export_parse`

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ingest::export::generate::{ExportSpec, write_export};
use ingest::export::{ExportReader, normalise};

fn parse(c: &mut Criterion) {
    let mut xml = Vec::new();
    write_export(&mut xml, &ExportSpec::new(100)).unwrap_or_default();
    let mut group = c.benchmark_group("export_parse");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(xml.len() as u64));
    group.bench_function(format!("{}MB", xml.len() / 1_000_000), |b| {
        b.iter(|| {
            let mut samples = 0;
            for chunk in ExportReader::new(&xml[..]) {
                let Ok(chunk) = chunk else { break };
                samples += normalise(&chunk).normalised.samples.len();
            }
            std::hint::black_box(samples)
        })
    });
    group.finish();
}

criterion_group!(benches, parse);
criterion_main!(benches);
