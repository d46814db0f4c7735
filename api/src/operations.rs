//! Every operation in one table: its id, what generated clients name their functions after (so
//! ids are unique, stable and named by resource then action; utoipa would take the handler's
//! function name, which repeats across route files), and what a caller needs to call it
//! ([`Need`], checked by `access`, stated in the OpenAPI document). A route without an entry
//! here fails `every_operation_has_one_unique_id`.

use std::collections::HashMap;
use std::sync::LazyLock;

use axum::extract::MatchedPath;
use axum::http::request::Parts;
use utoipa::openapi::OpenApi;
use utoipa::openapi::path::Operation;
use utoipa::openapi::security::SecurityRequirement;

use crate::access::Need;
use crate::access::Need::{Account, Manage, Public, Read, Sdk, Write};

/// One operation: `method path`, its id, and what calling it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Op {
    pub method: &'static str,
    pub path: &'static str,
    pub id: &'static str,
    pub need: Need,
}

const fn op(method: &'static str, path: &'static str, id: &'static str, need: Need) -> Op {
    Op { method, path, id, need }
}

pub(crate) const OPERATIONS: &[Op] = &[
    op("POST", "/api/v1/auth/login", "auth_login", Public),
    op("GET", "/api/v1/auth/me", "auth_me", Account),
    op("POST", "/api/v1/auth/password", "auth_change_password", Account),
    op("POST", "/api/v1/auth/refresh", "auth_refresh", Account),
    op("GET", "/api/v1/connect/{token}", "connect_page_get", Public),
    op("POST", "/api/v1/connect/{token}/{provider}", "connect_page_connect", Public),
    op("DELETE", "/api/v1/connect/{token}/{provider}", "connect_page_disconnect", Public),
    op("GET", "/api/v1/developer/api-keys", "api_keys_list", Read),
    op("POST", "/api/v1/developer/api-keys", "api_keys_create", Manage),
    op("DELETE", "/api/v1/developer/api-keys/{key_id}", "api_keys_delete", Manage),
    op("PATCH", "/api/v1/developer/api-keys/{key_id}", "api_keys_rename", Manage),
    op("POST", "/api/v1/developer/api-keys/{key_id}/rotate", "api_keys_rotate", Manage),
    op("GET", "/api/v1/developer/audit", "audit_list", Manage),
    op("GET", "/api/v1/developer/overview", "developer_overview", Read),
    op("GET", "/api/v1/developer/team", "team_members_list", Read),
    op("GET", "/api/v1/developer/team/invitations", "team_invitations_list", Manage),
    op("POST", "/api/v1/developer/team/invitations", "team_invitations_create", Manage),
    op(
        "DELETE",
        "/api/v1/developer/team/invitations/{invitation_id}",
        "team_invitations_revoke",
        Manage,
    ),
    op("PATCH", "/api/v1/developer/team/{developer_id}", "team_members_update", Manage),
    op("DELETE", "/api/v1/developer/team/{developer_id}", "team_members_remove", Manage),
    op("POST", "/api/v1/internal/storage/events", "storage_events_receive", Public),
    op("POST", "/api/v1/invitation-code/redeem", "invitation_codes_redeem", Public),
    op("GET", "/api/v1/oauth/error", "oauth_error_page", Public),
    op("GET", "/api/v1/oauth/providers", "providers_list", Public),
    op("PUT", "/api/v1/oauth/providers", "providers_update_all", Manage),
    op("PUT", "/api/v1/oauth/providers/{provider}", "providers_update", Manage),
    op("GET", "/api/v1/oauth/success", "oauth_success_page", Public),
    op("GET", "/api/v1/oauth/{provider}/authorize", "oauth_authorize", Write),
    op("GET", "/api/v1/oauth/{provider}/callback", "oauth_callback", Public),
    op("POST", "/api/v1/oauth/{provider}/complete", "oauth_complete", Write),
    op("GET", "/api/v1/oauth/{provider}/start", "oauth_start", Public),
    op("GET", "/api/v1/priorities", "priorities_get", Read),
    op("PUT", "/api/v1/priorities", "priorities_put", Manage),
    op("POST", "/api/v1/providers/{provider}/users/{user_id}/sync", "vendor_sync_start", Write),
    op(
        "POST",
        "/api/v1/providers/{provider}/users/{user_id}/sync/historical",
        "vendor_sync_historical",
        Write,
    ),
    op("GET", "/api/v1/providers/{provider}/webhooks", "vendor_notifications_verify", Public),
    op("POST", "/api/v1/providers/{provider}/webhooks", "vendor_notifications_receive", Public),
    op("POST", "/api/v1/sdk/users/{user_id}/logs", "sdk_logs_upload", Write),
    op("POST", "/api/v1/sdk/users/{user_id}/sync", "sdk_sync_upload", Write),
    op("POST", "/api/v1/team/invitation", "team_invitations_show", Public),
    op("POST", "/api/v1/team/join", "team_invitations_accept", Public),
    op("POST", "/api/v1/token/refresh", "sdk_tokens_refresh", Public),
    op("POST", "/api/v1/token/revoke", "sdk_tokens_revoke", Public),
    op("GET", "/api/v1/users", "users_list", Read),
    op("POST", "/api/v1/users", "users_create", Write),
    op("GET", "/api/v1/users/{user_id}", "users_get", Read),
    op("DELETE", "/api/v1/users/{user_id}", "users_delete", Write),
    op("PATCH", "/api/v1/users/{user_id}", "users_update", Write),
    op("GET", "/api/v1/users/{user_id}/connect-links", "connect_links_list", Read),
    op("POST", "/api/v1/users/{user_id}/connect-links", "connect_links_create", Write),
    op("DELETE", "/api/v1/users/{user_id}/connect-links/{link_id}", "connect_links_revoke", Write),
    op("GET", "/api/v1/users/{user_id}/connections", "connections_list", Read),
    op("DELETE", "/api/v1/users/{user_id}/connections/{provider}", "connections_delete", Write),
    op("GET", "/api/v1/users/{user_id}/data-coverage", "data_coverage_get", Read),
    op("GET", "/api/v1/users/{user_id}/data-sources", "data_sources_list", Read),
    op("GET", "/api/v1/users/{user_id}/events/menstrual-cycles", "menstrual_cycles_list", Read),
    op(
        "DELETE",
        "/api/v1/users/{user_id}/events/menstrual-cycles/{cycle_id}",
        "menstrual_cycles_delete",
        Write,
    ),
    op("GET", "/api/v1/users/{user_id}/events/sleep", "sleep_sessions_list", Read),
    op("DELETE", "/api/v1/users/{user_id}/events/sleep/{sleep_id}", "sleep_sessions_delete", Write),
    op("GET", "/api/v1/users/{user_id}/events/workouts", "workouts_list", Read),
    op("DELETE", "/api/v1/users/{user_id}/events/workouts/{workout_id}", "workouts_delete", Write),
    op(
        "GET",
        "/api/v1/users/{user_id}/events/workouts/{workout_id}/route",
        "workouts_route_get",
        Read,
    ),
    op("GET", "/api/v1/users/{user_id}/exports", "exports_list", Read),
    op("POST", "/api/v1/users/{user_id}/exports", "exports_create", Read),
    op("GET", "/api/v1/users/{user_id}/exports/{export_id}", "exports_get", Read),
    op("GET", "/api/v1/users/{user_id}/health-scores", "health_scores_list", Read),
    op(
        "POST",
        "/api/v1/users/{user_id}/import/{platform}/xml/direct",
        "imports_upload_direct",
        Write,
    ),
    op("POST", "/api/v1/users/{user_id}/import/{platform}/xml/{store}", "imports_presign", Write),
    op(
        "POST",
        "/api/v1/users/{user_id}/import/{platform}/xml/{store}/multipart/abort",
        "imports_multipart_abort",
        Write,
    ),
    op(
        "POST",
        "/api/v1/users/{user_id}/import/{platform}/xml/{store}/multipart/complete",
        "imports_multipart_complete",
        Write,
    ),
    op(
        "POST",
        "/api/v1/users/{user_id}/import/{platform}/xml/{store}/multipart/create",
        "imports_multipart_create",
        Write,
    ),
    op(
        "POST",
        "/api/v1/users/{user_id}/import/{platform}/xml/{store}/multipart/sign",
        "imports_multipart_sign",
        Write,
    ),
    op("GET", "/api/v1/users/{user_id}/priorities", "user_priorities_get", Read),
    op("PUT", "/api/v1/users/{user_id}/priorities", "user_priorities_put", Write),
    op("GET", "/api/v1/users/{user_id}/summaries/activity", "summaries_activity", Read),
    op("POST", "/api/v1/users/{user_id}/invitation-code", "invitation_codes_create", Sdk),
    op("GET", "/api/v1/users/{user_id}/summaries/body", "summaries_body", Read),
    op("GET", "/api/v1/users/{user_id}/summaries/data", "summaries_data", Read),
    op("GET", "/api/v1/users/{user_id}/summaries/recovery", "summaries_recovery", Read),
    op("GET", "/api/v1/users/{user_id}/summaries/sleep", "summaries_sleep", Read),
    op("GET", "/api/v1/users/{user_id}/sync/runs", "sync_runs_list", Read),
    op("GET", "/api/v1/users/{user_id}/sync/stream", "sync_runs_stream", Read),
    op("GET", "/api/v1/users/{user_id}/timeseries", "timeseries_list", Read),
    op("POST", "/api/v1/users/{user_id}/token", "sdk_tokens_issue", Sdk),
    op("GET", "/api/v1/webhooks/endpoints", "webhook_endpoints_list", Read),
    op("POST", "/api/v1/webhooks/endpoints", "webhook_endpoints_create", Manage),
    op("GET", "/api/v1/webhooks/endpoints/{endpoint_id}", "webhook_endpoints_get", Read),
    op("DELETE", "/api/v1/webhooks/endpoints/{endpoint_id}", "webhook_endpoints_delete", Manage),
    op("PATCH", "/api/v1/webhooks/endpoints/{endpoint_id}", "webhook_endpoints_update", Manage),
    op("GET", "/api/v1/webhooks/endpoints/{endpoint_id}/attempts", "webhook_attempts_list", Read),
    op(
        "GET",
        "/api/v1/webhooks/endpoints/{endpoint_id}/messages",
        "webhook_endpoint_messages_list",
        Read,
    ),
    op(
        "POST",
        "/api/v1/webhooks/endpoints/{endpoint_id}/messages/{message_id}/resend",
        "webhook_messages_resend",
        Manage,
    ),
    op(
        "POST",
        "/api/v1/webhooks/endpoints/{endpoint_id}/recover",
        "webhook_endpoints_recover",
        Manage,
    ),
    op(
        "GET",
        "/api/v1/webhooks/endpoints/{endpoint_id}/secret",
        "webhook_endpoints_get_secret",
        Manage,
    ),
    op(
        "POST",
        "/api/v1/webhooks/endpoints/{endpoint_id}/secret/rotate",
        "webhook_endpoints_rotate_secret",
        Manage,
    ),
    op(
        "POST",
        "/api/v1/webhooks/endpoints/{endpoint_id}/test",
        "webhook_endpoints_send_test",
        Manage,
    ),
    op("GET", "/api/v1/webhooks/event-types", "webhook_event_types_list", Public),
    op("GET", "/api/v1/webhooks/messages", "webhook_messages_list", Read),
    op("GET", "/health", "service_health", Public),
    op("GET", "/metrics", "service_metrics", Public),
];

static BY_ROUTE: LazyLock<HashMap<(&'static str, &'static str), &'static Op>> =
    LazyLock::new(|| OPERATIONS.iter().map(|o| ((o.method, o.path), o)).collect());

/// The operation `method path` (a route's pattern, as `MatchedPath` gives it), if the table has
/// one.
pub(crate) fn find(method: &str, path: &str) -> Option<&'static Op> {
    BY_ROUTE.get(&(method, path)).copied()
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

/// Names every operation by the table and states what it needs: the API key scope on the
/// `api_key` requirement (OpenAPI's scopes of a requirement), and the scope and the developer
/// roles allowed in `x-access`.
pub(crate) fn apply(doc: &mut OpenApi) {
    for (method, path, operation) in operations(doc) {
        let Some(found) = find(method, &path) else { continue };
        operation.operation_id = Some(found.id.to_string());
        let mut keys = false;
        if let Some(requirements) = operation.security.as_mut() {
            for requirement in requirements.iter_mut() {
                *requirement = with_scope(requirement, found.need);
                keys |= names_api_key(requirement);
            }
        }
        if found.need != Public {
            // Operations only developers may call take no key, whatever its scopes.
            let scope = found.need.scope().filter(|_| keys);
            let access = serde_json::json!({
                "scope": scope.map(|s| s.as_str()),
                "roles": found.need.roles().iter().map(|r| r.as_str()).collect::<Vec<_>>(),
            });
            let extensions = operation.extensions.get_or_insert_with(Default::default);
            extensions.insert("x-access".to_string(), access);
        }
    }
}

/// Whether `requirement` names the `api_key` scheme.
fn names_api_key(requirement: &SecurityRequirement) -> bool {
    serde_json::to_value(requirement).is_ok_and(|v| v.get("api_key").is_some())
}

/// `requirement` with the need's scope on its `api_key` scheme (utoipa keeps a requirement's
/// schemes private: rebuilt through its serialised form).
fn with_scope(requirement: &SecurityRequirement, need: Need) -> SecurityRequirement {
    let Ok(serde_json::Value::Object(schemes)) = serde_json::to_value(requirement) else {
        return requirement.clone();
    };
    let mut rebuilt: Option<SecurityRequirement> = None;
    for (scheme, _) in schemes {
        let scopes: Vec<&str> = match (scheme.as_str(), need.scope()) {
            ("api_key", Some(scope)) => vec![scope.as_str()],
            _ => Vec::new(),
        };
        rebuilt = Some(match rebuilt {
            None => SecurityRequirement::new(scheme, scopes),
            Some(r) => r.add(scheme, scopes),
        });
    }
    rebuilt.unwrap_or_default()
}

/// What the operation of this request needs. A route missing from the table needs the most
/// (`Manage`): refused rather than open by mistake.
pub(crate) fn need_of(parts: &Parts) -> Need {
    let path = parts.extensions.get::<MatchedPath>().map(MatchedPath::as_str).unwrap_or("");
    find(parts.method.as_str(), path).map_or(Need::Manage, |op| op.need)
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
                find(method, &path).map(|o| o.id),
                Some(id.as_str()),
                "{method} {path} has no id in the table"
            );
            assert!(seen.insert(id.clone()), "{id} is used twice");
            named += 1;
        }
        // No stale rows: every row of the table names an operation that exists.
        assert_eq!(named, OPERATIONS.len(), "the table has rows for routes that are gone");
    }

    /// utoipa names a component after its type: two types of one name in the API would be one
    /// schema in the document, and a client would read one as the other.
    #[test]
    fn no_two_schemas_share_a_name() {
        fn files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    files(&path, out);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    out.push(path);
                }
            }
        }
        let mut found = Vec::new();
        files(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut found);
        let mut names = HashSet::new();
        for file in found {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            let mut derives_schema = false;
            for line in text.lines().map(str::trim) {
                if line.starts_with("#[derive(") {
                    derives_schema = line.contains("ToSchema");
                } else if derives_schema
                    && let Some(rest) = ["pub", "pub(crate)", "pub(super)"].iter().find_map(|vis| {
                        let line = line.strip_prefix(vis)?;
                        line.strip_prefix(" struct ").or_else(|| line.strip_prefix(" enum "))
                    })
                {
                    let name: String =
                        rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                    assert!(names.insert(name.clone()), "{name} names two schemas ({file:?})");
                    derives_schema = false;
                }
            }
        }
        assert!(names.len() > 50, "{names:?}");
    }
}
