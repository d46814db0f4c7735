//! Menstrual cycle records.

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use serde_json::Value;
use uuid::Uuid;

use crate::Result;
use crate::ids::UserId;

#[derive(Debug, Clone, PartialEq)]
pub struct CycleRow {
    pub data_source_id: Uuid,
    pub start_time: DateTime<Utc>,
    pub end_time: Option<DateTime<Utc>>,
    pub zone_offset: Option<i16>,
    pub cycle_length: Option<i32>,
    pub period_length: Option<i32>,
    pub details: Value,
}

/// Stores a cycle (one per source and start): new ones are inserted, known ones updated (a
/// cycle's end and length are known only once the next one starts). Returns the id and
/// whether the cycle is new.
pub async fn upsert(
    client: &impl GenericClient,
    user_id: UserId,
    batch_id: Uuid,
    c: &CycleRow,
) -> Result<(Uuid, bool)> {
    let row = client
        .query_one(
            &client
                .prepare_cached(
                    "insert into menstrual_cycles as m (id, user_id, data_source_id, start_time, end_time,
                         zone_offset, cycle_length, period_length, details, batch_id)
                     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
                     on conflict (data_source_id, start_time) do update
                         set end_time = excluded.end_time, cycle_length = excluded.cycle_length,
                             period_length = excluded.period_length, details = excluded.details,
                             zone_offset = coalesce(excluded.zone_offset, m.zone_offset)
                     returning id, (xmax = 0) as inserted",
                )
                .await?,
            &[
                &Uuid::now_v7(),
                &user_id,
                &c.data_source_id,
                &c.start_time,
                &c.end_time,
                &c.zone_offset,
                &c.cycle_length,
                &c.period_length,
                &c.details,
                &batch_id,
            ],
        )
        .await?;
    Ok((row.try_get(0)?, row.try_get(1)?))
}
