-- wearhouse foundation schema. Never edit a migration once it has landed: add a new one.
-- TimescaleDB is required (the samples hypertable); the migrator checks for it first and says
-- how to install it when it is missing.
create extension if not exists timescaledb;

-- Server-generated settings (for instance the JWT signing key when SECRET_KEY is not set), so
-- that every process of a deployment agrees on them across restarts.
create table server_settings (
    key        text primary key,
    value      text not null,
    created_at timestamptz not null default now()
);

-- Developers log in to manage API keys, webhooks and users.
create table developers (
    id            uuid primary key,
    email         text not null,
    password_hash text not null,
    first_name    text,
    last_name     text,
    created_at    timestamptz not null default now(),
    updated_at    timestamptz not null default now()
);
create unique index developers_email_key on developers (lower(email));

-- API keys are stored as SHA-256 hashes; only a short prefix is kept in clear, for listings.
create table api_keys (
    id         uuid primary key,
    name       text not null,
    key_hash   bytea not null unique,
    prefix     text not null,
    created_by uuid references developers (id) on delete set null,
    created_at timestamptz not null default now(),
    revoked_at timestamptz
);

-- The application's end users, whose health data we hold.
create table users (
    id                   uuid primary key,
    email                text,
    first_name           text,
    last_name            text,
    external_user_id     text unique,
    last_synced_at       timestamptz,
    last_synced_provider text,
    created_at           timestamptz not null default now(),
    updated_at           timestamptz not null default now()
);
create index users_created_at_idx on users (created_at desc, id desc);

-- Refresh tokens of the mobile SDK, hashed; rotated on every use.
create table sdk_refresh_tokens (
    token_hash   bytea primary key,
    user_id      uuid not null references users (id) on delete cascade,
    issued_by    text not null,
    created_at   timestamptz not null default now(),
    last_used_at timestamptz,
    revoked_at   timestamptz
);
create index sdk_refresh_tokens_user_idx on sdk_refresh_tokens (user_id);

-- A user's link to a provider. Vendor tokens are encrypted by the service before they land here.
create table connections (
    id                uuid primary key,
    user_id           uuid not null references users (id) on delete cascade,
    provider          text not null,
    provider_user_id  text,
    provider_username text,
    scope             text,
    access_token_enc  bytea,
    refresh_token_enc bytea,
    token_expires_at  timestamptz,
    status            text not null default 'active' check (status in ('active', 'revoked', 'expired')),
    last_synced_at    timestamptz,
    created_at        timestamptz not null default now(),
    updated_at        timestamptz not null default now(),
    unique (user_id, provider)
);
create index connections_provider_user_idx on connections (provider, provider_user_id)
    where provider_user_id is not null;

-- Where samples and sessions come from: a device or app of one user at one provider.
create table data_sources (
    id                   uuid primary key,
    user_id              uuid not null references users (id) on delete cascade,
    provider             text not null,
    user_connection_id   uuid references connections (id) on delete set null,
    device_model         text,
    device_manufacturer  text,
    software_version     text,
    source               text,
    device_type          text,
    original_source_name text,
    created_at           timestamptz not null default now(),
    -- One row per (user, provider, device model, source name): the identity of a source.
    identity text generated always as (coalesce(device_model, '') || '|' || coalesce(source, '')) stored,
    unique (user_id, provider, identity)
);

-- The series-type catalogue, seeded from schema/src/catalogue/series_types.rs by the migrator.
create table series_types (
    id          smallint primary key,
    slug        text not null unique,
    unit        text not null,
    category    text not null,
    aggregation text not null check (aggregation in ('sum', 'avg', 'max')),
    event       text not null
);

-- Raw samples: one hypertable partitioned by time. No foreign keys, to keep bulk COPY fast;
-- deleting a user or a data source deletes its samples explicitly (schema::users::delete).
-- zone_offset is the sample's local offset from UTC in minutes (null when unknown).
create table samples (
    user_id        uuid not null,
    series_type_id smallint not null,
    data_source_id uuid not null,
    ts             timestamptz not null,
    value          double precision not null,
    zone_offset    smallint,
    is_daily_total boolean,
    batch_id       uuid
);
-- No default time index: every read and the dedup key lead with the user, so the unique index
-- below serves them, and one index per row keeps ingest fast.
select create_hypertable('samples', by_range('ts', interval '7 days'), create_default_indexes => false);
-- The dedup key: a re-sent sample (same user, series, source and instant) is stored once.
-- Column order serves the common read (one user, some series, a time range).
create unique index samples_dedup_key on samples (user_id, series_type_id, ts, data_source_id);

-- Sessions. external_id is the client's id of the session, the dedup key where present;
-- otherwise a session is identified by its source and its start and end.
create table workouts (
    id                    uuid primary key,
    user_id               uuid not null references users (id) on delete cascade,
    data_source_id        uuid not null references data_sources (id) on delete cascade,
    external_id           text,
    type                  text,
    start_time            timestamptz not null,
    end_time              timestamptz not null,
    zone_offset           smallint,
    duration_seconds      integer not null,
    calories_kcal         double precision,
    distance_meters       double precision,
    steps                 integer,
    avg_heart_rate_bpm    double precision,
    max_heart_rate_bpm    double precision,
    min_heart_rate_bpm    double precision,
    avg_speed_m_per_s     double precision,
    max_speed_m_per_s     double precision,
    elevation_gain_meters double precision,
    max_altitude_meters   double precision,
    min_altitude_meters   double precision,
    notes                 text,
    statistics            jsonb,
    batch_id              uuid,
    created_at            timestamptz not null default now(),
    unique (data_source_id, start_time, end_time)
);
create unique index workouts_external_id_key on workouts (data_source_id, external_id) where external_id is not null;
create index workouts_user_start_idx on workouts (user_id, start_time desc, id desc);

create table sleep_sessions (
    id                  uuid primary key,
    user_id             uuid not null references users (id) on delete cascade,
    data_source_id      uuid not null references data_sources (id) on delete cascade,
    external_id         text,
    start_time          timestamptz not null,
    end_time            timestamptz not null,
    zone_offset         smallint,
    duration_seconds    integer not null,
    sleep_seconds       integer,
    in_bed_seconds      integer,
    deep_minutes        integer,
    rem_minutes         integer,
    light_minutes       integer,
    awake_minutes       integer,
    efficiency_percent  double precision,
    is_nap              boolean not null default false,
    stages              jsonb,
    batch_id            uuid,
    created_at          timestamptz not null default now(),
    unique (data_source_id, start_time, end_time)
);
create unique index sleep_sessions_external_id_key on sleep_sessions (data_source_id, external_id) where external_id is not null;
create index sleep_sessions_user_start_idx on sleep_sessions (user_id, start_time desc, id desc);

create table activity_sessions (
    id               uuid primary key,
    user_id          uuid not null references users (id) on delete cascade,
    data_source_id   uuid not null references data_sources (id) on delete cascade,
    external_id      text,
    type             text,
    start_time       timestamptz not null,
    end_time         timestamptz not null,
    zone_offset      smallint,
    duration_seconds integer not null,
    details          jsonb,
    batch_id         uuid,
    created_at       timestamptz not null default now(),
    unique (data_source_id, start_time, end_time)
);
create unique index activity_sessions_external_id_key on activity_sessions (data_source_id, external_id) where external_id is not null;
create index activity_sessions_user_start_idx on activity_sessions (user_id, start_time desc, id desc);

create table menstrual_cycles (
    id                 uuid primary key,
    user_id            uuid not null references users (id) on delete cascade,
    data_source_id     uuid not null references data_sources (id) on delete cascade,
    external_id        text,
    start_time         timestamptz not null,
    end_time           timestamptz,
    zone_offset        smallint,
    current_phase_type text,
    day_in_cycle       integer,
    cycle_length       integer,
    period_length      integer,
    is_predicted_cycle boolean not null default false,
    details            jsonb,
    batch_id           uuid,
    created_at         timestamptz not null default now(),
    unique (data_source_id, start_time)
);
create unique index menstrual_cycles_external_id_key on menstrual_cycles (data_source_id, external_id) where external_id is not null;
create index menstrual_cycles_user_start_idx on menstrual_cycles (user_id, start_time desc, id desc);

-- One ingest run: an SDK batch, an export import, a provider pull. Its counts and the reasons
-- items were dropped are what the sync-status endpoints report.
create table sync_runs (
    id          uuid primary key,
    user_id     uuid not null references users (id) on delete cascade,
    provider    text not null,
    source      text not null,
    status      text not null check (status in ('queued', 'in_progress', 'success', 'partial', 'failed')),
    message     text,
    counts      jsonb not null default '{}'::jsonb,
    dropped     jsonb not null default '{}'::jsonb,
    error       text,
    created_at  timestamptz not null default now(),
    started_at  timestamptz,
    ended_at    timestamptz,
    updated_at  timestamptz not null default now()
);
create index sync_runs_user_updated_idx on sync_runs (user_id, updated_at desc);
