-- When each API key last authenticated a call (issue 33): a developer tells a key in use from
-- a forgotten one before revoking it. Written at most once a minute per key.
alter table api_keys add column last_used_at timestamptz;
