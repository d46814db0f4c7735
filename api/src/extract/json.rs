use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::{Value, json};

use crate::error::{ApiError, FieldError};
use crate::validate::missing;

/// A JSON body whose problems are reported in the contract's 422 shape, with the location of
/// the offending field. The content type is not checked: mobile clients send JSON either way.
pub(crate) struct ApiJson<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = Bytes::from_request(req, state)
            .await
            .map_err(|rejection| ApiError::client(rejection.status(), rejection.body_text()))?;
        parse(&bytes).map(ApiJson)
    }
}

/// Deserialises a body; an empty body is parsed as `{}` only for types that accept it.
pub(super) fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return serde_json::from_value(json!({}))
            .map_err(|_| ApiError::validation(missing(vec![json!("body")])));
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize::<_, T>(&mut de)
        .map_err(|err| ApiError::validation(describe(err)))?;
    de.end().map_err(|err| ApiError::validation(invalid_json(vec![json!("body")], &err)))?;
    Ok(value)
}

fn invalid_json(mut loc: Vec<Value>, err: &serde_json::Error) -> FieldError {
    loc.push(json!(err.column()));
    FieldError::new(loc, "json_invalid", "JSON decode error", json!({}))
        .with_ctx(json!({ "error": err.to_string() }))
}

fn describe(err: serde_path_to_error::Error<serde_json::Error>) -> FieldError {
    let mut loc = vec![json!("body")];
    for segment in err.path().iter() {
        match segment {
            serde_path_to_error::Segment::Seq { index } => loc.push(json!(index)),
            serde_path_to_error::Segment::Map { key } => loc.push(json!(key)),
            serde_path_to_error::Segment::Enum { variant } => loc.push(json!(variant)),
            serde_path_to_error::Segment::Unknown => {}
        }
    }
    let inner = err.inner();
    if inner.is_syntax() || inner.is_eof() {
        return invalid_json(loc, inner);
    }
    let text = inner.to_string();
    if let Some(field) = text.strip_prefix("missing field `").and_then(|r| r.split('`').next()) {
        loc.push(json!(field));
        return missing(loc);
    }
    // serde appends " at line L column C"; the location is already in `loc`.
    let msg = text.split(" at line ").next().unwrap_or(&text).to_string();
    FieldError::new(loc, "value_error", msg, Value::Null)
}

/// For PATCH bodies: an absent field is `None`, an explicit `null` is `Some(None)`.
/// Use with `#[serde(default, deserialize_with = "double_option")]`.
pub(crate) fn double_option<'de, T, D>(de: D) -> Result<Option<Option<T>>, D::Error>
where
    T: Deserialize<'de>,
    D: Deserializer<'de>,
{
    Option::<T>::deserialize(de).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    struct Body {
        name: String,
        #[serde(default)]
        #[allow(dead_code)]
        tags: Vec<u32>,
        #[serde(default, deserialize_with = "double_option")]
        note: Option<Option<String>>,
    }

    fn err(bytes: &str) -> FieldError {
        match parse::<Body>(bytes.as_bytes()) {
            Err(ApiError::Validation(mut e)) => e.remove(0),
            other => panic!("expected a 422, got {:?}", other.map(|b| b.name)),
        }
    }

    #[test]
    fn locates_the_problem() {
        let e = err(r#"{"tags": [1, "x"], "name": "n"}"#);
        assert_eq!(e.loc, vec![json!("body"), json!("tags"), json!(1)]);
        assert_eq!(e.kind, "value_error");
        assert!(!e.msg.contains(" at line "), "{}", e.msg);

        let e = err(r#"{"tags": []}"#);
        assert_eq!(
            (e.loc, e.kind.as_str(), e.msg.as_str()),
            (vec![json!("body"), json!("name")], "missing", "Field required")
        );

        let e = err(r#"{"name": "#);
        assert_eq!(e.kind, "json_invalid");
        let e = err(r#"{"name": "a"} trailing"#);
        assert_eq!(e.kind, "json_invalid");
        assert_eq!(err("").kind, "missing");
    }

    #[test]
    fn patch_fields_tell_null_from_absent() {
        let absent: Body = parse(br#"{"name": "a"}"#).unwrap_or_else(|_| panic!("valid"));
        assert_eq!(absent.note, None);
        let null: Body =
            parse(br#"{"name": "a", "note": null}"#).unwrap_or_else(|_| panic!("valid"));
        assert_eq!(null.note, Some(None));
        let set: Body = parse(br#"{"name": "a", "note": "x"}"#).unwrap_or_else(|_| panic!("valid"));
        assert_eq!(set.note, Some(Some("x".into())));
    }
}
