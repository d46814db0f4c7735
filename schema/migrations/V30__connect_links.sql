-- Connect links (issue 32): a short-lived page an end user opens to connect their wearables
-- without the integrator writing one. The link's token is stored hashed. The first browser to
-- open it is bound to it (the hash of a cookie it was given): the link forwarded after that
-- shows a "used" page and connects no one.
create table connect_links (
    id           uuid primary key,
    token_hash   bytea not null unique,
    user_id      uuid not null references users (id) on delete cascade,
    -- The vendors offered (provider slugs); null: every vendor the deployment has enabled.
    providers    text[],
    -- Where the page sends the user when they are done; null: the page says so itself.
    redirect_uri text,
    -- Who made it: a developer or an API key (never the key itself).
    created_by   text not null,
    created_at   timestamptz not null default now(),
    expires_at   timestamptz not null,
    revoked_at   timestamptz,
    opened_at    timestamptz,
    browser_hash bytea
);
create index connect_links_user_idx on connect_links (user_id, created_at desc);
