-- Invitation codes (issue 32): a mobile app onboards a user by redeeming an 8-character code for
-- the user's SDK tokens, once. Stored hashed like refresh tokens: the table does not hand out
-- live codes. A new code revokes the user's older ones.
create table invitation_codes (
    id          uuid primary key,
    code_hash   bytea not null unique,
    user_id     uuid not null references users (id) on delete cascade,
    -- Who made it: a developer or an API key (never the key itself).
    created_by  text not null,
    created_at  timestamptz not null default now(),
    expires_at  timestamptz not null,
    redeemed_at timestamptz,
    revoked_at  timestamptz
);
create index invitation_codes_user_idx on invitation_codes (user_id);
