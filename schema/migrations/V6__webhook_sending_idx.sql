-- The sweep looks for deliveries left `sending` (3) by a sender that died: an index on just
-- those, so it never scans the whole delivery history.
create index webhook_deliveries_sending_idx on webhook_deliveries (next_attempt_at) where status = 3;
