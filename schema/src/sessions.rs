//! Session reads (workouts, sleep sessions, menstrual cycles): cursor pages newest first,
//! counts, deletes, and the cross-source duplicate rule for sessions: of two sessions from
//! different sources overlapping by at least half of the shorter one, the better-ranked source's
//! is kept.

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use serde_json::Value;
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use crate::ids::SeriesId;
use crate::ids::UserId;
use crate::session_blocks::Sessions;
use crate::workouts::WorkoutFigures;
use crate::{Db, Result};

const LIST: &str = include_str!("../queries/events_list.sql");
const DEDUP: &str = include_str!("../queries/events_dedup.sql");
/// The heart rate series' id (`{heart_rate}` in `columns`).
const HEART_RATE: SeriesId = crate::catalogue::series_types::id("heart_rate");

/// Which session table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Workout,
    Sleep,
    MenstrualCycle,
}

impl Kind {
    fn table(self) -> &'static str {
        match self {
            Kind::Workout => "workouts",
            Kind::Sleep => "sleep_sessions",
            Kind::MenstrualCycle => "menstrual_cycles",
        }
    }

    fn columns(self) -> &'static str {
        match self {
            Kind::Workout => {
                "e.id, e.data_source_id, e.type, e.start_time, e.end_time, e.zone_offset,
                 e.duration_seconds, e.calories_kcal, e.distance_meters, e.steps,
                 e.avg_heart_rate_bpm is null as hr_from_samples,
                 coalesce(e.avg_heart_rate_bpm, (
                     select avg(s.value order by s.ts) from {samples} s
                     where s.user_id = e.user_id and s.series_type_id = {heart_rate}
                       and s.data_source_id = e.data_source_id
                       and s.ts >= e.start_time and s.ts < e.end_time)) as avg_heart_rate_bpm,
                 e.max_heart_rate_bpm, e.min_heart_rate_bpm, e.avg_speed_m_per_s,
                 e.max_speed_m_per_s, e.elevation_gain_meters, e.notes,
                 e.route is not null as has_route"
            }
            Kind::Sleep => {
                "e.id, e.data_source_id, e.start_time, e.end_time, e.zone_offset,
                 e.duration_seconds, e.sleep_seconds, e.in_bed_seconds, e.deep_minutes,
                 e.rem_minutes, e.light_minutes, e.awake_minutes, e.efficiency_percent, e.is_nap,
                 e.stages"
            }
            Kind::MenstrualCycle => {
                "e.id, e.data_source_id, e.start_time, e.end_time, e.zone_offset,
                 e.current_phase_type, e.day_in_cycle, e.cycle_length, e.period_length,
                 e.is_predicted_cycle, e.details"
            }
        }
    }

    /// The user's (`$1`) sessions of this kind that start in `[lo, hi)` (SQL), rows and sealed
    /// (`session_blocks`), with the table's columns.
    fn in_window(self, lo: &str, hi: &str) -> String {
        match self {
            Kind::Workout => Sessions::Workouts.in_window("$1", lo, hi),
            Kind::Sleep => Sessions::Sleep.in_window("$1", lo, hi),
            Kind::MenstrualCycle => self.table().to_string(),
        }
    }

    /// The table that seals, if this kind's does.
    fn sealed(self) -> Option<Sessions> {
        match self {
            Kind::Workout => Some(Sessions::Workouts),
            Kind::Sleep => Some(Sessions::Sleep),
            Kind::MenstrualCycle => None,
        }
    }

    /// Cycles are one per source and start; the overlap rule is for sessions.
    fn resolves(self) -> bool {
        self != Kind::MenstrualCycle
    }
}

#[derive(Debug, Clone)]
pub struct EventQuery {
    pub user_id: UserId,
    /// Sessions starting in `[start, end)`.
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    /// The last session seen, `(start_time, id)`.
    pub after: Option<(DateTime<Utc>, Uuid)>,
    /// Towards newer sessions (a `prev_` cursor); rows come nearest first.
    pub backward: bool,
    pub fetch: i64,
    pub resolve: bool,
    /// The user's sources and their ranks (lower wins).
    pub sources: (Vec<Uuid>, Vec<i32>),
}

/// The cross-source duplicate filter for `kind`'s table aliased `e`, with its parameters named.
pub(crate) fn dedup(kind: Kind, resolve: &str, ids: &str, ranks: &str) -> String {
    if !kind.resolves() {
        return String::new();
    }
    // A session overlapping `e` started at most two days before it.
    DEDUP
        .replace("{near}", &kind.in_window("e.start_time - interval '2 days'", "e.end_time"))
        .replace("{resolve}", resolve)
        .replace("{ids}", ids)
        .replace("{ranks}", ranks)
}

/// A session as read, for one table.
pub trait Event: Sized {
    const KIND: Kind;
    fn from_row(row: &Row) -> Result<Self>;
    /// The cursor position: `(start_time, id)`.
    fn position(&self) -> (DateTime<Utc>, Uuid);
}

/// A workout as read: its figures, and whether it has a route to fetch.
#[derive(Debug, Clone, PartialEq)]
pub struct Workout {
    pub id: Uuid,
    pub data_source_id: Uuid,
    pub figures: WorkoutFigures,
    pub has_route: bool,
}

impl Event for Workout {
    const KIND: Kind = Kind::Workout;
    fn from_row(r: &Row) -> Result<Workout> {
        Ok(Workout {
            id: r.try_get("id")?,
            data_source_id: r.try_get("data_source_id")?,
            figures: WorkoutFigures::from_row(r)?,
            has_route: r.try_get("has_route")?,
        })
    }
    fn position(&self) -> (DateTime<Utc>, Uuid) {
        (self.figures.start_time, self.id)
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sleep {
    pub id: Uuid,
    pub data_source_id: Uuid,
    pub start_time: DateTime<Utc>,
    pub end_time: DateTime<Utc>,
    pub zone_offset: Option<i16>,
    pub duration_seconds: i32,
    pub sleep_seconds: Option<i32>,
    pub in_bed_seconds: Option<i32>,
    pub deep_minutes: Option<i32>,
    pub rem_minutes: Option<i32>,
    pub light_minutes: Option<i32>,
    pub awake_minutes: Option<i32>,
    pub efficiency_percent: Option<f64>,
    pub is_nap: bool,
    pub stages: Value,
}

impl Event for Sleep {
    const KIND: Kind = Kind::Sleep;
    fn from_row(r: &Row) -> Result<Sleep> {
        Ok(Sleep {
            id: r.try_get("id")?,
            data_source_id: r.try_get("data_source_id")?,
            start_time: r.try_get("start_time")?,
            end_time: r.try_get("end_time")?,
            zone_offset: r.try_get("zone_offset")?,
            duration_seconds: r.try_get("duration_seconds")?,
            sleep_seconds: r.try_get("sleep_seconds")?,
            in_bed_seconds: r.try_get("in_bed_seconds")?,
            deep_minutes: r.try_get("deep_minutes")?,
            rem_minutes: r.try_get("rem_minutes")?,
            light_minutes: r.try_get("light_minutes")?,
            awake_minutes: r.try_get("awake_minutes")?,
            efficiency_percent: r.try_get("efficiency_percent")?,
            is_nap: r.try_get("is_nap")?,
            stages: json(r, "stages")?,
        })
    }
    fn position(&self) -> (DateTime<Utc>, Uuid) {
        (self.start_time, self.id)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Cycle {
    pub id: Uuid,
    pub data_source_id: Uuid,
    pub start_time: DateTime<Utc>,
    pub end_time: Option<DateTime<Utc>>,
    pub zone_offset: Option<i16>,
    pub current_phase_type: Option<String>,
    pub day_in_cycle: Option<i32>,
    pub cycle_length: Option<i32>,
    pub period_length: Option<i32>,
    pub is_predicted_cycle: bool,
    pub details: Value,
}

impl Event for Cycle {
    const KIND: Kind = Kind::MenstrualCycle;
    fn from_row(r: &Row) -> Result<Cycle> {
        Ok(Cycle {
            id: r.try_get("id")?,
            data_source_id: r.try_get("data_source_id")?,
            start_time: r.try_get("start_time")?,
            end_time: r.try_get("end_time")?,
            zone_offset: r.try_get("zone_offset")?,
            current_phase_type: r.try_get("current_phase_type")?,
            day_in_cycle: r.try_get("day_in_cycle")?,
            cycle_length: r.try_get("cycle_length")?,
            period_length: r.try_get("period_length")?,
            is_predicted_cycle: r.try_get("is_predicted_cycle")?,
            details: json(r, "details")?,
        })
    }
    fn position(&self) -> (DateTime<Utc>, Uuid) {
        (self.start_time, self.id)
    }
}

/// One page of sessions.
pub async fn page<T: Event>(db: &Db, q: &EventQuery) -> Result<Vec<T>> {
    let kind = T::KIND;
    let mut client = db.client().await?;
    let client = crate::blocks::snapshot(&mut client).await?;
    let (cmp, dir) = if q.backward { (">", "asc") } else { ("<", "desc") };
    let sql = LIST
        .replace("{dedup}", &dedup(kind, "$7", "$8", "$9"))
        .replace("{columns}", kind.columns())
        .replace("{heart_rate}", &HEART_RATE.to_string())
        .replace("{table}", &kind.in_window("$2", "$3"))
        .replace("{cmp}", cmp)
        .replace("{dir}", dir);
    let (c_ts, c_id) = match q.after {
        Some(p) => p,
        None if q.backward => (q.start, Uuid::nil()),
        None => (q.end, Uuid::max()),
    };
    let (ids, ranks) = &q.sources;
    let mut params: Vec<&(dyn ToSql + Sync)> =
        vec![&q.user_id, &q.start, &q.end, &c_ts, &c_id, &q.fetch];
    if kind.resolves() {
        params.extend([&q.resolve as &(dyn ToSql + Sync), ids, ranks]);
    }
    let sql = sql.replace("{samples}", &crate::blocks::samples_sql(params.len() + 1));
    let statement = client.prepare_cached(&sql).await?;
    let none = crate::blocks::SealedRows::default();
    // Only the workouts' columns read samples.
    let sealed_params = if kind == Kind::Workout { &none.params()[..] } else { &[] };
    let mut rows = client.query(&statement, &[&params[..], sealed_params].concat()).await?;
    // A workout without its own mean heart rate takes the mean of its source's samples over it;
    // where those are sealed, the page is read again with them.
    if kind == Kind::Workout {
        let mut windows = Vec::new();
        for r in &rows {
            if r.try_get("hr_from_samples")? {
                let (start, end): (DateTime<Utc>, DateTime<Utc>) =
                    (r.try_get("start_time")?, r.try_get("end_time")?);
                windows.push((r.try_get::<_, Uuid>("data_source_id")?, start, end));
            }
        }
        let sealed =
            crate::blocks::read::fetch_windows(&client, q.user_id, HEART_RATE, &windows).await?;
        if !sealed.is_empty() {
            rows = client.query(&statement, &[&params[..], &sealed.params()[..]].concat()).await?;
        }
    }
    let page = rows.iter().map(T::from_row).collect::<Result<Vec<T>>>()?;
    crate::blocks::end_snapshot(client);
    Ok(page)
}

/// How many sessions the window holds (after duplicates are resolved, when asked).
pub async fn count(db: &Db, kind: Kind, q: &EventQuery) -> Result<i64> {
    let client = db.client().await?;
    let sql = format!(
        "select count(*) from {table} e
         where e.user_id = $1 and e.start_time >= $2 and e.start_time < $3 {dedup}",
        table = kind.in_window("$2", "$3"),
        dedup = dedup(kind, "$4", "$5", "$6"),
    );
    let (ids, ranks) = &q.sources;
    let mut params: Vec<&(dyn ToSql + Sync)> = vec![&q.user_id, &q.start, &q.end];
    if kind.resolves() {
        params.extend([&q.resolve as &(dyn ToSql + Sync), ids, ranks]);
    }
    let statement = client.prepare_cached(&sql).await?;
    Ok(client.query_one(&statement, &params).await?.try_get(0)?)
}

/// Deletes one of the user's sessions; false when the user has no such session.
pub async fn delete(db: &Db, kind: Kind, user_id: UserId, id: Uuid) -> Result<bool> {
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    // A sealed session is a row again first, under the writer lock the sealer takes.
    if let Some(sealed) = kind.sealed() {
        use crate::users::{WriterLock, lock_for_writing};
        if lock_for_writing(&tx, user_id, WriterLock::Exclusive).await?.is_none() {
            return Ok(false);
        }
        crate::session_blocks::unseal_id(&tx, user_id, sealed, id).await?;
    }
    let sql = format!("delete from {} where user_id = $1 and id = $2", kind.table());
    let deleted = tx.execute(&sql, &[&user_id, &id]).await? == 1;
    tx.commit().await?;
    Ok(deleted)
}

/// A JSON column that may be null.
fn json(row: &Row, column: &str) -> Result<Value> {
    Ok(row.try_get::<_, Option<Value>>(column)?.unwrap_or(Value::Null))
}
