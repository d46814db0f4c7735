-- What a developer set for a provider; a provider without a row has its defaults (enabled,
-- its own live sync mode, its default granularity).
create table provider_settings (
    provider         text primary key,
    is_enabled       boolean not null default true,
    live_sync_mode   text check (live_sync_mode in ('pull', 'webhook')),
    data_granularity text check (data_granularity in ('daily', 'hourly', 'raw')),
    updated_at       timestamptz not null default now()
);
