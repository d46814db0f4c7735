//! The audit trail as requests meet it: a middleware that puts each audited request on record
//! (`schema::audit`), and the writer that stores records off the request path in batches,
//! within [`FLUSH_EVERY`] of the request.
//!
//! Which requests: every operation that needs credentials (each reads or changes a user's data
//! or the deployment), plus the anonymous ones that act on an account or a user (login, connect
//! pages, redeeming a code). Who: the auth extractors fill the request's [`Actor`] slot as they
//! authenticate. If the trail cannot be written, requests that need credentials are refused
//! with 503 until it can: health data is not served unrecorded.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{FromRequestParts, MatchedPath, RawPathParams, Request, State};
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use schema::audit::{ActorKind, AuditEvent};
use schema::ids::UserId;
use tokio::sync::{mpsc, oneshot};
use uuid::Uuid;

use crate::AppState;
use crate::access::Need;
use crate::error::ApiError;
use crate::extract::ClientAddr;

/// How long a record waits before it is written, at most (while the table is writable).
pub(crate) const FLUSH_EVERY: Duration = Duration::from_millis(200);
/// Records written in one statement, at most.
const BATCH: usize = 2_000;
/// Records queued for the writer; a full queue makes requests wait for it.
const QUEUE: usize = 16_384;
/// Records held in memory while the table cannot be written (only requests that need no
/// credentials add to them then); past it the oldest are dropped, and logged.
const HELD_AT_MOST: usize = 100_000;
/// How often an unwritable trail is tried again.
const RETRY_EVERY: Duration = Duration::from_millis(500);

/// Operations recorded although they need no credentials: they act on an account or a user.
const ANONYMOUS_RECORDED: &[&str] = &[
    "auth_login",
    "connect_page_connect",
    "connect_page_disconnect",
    "invitation_codes_redeem",
    "team_invitations_accept",
];

/// Who made a request, as the auth extractors found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Actor {
    pub kind: ActorKind,
    pub id: Option<Uuid>,
}

/// The request's actor, filled by whichever extractor authenticates it.
#[derive(Debug, Clone, Default)]
pub(crate) struct ActorSlot(Arc<Mutex<Option<Actor>>>);

impl ActorSlot {
    fn get(&self) -> Option<Actor> {
        self.0.lock().map(|a| *a).unwrap_or(None)
    }
}

/// Records `actor` as the one making the request of `parts` (when the request is audited).
pub(crate) fn record_actor(parts: &Parts, actor: Actor) {
    if let Some(slot) = parts.extensions.get::<ActorSlot>()
        && let Ok(mut held) = slot.0.lock()
    {
        *held = Some(actor);
    }
}

/// What a handler adds to its response when the record should name what it made (a user
/// created, a key): the path cannot.
/// A handler that authenticates the caller itself (a login) names them here too.
#[derive(Debug, Clone, Default)]
pub(crate) struct AuditNote {
    pub actor: Option<Actor>,
    pub user_id: Option<UserId>,
    pub resource_id: Option<String>,
}

impl AuditNote {
    pub(crate) fn user(user_id: UserId) -> AuditNote {
        AuditNote { user_id: Some(user_id), ..AuditNote::default() }
    }

    pub(crate) fn resource(id: impl ToString) -> AuditNote {
        AuditNote { resource_id: Some(id.to_string()), ..AuditNote::default() }
    }

    /// A developer who authenticated in the handler (a login, an accepted invitation).
    pub(crate) fn developer(id: Uuid) -> AuditNote {
        let actor = Actor { kind: ActorKind::Developer, id: Some(id) };
        AuditNote { actor: Some(actor), resource_id: Some(id.to_string()), user_id: None }
    }
}

enum Message {
    Event(AuditEvent),
    /// Answered once everything sent before it is written.
    Flush(oneshot::Sender<()>),
}

/// The trail's writer, as the API holds it.
#[derive(Debug, Clone)]
pub(crate) struct Trail {
    sender: Option<mpsc::Sender<Message>>,
    writable: Arc<AtomicBool>,
}

impl std::fmt::Debug for Message {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Message::Event(e) => f.debug_tuple("Event").field(&e.id).finish(),
            Message::Flush(_) => f.write_str("Flush"),
        }
    }
}

/// What the trail is, for `/health`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TrailState {
    Ok,
    Unwritable,
    Off,
}

impl TrailState {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            TrailState::Ok => "ok",
            TrailState::Unwritable => "unwritable",
            TrailState::Off => "off",
        }
    }
}

impl Trail {
    /// Starts the writer (`on`), or a trail that records nothing (`AUDIT_TRAIL=false`).
    pub(crate) fn start(db: schema::Db, on: bool) -> Trail {
        let writable = Arc::new(AtomicBool::new(true));
        if !on {
            return Trail { sender: None, writable };
        }
        let (sender, receiver) = mpsc::channel(QUEUE);
        tokio::spawn(write(db, receiver, writable.clone()));
        Trail { sender: Some(sender), writable }
    }

    pub(crate) fn state(&self) -> TrailState {
        match (&self.sender, self.writable.load(Ordering::Relaxed)) {
            (None, _) => TrailState::Off,
            (Some(_), true) => TrailState::Ok,
            (Some(_), false) => TrailState::Unwritable,
        }
    }

    async fn push(&self, event: AuditEvent) {
        if let Some(sender) = &self.sender
            && sender.send(Message::Event(event)).await.is_err()
        {
            tracing::error!("the audit trail's writer is gone; a record was lost");
        }
    }

    /// Waits (up to `wait`) until everything recorded so far is written; whether it was.
    pub(crate) async fn flush(&self, wait: Duration) -> bool {
        let Some(sender) = &self.sender else { return true };
        let (done, written) = oneshot::channel();
        if sender.send(Message::Flush(done)).await.is_err() {
            return false;
        }
        matches!(tokio::time::timeout(wait, written).await, Ok(Ok(())))
    }
}

/// The writer: gathers records for [`FLUSH_EVERY`] (or [`BATCH`] of them) and writes them in
/// one statement; while writing fails, holds them, marks the trail unwritable and retries.
async fn write(db: schema::Db, mut receiver: mpsc::Receiver<Message>, writable: Arc<AtomicBool>) {
    let mut held: Vec<AuditEvent> = Vec::new();
    let mut waiting: Vec<oneshot::Sender<()>> = Vec::new();
    let mut open = true;
    while open || !held.is_empty() {
        // Wait for something to write (or, holding records that failed, for the next retry).
        let first = if held.is_empty() && waiting.is_empty() {
            receiver.recv().await
        } else {
            tokio::time::timeout(RETRY_EVERY, receiver.recv()).await.unwrap_or(None)
        };
        match first {
            Some(Message::Event(e)) => held.push(e),
            Some(Message::Flush(done)) => waiting.push(done),
            None if held.is_empty() && waiting.is_empty() => open = false,
            None => {}
        }
        let deadline = tokio::time::Instant::now() + FLUSH_EVERY;
        while open && held.len() < BATCH && waiting.is_empty() {
            match tokio::time::timeout_at(deadline, receiver.recv()).await {
                Ok(Some(Message::Event(e))) => held.push(e),
                Ok(Some(Message::Flush(done))) => waiting.push(done),
                Ok(None) => open = false,
                Err(_) => break,
            }
        }
        match flush(&db, &mut held).await {
            Ok(()) => {
                if !writable.swap(true, Ordering::Relaxed) {
                    tracing::info!("the audit trail is written again");
                }
                for done in waiting.drain(..) {
                    let _ = done.send(());
                }
            }
            Err(e) => {
                if writable.swap(false, Ordering::Relaxed) {
                    tracing::error!(error = %e, held = held.len(),
                        "the audit trail cannot be written: requests that need credentials are \
                         refused until it can");
                }
                if held.len() > HELD_AT_MOST {
                    let dropped = held.len() - HELD_AT_MOST;
                    held.drain(..dropped);
                    tracing::error!(dropped, "audit records dropped: the trail stayed unwritable");
                }
                if !open {
                    tracing::error!(lost = held.len(), "stopping with audit records unwritten");
                    return;
                }
            }
        }
    }
}

/// Writes the records held, a batch a statement; what is written leaves `held`.
async fn flush(db: &schema::Db, held: &mut Vec<AuditEvent>) -> schema::Result<()> {
    while !held.is_empty() {
        let n = held.len().min(BATCH);
        schema::audit::write(db, &held[..n]).await?;
        held.drain(..n);
    }
    Ok(())
}

/// The middleware: puts every audited request on record, and refuses the ones that need
/// credentials while the trail cannot be written.
pub(crate) async fn record(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let path = request.extensions().get::<MatchedPath>().map(|p| p.as_str().to_string());
    let operation =
        path.as_deref().and_then(|p| crate::operations::find(request.method().as_str(), p));
    let Some(operation) = operation else { return next.run(request).await };
    let recorded = operation.need != Need::Public || ANONYMOUS_RECORDED.contains(&operation.id);
    if !recorded || state.trail.sender.is_none() {
        return next.run(request).await;
    }
    if operation.need != Need::Public && state.trail.state() == TrailState::Unwritable {
        return ApiError::Later {
            status: axum::http::StatusCode::SERVICE_UNAVAILABLE,
            detail: "The audit trail cannot be written: requests are refused until it can"
                .to_string(),
            retry_after: 5,
        }
        .into_response();
    }
    let at = Utc::now();
    let id = Uuid::now_v7();
    let (mut parts, body) = request.into_parts();
    let ClientAddr(addr) = match ClientAddr::from_request_parts(&mut parts, &state).await {
        Ok(addr) => addr,
        Err(never) => match never {},
    };
    let (path_user, path_resource) = named_in_path(&mut parts).await;
    let slot = ActorSlot::default();
    parts.extensions.insert(slot.clone());
    let response = next.run(Request::from_parts(parts, body)).await;
    let note = response.extensions().get::<AuditNote>().cloned().unwrap_or_default();
    let anonymous = Actor { kind: ActorKind::Anonymous, id: None };
    let actor = slot.get().or(note.actor).unwrap_or(anonymous);
    let event = AuditEvent {
        at,
        id,
        actor_kind: actor.kind,
        actor_id: actor.id,
        operation: operation.id.to_string(),
        user_id: note.user_id.or(path_user),
        resource_id: note.resource_id.or(path_resource),
        status: i16::try_from(response.status().as_u16()).unwrap_or(i16::MAX),
        client_addr: addr.map(|a| a.to_string()),
    };
    state.trail.push(event).await;
    response
}

/// Path parameters that never go on record: secrets (a connect link's token) and what only
/// says how (an import's platform and store).
const UNRECORDED_PARAMS: &[&str] = &["token", "platform", "store"];

/// The user a path names (`{user_id}`, when it is an id) and what else it names, joined by `/`
/// (an endpoint and its message, a provider, a workout).
async fn named_in_path(parts: &mut Parts) -> (Option<UserId>, Option<String>) {
    let Ok(params) = RawPathParams::from_request_parts(parts, &()).await else {
        return (None, None);
    };
    let mut user = None;
    let mut others: Vec<&str> = Vec::new();
    for (name, value) in &params {
        match name {
            "user_id" => user = value.parse::<UserId>().ok(),
            _ if UNRECORDED_PARAMS.contains(&name) => {}
            _ => others.push(value),
        }
    }
    let resource = (!others.is_empty()).then(|| others.join("/"));
    (user, resource)
}
