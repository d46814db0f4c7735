-- An endpoint's own messages, newest first (GET /webhooks/endpoints/{id}/messages, issue 33):
-- the deliveries' key leads with the message, so an endpoint's were a scan of them all.
create index webhook_deliveries_endpoint_idx on webhook_deliveries (endpoint_id, message_id);
