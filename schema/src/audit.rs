//! The audit trail: who read or changed whose data, one row a request. It holds ids, the
//! operation, the status and the client's address, never health data, and outlives the users it
//! names (a user's deletion stays on record). Rows are written in batches by the API's trail
//! writer and expire after the retention setting, whole chunks at a time.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::ids::UserId;
use crate::smallint_enum::smallint_enum;
use crate::{Db, Result};

/// Who made a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i16)]
pub enum ActorKind {
    Developer = 1,
    ApiKey = 2,
    /// An end user's SDK token.
    User = 3,
    /// Nobody authenticated (a login that failed, a connect page).
    Anonymous = 4,
}

smallint_enum!(ActorKind { Developer, ApiKey, User, Anonymous });

impl ActorKind {
    pub const ALL: [ActorKind; 4] =
        [ActorKind::Developer, ActorKind::ApiKey, ActorKind::User, ActorKind::Anonymous];

    pub fn as_str(self) -> &'static str {
        match self {
            ActorKind::Developer => "developer",
            ActorKind::ApiKey => "api_key",
            ActorKind::User => "user",
            ActorKind::Anonymous => "anonymous",
        }
    }

    pub fn parse(name: &str) -> Option<ActorKind> {
        ActorKind::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

/// One request on record.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditEvent {
    /// When the request came (its time ordered id is made at the same moment).
    pub at: DateTime<Utc>,
    pub id: Uuid,
    pub actor_kind: ActorKind,
    pub actor_id: Option<Uuid>,
    /// The operation's id in the OpenAPI document.
    pub operation: String,
    pub user_id: Option<UserId>,
    /// What else the request named: an endpoint, a key, a workout, a provider...
    pub resource_id: Option<String>,
    pub status: i16,
    pub client_addr: Option<String>,
}

/// Writes `events` in one statement.
pub async fn write(db: &Db, events: &[AuditEvent]) -> Result<()> {
    if events.is_empty() {
        return Ok(());
    }
    let client = db.client().await?;
    let mut at = Vec::with_capacity(events.len());
    let mut id = Vec::with_capacity(events.len());
    let mut kind = Vec::with_capacity(events.len());
    let mut actor = Vec::with_capacity(events.len());
    let mut operation = Vec::with_capacity(events.len());
    let mut user = Vec::with_capacity(events.len());
    let mut resource = Vec::with_capacity(events.len());
    let mut status = Vec::with_capacity(events.len());
    let mut addr = Vec::with_capacity(events.len());
    for e in events {
        at.push(e.at);
        id.push(e.id);
        kind.push(e.actor_kind.code());
        actor.push(e.actor_id);
        operation.push(e.operation.as_str());
        user.push(e.user_id);
        resource.push(e.resource_id.as_deref());
        status.push(e.status);
        addr.push(e.client_addr.as_deref());
    }
    let stmt = client
        .prepare_cached(
            "insert into audit_events
                 (at, id, actor_kind, actor_id, operation, user_id, resource_id, status, client_addr)
             select * from unnest($1::timestamptz[], $2::uuid[], $3::smallint[], $4::uuid[],
                                  $5::text[], $6::uuid[], $7::text[], $8::smallint[], $9::text[])",
        )
        .await?;
    client
        .execute(&stmt, &[&at, &id, &kind, &actor, &operation, &user, &resource, &status, &addr])
        .await?;
    Ok(())
}

/// What a listing of the trail keeps. Every field narrows; none: everything.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub user_id: Option<UserId>,
    pub actor_id: Option<Uuid>,
    pub actor_kind: Option<ActorKind>,
    pub operation: Option<String>,
    /// From this moment (inclusive)...
    pub from: Option<DateTime<Utc>>,
    /// ...to this one (exclusive).
    pub to: Option<DateTime<Utc>>,
}

/// Where a page of the trail starts: after the event `(at, id)` (the previous page's last),
/// newest first.
pub type Cursor = (DateTime<Utc>, Uuid);

/// Up to `limit` events that `filter` keeps, newest first, after `after`.
pub async fn list(
    db: &Db,
    filter: &Filter,
    after: Option<Cursor>,
    limit: i64,
) -> Result<Vec<AuditEvent>> {
    let client = db.client().await?;
    let (after_at, after_id) = after.unzip();
    let rows = client
        .query(
            "select at, id, actor_kind, actor_id, operation, user_id, resource_id, status,
                    client_addr
             from audit_events
             where ($1::uuid is null or user_id = $1)
               and ($2::uuid is null or actor_id = $2)
               and ($3::smallint is null or actor_kind = $3)
               and ($4::text is null or operation = $4)
               and ($5::timestamptz is null or at >= $5)
               and ($6::timestamptz is null or at < $6)
               and ($7::timestamptz is null or (at, id) < ($7, $8::uuid))
             order by at desc, id desc
             limit $9",
            &[
                &filter.user_id,
                &filter.actor_id,
                &filter.actor_kind,
                &filter.operation,
                &filter.from,
                &filter.to,
                &after_at,
                &after_id,
                &limit,
            ],
        )
        .await?;
    rows.iter()
        .map(|r| {
            Ok(AuditEvent {
                at: r.try_get(0)?,
                id: r.try_get(1)?,
                actor_kind: r.try_get(2)?,
                actor_id: r.try_get(3)?,
                operation: r.try_get(4)?,
                user_id: r.try_get(5)?,
                resource_id: r.try_get(6)?,
                status: r.try_get(7)?,
                client_addr: r.try_get(8)?,
            })
        })
        .collect()
}

/// Deletes the trail older than `days`: whole chunks first, then the rows of the chunk the
/// boundary falls in. Returns how many rows the second step deleted (at most `limit`).
pub async fn expire(db: &Db, days: i32, limit: i64) -> Result<u64> {
    let client = db.client().await?;
    client
        .execute(
            "select drop_chunks('audit_events', older_than => now() - make_interval(days => $1))",
            &[&days],
        )
        .await?;
    Ok(client
        .execute(
            "delete from audit_events where (at, id) in (
                 select at, id from audit_events
                 where at < now() - make_interval(days => $1) limit $2)",
            &[&days, &limit],
        )
        .await?)
}
