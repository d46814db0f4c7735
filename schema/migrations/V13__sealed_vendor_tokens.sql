-- Vendor tokens are stored sealed under the master key (`schema::sealed`): text, not bytes.
alter table connections rename column access_token_enc to access_token_sealed;
alter table connections rename column refresh_token_enc to refresh_token_sealed;
alter table connections
    alter column access_token_sealed type text using encode(access_token_sealed, 'escape'),
    alter column refresh_token_sealed type text using encode(refresh_token_sealed, 'escape');
