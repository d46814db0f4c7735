-- A developer's credential version, carried by every developer token issued: a password
-- change moves it on, and the tokens issued before no longer verify (issue 29).
alter table developers add column credential_version integer not null default 0;
