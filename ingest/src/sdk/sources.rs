//! SDK `source` objects → data sources. The iOS SDK writes camelCase keys, older payloads
//! snake_case; both are read.
//!
//! Identity: the device model (`deviceModel`, else iOS `productType`) and the source name
//! (`name`, else `deviceName`, else the app id). Versions are descriptive only, so a software
//! update does not create a new source.

use schema::data_sources::NewDataSource;
use simd_json::BorrowedValue;
use simd_json::prelude::*;

use crate::batch::Sources;

fn text<'v>(obj: &'v BorrowedValue<'_>, keys: &[&str]) -> Option<&'v str> {
    keys.iter()
        .find_map(|k| obj.get(*k).and_then(|v| v.as_str()))
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// The device type in our vocabulary (`watch`, `phone`, `band`, `ring`, `scale`, `other`).
fn device_type(raw: Option<&str>) -> Option<String> {
    let t = raw?.to_ascii_lowercase();
    Some(
        match t.as_str() {
            "watch" | "smartwatch" => "watch",
            "phone" | "iphone" | "ipad" => "phone",
            "band" | "fitness_band" | "tracker" => "band",
            "ring" => "ring",
            "scale" => "scale",
            "unknown" => "unknown",
            _ => "other",
        }
        .to_string(),
    )
}

fn os_version(obj: &BorrowedValue<'_>) -> Option<String> {
    let v = obj.get("operatingSystemVersion").or_else(|| obj.get("operating_system_version"))?;
    let part = |k: &str| v.get(k).and_then(|x| x.cast_f64()).map(|n| n as i64);
    Some(format!(
        "{}.{}.{}",
        part("majorVersion")?,
        part("minorVersion").unwrap_or(0),
        part("patchVersion").unwrap_or(0)
    ))
}

/// The index of an item's source (a `null` or missing source is the provider's unknown source).
pub fn intern(sources: &mut Sources, provider: &str, source: Option<&BorrowedValue<'_>>) -> usize {
    let obj = source.filter(|s| s.is_object());
    let Some(obj) = obj else {
        return sources.intern(None, None, || NewDataSource {
            provider: provider.to_string(),
            ..Default::default()
        });
    };
    let model = text(obj, &["deviceModel", "device_model", "productType", "product_type"]);
    let name = text(
        obj,
        &[
            "name",
            "deviceName",
            "device_name",
            "appId",
            "app_id",
            "bundleIdentifier",
            "bundle_identifier",
        ],
    );
    sources.intern(model, name, || NewDataSource {
        provider: provider.to_string(),
        user_connection_id: None,
        device_model: model.map(str::to_string),
        device_manufacturer: text(obj, &["deviceManufacturer", "device_manufacturer"])
            .map(str::to_string),
        software_version: text(obj, &["deviceSoftwareVersion", "device_software_version"])
            .map(str::to_string)
            .or_else(|| os_version(obj)),
        source: name.map(str::to_string),
        device_type: device_type(text(obj, &["deviceType", "device_type"])),
        original_source_name: text(obj, &["name", "deviceName", "device_name"]).map(str::to_string),
    })
}
