//! Attributes of a start tag's raw content (`Record type="…" value="…"`), scanned by hand: the
//! export's tags are regular, and this is the hottest loop of an import.

use std::borrow::Cow;

/// Iterates `(key, raw value)` pairs of a tag's content (its name first, then attributes).
pub(super) struct Attrs<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Attrs<'a> {
    /// `tag` is what is between `<` and `>` (or `/>`): the element name, then attributes.
    pub(super) fn of_tag(tag: &'a [u8]) -> Attrs<'a> {
        let name_end = tag.iter().position(|c| c.is_ascii_whitespace()).unwrap_or(tag.len());
        Attrs { b: tag, i: name_end }
    }
}

impl<'a> Iterator for Attrs<'a> {
    type Item = (&'a [u8], &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        let b = self.b;
        while self.i < b.len() && b[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
        let key_start = self.i;
        while self.i < b.len() && b[self.i] != b'=' && !b[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
        let key = &b[key_start..self.i];
        while self.i < b.len() && b[self.i] != b'=' {
            self.i += 1;
        }
        self.i += 1; // '='
        while self.i < b.len() && b[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
        let quote = *b.get(self.i)?;
        if quote != b'"' && quote != b'\'' {
            return None;
        }
        self.i += 1;
        let value_start = self.i;
        let len = memchr::memchr(quote, &b[value_start..])?;
        self.i = value_start + len + 1;
        if key.is_empty() {
            return None;
        }
        Some((key, &b[value_start..value_start + len]))
    }
}

/// An attribute value as text, with XML escapes resolved.
pub(super) fn text(raw: &[u8]) -> Option<Cow<'_, str>> {
    let s = std::str::from_utf8(raw).ok()?;
    if s.contains('&') {
        quick_xml::escape::unescape(s).ok().map(|c| Cow::Owned(c.into_owned()))
    } else {
        Some(Cow::Borrowed(s))
    }
}

/// An attribute value as a number.
pub(super) fn number(raw: &[u8]) -> Option<f64> {
    std::str::from_utf8(raw).ok()?.trim().parse::<f64>().ok().filter(|v| v.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scans_attributes() {
        let tag = br#"Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Ada&apos;s Watch" value='72' unit="count/min""#;
        let pairs: Vec<(&[u8], &[u8])> = Attrs::of_tag(tag).collect();
        assert_eq!(pairs.len(), 4);
        assert_eq!(pairs[0], (&b"type"[..], &b"HKQuantityTypeIdentifierHeartRate"[..]));
        assert_eq!(text(pairs[1].1).as_deref(), Some("Ada's Watch"));
        assert_eq!(number(pairs[2].1), Some(72.0));
        assert_eq!(Attrs::of_tag(b"Record").count(), 0);
        assert_eq!(Attrs::of_tag(br#"Record a="unterminated"#).count(), 0);
    }
}
