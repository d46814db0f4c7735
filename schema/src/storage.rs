//! What stored data costs on disk (issue 31), for `GET /developer/overview`: each table's bytes
//! from the catalogue (cheap at any size), and each user's samples and bytes measured from the
//! user's rows into `user_storage` ([`measure_user`]: when the sealer seals the user's days, after
//! a lifecycle delete, and daily by the worker's sweep), since counting a fleet's rows on every
//! overview would read the whole database.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::ids::UserId;
use crate::{Db, Result};

/// Tables whose rows expire or only serve delivery (retention, webhook history, raw batches,
/// vendor pages, imports): outside the bytes-a-sample figure of the durable data.
pub(crate) const EXPIRING: [&str; 19] = [
    "outbox",
    "webhook_messages",
    "webhook_deliveries",
    "webhook_attempts",
    "sync_runs",
    "sdk_batches",
    "vendor_pages",
    "vendor_pulls",
    "imports",
    // Exports of a user's record: rows until they expire (the archives are objects).
    "exports",
    "uploads",
    "object_deletions",
    "refinery_schema_history",
    "user_storage",
    // The sealer's worklist of users whose blocks of a day are to be packed (V26): empties.
    "block_repacks",
    // Onboarding credentials, purged once expired.
    "invitation_codes",
    "connect_links",
    "team_invitations",
    // The audit trail: kept for its retention (`AUDIT_RETENTION_DAYS`), not health data.
    "audit_events",
];

/// The tables of a user's health data (what a user's bytes are measured over), each with what
/// counts its samples: a sample is a row of `samples` or one in a block.
pub const HEALTH: [(&str, &str); 11] = [
    ("samples", "count(*)"),
    ("sample_blocks", "coalesce(sum(sample_count), 0)"),
    ("hourly_rollups", "0"),
    ("utc_day_rollups", "0"),
    ("daily_rollups", "0"),
    ("workouts", "0"),
    ("sleep_sessions", "0"),
    ("workout_blocks", "0"),
    ("sleep_blocks", "0"),
    ("activity_sessions", "0"),
    ("menstrual_cycles", "0"),
];

/// Whether a table's rows last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Durable,
    Expiring,
}

impl Kind {
    pub fn of(table: &str) -> Kind {
        if EXPIRING.contains(&table) { Kind::Expiring } else { Kind::Durable }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TableStorage {
    pub table: String,
    pub kind: Kind,
    /// Heap, indexes and TOAST (a hypertable's over its chunks).
    pub bytes: i64,
    /// `bytes` over the samples stored; null with none stored.
    pub bytes_per_sample: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UserStorage {
    pub user_id: UserId,
    /// Samples stored, in rows and in sealed blocks.
    pub samples: i64,
    /// The bytes of the user's rows of health data and their share of the tables' indexes.
    pub bytes: i64,
    pub bytes_per_sample: Option<f64>,
    pub measured_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Storage {
    /// Samples stored, as last measured per user (`users_measured` of them).
    pub samples: i64,
    pub users_measured: i64,
    /// Every table but the expiring ones.
    pub durable_bytes: i64,
    pub durable_bytes_per_sample: Option<f64>,
    pub database_bytes: i64,
    /// Every table of more than a few pages, largest first.
    pub tables: Vec<TableStorage>,
    /// The users whose data takes the most bytes, largest first.
    pub largest_users: Vec<UserStorage>,
}

fn per_sample(bytes: i64, samples: i64) -> Option<f64> {
    // One decimal, as the benchmarks report it.
    (samples > 0).then(|| (bytes as f64 / samples as f64 * 10.0).round() / 10.0)
}

/// Tables this small (a few pages) are left out of the list.
const LISTED_FROM: i64 = 64 * 1024;

/// The deployment's storage, with its `largest` users.
pub async fn storage(db: &Db, largest: i64) -> Result<Storage> {
    let client = db.client().await?;
    let totals = client
        .query_one(
            "select coalesce(sum(samples), 0)::int8, count(*), pg_database_size(current_database())
             from user_storage",
            &[],
        )
        .await?;
    let (samples, users_measured, database_bytes): (i64, i64, i64) =
        (totals.try_get(0)?, totals.try_get(1)?, totals.try_get(2)?);
    let mut tables = Vec::new();
    let mut durable_bytes = 0;
    for row in client
        .query(
            "select c.relname::text,
                    case when h.hypertable_name is not null then hypertable_size(c.oid)
                         else pg_total_relation_size(c.oid) end
             from pg_class c
             join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'public'
             left join timescaledb_information.hypertables h
               on h.hypertable_name = c.relname and h.hypertable_schema = 'public'
             where c.relkind in ('r', 'p')
             order by 2 desc, 1",
            &[],
        )
        .await?
    {
        let (table, bytes): (String, i64) = (row.try_get(0)?, row.try_get(1)?);
        let kind = Kind::of(&table);
        if kind == Kind::Durable {
            durable_bytes += bytes;
        }
        if bytes >= LISTED_FROM {
            let bytes_per_sample = per_sample(bytes, samples);
            tables.push(TableStorage { table, kind, bytes, bytes_per_sample });
        }
    }
    let largest_users = client
        .query(
            "select user_id, samples, bytes, measured_at from user_storage
             order by bytes desc, user_id limit $1",
            &[&largest],
        )
        .await?
        .iter()
        .map(|r| {
            let (samples, bytes) = (r.try_get(1)?, r.try_get(2)?);
            Ok(UserStorage {
                user_id: r.try_get(0)?,
                samples,
                bytes,
                bytes_per_sample: per_sample(bytes, samples),
                measured_at: r.try_get(3)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Storage {
        samples,
        users_measured,
        durable_bytes,
        durable_bytes_per_sample: per_sample(durable_bytes, samples),
        database_bytes,
        tables,
        largest_users,
    })
}

/// Measures one user's storage into `user_storage`: their rows' bytes in each table of health
/// data (as stored, TOAST included) and their share of the table's indexes (its index bytes a
/// row, by the planner's count). Nothing when the user is gone.
pub async fn measure_user(db: &Db, user_id: UserId) -> Result<Option<UserStorage>> {
    let client = db.client().await?;
    // A row's bytes as stored: its header and line pointer, and each column's stored size (a
    // value kept out of line is sized from its pointer, never fetched: `pg_column_size` of the
    // whole row would fetch and detoast every block's bytes).
    let tables: Vec<&str> = HEALTH.iter().map(|(table, _)| *table).collect();
    let columns: std::collections::HashMap<String, String> = client
        .query(
            "select c.relname::text,
                    string_agg(format('coalesce(pg_column_size(x.%I), 0)', a.attname), ' + '
                               order by a.attnum)
             from pg_class c
             join pg_namespace ns on ns.oid = c.relnamespace and ns.nspname = 'public'
             join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
             where c.relname = any($1)
             group by 1",
            &[&tables],
        )
        .await?
        .iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
        .collect::<Result<_>>()?;
    let per_table: Vec<String> = HEALTH
        .iter()
        .filter_map(|(table, samples)| {
            // The names come from the catalogue, quoted by format('%I').
            let size = columns.get(*table)?;
            Some(format!(
                "select '{table}'::text as t, count(*) as n,
                        coalesce(sum(28 + {size}), 0)::int8 as b, {samples}::int8 as s
                 from {table} x where x.user_id = $1"
            ))
        })
        .collect();
    let sql = format!(
        "with mine as ({}),
         idx as (
           select c.relname::text as t,
                  case when h.hypertable_name is not null
                       then hypertable_index_size(c.oid)::float8
                            / greatest(approximate_row_count(c.oid), 1)
                       else pg_indexes_size(c.oid)::float8 / greatest(c.reltuples, 1) end as per_row
           from pg_class c
           join pg_namespace ns on ns.oid = c.relnamespace and ns.nspname = 'public'
           left join timescaledb_information.hypertables h
             on h.hypertable_name = c.relname and h.hypertable_schema = 'public'
           where c.relname in (select t from mine))
         insert into user_storage as u (user_id, samples, bytes, measured_at)
         select $1, sum(m.s)::int8, sum(m.b + round(m.n * coalesce(i.per_row, 0)))::int8, now()
         from mine m left join idx i on i.t = m.t
         where exists (select 1 from users where id = $1)
         on conflict (user_id) do update
           set samples = excluded.samples, bytes = excluded.bytes, measured_at = excluded.measured_at
         returning samples, bytes, measured_at",
        per_table.join(" union all ")
    );
    let Some(row) = client.query_opt(&sql, &[&user_id]).await? else {
        return Ok(None);
    };
    let (samples, bytes) = (row.try_get(0)?, row.try_get(1)?);
    Ok(Some(UserStorage {
        user_id,
        samples,
        bytes,
        bytes_per_sample: per_sample(bytes, samples),
        measured_at: row.try_get(2)?,
    }))
}

/// Users whose figures are missing or older than `age`, the stalest first.
pub async fn stale_users(db: &Db, age: chrono::Duration, limit: i64) -> Result<Vec<UserId>> {
    let client = db.client().await?;
    let before = Utc::now() - age;
    let rows = client
        .query(
            "(select u.id from users u
              where not exists (select 1 from user_storage s where s.user_id = u.id)
              limit $2)
             union all
             (select user_id from user_storage where measured_at < $1
              order by measured_at limit $2)
             limit $2",
            &[&before, &limit],
        )
        .await?;
    rows.iter().map(|r| r.try_get(0).map_err(Into::into)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn health_tables_are_durable() {
        for (table, _) in HEALTH {
            assert_eq!(Kind::of(table), Kind::Durable, "{table}");
        }
        assert_eq!(per_sample(1465, 100), Some(14.7));
        assert_eq!(per_sample(10, 0), None);
    }
}
