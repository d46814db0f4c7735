-- Sealed sessions (issue 31): a source's sleep sessions and workouts that started in a past UTC
-- month move out of their tables into one row per (user, source, month) holding them as an
-- array of the table's own row type, compressed: a session row cost ~430 bytes with its four
-- indexes, more than the samples of a sparse series' day. Fresh sessions stay rows. A session
-- lives in its row or in its month's block, never both: a writer moves the blocks it may touch
-- back into rows first (schema::session_blocks). Workouts with a route (or route files still
-- to read) stay rows: a route is large and read on its own.
--
-- Reads go through `sleep_sessions_in` and `workouts_in`: a user's sessions that start in
-- [lo, hi), rows and sealed, decoding only the months that can hold them.
create table sleep_blocks (
    user_id        uuid not null references users (id) on delete cascade,
    data_source_id uuid not null references data_sources (id) on delete cascade,
    -- The UTC midnight the month starts at.
    month          timestamptz not null,
    sessions       sleep_sessions[] not null,
    -- The sessions' client ids, apart: a writer finds a re-sent session by its id without
    -- decoding the month.
    external_ids   text[] not null,
    primary key (user_id, data_source_id, month)
);
create table workout_blocks (
    user_id        uuid not null references users (id) on delete cascade,
    data_source_id uuid not null references data_sources (id) on delete cascade,
    month          timestamptz not null,
    sessions       workouts[] not null,
    external_ids   text[] not null,
    primary key (user_id, data_source_id, month)
);
-- A month's sessions are compressed (lz4) from a few hundred bytes on, not only past 2 kB.
alter table sleep_blocks alter column sessions set compression lz4;
alter table workout_blocks alter column sessions set compression lz4;
alter table sleep_blocks set (toast_tuple_target = 256);
alter table workout_blocks set (toast_tuple_target = 256);
create index sleep_blocks_user_month_idx on sleep_blocks (user_id, month);
create index workout_blocks_user_month_idx on workout_blocks (user_id, month);

-- The sealer's worklist: the rows of past months, oldest first.
create index sleep_sessions_start_idx on sleep_sessions (start_time);
create index workouts_sealable_start_idx on workouts (start_time)
    where route is null and jsonb_typeof(statistics -> 'route_files') is distinct from 'array';

-- A user's sessions that start in [lo, hi), rows and sealed. A month's block holds the sessions
-- that start in it, so only the months from lo's to hi's are read.
create function sleep_sessions_in(u uuid, lo timestamptz, hi timestamptz)
returns setof sleep_sessions
language sql stable parallel safe
as $$
    select * from sleep_sessions s where s.user_id = u and s.start_time >= lo and s.start_time < hi
    union all
    select r.* from sleep_blocks b cross join lateral unnest(b.sessions) r
    where b.user_id = u and b.month > lo - interval '1 month' and b.month < hi
      and r.start_time >= lo and r.start_time < hi
$$;

create function workouts_in(u uuid, lo timestamptz, hi timestamptz)
returns setof workouts
language sql stable parallel safe
as $$
    select * from workouts s where s.user_id = u and s.start_time >= lo and s.start_time < hi
    union all
    select r.* from workout_blocks b cross join lateral unnest(b.sessions) r
    where b.user_id = u and b.month > lo - interval '1 month' and b.month < hi
      and r.start_time >= lo and r.start_time < hi
$$;
