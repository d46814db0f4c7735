-- Apple Health export imports and the multipart uploads that bring them.

-- A multipart upload a client opened through the API: who may sign, complete or abort it.
create table uploads (
    id          uuid primary key,
    user_id     uuid not null references users (id) on delete cascade,
    object_key  text not null,
    upload_id   text not null,
    file_size   bigint not null,
    part_size   bigint not null,
    status      text not null default 'open' check (status in ('open', 'completed', 'aborted')),
    created_at  timestamptz not null default now(),
    updated_at  timestamptz not null default now(),
    unique (object_key, upload_id)
);

-- One import of one stored object; its id is the task id (and the sync run id). An object
-- (bucket, key, ETag) is imported at most once, whichever route announced it.
create table imports (
    id           uuid primary key,
    user_id      uuid not null references users (id) on delete cascade,
    bucket       text not null,
    object_key   text not null,
    etag         text not null,
    size         bigint,
    origin       text not null check (origin in ('multipart', 'bucket_event', 'direct', 'cli')),
    status       text not null default 'queued' check (status in ('queued', 'processing', 'done', 'failed')),
    attempts     integer not null default 0,
    error        text,
    created_at   timestamptz not null default now(),
    announced_at timestamptz not null default now(),
    heartbeat_at timestamptz,
    finished_at  timestamptz,
    unique (bucket, object_key, etag)
);
create index imports_pending_idx on imports (announced_at) where status in ('queued', 'processing');
