-- The pulls a worker's wake loop looks for four times a second (issue 30): queued, put off
-- until a time, and not announced since it was set.
create index vendor_pulls_wake_idx on vendor_pulls (not_before)
    where status = 'queued' and announced_at < not_before;
