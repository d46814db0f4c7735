-- The overview reads the runs that ended in the last hour and day every few seconds per open
-- portal (issue 33): without this, each read scanned every run kept.
create index sync_runs_ended_idx on sync_runs (ended_at) where ended_at is not null;
