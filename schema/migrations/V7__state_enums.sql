-- States are enum types: the database refuses a state the code does not name, and the code
-- reads each state into its Rust enum (schema/src/<table>.rs). Webhook delivery and attempt
-- states stay numbers (Svix's MessageStatus, 0 success, 1 pending, 2 failed, 3 sending, which
-- the attempt history shows as is), now checked by the database.
--
-- A column's partial indexes and check constraints compare it with text: they are dropped
-- before its type changes and made again after.

create type batch_status as enum ('queued', 'done', 'failed');
drop index sdk_batches_queued_idx;
alter table sdk_batches drop constraint sdk_batches_status_check;
alter table sdk_batches alter column status drop default;
alter table sdk_batches alter column status type batch_status using status::batch_status;
alter table sdk_batches alter column status set default 'queued';
create index sdk_batches_queued_idx on sdk_batches (announced_at) where status = 'queued';

create type run_status as enum ('queued', 'in_progress', 'success', 'partial', 'failed');
create type run_stage as enum ('queued', 'processing', 'completed');
alter table sync_runs drop constraint sync_runs_status_check;
alter table sync_runs alter column status type run_status using status::run_status;
alter table sync_runs alter column stage type run_stage using stage::run_stage;

create type upload_status as enum ('open', 'completed', 'aborted');
alter table uploads drop constraint uploads_status_check;
alter table uploads alter column status drop default;
alter table uploads alter column status type upload_status using status::upload_status;
alter table uploads alter column status set default 'open';

create type import_status as enum ('queued', 'processing', 'done', 'failed');
create type import_origin as enum ('multipart', 'bucket_event', 'direct', 'cli');
drop index imports_pending_idx;
alter table imports drop constraint imports_status_check;
alter table imports drop constraint imports_origin_check;
alter table imports alter column status drop default;
alter table imports alter column status type import_status using status::import_status;
alter table imports alter column status set default 'queued';
alter table imports alter column origin type import_origin using origin::import_origin;
create index imports_pending_idx on imports (announced_at) where status in ('queued', 'processing');

create type connection_status as enum ('active', 'revoked', 'expired');
alter table connections drop constraint connections_status_check;
alter table connections alter column status drop default;
alter table connections alter column status type connection_status using status::connection_status;
alter table connections alter column status set default 'active';

alter table webhook_deliveries add constraint webhook_deliveries_status_check check (status between 0 and 3);
alter table webhook_attempts add constraint webhook_attempts_status_check check (status in (0, 2));
alter table webhook_attempts add constraint webhook_attempts_trigger_check check (trigger_type in (0, 1));
