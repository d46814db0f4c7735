//! The event outbox: rows written in the same transaction as the data they announce, picked up
//! by the webhook sender. The ingest pipeline and the sender share nothing else, so the payload
//! is one type both sides use ([`Payload`]).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use crate::catalogue::event_types::SessionEvent;
use crate::catalogue::series_types;
use crate::ids::SeriesId;
use crate::ids::UserId;
use crate::{Error, Result};

/// What an outbox event carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Payload {
    /// New or changed samples of one series from one batch: named, not copied (copying them
    /// cost a third of the ingest rate).
    Timeseries(TimeseriesRef),
    /// A new session: the event's `data` object, as the contract shapes it.
    Session { data: Value },
}

/// The samples a timeseries event announces: those of the user and series between
/// `start_time` and `end_time` (inclusive) stored by batch `batch_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimeseriesRef {
    pub user_id: UserId,
    pub provider: String,
    /// The series type's slug.
    pub series_type: String,
    pub batch_id: Uuid,
    pub sample_count: i64,
    pub start_time: DateTime<Utc>,
    pub end_time: DateTime<Utc>,
}

impl Payload {
    /// Reads a stored payload. Rows written before payloads were tagged hold a session's data
    /// object as it is.
    pub fn read(stored: Value) -> Result<Payload> {
        if stored.get("kind").is_none() {
            return Ok(Payload::Session { data: stored });
        }
        serde_json::from_value(stored)
            .map_err(|source| Error::Payload { what: "outbox payload", source })
    }
}

/// The new or changed samples of each series in one batch: one event per series names them.
#[derive(Debug, Default)]
pub(crate) struct Spans(BTreeMap<SeriesId, (i64, DateTime<Utc>, DateTime<Utc>)>);

impl Spans {
    pub(crate) fn add(&mut self, series_type_id: SeriesId, ts: DateTime<Utc>) {
        let span = self.0.entry(series_type_id).or_insert((0, ts, ts));
        span.0 += 1;
        span.1 = span.1.min(ts);
        span.2 = span.2.max(ts);
    }

    /// Writes one timeseries event per series, each under its series' group event; returns
    /// how many.
    pub(crate) async fn write(
        self,
        client: &impl GenericClient,
        user_id: UserId,
        batch_id: Uuid,
        provider: &str,
    ) -> Result<i64> {
        let (mut names, mut payloads) = (Vec::new(), Vec::new());
        for (id, (sample_count, start_time, end_time)) in self.0 {
            let series =
                series_types::by_id(id).ok_or(Error::Inconsistent("a sample of no series type"))?;
            let reference = TimeseriesRef {
                user_id,
                provider: provider.to_owned(),
                series_type: series.slug.to_owned(),
                batch_id,
                sample_count,
                start_time,
                end_time,
            };
            names.push(series.event);
            payloads.push(
                serde_json::to_value(Payload::Timeseries(reference))
                    .map_err(|source| Error::Payload { what: "outbox payload", source })?,
            );
        }
        if names.is_empty() {
            return Ok(0);
        }
        let insert = client
            .prepare_cached(
                "insert into outbox (event_type, user_id, payload)
                 select name, $1, payload from unnest($2::text[], $3::jsonb[]) as e(name, payload)",
            )
            .await?;
        let written = client.execute(&insert, &[&user_id, &names, &payloads]).await?;
        Ok(i64::try_from(written).unwrap_or(i64::MAX))
    }
}

/// Writes a session event.
pub async fn insert_session(
    client: &impl GenericClient,
    event: SessionEvent,
    user_id: UserId,
    data: Value,
) -> Result<()> {
    let payload = serde_json::to_value(Payload::Session { data })
        .map_err(|source| Error::Payload { what: "outbox payload", source })?;
    client
        .execute(
            &client
                .prepare_cached(
                    "insert into outbox (event_type, user_id, payload) values ($1, $2, $3)",
                )
                .await?,
            &[&event.name(), &user_id, &payload],
        )
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn payloads_read_back_and_old_session_rows_still_read() {
        // As jsonb renders it (timestamps with an offset).
        let sql = json!({"kind": "timeseries", "user_id": "018f2c3e-0000-7000-8000-000000000001",
            "provider": "apple", "series_type": "heart_rate",
            "batch_id": "018f2c3e-0000-7000-8000-000000000002", "sample_count": 3,
            "start_time": "2026-03-10T18:00:00+00:00", "end_time": "2026-03-10T18:02:00+00:00"});
        let Ok(Payload::Timeseries(t)) = Payload::read(sql) else { panic!("not a timeseries ref") };
        assert_eq!((t.series_type.as_str(), t.sample_count), ("heart_rate", 3));
        let data = json!({"id": "x", "type": "running"});
        let written = serde_json::to_value(Payload::Session { data: data.clone() }).ok();
        assert_eq!(written, Some(json!({"kind": "session", "data": data})));
        assert_eq!(Payload::read(data.clone()).ok(), Some(Payload::Session { data }));
        assert!(Payload::read(json!({"kind": "timeseries"})).is_err());
    }
}
