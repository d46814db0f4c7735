-- Object-storage prefixes whose objects are to be deleted (a deleted user's uploads): written
-- in the transaction that deletes the user, removed once storage holds nothing under them.
create table object_deletions (
    prefix       text primary key,
    requested_at timestamptz not null default now(),
    attempts     integer not null default 0,
    last_error   text
);
