//! The `device` attribute of an export record:
//! `<<HKDevice: 0x283c1a490>, name:Apple Watch, manufacturer:Apple Inc., model:Watch,
//! hardware:Watch6,2, software:10.0>`.

use schema::data_sources::NewDataSource;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Device {
    pub name: Option<String>,
    pub manufacturer: Option<String>,
    pub model: Option<String>,
    pub hardware: Option<String>,
    pub software: Option<String>,
}

const KEYS: &[&str] = &[
    "name",
    "manufacturer",
    "model",
    "hardware",
    "software",
    "localIdentifier",
    "UDIDeviceIdentifier",
    "FDAUDI",
];

pub(super) fn parse(s: &str) -> Device {
    let body = s.trim().trim_start_matches('<').trim_end_matches('>');
    // Skip the `HKDevice: 0x…>` header.
    let body = body.split_once(">,").map(|(_, rest)| rest).unwrap_or(body);
    let mut d = Device::default();
    let mut current: Option<(&str, String)> = None;
    let flush = |field: Option<(&str, String)>, d: &mut Device| {
        if let Some((key, value)) = field {
            let value = Some(value.trim().to_string()).filter(|v| !v.is_empty());
            match key {
                "name" => d.name = value,
                "manufacturer" => d.manufacturer = value,
                "model" => d.model = value,
                "hardware" => d.hardware = value,
                "software" => d.software = value,
                _ => {}
            }
        }
    };
    // Fields are separated by ", ", but values may contain commas (`Watch6,2`, a user's device
    // name): a piece that does not start with a known key belongs to the previous value.
    for piece in body.split(", ") {
        match piece.trim().split_once(':') {
            Some((key, value)) if KEYS.contains(&key) => {
                flush(current.take(), &mut d);
                current = Some((key, value.to_string()));
            }
            _ => {
                if let Some((_, v)) = current.as_mut() {
                    v.push_str(", ");
                    v.push_str(piece);
                }
            }
        }
    }
    flush(current, &mut d);
    d
}

/// The data source of an export record: its device's hardware model (as the iOS SDK reports
/// it, so SDK and export data of one watch share a source) and its `sourceName`.
pub(super) fn source(source_name: Option<&str>, device: Option<&Device>) -> NewDataSource {
    let model = device.and_then(|d| d.hardware.clone().or_else(|| d.model.clone()));
    let kind = model.as_deref().map(|m| {
        let m = m.to_ascii_lowercase();
        if m.contains("watch") {
            "watch"
        } else if m.contains("iphone") || m.contains("ipad") {
            "phone"
        } else {
            "other"
        }
    });
    NewDataSource {
        provider: "phonehealth".to_string(),
        user_connection_id: None,
        device_model: model,
        device_manufacturer: device.and_then(|d| d.manufacturer.clone()),
        software_version: device.and_then(|d| d.software.clone()),
        source: source_name.map(str::to_string),
        device_type: kind.map(str::to_string),
        original_source_name: source_name.map(str::to_string),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_apple_device_strings() {
        let d = parse(
            "<<HKDevice: 0x283c1a490>, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,2, software:10.0>",
        );
        assert_eq!(d.name.as_deref(), Some("Apple Watch"));
        assert_eq!(d.manufacturer.as_deref(), Some("Apple Inc."));
        assert_eq!(d.model.as_deref(), Some("Watch"));
        assert_eq!(d.hardware.as_deref(), Some("Watch6,2"));
        assert_eq!(d.software.as_deref(), Some("10.0"));
        let d = parse(
            "<<HKDevice: 0x1>, name:Bob, the phone, manufacturer:Apple Inc., model:iPhone, hardware:iPhone15,2, software:17.1>",
        );
        assert_eq!(d.name.as_deref(), Some("Bob, the phone"));
        assert_eq!(d.hardware.as_deref(), Some("iPhone15,2"));
        let s = source(Some("Ada’s iPhone"), Some(&d));
        assert_eq!(
            (s.device_model.as_deref(), s.device_type.as_deref()),
            (Some("iPhone15,2"), Some("phone"))
        );
        assert_eq!(parse("junk"), Device::default());
    }
}
