//! Sleep sessions, with their stage intervals so that a night arriving in several batches can
//! be merged into one session.

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use serde_json::Value;
use uuid::Uuid;

use crate::Result;
use crate::ids::UserId;

#[derive(Debug, Clone, PartialEq, Default)]
pub struct SleepRow {
    pub data_source_id: Uuid,
    pub external_id: Option<String>,
    pub start_time: DateTime<Utc>,
    pub end_time: DateTime<Utc>,
    pub zone_offset: Option<i16>,
    pub duration_seconds: i32,
    pub sleep_seconds: i32,
    pub in_bed_seconds: i32,
    /// `None`: the session has no such stage information (not zero).
    pub deep_minutes: Option<i32>,
    pub rem_minutes: Option<i32>,
    pub light_minutes: Option<i32>,
    pub awake_minutes: Option<i32>,
    pub efficiency_percent: Option<f64>,
    pub is_nap: bool,
    /// `[{stage, start_time, end_time}]` after precedence and clipping.
    pub stages: Value,
    /// The same, as received, for later merges.
    pub raw_stages: Value,
}

/// A stored session near a new one.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredSleep {
    pub id: Uuid,
    pub external_id: Option<String>,
    pub start_time: DateTime<Utc>,
    pub end_time: DateTime<Utc>,
    pub zone_offset: Option<i16>,
    pub raw_stages: Value,
}

/// The source's sessions that overlap `(from, to)`. The range condition is a superset of the
/// exact one that the overlap index (`V16__sleep_overlap_idx.sql`) answers from.
pub async fn near(
    client: &impl GenericClient,
    user_id: UserId,
    data_source_id: Uuid,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Result<Vec<StoredSleep>> {
    let rows = client.query(&client.prepare_cached("select id, external_id, start_time, end_time, zone_offset, raw_stages from sleep_sessions
             where user_id = $1 and data_source_id = $2 and start_time < $4 and end_time > $3
               and tstzrange(start_time, greatest(start_time, end_time), '[]')
                   && tstzrange($3, greatest($3, $4), '[]')").await?,
            &[&user_id, &data_source_id, &from, &to],
        )
        .await?;
    // Sorted here, not by `order by start_time`: with one, a generic plan took the user's
    // (user_id, start_time) index for its order and read all of the user's nights each time.
    let mut found = rows
        .iter()
        .map(|r| {
            Ok(StoredSleep {
                id: r.try_get(0)?,
                external_id: r.try_get(1)?,
                start_time: r.try_get(2)?,
                end_time: r.try_get(3)?,
                zone_offset: r.try_get(4)?,
                raw_stages: r.try_get::<_, Option<Value>>(5)?.unwrap_or(Value::Null),
            })
        })
        .collect::<Result<Vec<StoredSleep>>>()?;
    found.sort_by_key(|s| s.start_time);
    Ok(found)
}

/// The source's session with this client id, if stored: its id and what it was made of.
pub async fn by_external_id(
    client: &impl GenericClient,
    user_id: UserId,
    data_source_id: Uuid,
    external_id: &str,
) -> Result<Option<(Uuid, Value)>> {
    let row = client
        .query_opt(
            &client
                .prepare_cached(
                    "select id, raw_stages from sleep_sessions
             where user_id = $1 and data_source_id = $2 and external_id = $3",
                )
                .await?,
            &[&user_id, &data_source_id, &external_id],
        )
        .await?;
    row.map(|r| Ok((r.try_get(0)?, r.try_get::<_, Option<Value>>(1)?.unwrap_or(Value::Null))))
        .transpose()
}

/// Stores a session: replaces the session `replace` when given (a merge), else inserts.
/// Returns the session's id.
pub async fn save(
    client: &impl GenericClient,
    user_id: UserId,
    batch_id: Uuid,
    replace: Option<Uuid>,
    s: &SleepRow,
) -> Result<Uuid> {
    let id = replace.unwrap_or_else(Uuid::now_v7);
    client.execute(&client.prepare_cached("insert into sleep_sessions (id, user_id, data_source_id, external_id, start_time,
                 end_time, zone_offset, duration_seconds, sleep_seconds, in_bed_seconds,
                 deep_minutes, rem_minutes, light_minutes, awake_minutes, efficiency_percent,
                 is_nap, stages, raw_stages, batch_id)
             values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
             on conflict (id) do update set external_id = excluded.external_id,
                 start_time = excluded.start_time, end_time = excluded.end_time,
                 zone_offset = excluded.zone_offset, duration_seconds = excluded.duration_seconds,
                 sleep_seconds = excluded.sleep_seconds, in_bed_seconds = excluded.in_bed_seconds,
                 deep_minutes = excluded.deep_minutes, rem_minutes = excluded.rem_minutes,
                 light_minutes = excluded.light_minutes, awake_minutes = excluded.awake_minutes,
                 efficiency_percent = excluded.efficiency_percent, is_nap = excluded.is_nap,
                 stages = excluded.stages, raw_stages = excluded.raw_stages,
                 batch_id = excluded.batch_id").await?,
            &[
                &id,
                &user_id,
                &s.data_source_id,
                &s.external_id,
                &s.start_time,
                &s.end_time,
                &s.zone_offset,
                &s.duration_seconds,
                &s.sleep_seconds,
                &s.in_bed_seconds,
                &s.deep_minutes,
                &s.rem_minutes,
                &s.light_minutes,
                &s.awake_minutes,
                &s.efficiency_percent,
                &s.is_nap,
                &s.stages,
                &s.raw_stages,
                &batch_id,
            ],
        )
        .await?;
    Ok(id)
}

pub async fn delete(client: &impl GenericClient, ids: &[Uuid]) -> Result<()> {
    if !ids.is_empty() {
        client.execute("delete from sleep_sessions where id = any($1)", &[&ids]).await?;
    }
    Ok(())
}
