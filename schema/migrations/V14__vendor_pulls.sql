-- A pull of one user's data from a cloud vendor over a time window: durable like an SDK
-- batch (the worker that takes it may die; the sweeper announces it again). Its id is its sync
-- run's id, the task id the API answered with.
create type pull_status as enum ('queued', 'done', 'failed');
create table vendor_pulls (
    id           uuid primary key,
    user_id      uuid not null references users (id) on delete cascade,
    provider     text not null,
    window_start timestamptz not null,
    window_end   timestamptz not null,
    status       pull_status not null default 'queued',
    attempts     integer not null default 0,
    -- Not before: a vendor's Retry-After, or a back-off after a failure.
    not_before   timestamptz not null default now(),
    announced_at timestamptz not null default now(),
    last_error   text,
    created_at   timestamptz not null default now(),
    updated_at   timestamptz not null default now()
);
create index vendor_pulls_queued_idx on vendor_pulls (not_before) where status = 'queued';
create index vendor_pulls_user_idx on vendor_pulls (user_id);

-- Every page a vendor answered, as it answered it (zstd JSON), so that `reprocess` can derive
-- the data again after a mapping fix.
create table vendor_pages (
    pull_id     uuid not null references vendor_pulls (id) on delete cascade,
    collection  text not null,
    seq         integer not null,
    body        bytea not null,
    received_at timestamptz not null default now(),
    primary key (pull_id, collection, seq)
);
