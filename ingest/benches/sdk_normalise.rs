//! Parse + normalise of SDK sync payloads (simd-json, identifier and unit mapping, sources,
//! sleep assembly), one core. Inputs come from the committed generator
//! (`ingest::payloads`): 10,000 records plus a night of sleep stages and a workout, in each
//! client's wire format.
//!
//! Run: `cargo bench -p ingest --bench sdk_normalise`

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ingest::payloads::{Platform, Spec, payload};

fn normalise(c: &mut Criterion) {
    let mut group = c.benchmark_group("sdk_normalise");
    for (name, platform) in [
        ("ios", Platform::Ios),
        ("health_connect", Platform::HealthConnect),
        ("samsung", Platform::Samsung),
    ] {
        for records in [100, 10_000] {
            let body = payload(&Spec::new(platform, records)).to_string().into_bytes();
            group.throughput(Throughput::Elements(records as u64));
            group.bench_with_input(BenchmarkId::new(name, records), &body, |b, body| {
                b.iter_batched_ref(
                    || ingest::sdk::PaddedJson::copy_of(body),
                    |bytes| {
                        let n = ingest::sdk::normalise_padded(bytes).unwrap_or_default();
                        std::hint::black_box(n.samples.len())
                    },
                    BatchSize::LargeInput,
                )
            });
        }
    }
    group.finish();
}

criterion_group!(benches, normalise);
criterion_main!(benches);
