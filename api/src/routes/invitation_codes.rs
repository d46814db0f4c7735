//! Invitation codes: an integrator makes a short code for a user (`POST
//! /users/{user_id}/invitation-code`) and hands it to the person; their mobile app redeems it
//! (`POST /invitation-code/redeem`, no credentials) for the user's SDK tokens, once. Wrong codes
//! are throttled per client address and per code prefix, and all get one answer.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use schema::ids::UserId;
use serde::{Deserialize, Serialize};
use serde_json::json;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::AppState;
use crate::error::{ApiError, ApiResult, ErrorBody, FieldError, ValidationBody};
use crate::extract::{ApiAuth, ApiJson, ClientAddr};
use crate::routes::existing_user;
use crate::routes::sdk_tokens::{TokenOut, issue_pair};
use crate::security::secrets;
use crate::security::throttle::Attempt;
use crate::validate::body_loc;

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(create_code)).routes(routes!(redeem_code))
}

/// A new invitation code. The code is shown here only.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"id": "0192a4c1-7b2e-7d40-8a11-3c5e2f1d0a77", "code": "K7PQ2MXA",
    "user_id": "0191f3c2-7a4e-7c51-9a43-2b6c1d0e8f10", "expires_at": "2026-03-15T18:46:45Z",
    "created_at": "2026-03-14T18:46:45Z"}))]
pub(crate) struct InvitationOut {
    pub id: Uuid,
    /// 8 characters of `A-Z` and `2-9` without `I` and `O`; redeem at
    /// `POST /api/v1/invitation-code/redeem`, once, before `expires_at`.
    pub code: String,
    #[schema(value_type = uuid::Uuid)]
    pub user_id: UserId,
    pub expires_at: DateTime<Utc>,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct RedeemIn {
    /// The code as made: 8 characters matching `^[A-Z2-9]{8}$`.
    pub code: String,
}

/// The one answer to a code that is wrong, used, revoked or expired.
const INVALID_CODE: &str = "Invalid or expired invitation code";
/// The code's shape, as the reference system checks it.
const CODE_PATTERN: &str = "^[A-Z2-9]{8}$";
/// The characters of a code that its failures are counted under (beside the address).
const COUNTED_PREFIX: usize = 2;

/// Makes an invitation code for a user, valid once for `INVITATION_CODE_MINUTES` (a day by
/// default). The user's older codes not yet redeemed stop working.
#[utoipa::path(post, path = "/users/{user_id}/invitation-code", tag = "sdk-tokens",
    params(("user_id" = String, Path, description = "The user's UUID")),
    responses(
        (status = 201, body = InvitationOut), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
    ),
    security(("api_key" = []), ("bearer" = [])))]
async fn create_code(
    ApiAuth(principal): ApiAuth,
    State(state): State<AppState>,
    Path(user_id): Path<String>,
) -> ApiResult<(StatusCode, Json<InvitationOut>)> {
    let user_id = existing_user(&state, &user_id).await?;
    let code = secrets::new_invitation_code();
    let lifetime = state.config.invitation_code_lifetime;
    let made = schema::invitation_codes::create(
        &state.db,
        &code,
        user_id,
        &principal.describe(),
        lifetime,
    )
    .await?;
    let out = InvitationOut {
        id: made.id,
        code,
        user_id: made.user_id,
        expires_at: made.expires_at,
        created_at: made.created_at,
    };
    Ok((StatusCode::CREATED, Json(out)))
}

/// Exchanges an invitation code for the user's SDK tokens (as `POST /users/{user_id}/token`
/// answers them), once. A code that is wrong, used, revoked or expired is one 404; too many
/// wrong codes from an address, or for codes beginning alike, are 429 with `Retry-After`.
#[utoipa::path(post, path = "/invitation-code/redeem", tag = "sdk-tokens", request_body = RedeemIn,
    responses(
        (status = 200, body = TokenOut), (status = 404, body = ErrorBody),
        (status = 422, body = ValidationBody),
        (status = 429, body = ErrorBody, description = "Too many wrong codes from this address or for codes like this one; see `Retry-After`"),
    ))]
async fn redeem_code(
    ClientAddr(address): ClientAddr,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<RedeemIn>,
) -> ApiResult<(axum::Extension<crate::audit::AuditNote>, Json<TokenOut>)> {
    let code = well_formed(&body.code)?;
    let attempt = Attempt { account: code[..COUNTED_PREFIX].to_string(), address };
    if let Some(wait) = state.redeems.blocked(&attempt).await {
        let detail = format!("Too many wrong invitation codes; try again in {wait} seconds");
        return Err(ApiError::too_many_requests(detail, wait));
    }
    let Some(user_id) = schema::invitation_codes::redeem(&state.db, code).await? else {
        tracing::info!(?address, "a wrong invitation code");
        state.redeems.failed(&attempt).await;
        return Err(ApiError::not_found(INVALID_CODE));
    };
    let note = axum::Extension(crate::audit::AuditNote::user(user_id));
    Ok((note, Json(issue_pair(&state, user_id, "invitation_code").await?)))
}

/// The code when it has a code's shape (8 of `A-Z`, `2-9`), else the contract's 422.
fn well_formed(code: &str) -> ApiResult<&str> {
    let ok = code.len() == 8
        && code.bytes().all(|b| b.is_ascii_uppercase() || (b'2'..=b'9').contains(&b));
    if ok {
        return Ok(code);
    }
    let msg = format!("String should match pattern '{CODE_PATTERN}'");
    let error = FieldError::new(body_loc("code"), "string_pattern_mismatch", msg, json!(code))
        .with_ctx(json!({ "pattern": CODE_PATTERN }));
    Err(ApiError::validation(error))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_has_eight_capitals_and_digits_from_two() {
        assert!(well_formed("K7PQ2MXA").is_ok());
        assert!(well_formed("IIOO2299").is_ok(), "the reference's pattern, not the alphabet");
        for bad in ["k7pq2mxa", "K7PQ2MX", "K7PQ2MXAB", "K7PQ2MX1", "K7PQ2MX0", "K7PQ 2MX", "ÄÄÄÄ"]
        {
            assert!(well_formed(bad).is_err(), "{bad}");
        }
        assert!(well_formed(&secrets::new_invitation_code()).is_ok());
    }
}
