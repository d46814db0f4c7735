-- The bytes a user has waiting (stored, not yet processed), summed on every accept to bound a
-- user's backlog: an index-only scan of the user's queued batches.
create index sdk_batches_user_queued_idx on sdk_batches (user_id) include (body_size)
    where status = 'queued';
