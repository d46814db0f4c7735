-- A team runs it (issue 34): developers with roles, invitations to join, API keys with scopes,
-- and an audit trail of access to health data.

-- 1 owner, 2 admin, 3 viewer (`developers::Role`). Everyone who exists today made the
-- deployment or shared its one password: they stay able to do everything.
alter table developers add column role smallint not null default 1;

-- Bits of `api_keys::Scopes`: 1 read, 2 write, 4 sdk. Keys made before scopes keep all three.
alter table api_keys add column scopes smallint not null default 7;

-- An invitation to join the team: the link's token stored hashed, works once, expires.
create table team_invitations (
    id          uuid primary key,
    token_hash  bytea not null unique,
    email       text not null,
    role        smallint not null,
    invited_by  uuid references developers (id) on delete set null,
    created_at  timestamptz not null default now(),
    expires_at  timestamptz not null,
    accepted_at timestamptz,
    revoked_at  timestamptz
);

-- Who did what to whose data: one row a request. Partitioned by time so that retention drops
-- whole chunks; never holds health data (ids, the operation, the status and the address).
create table audit_events (
    at          timestamptz not null,
    id          uuid not null,
    -- `audit::ActorKind`: 1 developer, 2 API key, 3 an end user's SDK token, 4 nobody.
    actor_kind  smallint not null,
    actor_id    uuid,
    operation   text not null,
    user_id     uuid,
    resource_id text,
    status      smallint not null,
    client_addr text
);
select create_hypertable('audit_events', by_range('at', interval '7 days'),
                         create_default_indexes => false);
create index audit_events_at_idx on audit_events (at desc, id desc);
create index audit_events_user_idx on audit_events (user_id, at desc, id desc)
    where user_id is not null;
create index audit_events_actor_idx on audit_events (actor_id, at desc, id desc);
