-- Source priorities: one rule resolves duplicates across sources (a phone and a watch counting
-- the same steps, a watch and a ring recording the same night) on every read path.
-- user_id null: the deployment's default; a user's rows override it. kind: `provider`,
-- `device_type`, or `data_source` (a user's own ordering of their sources; key = its id).
create table source_priorities (
    user_id    uuid references users (id) on delete cascade,
    kind       text not null check (kind in ('provider', 'device_type', 'data_source')),
    key        text not null,
    rank       integer not null,
    updated_at timestamptz not null default now(),
    unique nulls not distinct (user_id, kind, key)
);
