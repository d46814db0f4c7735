//! The team: `/api/v1/developer/team` (members and their roles, invitations; owners and admins)
//! and `/api/v1/team/invitation` and `/api/v1/team/join` (public: what an invitation link says,
//! and accepting it). An invitation link is shown once to whoever made it, and mailed when
//! `SMTP_URL` is set; its token travels in the link's fragment and in request bodies, never in
//! a URL a server logs.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use chrono::{DateTime, Utc};
use schema::developers::{Role, TeamChange};
use schema::team_invitations::Invitation;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::AppState;
use crate::audit::AuditNote;
use crate::error::{ApiError, ApiResult, ErrorBody, ValidationBody};
use crate::extract::{ApiJson, ClientAddr, DeveloperAuth, path_uuid};
use crate::routes::auth::{
    DeveloperOut, LoginOut, check_new_password, hash_password, role_schema, session_token,
};
use crate::security::secrets;
use crate::security::throttle::Attempt;
use crate::validate::Checks;

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_members))
        .routes(routes!(change_member, remove_member))
        .routes(routes!(list_invitations, invite))
        .routes(routes!(revoke_invitation))
        .routes(routes!(show_invitation))
        .routes(routes!(join))
}

fn already_in_team() -> ApiError {
    ApiError::client(StatusCode::CONFLICT, "A developer with this email is already in the team")
}

const NO_INVITATION: &str = "This invitation is not valid or has expired. Ask for a new one.";

/// An invitation as listed (its link is shown only when it is made).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct TeamInvitationOut {
    pub id: Uuid,
    pub email: String,
    #[schema(schema_with = role_schema)]
    pub role: Role,
    pub invited_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

impl From<Invitation> for TeamInvitationOut {
    fn from(i: Invitation) -> TeamInvitationOut {
        TeamInvitationOut {
            id: i.id,
            email: i.email,
            role: i.role,
            invited_by: i.invited_by,
            created_at: i.created_at,
            expires_at: i.expires_at,
        }
    }
}

/// An invitation just made: the only time its link is shown.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct TeamInvitationCreated {
    #[serde(flatten)]
    pub invitation: TeamInvitationOut,
    /// The link to send to the colleague; it works once, until `expires_at`.
    pub url: String,
    /// Whether it was sent by mail (`SMTP_URL`); false: pass the link on yourself.
    pub mailed: bool,
}

#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct TeamInvitationIn {
    pub email: String,
    #[schema(schema_with = role_schema)]
    pub role: Role,
}

#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct TeamMemberIn {
    #[schema(schema_with = role_schema)]
    pub role: Role,
}

/// An invitation's token, as its link carries it.
#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct TeamTokenIn {
    pub token: String,
}

/// What an invitation link says, for the page that accepts it.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct TeamInvitationShown {
    pub email: String,
    #[schema(schema_with = role_schema)]
    pub role: Role,
    pub expires_at: DateTime<Utc>,
    /// The deployment's name (`DEPLOYMENT_NAME`).
    pub deployment_name: String,
}

#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct TeamJoinIn {
    pub token: String,
    /// At least 10 characters.
    pub password: String,
}

/// The team, oldest member first.
#[utoipa::path(get, path = "/developer/team", tag = "team",
    responses((status = 200, body = Vec<DeveloperOut>), (status = 401, body = ErrorBody),
              (status = 403, body = ErrorBody)),
    security(("bearer" = [])))]
async fn list_members(
    _auth: DeveloperAuth,
    State(state): State<AppState>,
) -> ApiResult<Json<Vec<DeveloperOut>>> {
    let team = schema::developers::list(&state.db).await?;
    Ok(Json(team.into_iter().map(Into::into).collect()))
}

/// What a change to a member came to, as the API answers it.
fn changed(outcome: TeamChange, id: Uuid) -> ApiResult<schema::developers::Developer> {
    match outcome {
        TeamChange::Done(dev) => Ok(dev),
        TeamChange::NotFound => {
            Err(ApiError::not_found(format!("Developer with ID: {id} not found.")))
        }
        TeamChange::LastOwner => Err(ApiError::client(
            StatusCode::CONFLICT,
            "The team must keep an owner: make someone else owner first",
        )),
        TeamChange::NotAllowed(_) => {
            Err(ApiError::forbidden("Only an owner can change an owner, or make someone owner"))
        }
    }
}

/// Gives a member another role. Admins change admins and viewers only, and make no owner; the
/// last owner stays owner (409).
#[utoipa::path(patch, path = "/developer/team/{developer_id}", tag = "team",
    params(("developer_id" = Uuid, Path)), request_body = TeamMemberIn,
    responses((status = 200, body = DeveloperOut), (status = 401, body = ErrorBody),
              (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
              (status = 409, body = ErrorBody), (status = 422, body = ValidationBody)),
    security(("bearer" = [])))]
async fn change_member(
    DeveloperAuth(dev): DeveloperAuth,
    State(state): State<AppState>,
    Path(raw): Path<String>,
    ApiJson(body): ApiJson<TeamMemberIn>,
) -> ApiResult<Json<DeveloperOut>> {
    let id = path_uuid(&raw)?;
    let outcome = schema::developers::change(&state.db, id, dev.role, Some(body.role)).await?;
    Ok(Json(changed(outcome, id)?.into()))
}

/// Removes a member; their sessions end at once (their tokens stop working). The last owner
/// cannot be removed (409); admins remove admins and viewers only.
#[utoipa::path(delete, path = "/developer/team/{developer_id}", tag = "team",
    params(("developer_id" = Uuid, Path)),
    responses((status = 204), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)),
    security(("bearer" = [])))]
async fn remove_member(
    DeveloperAuth(dev): DeveloperAuth,
    State(state): State<AppState>,
    Path(raw): Path<String>,
) -> ApiResult<StatusCode> {
    let id = path_uuid(&raw)?;
    changed(schema::developers::change(&state.db, id, dev.role, None).await?, id)?;
    Ok(StatusCode::NO_CONTENT)
}

/// Invitations not accepted, withdrawn or expired, newest first.
#[utoipa::path(get, path = "/developer/team/invitations", tag = "team",
    responses((status = 200, body = Vec<TeamInvitationOut>), (status = 401, body = ErrorBody),
              (status = 403, body = ErrorBody)),
    security(("bearer" = [])))]
async fn list_invitations(
    _auth: DeveloperAuth,
    State(state): State<AppState>,
) -> ApiResult<Json<Vec<TeamInvitationOut>>> {
    let pending = schema::team_invitations::pending(&state.db).await?;
    Ok(Json(pending.into_iter().map(Into::into).collect()))
}

fn check_invitation(body: &TeamInvitationIn) -> ApiResult<()> {
    let mut checks = Checks::default();
    checks.email("email", Some(body.email.trim()));
    checks.max_len("email", Some(&body.email), 320);
    checks.finish()
}

/// Invites a colleague: a link that works once, for `TEAM_INVITATION_HOURS` (72 by default),
/// shown here once and mailed when `SMTP_URL` is set. A new invitation of the same address
/// withdraws the older one. Admins invite admins and viewers. An address already in the team
/// is 409.
#[utoipa::path(post, path = "/developer/team/invitations", tag = "team",
    request_body = TeamInvitationIn,
    responses((status = 201, body = TeamInvitationCreated), (status = 401, body = ErrorBody),
              (status = 403, body = ErrorBody), (status = 409, body = ErrorBody),
              (status = 422, body = ValidationBody)),
    security(("bearer" = [])))]
async fn invite(
    DeveloperAuth(dev): DeveloperAuth,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<TeamInvitationIn>,
) -> ApiResult<(StatusCode, Extension<AuditNote>, Json<TeamInvitationCreated>)> {
    check_invitation(&body)?;
    if !dev.role.may_manage(body.role, Some(body.role)) {
        return Err(ApiError::forbidden("Only an owner can invite an owner"));
    }
    let email = body.email.trim();
    if schema::developers::find_by_email(&state.db, email).await?.is_some() {
        return Err(already_in_team());
    }
    let token = secrets::new_connect_token();
    let lifetime = state.config.team_invitation_lifetime;
    let made =
        schema::team_invitations::create(&state.db, &token, email, body.role, dev.id, lifetime)
            .await?;
    let url = format!("{}/#/join/{token}", state.config.public_url.trim_end_matches('/'));
    let mailed = match &state.config.mailer {
        Some(mailer) => {
            let letter = crate::mail::Invitation {
                to: email,
                url: &url,
                role: body.role,
                invited_by: &dev.email,
                deployment: &state.config.deployment_name,
                expires_at: made.expires_at,
            };
            match mailer.send_invitation(&letter).await {
                Ok(()) => true,
                Err(e) => {
                    tracing::warn!(error = %e, invitation = %made.id, "mailing an invitation failed");
                    false
                }
            }
        }
        None => false,
    };
    let note = AuditNote::resource(made.id);
    let out = TeamInvitationCreated { invitation: made.into(), url, mailed };
    Ok((StatusCode::CREATED, Extension(note), Json(out)))
}

/// Withdraws an invitation not accepted yet: its link stops working.
#[utoipa::path(delete, path = "/developer/team/invitations/{invitation_id}", tag = "team",
    params(("invitation_id" = Uuid, Path)),
    responses((status = 204), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
async fn revoke_invitation(
    DeveloperAuth(dev): DeveloperAuth,
    State(state): State<AppState>,
    Path(raw): Path<String>,
) -> ApiResult<StatusCode> {
    let id = path_uuid(&raw)?;
    let not_found = || ApiError::not_found(format!("Invitation with ID: {id} not found."));
    let pending = schema::team_invitations::get_pending(&state.db, id).await?;
    let invitation = pending.ok_or_else(not_found)?;
    if !dev.role.may_manage(invitation.role, Some(invitation.role)) {
        return Err(ApiError::forbidden("Only an owner can withdraw an owner's invitation"));
    }
    if !schema::team_invitations::revoke(&state.db, id).await? {
        return Err(not_found());
    }
    Ok(StatusCode::NO_CONTENT)
}

/// Refuses an address that sent too many tokens matching no invitation (429), as connect
/// links' tokens are counted.
async fn not_blocked(state: &AppState, attempt: &Attempt) -> ApiResult<()> {
    match state.connect_misses.blocked(attempt).await {
        Some(wait) => Err(ApiError::too_many_requests(
            format!("Too many invitations that do not exist; try again in {wait} seconds"),
            wait,
        )),
        None => Ok(()),
    }
}

/// The one answer to a token that matches no live invitation, counted against the address.
async fn no_invitation(state: &AppState, attempt: &Attempt) -> ApiError {
    state.connect_misses.failed(attempt).await;
    ApiError::not_found(NO_INVITATION)
}

/// What an invitation link says (the address and role it invites), for the page that accepts
/// it. An unknown, used, withdrawn or expired token is one 404; too many from one address 429.
#[utoipa::path(post, path = "/team/invitation", tag = "team", request_body = TeamTokenIn,
    responses((status = 200, body = TeamInvitationShown), (status = 404, body = ErrorBody),
              (status = 422, body = ValidationBody), (status = 429, body = ErrorBody)))]
async fn show_invitation(
    State(state): State<AppState>,
    address: ClientAddr,
    ApiJson(body): ApiJson<TeamTokenIn>,
) -> ApiResult<Json<TeamInvitationShown>> {
    let attempt = Attempt { account: String::new(), address: address.0 };
    not_blocked(&state, &attempt).await?;
    let Some(invitation) = schema::team_invitations::find_live(&state.db, &body.token).await?
    else {
        return Err(no_invitation(&state, &attempt).await);
    };
    Ok(Json(TeamInvitationShown {
        email: invitation.email,
        role: invitation.role,
        expires_at: invitation.expires_at,
        deployment_name: state.config.deployment_name.clone(),
    }))
}

/// Accepts an invitation: the developer is made with the invited address and role and the
/// password chosen here, and is logged in (the answer is a login's). The link then never works
/// again. An unknown, used, withdrawn or expired token is one 404; a password under 10
/// characters 422; an address that joined meanwhile 409.
#[utoipa::path(post, path = "/team/join", tag = "team", request_body = TeamJoinIn,
    responses((status = 201, body = LoginOut), (status = 404, body = ErrorBody),
              (status = 409, body = ErrorBody), (status = 422, body = ValidationBody),
              (status = 429, body = ErrorBody), (status = 503, body = ErrorBody)))]
async fn join(
    State(state): State<AppState>,
    address: ClientAddr,
    ApiJson(body): ApiJson<TeamJoinIn>,
) -> ApiResult<(StatusCode, Extension<AuditNote>, Json<LoginOut>)> {
    check_new_password("password", &body.password)?;
    let attempt = Attempt { account: String::new(), address: address.0 };
    not_blocked(&state, &attempt).await?;
    // Hashing costs: only for a token that names a live invitation.
    if schema::team_invitations::find_live(&state.db, &body.token).await?.is_none() {
        return Err(no_invitation(&state, &attempt).await);
    }
    let hash = hash_password(&state, body.password).await?;
    let dev = match schema::team_invitations::accept(&state.db, &body.token, &hash).await {
        Ok(Some(dev)) => dev,
        Ok(None) => return Err(no_invitation(&state, &attempt).await),
        Err(schema::Error::Conflict(_)) => return Err(already_in_team()),
        Err(e) => return Err(e.into()),
    };
    let token = session_token(&state, dev.id, Utc::now().timestamp(), dev.credential_version)?;
    Ok((StatusCode::CREATED, Extension(AuditNote::developer(dev.id)), token))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_invitation_needs_an_address() {
        let body = |email: &str| TeamInvitationIn { email: email.into(), role: Role::Viewer };
        assert!(check_invitation(&body("ada@example.com")).is_ok());
        assert!(check_invitation(&body("ada")).is_err());
    }
}
