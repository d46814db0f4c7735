//! SDK `source` objects → data sources. The iOS SDK writes camelCase keys, older payloads
//! snake_case; both are read.
//!
//! Identity: the device model (`deviceModel`, else iOS `productType`) and the source name
//! (`name`, else `deviceName`, else the app id). Versions are descriptive only, so a software
//! update does not create a new source.

use schema::data_sources::NewDataSource;

use super::wire::{Obj, SourceIn};
use crate::batch::Sources;

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

fn os_version(s: &SourceIn<'_>) -> Option<String> {
    let v = s.operating_system_version.value()?;
    let part = |p: &super::wire::Scalar<'_>| p.number().map(|n| n as i64);
    Some(format!(
        "{}.{}.{}",
        part(&v.major_version)?,
        part(&v.minor_version).unwrap_or(0),
        part(&v.patch_version).unwrap_or(0)
    ))
}

/// The index of an item's source (a `null` or missing source is the provider's unknown source).
pub(super) fn intern(sources: &mut Sources, provider: &str, source: &Obj<SourceIn<'_>>) -> usize {
    let Some(s) = source.value() else {
        return sources.intern(None, None, || NewDataSource {
            provider: provider.to_string(),
            ..Default::default()
        });
    };
    let model = s.device_model.str().or(s.product_type.str());
    let name =
        s.name.str().or(s.device_name.str()).or(s.app_id.str()).or(s.bundle_identifier.str());
    sources.intern(model, name, || NewDataSource {
        provider: provider.to_string(),
        user_connection_id: None,
        device_model: model.map(str::to_string),
        device_manufacturer: s.device_manufacturer.str().map(str::to_string),
        software_version: s
            .device_software_version
            .str()
            .map(str::to_string)
            .or_else(|| os_version(s)),
        source: name.map(str::to_string),
        device_type: device_type(s.device_type.str()),
        original_source_name: s.name.str().or(s.device_name.str()).map(str::to_string),
    })
}
