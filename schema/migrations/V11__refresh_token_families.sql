-- SDK refresh tokens expire, and each belongs to a family: the chain rotated from one issue.
-- `replaced_by` links a rotated-out token to its successor. A rotated-out token presented
-- again means a copy is in other hands: the whole family is revoked.
alter table sdk_refresh_tokens
    add column family_id   uuid,
    add column expires_at  timestamptz,
    add column replaced_by bytea;
update sdk_refresh_tokens
   set family_id = gen_random_uuid(),
       expires_at = coalesce(last_used_at, created_at) + interval '90 days';
alter table sdk_refresh_tokens
    alter column family_id set not null,
    alter column expires_at set not null;
create index sdk_refresh_tokens_family_idx on sdk_refresh_tokens (family_id);
