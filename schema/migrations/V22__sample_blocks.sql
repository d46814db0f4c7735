-- Sealed sample blocks (issue 31): once a (user, series, source, UTC day) is past and quiet,
-- its samples move out of the row-wise hypertable into one row here, its columns encoded by
-- schema::blocks::codec (times and values by pco, offsets, flags and batch lineage as runs).
-- A day's samples live in exactly one place: its rows or its block. A writer that brings a
-- sample to a sealed day (a new one, or a changed value) first moves the block back into rows
-- (schema::blocks::unseal), so dedup and recounts work on rows as before; the sealer seals the
-- day again once it is quiet. The rollups are kept whichever way the day is stored.
create table sample_blocks (
    user_id        uuid not null,
    series_type_id smallint not null,
    data_source_id uuid not null,
    -- The UTC midnight the day starts at.
    day            timestamptz not null,
    sample_count   integer not null,
    first_ts       timestamptz not null,
    last_ts        timestamptz not null,
    data           bytea not null,
    primary key (user_id, series_type_id, data_source_id, day)
);
-- The bytes are compressed already: TOAST stores them out of line as they are, never trying
-- (and failing) to compress them again.
alter table sample_blocks alter column data set storage external;

-- What the sealer works from: the UTC day rollups name every (user, series, source, day) that
-- holds samples. `sealed`: its samples are all in its block; `changed_at`: when a writer last
-- added to or recounted the day (a write to a day clears `sealed`). Rows stored before this
-- version are old: they are sealed as soon as the sealer runs, in the background.
alter table utc_day_rollups
    add column sealed boolean not null default false,
    add column changed_at timestamptz not null default '-infinity';
alter table utc_day_rollups alter column changed_at set default now();
-- The sealer's worklist: by day, since the day never changes, so a write to a day's rollup
-- stays a HOT update (changed_at is in no index).
create index utc_day_rollups_unsealed on utc_day_rollups (day) where not sealed;
