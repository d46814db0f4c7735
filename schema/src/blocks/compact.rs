//! Giving back the disk sealing empties. Sealing moves rows into blocks by the million: the
//! samples of past days, their hour and UTC day rollups, most local day rollups (V27) and the
//! sessions of past months (V28). PostgreSQL keeps a table's pages and a B-tree's pages for the
//! rows that come next; a deployment converting years of backlog wants them back, online. Chunks
//! of past samples are rewritten (`VACUUM FULL`, briefly locking that chunk only); the local day
//! rollups are packed into the front of their heap, a user at a time, so that VACUUM can cut
//! the empty end off ([`pack_local_days`]); the plain tables' indexes are rebuilt concurrently.

use chrono::{DateTime, Utc};
use deadpool_postgres::Object;
use tokio_postgres::error::SqlState;

use crate::ids::UserId;
use crate::users::{WriterLock, lock_for_writing};
use crate::{Db, Result};

/// What one live sample row costs with its index entry (a chunk is rewritten once it is far
/// larger than its rows need).
const SAMPLE_ROW: i64 = 170;
/// A chunk is rewritten once it is this much larger than its rows need...
const CHUNK_SLACK: i64 = 3;
/// ...and past this size (an emptied chunk keeps its index pages; a compact one is a page or
/// two).
const CHUNK_FLOOR: i64 = 256 * 1024;
/// How long a rewrite waits for a chunk's readers and writers before it leaves the chunk to
/// the next round: waiting longer would queue everyone behind it.
const LOCK_WAIT: &str = "2s";

/// Gives back the disk of the `samples` chunks sealing emptied, whose range ended before
/// `before` (every day in it past the sealing age). A chunk with no row left is dropped
/// ([`drop_if_empty`]): an empty chunk still costs every read of `samples` on a generic plan its
/// start-up (TimescaleDB's runtime exclusion sets up every chunk of the plan, 15 % of a raw page's
/// CPU on a sealed year of 53 chunks), and an import of ten years makes 520 of them. A chunk on
/// more than a few pages and at least [`CHUNK_SLACK`] times larger than its rows need is
/// rewritten (`VACUUM FULL`, which keeps what any open snapshot may still read; plain VACUUM
/// never shrinks an index). Its rows are counted by the statistics' estimate (the larger of the
/// planner's and the activity counters'); with `recount` the chunks are ANALYZEd first, as they
/// are stale right after sealing. Returns the bytes given back.
pub async fn compact_sealed_chunks(db: &Db, before: DateTime<Utc>, recount: bool) -> Result<u64> {
    one_at_a_time(db, "wearhouse.compact_sealed_chunks", async |client| {
        let mut freed = 0;
        let candidates = client
            .query(
                "select format('%I.%I', c.chunk_schema, c.chunk_name),
                        pg_total_relation_size(
                            format('%I.%I', c.chunk_schema, c.chunk_name)::regclass)
                 from timescaledb_information.chunks c
                 where c.hypertable_name = 'samples' and c.range_end <= $1",
                &[&before],
            )
            .await?;
        for chunk in &candidates {
            let (name, size): (String, i64) = (chunk.try_get(0)?, chunk.try_get(1)?);
            // `name` comes from the catalogue, quoted by format('%I').
            if recount {
                client.batch_execute(&format!("analyze {name}")).await?;
            }
            let rows = live_rows(client, &name).await?;
            if rows == 0 && drop_if_empty(client, &name).await? {
                freed += size.max(0) as u64;
                continue;
            }
            if size < CHUNK_FLOOR || size < CHUNK_SLACK * rows * SAMPLE_ROW {
                continue;
            }
            if !rewrite(client, &name).await? {
                tracing::info!(chunk = %name, "a chunk to compact was busy; the next round retries");
                continue;
            }
            freed += (size - size_of(client, &name, Size::Total).await?).max(0) as u64;
        }
        Ok(freed)
    })
    .await
}

/// Runs `work` on a connection holding the advisory lock `name`: one compaction of a kind at a
/// time, whatever the workers (and `wearhouse seal`) running. Nothing done (0 bytes) while
/// another holds it.
async fn one_at_a_time(
    db: &Db,
    name: &str,
    work: impl AsyncFnOnce(&Object) -> Result<u64>,
) -> Result<u64> {
    let Some(client) = db.try_lock(name).await? else {
        return Ok(0);
    };
    let done = work(&client).await;
    crate::db::unlock(client, name).await;
    done
}

/// What of a relation's disk [`size_of`] counts.
#[derive(Debug, Clone, Copy)]
enum Size {
    /// The relation's own pages: a table's heap, or an index.
    Heap,
    /// A table's heap, indexes and TOAST.
    Total,
}

/// The bytes of relation `name` on disk.
async fn size_of(client: &Object, name: &str, size: Size) -> Result<i64> {
    let sql = match size {
        Size::Heap => "select pg_relation_size($1::text::regclass)",
        Size::Total => "select pg_total_relation_size($1::text::regclass)",
    };
    Ok(client.query_one(sql, &[&name]).await?.try_get(0)?)
}

/// A table's live rows by the statistics' estimate: the larger of the planner's (stale-high
/// after deletions until VACUUM or ANALYZE) and the activity counters' (lost on a stats reset).
async fn live_rows(client: &Object, table: &str) -> Result<i64> {
    let row = client
        .query_one(
            "select greatest(c.reltuples::bigint, coalesce(s.n_live_tup, 0))
             from pg_class c left join pg_stat_all_tables s on s.relid = c.oid
             where c.oid = $1::text::regclass",
            &[&table],
        )
        .await?;
    Ok(row.try_get(0)?)
}

/// About what a `daily_rollups` row takes of its heap: a 24-byte header, ~70 bytes of columns,
/// a line pointer.
const LOCAL_DAY_ROW: i64 = 100;
/// The heap is packed once it is this much larger than its rows need...
const PACK_SLACK: i64 = 3;
/// ...and past this size.
const PACK_FLOOR: i64 = 8 << 20;
/// The users whose rows are moved in one round of [`pack_local_days`].
const PACK_USERS: i64 = 2000;

/// How long a round of [`pack_local_days`] that freed nothing and left no user to move (the
/// rows it moved landed behind the cut again, or their users were busy writing) keeps the next
/// rounds from trying again while the heap and its rows stay as they were: the sealer calls it
/// every idle minute, and each try vacuums the table twice.
const FRUITLESS_REST: std::time::Duration = std::time::Duration::from_secs(3600);

/// The last fruitless round of [`pack_local_days`]: when, and the heap's size and counted rows
/// it left. One process serves one database.
static FRUITLESS: std::sync::Mutex<Option<(std::time::Instant, i64, i64)>> =
    std::sync::Mutex::new(None);

/// Whether a round at `size` bytes and `counted` rows would repeat a fruitless one, at `now`.
fn fruitless_before(now: std::time::Instant, size: i64, counted: i64) -> bool {
    FRUITLESS.lock().is_ok_and(|last| {
        last.is_some_and(|(at, s, c)| {
            (s, c) == (size, counted) && now.duration_since(at) < FRUITLESS_REST
        })
    })
}

/// Notes how a round ended at `now`: fruitless at `size` and `counted` unless it `progressed`.
fn note_round(now: std::time::Instant, size: i64, counted: i64, progressed: bool) {
    if let Ok(mut last) = FRUITLESS.lock() {
        *last = (!progressed).then_some((now, size, counted));
    }
}

/// What a round of [`pack_local_days`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Packing {
    /// Bytes of the heap given back.
    pub freed: u64,
    /// Users were left behind the cut for the next round (a round moves at most
    /// [`PACK_USERS`]): a heap of more users gives its end back only rounds later.
    pub more: bool,
}

impl Packing {
    /// Whether a next round may do more: this one freed bytes or left users to move.
    pub fn progressed(&self) -> bool {
        self.freed > 0 || self.more
    }
}

/// Gives back the heap of `daily_rollups` that sealing emptied. Sealing a backlog takes ~93 %
/// of its rows into blocks and leaves the rest (the local days at blocks' edges, the days not
/// sealed yet) scattered over every page, which a plain VACUUM keeps. Once the heap is over
/// [`PACK_SLACK`] times what its rows need, the rows beyond that size are moved to the free
/// space in front (deleted and inserted again in one transaction per user, under the user's
/// writer lock, so that readers see each user's rows before or after and writers wait), and
/// VACUUM cuts off the emptied end. Rows land where PostgreSQL's free space map sends them,
/// which is mostly but not only the front: a round moves at most [`PACK_USERS`] users, and the
/// next round moves the rest and what landed behind the cut.
pub async fn pack_local_days(db: &Db) -> Result<Packing> {
    let mut more = false;
    let freed = one_at_a_time(db, "wearhouse.pack_local_days", async |client| {
        let size = size_of(client, "daily_rollups", Size::Heap).await?;
        let counted = counted_rows(client).await?;
        if size < PACK_FLOOR
            || size < PACK_SLACK * counted * LOCAL_DAY_ROW
            || fruitless_before(std::time::Instant::now(), size, counted)
        {
            return Ok(0);
        }
        // Bloated by the activity counters: counted again from a sample of the heap (they are
        // lost on a statistics reset), and the free space map learns of the space sealing freed.
        client.batch_execute("vacuum (analyze) daily_rollups").await?;
        let need = live_rows(client, "daily_rollups").await? * LOCAL_DAY_ROW;
        if size < PACK_SLACK * need {
            // Its rows were undercounted (statistics reset): nothing to pack.
            return Ok(0);
        }
        // Rows before this page stay; a quarter over what they need leaves room for inserts.
        let keep = (need + need / 4) / 8192 + 1;
        let users: Vec<UserId> = client
            .query(
                "select distinct user_id from daily_rollups
                 where ctid >= format('(%s,0)', $1::bigint)::tid limit $2",
                &[&keep, &PACK_USERS],
            )
            .await?
            .iter()
            .map(|r| r.try_get(0))
            .collect::<std::result::Result<_, _>>()?;
        more = users.len() as i64 == PACK_USERS;
        for user in users {
            move_forward(db, user, keep).await?;
        }
        // The emptied end cut off (VACUUM truncates a heap's trailing empty pages).
        client.batch_execute("vacuum daily_rollups").await?;
        let after = size_of(client, "daily_rollups", Size::Heap).await?;
        let freed = (size - after).max(0);
        // Noted with the counters as the next round reads them: VACUUM just set them. A round
        // that left users to move is no fruitless one, though the heap's end stays.
        let round = Packing { freed: freed as u64, more };
        let counted = counted_rows(client).await?;
        note_round(std::time::Instant::now(), after, counted, round.progressed());
        Ok(round.freed)
    })
    .await?;
    Ok(Packing { freed, more })
}

/// The live rows of `daily_rollups` by the activity counters (cheap; lost on a stats reset).
async fn counted_rows(client: &Object) -> Result<i64> {
    let row = client
        .query_one(
            "select coalesce(n_live_tup, 0) from pg_stat_all_tables
             where relid = 'daily_rollups'::regclass",
            &[],
        )
        .await?;
    Ok(row.try_get(0)?)
}

/// Moves a user's `daily_rollups` rows from page `keep` on to wherever the heap has room. A
/// user whose writers hold their lock past [`LOCK_WAIT`] is left to the next round: the
/// sealer waits behind packing.
async fn move_forward(db: &Db, user: UserId, keep: i64) -> Result<()> {
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    tx.batch_execute(&format!("set local lock_timeout = '{LOCK_WAIT}'")).await?;
    match lock_for_writing(&tx, user, WriterLock::Exclusive).await {
        Ok(Some(_)) => {}
        Ok(None) => return Ok(()),
        Err(crate::Error::Db(e)) if e.code() == Some(&SqlState::LOCK_NOT_AVAILABLE) => {
            tracing::debug!(%user, "a user to pack was busy writing; the next round moves them");
            return Ok(());
        }
        Err(e) => return Err(e),
    }
    tx.execute(
        "with moved as (
             delete from daily_rollups
             where user_id = $1 and ctid >= format('(%s,0)', $2::bigint)::tid
             returning *)
         insert into daily_rollups select * from moved",
        &[&user, &keep],
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Drops chunk `name` of `samples` if no snapshot can see a row of it; whether it did. A plain
/// VACUUM first removes the rows every snapshot sees as deleted and cuts the heap to nothing
/// when none is left, so an empty heap means that no open snapshot (a reader's, taken before
/// sealing committed) still reads rows there; DROP TABLE, unlike VACUUM, would not keep them
/// for it. The drop then holds `samples` against writers (an insert locks the hypertable before
/// it finds its chunk, so none can be on its way into this one) and the chunk against readers,
/// and looks again. A writer bringing that week a sample later makes a new chunk. Busy (either
/// lock not had within [`DROP_WAIT`]): left to the next round.
async fn drop_if_empty(client: &Object, name: &str) -> Result<bool> {
    let vacuumed = lock_waiting(client, LOCK_WAIT, &format!("vacuum {name}")).await?;
    if !vacuumed || size_of(client, name, Size::Heap).await? > 0 {
        return Ok(false);
    }
    // The heap is checked again under the locks, in one statement: nothing can land in it
    // between the look and the drop.
    let drop = format!(
        "do $$ begin
           lock table only samples in share row exclusive mode;
           lock table {name} in access exclusive mode;
           if pg_relation_size('{name}') = 0 then
             drop table {name};
           end if;
         end $$"
    );
    if !lock_waiting(client, DROP_WAIT, &drop).await? {
        tracing::info!(chunk = %name, "an empty chunk to drop was busy; the next round retries");
        return Ok(false);
    }
    let gone: bool =
        client.query_one("select to_regclass($1) is null", &[&name]).await?.try_get(0)?;
    Ok(gone)
}

/// How long dropping an empty chunk waits for the writers of `samples`: they queue behind the
/// drop meanwhile, so briefly (a writer's transaction that holds it longer leaves the drop to the
/// next round).
const DROP_WAIT: &str = "100ms";

/// Runs `sql` waiting at most `wait` for each lock it takes; false when one was not had.
async fn lock_waiting(client: &Object, wait: &str, sql: &str) -> Result<bool> {
    client.batch_execute(&format!("set lock_timeout = '{wait}'")).await?;
    let done = client.batch_execute(sql).await;
    client.batch_execute("reset lock_timeout").await?;
    match done {
        Ok(()) => Ok(true),
        Err(e) if e.code() == Some(&SqlState::LOCK_NOT_AVAILABLE) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Rewrites a chunk unless its lock is not had within [`LOCK_WAIT`] (then `false`).
async fn rewrite(client: &Object, name: &str) -> Result<bool> {
    lock_waiting(client, LOCK_WAIT, &format!("vacuum full {name}")).await
}

/// The indexes whose rows come and go by the million (a day's hours and day rollup are written
/// at ingest and moved into its block when it seals), with their tables: a B-tree never
/// shrinks.
const EMPTIED_INDEXES: [(&str, &str); 12] = [
    ("hourly_rollups_pkey", "hourly_rollups"),
    ("utc_day_rollups_pkey", "utc_day_rollups"),
    ("utc_day_rollups_unsealed", "utc_day_rollups"),
    ("utc_day_rollups_unsealed_user", "utc_day_rollups"),
    // The local days blocks keep (V27), and the sessions of sealed months (V28).
    ("daily_rollups_pkey", "daily_rollups"),
    ("sleep_sessions_pkey", "sleep_sessions"),
    ("sleep_sessions_data_source_id_start_time_end_time_key", "sleep_sessions"),
    ("sleep_sessions_user_start_idx", "sleep_sessions"),
    ("sleep_sessions_source_span_idx", "sleep_sessions"),
    ("workouts_pkey", "workouts"),
    ("workouts_data_source_id_start_time_end_time_key", "workouts"),
    ("workouts_user_start_idx", "workouts"),
];
/// An index is rebuilt once it is this much larger than its table's rows need...
const INDEX_SLACK: i64 = 3;
/// ...and past this size (smaller, it is not worth a rebuild).
const INDEX_FLOOR: i64 = 1 << 20;
/// About what one row takes in such an index: a 42-byte key, its tuple header and line pointer,
/// at the B-tree's fill factor.
const INDEX_ROW: i64 = 64;

/// Gives back the disk of the rollup and session rows sealing moved into blocks: when one of
/// [`EMPTIED_INDEXES`] is far larger than its table's rows (by the planner's count, kept by
/// autovacuum and ANALYZE) need, it is rebuilt concurrently, without blocking writers. An import
/// of years of data writes all its hours and days at once; sealing then empties most of them.
/// With `recount`, the rows are counted first (ANALYZE), as they are stale right after sealing.
/// Returns the bytes given back.
pub async fn compact_emptied_indexes(db: &Db, recount: bool) -> Result<u64> {
    let client = db.client().await?;
    if recount {
        let tables: std::collections::BTreeSet<&str> =
            EMPTIED_INDEXES.iter().map(|(_, table)| *table).collect();
        let tables: Vec<&str> = tables.into_iter().collect();
        client.batch_execute(&format!("analyze {}", tables.join(", "))).await?;
    }
    let mut bloated = Vec::new();
    for (index, table) in EMPTIED_INDEXES {
        let row = client
            .query_one(
                "select pg_relation_size($1::text::regclass),
                        (select reltuples::bigint from pg_class where oid = $2::text::regclass)",
                &[&index, &table],
            )
            .await?;
        let (size, rows): (i64, i64) = (row.try_get(0)?, row.try_get(1)?);
        // Never counted (-1): no telling whether it is bloated.
        if rows >= 0 && size >= INDEX_FLOOR && size >= INDEX_SLACK * rows * INDEX_ROW {
            bloated.push((index, size));
        }
    }
    if bloated.is_empty() {
        return Ok(0);
    }
    drop(client);
    one_at_a_time(db, "wearhouse.compact_hour_index", async |client| {
        let mut freed = 0;
        for (index, size) in bloated {
            // What a rebuild cut short left behind (REINDEX CONCURRENTLY's names).
            for leftover in ["ccnew", "ccold"] {
                client
                    .batch_execute(&format!("drop index concurrently if exists {index}_{leftover}"))
                    .await?;
            }
            client.batch_execute(&format!("reindex index concurrently {index}")).await?;
            freed += (size - size_of(client, index, Size::Heap).await?).max(0) as u64;
        }
        Ok(freed)
    })
    .await
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    #[test]
    fn a_fruitless_packing_rests_while_the_heap_stays_as_it_was() {
        let at = Instant::now();
        note_round(at, 80 << 20, 1000, false);
        assert!(fruitless_before(at + Duration::from_secs(60), 80 << 20, 1000));
        // The heap or its rows changed, or the rest is over: tried again.
        assert!(!fruitless_before(at + Duration::from_secs(60), 81 << 20, 1000));
        assert!(!fruitless_before(at + Duration::from_secs(60), 80 << 20, 900));
        assert!(!fruitless_before(at + FRUITLESS_REST, 80 << 20, 1000));
        // A round that freed something, or left users to move, clears it.
        note_round(at, 80 << 20, 1000, true);
        assert!(!fruitless_before(at + Duration::from_secs(60), 80 << 20, 1000));
    }
}
