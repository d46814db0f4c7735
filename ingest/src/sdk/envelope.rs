//! The SDK sync envelope: `{provider, sdkVersion, syncTimestamp, data: {records, sleep,
//! workouts}}`. The accept path only peeks at `provider`; the worker parses the rest.

use schema::catalogue::providers::{self, Provider};
use schema::catalogue::units::Origin;

/// The providers the SDK envelope may name, with the client each stands for.
pub const SDK_PROVIDERS: &[(&str, &str, Origin)] = &[
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
/// speed, on a copy: the stored batch stays as sent). Records are checked one by one later;
/// a body no worker could read at all is refused now, instead of being stored for a month.
pub fn validate(body: &[u8]) -> Result<(), super::EnvelopeError> {
    let mut copy = body.to_vec();
    simd_json::to_tape(&mut copy).map_err(|e| super::EnvelopeError::Json(e.to_string()))?;
    Ok(())
}

/// The top-level `provider` string of a JSON object, found without parsing the document:
/// a scan that skips every other member's value. `None` if the body is not an object with a
/// string `provider` (or is too malformed to tell).
pub fn peek_provider(body: &[u8]) -> Option<String> {
    let mut s = Scanner { b: body, i: 0 };
    s.ws();
    s.eat(b'{')?;
    loop {
        s.ws();
        if s.peek()? == b'}' {
            return None;
        }
        let key = s.string()?;
        s.ws();
        s.eat(b':')?;
        s.ws();
        if key == b"provider" {
            let value = s.string()?;
            return String::from_utf8(unescape(value)?).ok();
        }
        s.skip_value()?;
        s.ws();
        match s.next()? {
            b',' => continue,
            _ => return None,
        }
    }
}

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.i += 1;
        Some(c)
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.next()? == c).then_some(())
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\n' | b'\r' | b'\t')) {
            self.i += 1;
        }
    }

    /// A string's raw bytes (escapes left in), after its opening quote.
    fn string(&mut self) -> Option<&'a [u8]> {
        self.eat(b'"')?;
        let start = self.i;
        loop {
            match self.next()? {
                b'"' => return Some(&self.b[start..self.i - 1]),
                b'\\' => {
                    self.next()?;
                }
                _ => {}
            }
        }
    }

    fn skip_value(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            match self.peek()? {
                b'"' => {
                    self.string()?;
                }
                b'{' | b'[' => {
                    depth += 1;
                    self.i += 1;
                }
                b'}' | b']' => {
                    if depth == 0 {
                        return Some(());
                    }
                    depth -= 1;
                    self.i += 1;
                }
                b',' if depth == 0 => return Some(()),
                _ => self.i += 1,
            }
            if depth == 0 && matches!(self.peek(), Some(b',' | b'}')) {
                return Some(());
            }
        }
    }
}

/// Resolves the escapes of a JSON string's raw bytes.
fn unescape(raw: &[u8]) -> Option<Vec<u8>> {
    if !raw.contains(&b'\\') {
        return Some(raw.to_vec());
    }
    let quoted = [b"\"".as_slice(), raw, b"\""].concat();
    serde_json::from_slice::<String>(&quoted).ok().map(String::into_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_provider_wherever_it_is() {
        assert_eq!(peek_provider(br#"{"provider":"apple","data":{}}"#).as_deref(), Some("apple"));
        let late = br#" { "sdkVersion" : "0.13.0", "data": {"records": [{"type": "x", "v": [1, {"a": "}"}]}]},
            "syncTimestamp": "2026-03-14T18:46:45Z", "provider" : "google" } "#;
        assert_eq!(peek_provider(late).as_deref(), Some("google"));
        assert_eq!(peek_provider(br#"{"provider":"sam\u0073ung"}"#).as_deref(), Some("samsung"));
        assert_eq!(
            peek_provider(br#"{"n": 1.5e3, "b": true, "z": null, "provider": "x"}"#).as_deref(),
            Some("x")
        );
    }

    #[test]
    fn no_provider() {
        for body in [
            &b""[..],
            b"[]",
            b"{}",
            br#"{"data": {}}"#,
            br#"{"provider": 5}"#,
            b"{\"provider\": \"unterminated",
            b"not json",
        ] {
            assert_eq!(peek_provider(body), None, "{}", String::from_utf8_lossy(body));
        }
    }

    #[test]
    fn a_body_is_well_formed_json_or_refused() {
        assert_eq!(validate(br#"{"provider":"apple","data":{"records":[1, "x", null]}}"#), Ok(()));
        for junk in [
            &br#"{"provider":"apple", "#[..],
            br#"{"provider":"apple"} trailing"#,
            br#"{"provider":"apple", "data": [1, 2}"#,
            b"{\"provider\":\"apple\", \"x\": \"\xff\"}",
            b"",
        ] {
            let e = validate(junk);
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
