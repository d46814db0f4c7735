//! The contract's two envelopes: offset pages (`GET /users`) and cursor pages (timeseries,
//! events, summaries), with the opaque cursor format.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE;
use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::error::ApiError;
use schema::ids::SeriesId;

/// `{items, total, page, limit, pages, has_next, has_prev}`.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct OffsetPage<T> {
    pub items: Vec<T>,
    pub total: i64,
    pub page: i64,
    pub limit: i64,
    pub pages: i64,
    pub has_next: bool,
    pub has_prev: bool,
}

impl<T> OffsetPage<T> {
    pub(crate) fn new(items: Vec<T>, total: i64, page: i64, limit: i64) -> OffsetPage<T> {
        let pages = if limit > 0 { (total + limit - 1) / limit } else { 0 };
        OffsetPage { items, total, page, limit, pages, has_next: page < pages, has_prev: page > 1 }
    }
}

/// `{data, pagination, metadata}`.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct CursorPage<T> {
    pub data: Vec<T>,
    pub pagination: CursorPagination,
    pub metadata: PageMetadata,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct CursorPagination {
    pub next_cursor: Option<String>,
    pub previous_cursor: Option<String>,
    pub has_more: bool,
    pub total_count: Option<i64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct PageMetadata {
    pub resolution: Option<String>,
    pub sample_count: i64,
    pub start_time: Option<DateTime<Utc>>,
    pub end_time: Option<DateTime<Utc>>,
}

/// A position in a list ordered by (time, key). Opaque to clients: URL-safe base64 of
/// `<RFC 3339 time>|<key>`, prefixed by `prev_` when it pages backwards. The key is a record's
/// id, or for samples (which have none) `<series type id>:<data source id>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cursor {
    pub at: DateTime<Utc>,
    pub key: String,
    pub backward: bool,
}

impl Cursor {
    pub(crate) fn new(at: DateTime<Utc>, key: impl ToString, backward: bool) -> Cursor {
        Cursor { at, key: key.to_string(), backward }
    }

    /// The key as a record id; the cursor's 400 otherwise.
    pub(crate) fn id(&self, raw: &str) -> Result<Uuid, ApiError> {
        Uuid::parse_str(&self.key).map_err(|_| invalid_cursor(raw))
    }

    /// The key as `<series type id>:<data source id>`; the cursor's 400 otherwise.
    pub(crate) fn series_key(&self, raw: &str) -> Result<(SeriesId, Uuid), ApiError> {
        let parsed = self.key.split_once(':').and_then(|(series, source)| {
            Some((series.parse::<SeriesId>().ok()?, Uuid::parse_str(source).ok()?))
        });
        parsed.ok_or_else(|| invalid_cursor(raw))
    }

    pub(crate) fn encode(&self) -> String {
        let raw = format!(
            "{}|{}",
            self.at.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true),
            self.key
        );
        let body = URL_SAFE.encode(raw);
        if self.backward { format!("prev_{body}") } else { body }
    }

    /// The contract's 400 for anything that is not a cursor we issued.
    pub(crate) fn decode(cursor: &str) -> Result<Cursor, ApiError> {
        let invalid = || invalid_cursor(cursor);
        let (backward, body) = match cursor.strip_prefix("prev_") {
            Some(rest) => (true, rest),
            None => (false, cursor),
        };
        let bytes = URL_SAFE.decode(body).map_err(|_| invalid())?;
        let text = String::from_utf8(bytes).map_err(|_| invalid())?;
        let (at, id) = text.split_once('|').ok_or_else(invalid)?;
        let at = DateTime::parse_from_rfc3339(at).map_err(|_| invalid())?.with_timezone(&Utc);
        let (earliest, latest) = crate::dates::range();
        if id.is_empty() || at < earliest || at >= latest {
            return Err(invalid());
        }
        Ok(Cursor { at, key: id.to_string(), backward })
    }
}

/// Turns rows fetched with `limit + 1` in the request's direction (backward: nearest first)
/// into a page in ascending list order, with its cursors. A forward page offers a previous
/// cursor only when it was itself reached by a cursor; a backward page always offers a next one.
pub(crate) fn paginate<T>(
    mut rows: Vec<T>,
    limit: usize,
    cursor: Option<&Cursor>,
    position: impl Fn(&T) -> (DateTime<Utc>, String),
) -> (Vec<T>, CursorPagination) {
    let has_more = rows.len() > limit;
    rows.truncate(limit);
    let backward = cursor.is_some_and(|c| c.backward);
    if backward {
        rows.reverse();
    }
    let at = |row: Option<&T>, back: bool| {
        row.map(|r| {
            let (at, key) = position(r);
            Cursor { at, key, backward: back }.encode()
        })
    };
    let (next_cursor, previous_cursor) = if backward {
        (at(rows.last(), false), if has_more { at(rows.first(), true) } else { None })
    } else {
        (
            if has_more { at(rows.last(), false) } else { None },
            if cursor.is_some() { at(rows.first(), true) } else { None },
        )
    };
    (rows, CursorPagination { next_cursor, previous_cursor, has_more, total_count: None })
}

fn invalid_cursor(cursor: &str) -> ApiError {
    ApiError::bad_request(format!("Invalid cursor format: '{cursor}'. Expected 'timestamp|id'."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offset_page_arithmetic() {
        let p = OffsetPage::new(vec![1, 2], 45, 2, 20);
        assert_eq!((p.pages, p.has_next, p.has_prev), (3, true, true));
        let p = OffsetPage::<u8>::new(vec![], 0, 1, 20);
        assert_eq!((p.pages, p.has_next, p.has_prev), (0, false, false));
        let p = OffsetPage::new(vec![1], 40, 2, 20);
        assert!(!p.has_next);
    }

    #[test]
    fn cursors_round_trip_and_reject_garbage() {
        let at = DateTime::parse_from_rfc3339("2024-05-01T10:00:00.123456Z")
            .map(|d| d.with_timezone(&Utc))
            .unwrap_or_default();
        for backward in [false, true] {
            let c = Cursor::new(at, Uuid::now_v7(), backward);
            let back = Cursor::decode(&c.encode());
            assert!(back.as_ref().is_ok_and(|b| b.id("").is_ok()));
            assert_eq!(back.ok(), Some(c));
        }
        let c = Cursor::new(at, format!("1:{}", Uuid::nil()), false);
        let back = Cursor::decode(&c.encode()).ok();
        assert_eq!(back.and_then(|b| b.series_key("").ok()), Some((SeriesId(1), Uuid::nil())));
        for bad in [
            "",
            "abc",
            "prev_",
            &URL_SAFE.encode("2024-05-01|x"),
            &URL_SAFE.encode("no-bar"),
            &URL_SAFE.encode("2024-05-01T00:00:00Z|"),
        ] {
            assert!(Cursor::decode(bad).is_err(), "{bad}");
        }
    }
}
