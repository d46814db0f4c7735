//! The SDK sync payload as documented in the OpenAPI document: what the iOS and Android SDKs
//! send (`../shared/reference/sdk-clients.md`). Schemas only: the worker reads the body with its
//! own lenient wire types (`ingest::sdk::wire`), which also take snake_case names and numbers
//! sent as strings, and drop a bad item with its reason instead of refusing the batch.
#![allow(dead_code)] // schemas only: never built

use utoipa::ToSchema;

/// One sync: `{provider, sdkVersion, syncTimestamp, data: {records, sleep, workouts}}`.
#[derive(ToSchema)]
#[schema(rename_all = "camelCase", example = json!({
    "provider": "apple", "sdkVersion": "0.13.0", "syncTimestamp": "2026-03-14T18:46:45Z",
    "data": {
        "records": [{"type": "HKQuantityTypeIdentifierHeartRate", "startDate": "2026-03-14T18:40:00Z",
            "zoneOffset": "+01:00", "value": 72, "unit": "count/min",
            "source": {"name": "Apple Watch", "bundleIdentifier": "com.apple.health", "deviceModel": "Watch6,2"}}],
        "sleep": [], "workouts": []
    }
}))]
pub(crate) struct SdkPayload {
    /// `apple` (the iOS SDK), `google` (Health Connect) or `samsung` (Samsung Health).
    provider: String,
    sdk_version: Option<String>,
    /// When the phone sent the batch (ISO 8601).
    sync_timestamp: Option<String>,
    data: SdkData,
}

#[derive(ToSchema)]
pub(crate) struct SdkData {
    records: Vec<SdkRecord>,
    sleep: Vec<SdkSleepItem>,
    workouts: Vec<SdkWorkout>,
}

/// A sample: HealthKit's `HKQuantityTypeIdentifier…` or Health Connect's record type.
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
pub(crate) struct SdkRecord {
    #[schema(rename = "type")]
    kind: String,
    /// ISO 8601.
    start_date: String,
    /// `Z`, `+HH:MM`, or null (the batch's latest known offset is used).
    zone_offset: Option<String>,
    value: f64,
    /// The unit as the platform writes it (`count/min`, `Cal`, `%`, `mmol/L`, …).
    unit: Option<String>,
    source: Option<SdkSource>,
}

/// The app and device that wrote an item; wearhouse keeps one data source per device.
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
pub(crate) struct SdkSource {
    app_id: Option<String>,
    name: Option<String>,
    bundle_identifier: Option<String>,
    device_name: Option<String>,
    device_manufacturer: Option<String>,
    device_model: Option<String>,
    product_type: Option<String>,
    device_type: Option<String>,
    device_software_version: Option<String>,
    operating_system_version: Option<SdkOsVersion>,
}

#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
pub(crate) struct SdkOsVersion {
    major_version: Option<i64>,
    minor_version: Option<i64>,
    patch_version: Option<i64>,
}

/// A sleep stage; stages of one night become one session.
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
pub(crate) struct SdkSleepItem {
    id: Option<String>,
    parent_id: Option<String>,
    /// `in_bed`, `sleeping`/`asleep`, `awake`, `light`/`core`, `deep`, `rem`, `unknown` (any case).
    stage: String,
    start_date: String,
    end_date: String,
    zone_offset: Option<String>,
    source: Option<SdkSource>,
}

#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
pub(crate) struct SdkWorkout {
    id: Option<String>,
    /// The platform's activity type (`HKWorkoutActivityTypeRunning`, `RUNNING`, …).
    #[schema(rename = "type")]
    kind: String,
    start_date: String,
    end_date: String,
    zone_offset: Option<String>,
    notes: Option<String>,
    source: Option<SdkSource>,
    /// Statistics: distance, energy, heart rate, … each with its unit.
    values: Vec<SdkWorkoutStat>,
    samples: Vec<SdkWorkoutSample>,
    route: Vec<SdkRoutePoint>,
}

#[derive(ToSchema)]
pub(crate) struct SdkWorkoutStat {
    #[schema(rename = "type")]
    kind: String,
    value: f64,
    unit: Option<String>,
}

#[derive(ToSchema)]
pub(crate) struct SdkWorkoutSample {
    timestamp: String,
    #[schema(rename = "type")]
    kind: String,
    value: f64,
    unit: Option<String>,
}

#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
pub(crate) struct SdkRoutePoint {
    timestamp: String,
    latitude: f64,
    longitude: f64,
    altitude_m: Option<f64>,
    horizontal_accuracy_m: Option<f64>,
}
