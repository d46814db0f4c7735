//! The parsers under arbitrary input, property-based on stable Rust (proptest): the SDK
//! envelope and its items, the export XML reader and the zip reader never panic, whatever the
//! bytes: random ones, valid documents with bytes changed or cut off, and JSON of the right
//! shape with values of every wrong type. Their memory bounds are tested in `export::bounds`.
//!
//! Each property runs 256 cases here; a longer run: `PROPTEST_CASES=30000 cargo test
//! -p ingest --features testsuite --lib -- fuzz` (figures in benches/README.md).

use proptest::prelude::*;
use serde_json::{Value, json};

use crate::payloads::{Platform, Spec, payload};

fn sdk_body(platform: Platform) -> Vec<u8> {
    let mut spec = Spec::new(platform, 12);
    spec.seed = 7;
    payload(&spec).to_string().into_bytes()
}

fn export_xml() -> Vec<u8> {
    let mut out = Vec::new();
    let spec = crate::export::generate::ExportSpec::new(1);
    crate::export::generate::write_export(&mut out, &spec).unwrap_or_default();
    out
}

/// Reads every chunk of an export and normalises it, as the import does.
fn read_export(bytes: &[u8]) {
    for chunk in crate::export::ExportReader::new(bytes) {
        match chunk {
            Ok(c) => drop(crate::export::normalise(&c)),
            Err(_) => return,
        }
    }
}

/// A document with some bytes changed and perhaps cut off.
fn mutated(base: Vec<u8>) -> impl Strategy<Value = Vec<u8>> {
    let len = base.len().max(1);
    (prop::collection::vec((0..len, any::<u8>()), 0..16), 0..=len).prop_map(
        move |(changes, cut)| {
            let mut b = base.clone();
            for (i, byte) in changes {
                if let Some(slot) = b.get_mut(i) {
                    *slot = byte;
                }
            }
            b.truncate(cut.max(1));
            b
        },
    )
}

/// Any JSON value, a few levels deep.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        ".{0,12}".prop_map(Value::from),
        // Strings the parsers look into: dates, offsets, units, stages, identifiers.
        prop::sample::select(vec![
            "2026-03-14T08:00:00Z",
            "2026-03-14T08:00:00+01:00",
            "+14:00",
            "-99:99",
            "count/min",
            "mmol/L",
            "ms",
            "deep",
            "in_bed",
            "HKQuantityTypeIdentifierHeartRate",
            "HEART_RATE",
            "",
        ])
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(field(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Field names of the SDK wire format, and a stranger.
fn field() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "id",
        "type",
        "value",
        "unit",
        "startDate",
        "endDate",
        "zoneOffset",
        "source",
        "stage",
        "values",
        "samples",
        "route",
        "metadata",
        "parentId",
        "deviceType",
        "appId",
        "time",
        "unknown",
    ])
    .prop_map(str::to_string)
}

proptest! {
    #[test]
    fn sdk_bodies_of_random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        let _ = crate::sdk::normalise(&bytes);
    }

    #[test]
    fn sdk_bodies_with_bytes_changed(bytes in mutated(sdk_body(Platform::Ios))) {
        let _ = crate::sdk::normalise(&bytes);
    }

    #[test]
    fn sdk_items_of_every_wrong_type(
        provider in prop::sample::select(vec!["apple", "google", "samsung"]),
        records in prop::collection::vec(any_json(), 0..4),
        sleep in prop::collection::vec(any_json(), 0..4),
        workouts in prop::collection::vec(any_json(), 0..4),
    ) {
        let body = json!({"provider": provider, "sdkVersion": "1", "syncTimestamp": "x",
                          "data": {"records": records, "sleep": sleep, "workouts": workouts}});
        let bytes = body.to_string().into_bytes();
        let _ = crate::sdk::normalise(&bytes);
    }

    #[test]
    fn exports_of_random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        let mut doc = b"<HealthData>".to_vec();
        doc.extend(bytes);
        read_export(&doc);
    }

    #[test]
    fn exports_with_bytes_changed(bytes in mutated(export_xml())) {
        read_export(&bytes);
    }
}

#[test]
fn the_valid_documents_parse() {
    for platform in [Platform::Ios, Platform::HealthConnect, Platform::Samsung] {
        let body = sdk_body(platform);
        assert!(crate::sdk::normalise(&body).is_ok_and(|n| !n.samples.is_empty()));
    }
    let xml = export_xml();
    let chunks: Vec<_> = crate::export::ExportReader::new(&xml[..]).collect();
    assert!(!chunks.is_empty() && chunks.iter().all(Result::is_ok));
}
