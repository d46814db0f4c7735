//! Input validation with the contract's 422 items, in one place: query parameters (`Params`)
//! and body fields (`Checks`). Messages and types follow the pydantic wording integrators of the
//! reference system already handle.

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use schema::catalogue::providers::{self, Provider};

use crate::dates::{self, QueryTime};
use crate::error::{ApiError, ApiResult, FieldError};

/// "'a', 'b' or 'c'"
pub(crate) fn expected_list(allowed: &[&str]) -> String {
    let quoted: Vec<String> = allowed.iter().map(|a| format!("'{a}'")).collect();
    match quoted.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// The error for an integer outside `[min, max]`, if it is.
fn out_of_range(
    loc: Vec<Value>,
    value: i64,
    min: i64,
    max: i64,
    input: Value,
) -> Option<FieldError> {
    if value < min {
        let msg = format!("Input should be greater than or equal to {min}");
        Some(FieldError::new(loc, "greater_than_equal", msg, input).with_ctx(json!({ "ge": min })))
    } else if value > max {
        let msg = format!("Input should be less than or equal to {max}");
        Some(FieldError::new(loc, "less_than_equal", msg, input).with_ctx(json!({ "le": max })))
    } else {
        None
    }
}

pub(crate) fn missing(loc: Vec<Value>) -> FieldError {
    FieldError::new(loc, "missing", "Field required", Value::Null)
}

/// A provider name from a path or query: exactly a listed provider. A name that is wrong only
/// in its case gets a message naming the lowercase spelling.
pub(crate) fn provider(loc: Vec<Value>, raw: &str) -> ApiResult<&'static Provider> {
    if let Some(p) = providers::by_slug(raw) {
        return Ok(p);
    }
    let names: Vec<&str> = providers::PROVIDERS.iter().map(|p| p.slug).collect();
    let expected = expected_list(&names);
    let msg = match providers::case_hint(raw) {
        Some(lower) => format!("Provider names are lowercase: use '{lower}'"),
        None => format!("Input should be {expected}"),
    };
    let error =
        FieldError::new(loc, "enum", msg, json!(raw)).with_ctx(json!({ "expected": expected }));
    Err(ApiError::validation(error))
}

/// Collects the problems of a request body so that all of them are reported at once.
#[derive(Debug, Default)]
pub(crate) struct Checks {
    errors: Vec<FieldError>,
}

impl Checks {
    pub(crate) fn push(&mut self, error: FieldError) {
        self.errors.push(error);
    }

    pub(crate) fn max_len(&mut self, field: &str, value: Option<&str>, max: usize) {
        if let Some(v) = value
            && v.chars().count() > max
        {
            self.push(
                FieldError::new(
                    body_loc(field),
                    "string_too_long",
                    format!("String should have at most {max} characters"),
                    json!(v),
                )
                .with_ctx(json!({ "max_length": max })),
            );
        }
    }

    /// An integer body field within `[min, max]`.
    pub(crate) fn range(&mut self, loc: Vec<Value>, value: i64, min: i64, max: i64) {
        if let Some(e) = out_of_range(loc, value, min, max, json!(value)) {
            self.push(e);
        }
    }

    pub(crate) fn email(&mut self, field: &str, value: Option<&str>) {
        if let Some(v) = value
            && let Err(reason) = check_email(v)
        {
            self.push(FieldError::new(
                body_loc(field),
                "value_error",
                format!("value is not a valid email address: {reason}"),
                json!(v),
            ));
        }
    }

    pub(crate) fn finish(self) -> ApiResult<()> {
        if self.errors.is_empty() { Ok(()) } else { Err(ApiError::Validation(self.errors)) }
    }
}

pub(crate) fn body_loc(field: &str) -> Vec<Value> {
    vec![json!("body"), json!(field)]
}

/// A light syntactic check: one `@`, a non-empty local part, a dotted domain, no spaces.
fn check_email(v: &str) -> Result<(), &'static str> {
    let (local, domain) = v.rsplit_once('@').ok_or("An email address must have an @-sign.")?;
    if local.is_empty() {
        return Err("There must be something before the @-sign.");
    }
    if v.chars().any(char::is_whitespace) || local.contains('@') {
        return Err("The email address contains invalid characters.");
    }
    if domain.is_empty()
        || !domain.contains('.')
        || domain.starts_with('.')
        || domain.ends_with('.')
    {
        return Err("The part after the @-sign is not valid.");
    }
    Ok(())
}

/// Query parameters of one request, read with typed getters that record every problem; call
/// `finish` to turn the problems into one 422.
#[derive(Debug, Default)]
pub(crate) struct Params {
    pairs: Vec<(String, String)>,
    errors: Vec<FieldError>,
}

impl Params {
    pub(crate) fn parse(query: Option<&str>) -> Params {
        let pairs = query
            .map(|q| url::form_urlencoded::parse(q.as_bytes()).into_owned().collect())
            .unwrap_or_default();
        Params { pairs, errors: Vec::new() }
    }

    pub(crate) fn loc(name: &str) -> Vec<Value> {
        vec![json!("query"), json!(name)]
    }

    /// The first value of `name`; an empty value counts as absent.
    pub(crate) fn raw(&self, name: &str) -> Option<&str> {
        self.pairs.iter().find(|(k, v)| k == name && !v.is_empty()).map(|(_, v)| v.as_str())
    }

    /// Every value of a repeated parameter (`?types=a&types=b`).
    pub(crate) fn all(&self, name: &str) -> Vec<String> {
        self.pairs
            .iter()
            .filter(|(k, v)| k == name && !v.is_empty())
            .map(|(_, v)| v.clone())
            .collect()
    }

    pub(crate) fn string(&self, name: &str) -> Option<String> {
        self.raw(name).map(str::to_string)
    }

    /// A UUID; when `required`, its absence is the contract's "missing".
    pub(crate) fn uuid(&mut self, name: &str, required: bool) -> Option<uuid::Uuid> {
        let Some(raw) = self.raw(name) else {
            if required {
                self.errors.push(missing(Self::loc(name)));
            }
            return None;
        };
        match uuid::Uuid::parse_str(raw.trim()) {
            Ok(id) => Some(id),
            Err(_) => {
                let msg = "Input should be a valid UUID";
                self.errors.push(FieldError::new(Self::loc(name), "uuid_parsing", msg, json!(raw)));
                None
            }
        }
    }

    /// An integer within `[min, max]`, `default` when absent.
    pub(crate) fn int(&mut self, name: &str, default: i64, min: i64, max: i64) -> i64 {
        let Some(raw) = self.raw(name) else {
            return default;
        };
        let Ok(value) = raw.trim().parse::<i64>() else {
            let e = FieldError::new(
                Self::loc(name),
                "int_parsing",
                "Input should be a valid integer, unable to parse string as an integer",
                json!(raw),
            );
            self.errors.push(e);
            return default;
        };
        if let Some(e) = out_of_range(Self::loc(name), value, min, max, json!(raw)) {
            self.errors.push(e);
        }
        value
    }

    pub(crate) fn bool(&mut self, name: &str, default: bool) -> bool {
        let Some(raw) = self.raw(name) else {
            return default;
        };
        match raw.to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" | "on" | "t" | "y" => true,
            "false" | "0" | "no" | "off" | "f" | "n" => false,
            _ => {
                let e = FieldError::new(
                    Self::loc(name),
                    "bool_parsing",
                    "Input should be a valid boolean, unable to interpret input",
                    json!(raw),
                );
                self.errors.push(e);
                default
            }
        }
    }

    /// One of `allowed` (exact match), `default` when absent.
    pub(crate) fn choice<'a>(
        &mut self,
        name: &str,
        allowed: &[&'a str],
        default: &'a str,
    ) -> &'a str {
        let Some(raw) = self.raw(name) else {
            return default;
        };
        if let Some(found) = allowed.iter().find(|a| **a == raw) {
            return found;
        }
        let expected = expected_list(allowed);
        let e = FieldError::new(
            Self::loc(name),
            "enum",
            format!("Input should be {expected}"),
            json!(raw),
        )
        .with_ctx(json!({ "expected": expected }));
        self.errors.push(e);
        default
    }

    /// A date/time in any of the contract's formats.
    pub(crate) fn time(&mut self, name: &str, required: bool) -> Option<QueryTime> {
        let Some(raw) = self.raw(name) else {
            if required {
                self.errors.push(missing(Self::loc(name)));
            }
            return None;
        };
        let Some(parsed) = dates::parse(raw) else {
            let e = FieldError::new(
                Self::loc(name),
                "datetime_parsing",
                dates::invalid_message(raw),
                json!(raw),
            );
            self.errors.push(e);
            return None;
        };
        let (earliest, latest) = dates::range();
        if parsed.at < earliest || parsed.at >= latest {
            let msg = dates::out_of_range_message();
            let e = FieldError::new(Self::loc(name), "value_error", msg, json!(raw));
            self.errors.push(e);
            return None;
        }
        Some(parsed)
    }

    /// A read window `[start, end)` from two bounds (see `dates::end_bound`), required or both
    /// optional; the end must come after the start.
    pub(crate) fn window(
        &mut self,
        start: &str,
        end: &str,
        required: bool,
    ) -> Option<(DateTime<Utc>, DateTime<Utc>)> {
        let (s, e) = (self.time(start, required), self.time(end, required));
        let (s, e) = (s?, e?);
        let end_at = dates::end_bound(e);
        if end_at <= s.at {
            let msg = format!("{end} must be after {start}");
            let input = json!(self.raw(end));
            self.push(FieldError::new(Self::loc(end), "value_error", msg, input));
            return None;
        }
        Some((s.at, end_at))
    }

    /// A page size within `[1, max]`.
    pub(crate) fn limit(&mut self, default: i64, max: i64) -> i64 {
        self.int("limit", default, 1, max)
    }

    pub(crate) fn push(&mut self, error: FieldError) {
        self.errors.push(error);
    }

    pub(crate) fn finish(self) -> ApiResult<()> {
        if self.errors.is_empty() { Ok(()) } else { Err(ApiError::Validation(self.errors)) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ints_are_bounded_with_pydantic_wording() {
        let mut p = Params::parse(Some("limit=101&page=0&x=abc"));
        assert_eq!(p.int("limit", 20, 1, 100), 101);
        p.int("page", 1, 1, i64::MAX);
        p.int("x", 1, 1, 10);
        assert_eq!(p.int("absent", 7, 1, 10), 7);
        let Err(ApiError::Validation(errors)) = p.finish() else { panic!("expected a 422") };
        assert_eq!(errors.len(), 3);
        assert_eq!(errors[0].loc, vec![json!("query"), json!("limit")]);
        assert_eq!(errors[0].kind, "less_than_equal");
        assert_eq!(errors[0].msg, "Input should be less than or equal to 100");
        assert_eq!(errors[0].ctx, json!({"le": 100}));
        assert_eq!(errors[1].kind, "greater_than_equal");
        assert_eq!(errors[2].kind, "int_parsing");
    }

    #[test]
    fn repeated_and_encoded_values() {
        let p = Params::parse(Some("types=heart_rate&types=steps&search=a%20b%2Bc"));
        assert_eq!(p.all("types"), vec!["heart_rate", "steps"]);
        assert_eq!(p.string("search").as_deref(), Some("a b+c"));
    }

    #[test]
    fn times_and_required() {
        let mut p = Params::parse(Some("start=2024-01-01&end=nope"));
        assert!(p.time("start", true).is_some_and(|t| t.date_only));
        assert_eq!(p.time("end", true), None);
        assert_eq!(p.time("other", true), None);
        assert_eq!(p.time("optional", false), None);
        let Err(ApiError::Validation(errors)) = p.finish() else { panic!("expected a 422") };
        assert_eq!(
            errors.iter().map(|e| e.kind.as_str()).collect::<Vec<_>>(),
            ["datetime_parsing", "missing"]
        );
    }

    #[test]
    fn choices_list_what_is_expected() {
        let mut p = Params::parse(Some("sort_order=up"));
        assert_eq!(p.choice("sort_order", &["asc", "desc"], "desc"), "desc");
        let Err(ApiError::Validation(errors)) = p.finish() else { panic!("expected a 422") };
        assert_eq!(errors[0].msg, "Input should be 'asc' or 'desc'");
    }

    #[test]
    fn providers_are_lowercase() {
        let loc = || vec![json!("path"), json!("provider")];
        assert!(provider(loc(), "phonehealth").is_ok());
        let first = |r: ApiResult<&Provider>| match r {
            Err(ApiError::Validation(mut e)) => e.remove(0),
            _ => panic!("expected a 422"),
        };
        let wrong_case = first(provider(loc(), "PhoneHealth"));
        assert_eq!(wrong_case.msg, "Provider names are lowercase: use 'phonehealth'");
        let unknown = first(provider(loc(), "fitbitt"));
        assert_eq!(unknown.kind, "enum");
        assert_eq!(unknown.msg, "Input should be 'phonehealth', 'google' or 'samsung'");
    }

    #[test]
    fn emails() {
        for ok in ["a@b.co", "first.last+tag@example.org"] {
            assert!(check_email(ok).is_ok(), "{ok}");
        }
        for bad in ["", "plain", "@b.co", "a@b", "a b@c.de", "a@.de", "a@b@c.de"] {
            assert!(check_email(bad).is_err(), "{bad}");
        }
    }
}
