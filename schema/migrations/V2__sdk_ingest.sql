-- SDK sync ingest: durable batches, rollups, the event outbox.

-- Every accepted SDK sync body, stored before the 202 and kept (retention configurable) so that
-- a user's data can be re-derived after a mapping or unit fix. The body is zstd-compressed by
-- the service, so PostgreSQL need not compress it again.
create table sdk_batches (
    id           uuid primary key,
    user_id      uuid not null references users (id) on delete cascade,
    provider     text not null,
    received_at  timestamptz not null default now(),
    -- When the batch was last announced on the Redis stream (the sweeper re-announces).
    announced_at timestamptz not null default now(),
    body         bytea not null,
    body_size    integer not null,
    status       text not null default 'queued' check (status in ('queued', 'done', 'failed')),
    attempts     integer not null default 0,
    processed_at timestamptz,
    error        text
);
alter table sdk_batches alter column body set storage external;
create index sdk_batches_queued_idx on sdk_batches (announced_at) where status = 'queued';
create index sdk_batches_user_idx on sdk_batches (user_id, received_at);
create index sdk_batches_received_idx on sdk_batches (received_at);

-- Per user-local-day rollups of samples, kept exact by the ingest transaction: summaries read
-- these, never raw samples. Intraday samples and pre-aggregated daily totals are kept apart.
create table daily_rollups (
    user_id        uuid not null,
    series_type_id smallint not null,
    data_source_id uuid not null,
    local_date     date not null,
    sample_count   bigint not null default 0,
    value_sum      double precision not null default 0,
    value_min      double precision,
    value_max      double precision,
    total_count    integer not null default 0,
    total_sum      double precision not null default 0,
    primary key (user_id, series_type_id, local_date, data_source_id)
);

-- Events for the webhook sender, written in the same transaction as the data they announce.
create table outbox (
    id            bigserial primary key,
    created_at    timestamptz not null default now(),
    event_type    text not null,
    user_id       uuid not null,
    payload       jsonb not null,
    dispatched_at timestamptz
);
create index outbox_pending_idx on outbox (id) where dispatched_at is null;

-- The user's most recent zone offset (minutes), for samples that arrive without one.
alter table users add column last_zone_offset smallint;
alter table workouts add column route jsonb;
-- The stage intervals as received (stages holds them after precedence and clipping), so that a
-- night arriving in several batches can be merged.
alter table sleep_sessions add column raw_stages jsonb;
alter table sync_runs add column stage text;
