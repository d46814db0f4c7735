//! The SDK sync envelope: `{provider, sdkVersion, syncTimestamp, data: {records, sleep,
//! workouts}}`. The accept path checks the JSON and reads `provider`; the worker parses the rest.

use crate::units::Origin;
use schema::catalogue::providers::{self, Provider};
use simd_json::prelude::ValueAsScalar as _;

/// The providers the SDK envelope may name, with the client each stands for.
pub(crate) const SDK_PROVIDERS: &[(&str, &str, Origin)] = &[
    ("apple", "phonehealth", Origin::Ios),
    ("phonehealth", "phonehealth", Origin::Ios),
    ("google", "google", Origin::HealthConnect),
    ("samsung", "samsung", Origin::Samsung),
];

/// The stored provider and the wire origin for an envelope's `provider` (any case).
pub fn sdk_provider(name: &str) -> Option<(&'static Provider, Origin)> {
    let lower = name.trim().to_ascii_lowercase();
    SDK_PROVIDERS
        .iter()
        .find(|(wire, _, _)| *wire == lower)
        .and_then(|(_, slug, origin)| providers::by_slug(slug).map(|p| (p, *origin)))
}

/// The message of the contract's 400 for an unsupported SDK provider.
pub fn unsupported_message(name: Option<&str>) -> String {
    format!("Unsupported provider: {}. Supported: apple, samsung, google", name.unwrap_or("(none)"))
}

/// The accept-time check of a body: well-formed JSON (simd-json's validating parse, at memory
/// speed), and its top-level `provider` string, if any, wherever it stands. Records are checked
/// one by one later; a body no worker could read at all is refused now, instead of being stored
/// for a month. simd-json parses in place: `body` is scratch afterwards (the caller keeps what
/// it stores, e.g. compresses first), which spares a copy of every body on the hot path.
pub fn check(body: &mut super::PaddedJson) -> Result<Option<String>, super::EnvelopeError> {
    super::scratch::with_tape(body, |tape| {
        let provider = tape.as_value().get("provider");
        let name = provider.as_ref().and_then(|v| v.as_str()).map(str::to_owned);
        (name, tape)
    })
    .map_err(|e| super::EnvelopeError::Json(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_provider_wherever_it_is() {
        let provider =
            |body: &[u8]| check(&mut crate::sdk::PaddedJson::copy_of(body)).ok().flatten();
        assert_eq!(provider(br#"{"provider":"apple","data":{}}"#).as_deref(), Some("apple"));
        let late = br#" { "sdkVersion" : "0.13.0", "data": {"records": [{"type": "x", "v": [1, {"a": "}"}]}]},
            "syncTimestamp": "2026-03-14T18:46:45Z", "provider" : "google" } "#;
        assert_eq!(provider(late).as_deref(), Some("google"));
        assert_eq!(provider(br#"{"provider":"sam\u0073ung"}"#).as_deref(), Some("samsung"));
        assert_eq!(
            provider(br#"{"n": 1.5e3, "b": true, "z": null, "provider": "x"}"#).as_deref(),
            Some("x")
        );
        // Only the top level counts.
        assert_eq!(provider(br#"{"data": {"provider": "apple"}}"#), None);
        for body in [&b"[]"[..], b"{}", br#"{"data": {}}"#, br#"{"provider": 5}"#, b"\"apple\""] {
            let found = check(&mut crate::sdk::PaddedJson::copy_of(body)).ok();
            assert_eq!(found, Some(None), "{}", String::from_utf8_lossy(body));
        }
    }

    #[test]
    fn a_thread_s_kept_buffers_carry_nothing_from_one_body_to_the_next() {
        // Long, refused, short, long again on one thread: each answer is its own body's.
        let long = format!(
            r#"{{"data": {{"records": [{}]}}, "provider": "google"}}"#,
            "1,".repeat(5000) + "1"
        );
        let check_one = |body: &str| check(&mut crate::sdk::PaddedJson::copy_of(body.as_bytes()));
        assert_eq!(check_one(&long).ok().flatten().as_deref(), Some("google"));
        assert!(check_one(r#"{"provider": "apple", "#).is_err());
        assert_eq!(
            check_one(r#"{"provider":"samsung"}"#).ok().flatten().as_deref(),
            Some("samsung")
        );
        assert!(check_one(r#"{"provider": "apple"} x"#).is_err());
        assert_eq!(check_one(&long).ok().flatten().as_deref(), Some("google"));
    }

    #[test]
    fn a_body_is_well_formed_json_or_refused() {
        for junk in [
            &br#"{"provider":"apple", "#[..],
            br#"{"provider":"apple"} trailing"#,
            br#"{"provider":"apple", "data": [1, 2}"#,
            b"{\"provider\":\"apple\", \"x\": \"\xff\"}",
            b"{\"provider\": \"unterminated",
            b"not json",
            b"",
        ] {
            let e = check(&mut crate::sdk::PaddedJson::copy_of(junk));
            assert!(
                matches!(e, Err(crate::sdk::EnvelopeError::Json(_))),
                "{}: {e:?}",
                String::from_utf8_lossy(junk)
            );
        }
    }

    #[test]
    fn providers_map_to_clients() {
        assert_eq!(
            sdk_provider("apple").map(|(p, o)| (p.slug, o)),
            Some(("phonehealth", Origin::Ios))
        );
        assert_eq!(sdk_provider("Apple").map(|(p, _)| p.slug), Some("phonehealth"));
        assert_eq!(sdk_provider("google").map(|(_, o)| o), Some(Origin::HealthConnect));
        assert_eq!(sdk_provider("samsung").map(|(_, o)| o), Some(Origin::Samsung));
        assert!(sdk_provider("fitbit").is_none());
        assert_eq!(
            unsupported_message(Some("fitbit")),
            "Unsupported provider: fitbit. Supported: apple, samsung, google"
        );
    }
}
