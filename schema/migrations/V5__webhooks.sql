-- Outgoing webhooks: endpoints, the messages sent to them, the delivery state of each
-- (message, endpoint) pair, and every attempt, as Svix keeps them.

create table webhook_endpoints (
    id                    text primary key,                 -- ep_<uuid v7, hex>: time-ordered
    url                   text not null,
    description           text not null default '',
    filter_types          text[],                           -- null: every event type
    -- An endpoint scoped to a user goes with the user: never widened to all users.
    user_id               uuid references users (id) on delete cascade,
    secret                text not null,                    -- whsec_<base64>
    -- After a rotation the old secret signs alongside the new one until it expires.
    previous_secret       text,
    previous_expires_at   timestamptz,
    -- Set when every delivery has failed for this long (the sender disables the endpoint).
    failing_since         timestamptz,
    disabled_at           timestamptz,
    disabled_reason       text,
    created_at            timestamptz not null default now(),
    updated_at            timestamptz not null default now()
);
create index webhook_endpoints_user_idx on webhook_endpoints (user_id);

create table webhook_messages (
    id          text primary key,                           -- msg_<uuid v7, hex>
    event_type  text not null,
    -- Idempotency: one message per outbox event and chunk.
    event_id    text not null unique,
    user_id     uuid,
    payload     jsonb not null,
    created_at  timestamptz not null default now()
);
create index webhook_messages_created_idx on webhook_messages (created_at desc, id desc);

create table webhook_deliveries (
    message_id      text not null references webhook_messages (id) on delete cascade,
    endpoint_id     text not null references webhook_endpoints (id) on delete cascade,
    status          smallint not null default 1,            -- 0 success, 1 pending, 2 failed, 3 sending
    attempts        integer not null default 0,
    next_attempt_at timestamptz,
    primary key (message_id, endpoint_id)
);
create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at) where status = 1;

create table webhook_attempts (
    id                    text primary key,                 -- atmpt_<uuid v7, hex>
    message_id            text not null references webhook_messages (id) on delete cascade,
    endpoint_id           text not null references webhook_endpoints (id) on delete cascade,
    url                   text not null,
    response              text not null default '',
    response_status_code  integer not null default 0,
    response_duration_ms  integer not null default 0,
    status                smallint not null,
    trigger_type          smallint not null default 0,      -- 0 scheduled, 1 manual
    created_at            timestamptz not null default now()
);
create index webhook_attempts_endpoint_idx on webhook_attempts (endpoint_id, created_at desc, id desc);
