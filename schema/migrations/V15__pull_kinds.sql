-- How a pull gets its data: fetched from the vendor's API; pushed by the vendor inside a
-- notification (its page kept when the notification is taken, before the 2xx); or asked of the
-- vendor, which pushes it later (Garmin's backfill).
create type pull_kind as enum ('fetch', 'push', 'backfill');
alter table vendor_pulls add column kind pull_kind not null default 'fetch';
