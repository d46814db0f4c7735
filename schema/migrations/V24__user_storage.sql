-- What each user's stored data costs (issue 31: `GET /developer/overview`'s storage), measured
-- by schema::storage when the sealer seals the user's days and at least daily by the worker's
-- sweep: counting a fleet's rows on every overview would read the whole database.
create table user_storage (
    user_id     uuid primary key references users (id) on delete cascade,
    samples     bigint not null,
    bytes       bigint not null,
    measured_at timestamptz not null default now()
);
-- The overview lists the largest users; the sweep takes the stalest figures.
create index user_storage_bytes_idx on user_storage (bytes desc);
create index user_storage_measured_idx on user_storage (measured_at);
