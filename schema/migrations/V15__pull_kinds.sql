-- How a pull gets its data: fetched from the vendor's API; pushed by the vendor inside a
-- notification (its page kept when the notification is taken, before the 2xx); or asked of the
-- vendor, which pushes it later (Garmin's backfill). A deregistration pull gets none: it checks
-- with the vendor that a user removed the app, as a notice said.
create type pull_kind as enum ('fetch', 'push', 'backfill', 'deregistration');
alter table vendor_pulls add column kind pull_kind not null default 'fetch';
