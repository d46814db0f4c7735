//! The contract's two envelopes: offset pages (`GET /users`) and cursor pages (timeseries,
//! events, summaries), with the opaque cursor format.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE;
use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::error::ApiError;

/// `{items, total, page, limit, pages, has_next, has_prev}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct OffsetPage<T> {
    pub items: Vec<T>,
    pub total: i64,
    pub page: i64,
    pub limit: i64,
    pub pages: i64,
    pub has_next: bool,
    pub has_prev: bool,
}

impl<T> OffsetPage<T> {
    pub fn new(items: Vec<T>, total: i64, page: i64, limit: i64) -> OffsetPage<T> {
        let pages = if limit > 0 { (total + limit - 1) / limit } else { 0 };
        OffsetPage { items, total, page, limit, pages, has_next: page < pages, has_prev: page > 1 }
    }
}

/// `{data, pagination, metadata}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct CursorPage<T> {
    pub data: Vec<T>,
    pub pagination: CursorPagination,
    pub metadata: PageMetadata,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CursorPagination {
    pub next_cursor: Option<String>,
    pub previous_cursor: Option<String>,
    pub has_more: bool,
    pub total_count: Option<i64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct PageMetadata {
    pub resolution: Option<String>,
    pub sample_count: i64,
    pub start_time: Option<DateTime<Utc>>,
    pub end_time: Option<DateTime<Utc>>,
}

/// A position in a list ordered by (time, id). Opaque to clients: URL-safe base64 of
/// `<RFC 3339 time>|<uuid>`, prefixed by `prev_` when it pages backwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    pub at: DateTime<Utc>,
    pub id: Uuid,
    pub backward: bool,
}

impl Cursor {
    pub fn encode(&self) -> String {
        let raw =
            format!("{}|{}", self.at.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true), self.id);
        let body = URL_SAFE.encode(raw);
        if self.backward { format!("prev_{body}") } else { body }
    }

    /// The contract's 400 for anything that is not a cursor we issued.
    pub fn decode(cursor: &str) -> Result<Cursor, ApiError> {
        let invalid = || {
            ApiError::bad_request(format!(
                "Invalid cursor format: '{cursor}'. Expected 'timestamp|id'."
            ))
        };
        let (backward, body) = match cursor.strip_prefix("prev_") {
            Some(rest) => (true, rest),
            None => (false, cursor),
        };
        let bytes = URL_SAFE.decode(body).map_err(|_| invalid())?;
        let text = String::from_utf8(bytes).map_err(|_| invalid())?;
        let (at, id) = text.split_once('|').ok_or_else(invalid)?;
        let at = DateTime::parse_from_rfc3339(at).map_err(|_| invalid())?.with_timezone(&Utc);
        let id = Uuid::parse_str(id).map_err(|_| invalid())?;
        Ok(Cursor { at, id, backward })
    }
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
            let c = Cursor { at, id: Uuid::now_v7(), backward };
            assert_eq!(Cursor::decode(&c.encode()).ok(), Some(c));
        }
        for bad in
            ["", "abc", "prev_", &URL_SAFE.encode("2024-05-01|x"), &URL_SAFE.encode("no-bar")]
        {
            assert!(Cursor::decode(bad).is_err(), "{bad}");
        }
    }
}
