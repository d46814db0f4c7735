//! Every operation's id, in one table: what generated clients name their functions after, so
//! ids are unique, stable and named by resource then action. utoipa would take the handler's
//! function name, which repeats across route files (`get_user` was both a user and a user's
//! priorities). A route without an entry here fails `every_operation_has_one_unique_id`.

use utoipa::openapi::OpenApi;
use utoipa::openapi::path::Operation;

/// `(method, path, operation id)`.
pub(crate) const OPERATION_IDS: &[(&str, &str, &str)] = &[
    ("POST", "/api/v1/auth/login", "auth_login"),
    ("GET", "/api/v1/auth/me", "auth_me"),
    ("POST", "/api/v1/auth/password", "auth_change_password"),
    ("POST", "/api/v1/auth/refresh", "auth_refresh"),
    ("GET", "/api/v1/connect/{token}", "connect_page_get"),
    ("POST", "/api/v1/connect/{token}/{provider}", "connect_page_connect"),
    ("DELETE", "/api/v1/connect/{token}/{provider}", "connect_page_disconnect"),
    ("GET", "/api/v1/developer/api-keys", "api_keys_list"),
    ("POST", "/api/v1/developer/api-keys", "api_keys_create"),
    ("DELETE", "/api/v1/developer/api-keys/{key_id}", "api_keys_delete"),
    ("PATCH", "/api/v1/developer/api-keys/{key_id}", "api_keys_rename"),
    ("POST", "/api/v1/developer/api-keys/{key_id}/rotate", "api_keys_rotate"),
    ("GET", "/api/v1/developer/overview", "developer_overview"),
    ("POST", "/api/v1/internal/storage/events", "storage_events_receive"),
    ("POST", "/api/v1/invitation-code/redeem", "invitation_codes_redeem"),
    ("GET", "/api/v1/oauth/error", "oauth_error_page"),
    ("GET", "/api/v1/oauth/providers", "providers_list"),
    ("PUT", "/api/v1/oauth/providers", "providers_update_all"),
    ("PUT", "/api/v1/oauth/providers/{provider}", "providers_update"),
    ("GET", "/api/v1/oauth/success", "oauth_success_page"),
    ("GET", "/api/v1/oauth/{provider}/authorize", "oauth_authorize"),
    ("GET", "/api/v1/oauth/{provider}/callback", "oauth_callback"),
    ("POST", "/api/v1/oauth/{provider}/complete", "oauth_complete"),
    ("GET", "/api/v1/oauth/{provider}/start", "oauth_start"),
    ("GET", "/api/v1/priorities", "priorities_get"),
    ("PUT", "/api/v1/priorities", "priorities_put"),
    ("POST", "/api/v1/providers/{provider}/users/{user_id}/sync", "vendor_sync_start"),
    (
        "POST",
        "/api/v1/providers/{provider}/users/{user_id}/sync/historical",
        "vendor_sync_historical",
    ),
    ("GET", "/api/v1/providers/{provider}/webhooks", "vendor_notifications_verify"),
    ("POST", "/api/v1/providers/{provider}/webhooks", "vendor_notifications_receive"),
    ("POST", "/api/v1/sdk/users/{user_id}/logs", "sdk_logs_upload"),
    ("POST", "/api/v1/sdk/users/{user_id}/sync", "sdk_sync_upload"),
    ("POST", "/api/v1/token/refresh", "sdk_tokens_refresh"),
    ("POST", "/api/v1/token/revoke", "sdk_tokens_revoke"),
    ("GET", "/api/v1/users", "users_list"),
    ("POST", "/api/v1/users", "users_create"),
    ("GET", "/api/v1/users/{user_id}", "users_get"),
    ("DELETE", "/api/v1/users/{user_id}", "users_delete"),
    ("PATCH", "/api/v1/users/{user_id}", "users_update"),
    ("GET", "/api/v1/users/{user_id}/connect-links", "connect_links_list"),
    ("POST", "/api/v1/users/{user_id}/connect-links", "connect_links_create"),
    ("DELETE", "/api/v1/users/{user_id}/connect-links/{link_id}", "connect_links_revoke"),
    ("GET", "/api/v1/users/{user_id}/connections", "connections_list"),
    ("DELETE", "/api/v1/users/{user_id}/connections/{provider}", "connections_delete"),
    ("GET", "/api/v1/users/{user_id}/data-coverage", "data_coverage_get"),
    ("GET", "/api/v1/users/{user_id}/data-sources", "data_sources_list"),
    ("GET", "/api/v1/users/{user_id}/events/menstrual-cycles", "menstrual_cycles_list"),
    (
        "DELETE",
        "/api/v1/users/{user_id}/events/menstrual-cycles/{cycle_id}",
        "menstrual_cycles_delete",
    ),
    ("GET", "/api/v1/users/{user_id}/events/sleep", "sleep_sessions_list"),
    ("DELETE", "/api/v1/users/{user_id}/events/sleep/{sleep_id}", "sleep_sessions_delete"),
    ("GET", "/api/v1/users/{user_id}/events/workouts", "workouts_list"),
    ("DELETE", "/api/v1/users/{user_id}/events/workouts/{workout_id}", "workouts_delete"),
    ("GET", "/api/v1/users/{user_id}/events/workouts/{workout_id}/route", "workouts_route_get"),
    ("GET", "/api/v1/users/{user_id}/health-scores", "health_scores_list"),
    ("POST", "/api/v1/users/{user_id}/import/{platform}/xml/direct", "imports_upload_direct"),
    ("POST", "/api/v1/users/{user_id}/import/{platform}/xml/{store}", "imports_presign"),
    (
        "POST",
        "/api/v1/users/{user_id}/import/{platform}/xml/{store}/multipart/abort",
        "imports_multipart_abort",
    ),
    (
        "POST",
        "/api/v1/users/{user_id}/import/{platform}/xml/{store}/multipart/complete",
        "imports_multipart_complete",
    ),
    (
        "POST",
        "/api/v1/users/{user_id}/import/{platform}/xml/{store}/multipart/create",
        "imports_multipart_create",
    ),
    (
        "POST",
        "/api/v1/users/{user_id}/import/{platform}/xml/{store}/multipart/sign",
        "imports_multipart_sign",
    ),
    ("GET", "/api/v1/users/{user_id}/priorities", "user_priorities_get"),
    ("PUT", "/api/v1/users/{user_id}/priorities", "user_priorities_put"),
    ("GET", "/api/v1/users/{user_id}/summaries/activity", "summaries_activity"),
    ("POST", "/api/v1/users/{user_id}/invitation-code", "invitation_codes_create"),
    ("GET", "/api/v1/users/{user_id}/summaries/body", "summaries_body"),
    ("GET", "/api/v1/users/{user_id}/summaries/data", "summaries_data"),
    ("GET", "/api/v1/users/{user_id}/summaries/recovery", "summaries_recovery"),
    ("GET", "/api/v1/users/{user_id}/summaries/sleep", "summaries_sleep"),
    ("GET", "/api/v1/users/{user_id}/sync/runs", "sync_runs_list"),
    ("GET", "/api/v1/users/{user_id}/sync/stream", "sync_runs_stream"),
    ("GET", "/api/v1/users/{user_id}/timeseries", "timeseries_list"),
    ("POST", "/api/v1/users/{user_id}/token", "sdk_tokens_issue"),
    ("GET", "/api/v1/webhooks/endpoints", "webhook_endpoints_list"),
    ("POST", "/api/v1/webhooks/endpoints", "webhook_endpoints_create"),
    ("GET", "/api/v1/webhooks/endpoints/{endpoint_id}", "webhook_endpoints_get"),
    ("DELETE", "/api/v1/webhooks/endpoints/{endpoint_id}", "webhook_endpoints_delete"),
    ("PATCH", "/api/v1/webhooks/endpoints/{endpoint_id}", "webhook_endpoints_update"),
    ("GET", "/api/v1/webhooks/endpoints/{endpoint_id}/attempts", "webhook_attempts_list"),
    ("GET", "/api/v1/webhooks/endpoints/{endpoint_id}/messages", "webhook_endpoint_messages_list"),
    (
        "POST",
        "/api/v1/webhooks/endpoints/{endpoint_id}/messages/{message_id}/resend",
        "webhook_messages_resend",
    ),
    ("POST", "/api/v1/webhooks/endpoints/{endpoint_id}/recover", "webhook_endpoints_recover"),
    ("GET", "/api/v1/webhooks/endpoints/{endpoint_id}/secret", "webhook_endpoints_get_secret"),
    (
        "POST",
        "/api/v1/webhooks/endpoints/{endpoint_id}/secret/rotate",
        "webhook_endpoints_rotate_secret",
    ),
    ("POST", "/api/v1/webhooks/endpoints/{endpoint_id}/test", "webhook_endpoints_send_test"),
    ("GET", "/api/v1/webhooks/event-types", "webhook_event_types_list"),
    ("GET", "/api/v1/webhooks/messages", "webhook_messages_list"),
    ("GET", "/health", "service_health"),
    ("GET", "/metrics", "service_metrics"),
];

/// The id of the operation `method path`, if the table has one.
pub(crate) fn id_of(method: &str, path: &str) -> Option<&'static str> {
    OPERATION_IDS.iter().find(|(m, p, _)| *m == method && *p == path).map(|(_, _, id)| *id)
}

/// Every operation of the document, with its method and path.
pub(crate) fn operations(doc: &mut OpenApi) -> Vec<(&'static str, String, &mut Operation)> {
    let mut out = Vec::new();
    for (path, item) in doc.paths.paths.iter_mut() {
        let methods = [
            ("GET", &mut item.get),
            ("PUT", &mut item.put),
            ("POST", &mut item.post),
            ("DELETE", &mut item.delete),
            ("PATCH", &mut item.patch),
            ("HEAD", &mut item.head),
            ("OPTIONS", &mut item.options),
            ("TRACE", &mut item.trace),
        ];
        for (method, op) in methods {
            if let Some(op) = op.as_mut() {
                out.push((method, path.clone(), op));
            }
        }
    }
    out
}

/// Names every operation by the table.
pub(crate) fn apply(doc: &mut OpenApi) {
    for (method, path, op) in operations(doc) {
        if let Some(id) = id_of(method, &path) {
            op.operation_id = Some(id.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn every_operation_has_one_unique_id() {
        let (_, mut doc) = crate::openapi::router(1 << 20).split_for_parts();
        apply(&mut doc);
        let mut seen = HashSet::new();
        let mut named = 0;
        for (method, path, op) in operations(&mut doc) {
            let id = op.operation_id.clone().unwrap_or_default();
            assert_eq!(
                id_of(method, &path),
                Some(id.as_str()),
                "{method} {path} has no id in the table"
            );
            assert!(seen.insert(id.clone()), "{id} is used twice");
            named += 1;
        }
        // No stale rows: every row of the table names an operation that exists.
        assert_eq!(named, OPERATION_IDS.len(), "the table has rows for routes that are gone");
    }
}
