-- Exports of a user's whole record (issue 35): a zip in object storage under the user's prefix
-- (so deleting the user empties it with the rest), made by a worker, downloaded through a
-- presigned URL until it expires.
create type export_status as enum ('queued', 'processing', 'done', 'failed');

create table exports (
    id            uuid primary key,
    user_id       uuid not null references users (id) on delete cascade,
    status        export_status not null default 'queued',
    -- Set when done: the archive's key and size, and what it holds.
    object_key    text,
    bytes         bigint,
    samples       bigint,
    workouts      bigint,
    sleep_sessions bigint,
    menstrual_cycles bigint,
    fhir_resources bigint,
    error         text,
    attempts      int not null default 0,
    created_at    timestamptz not null default now(),
    heartbeat_at  timestamptz,
    announced_at  timestamptz not null default now(),
    finished_at   timestamptz,
    expires_at    timestamptz not null
);

create index exports_user_idx on exports (user_id, created_at desc);
create index exports_waiting_idx on exports (announced_at) where status in ('queued', 'processing');
create index exports_expiry_idx on exports (expires_at);
