//! Developers: the people who operate a deployment and log in to its API, each with a role in
//! the team. A team always keeps an owner.

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use serde::{Deserialize, Serialize};
use tokio_postgres::Row;
use uuid::Uuid;

use crate::error::{Conflict, unique_violation};
use crate::smallint_enum::smallint_enum;
use crate::{Db, Error, Result};

/// What a developer may do. `owner`: everything; `admin`: everything but the team's owners;
/// `viewer`: reads, changes nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[repr(i16)]
pub enum Role {
    Owner = 1,
    Admin = 2,
    Viewer = 3,
}

smallint_enum!(Role { Owner, Admin, Viewer });

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Owner => "owner",
            Role::Admin => "admin",
            Role::Viewer => "viewer",
        }
    }

    /// Whether a developer of this role may give a member of role `from` the role `to` (`None`:
    /// remove them), or invite someone as `to` (`from` = `to`). The one rule of the team:
    /// owners do anything; admins anything that neither touches nor makes an owner; viewers
    /// nothing.
    pub fn may_manage(self, from: Role, to: Option<Role>) -> bool {
        match self {
            Role::Owner => true,
            Role::Admin => from != Role::Owner && to != Some(Role::Owner),
            Role::Viewer => false,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Developer {
    pub id: Uuid,
    pub email: String,
    pub password_hash: String,
    /// Moved on by each password change: developer tokens carry it, and only the current one
    /// verifies.
    pub credential_version: i32,
    pub role: Role,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

fn from_row(row: &Row) -> Result<Developer> {
    Ok(Developer {
        id: row.try_get("id")?,
        email: row.try_get("email")?,
        password_hash: row.try_get("password_hash")?,
        credential_version: row.try_get("credential_version")?,
        role: row.try_get("role")?,
        first_name: row.try_get("first_name")?,
        last_name: row.try_get("last_name")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

pub async fn get(db: &Db, id: Uuid) -> Result<Option<Developer>> {
    let client = db.client().await?;
    client
        .query_opt(&client.prepare_cached("select * from developers where id = $1").await?, &[&id])
        .await?
        .as_ref()
        .map(from_row)
        .transpose()
}

/// Email addresses are matched case-insensitively.
pub async fn find_by_email(db: &Db, email: &str) -> Result<Option<Developer>> {
    let client = db.client().await?;
    client
        .query_opt("select * from developers where lower(email) = lower($1)", &[&email])
        .await?
        .as_ref()
        .map(from_row)
        .transpose()
}

pub async fn count(db: &Db) -> Result<i64> {
    let client = db.client().await?;
    Ok(client.query_one("select count(*) from developers", &[]).await?.try_get(0)?)
}

/// Replaces a developer's password hash and moves their credential version on from `version`
/// (every token issued before stops working); returns the new version, or `None` when the
/// version is no longer `version` (another change came first).
pub async fn set_password(
    db: &Db,
    id: Uuid,
    password_hash: &str,
    version: i32,
) -> Result<Option<i32>> {
    let client = db.client().await?;
    let row = client
        .query_opt(
            "update developers set password_hash = $2, updated_at = now(),
                 credential_version = credential_version + 1
             where id = $1 and credential_version = $3 returning credential_version",
            &[&id, &password_hash, &version],
        )
        .await?;
    row.map(|r| r.try_get(0)).transpose().map_err(Into::into)
}

/// The first developer of a deployment: its owner.
pub async fn insert(db: &Db, email: &str, password_hash: &str) -> Result<Developer> {
    insert_on(&db.client().await?, email, password_hash, Role::Owner).await
}

/// Stores a developer with `role`; a taken email is [`Conflict::DeveloperEmail`].
pub(crate) async fn insert_on(
    client: &impl GenericClient,
    email: &str,
    password_hash: &str,
    role: Role,
) -> Result<Developer> {
    let row = client
        .query_one(
            "insert into developers (id, email, password_hash, role) values ($1, $2, $3, $4)
             returning *",
            &[&Uuid::now_v7(), &email, &password_hash, &role],
        )
        .await
        .map_err(|err| match unique_violation(&err) {
            Some("developers_email_key") => Error::Conflict(Conflict::DeveloperEmail),
            _ => Error::Db(err),
        })?;
    from_row(&row)
}

/// The team, oldest member first.
pub async fn list(db: &Db) -> Result<Vec<Developer>> {
    let client = db.client().await?;
    client
        .query("select * from developers order by created_at, id", &[])
        .await?
        .iter()
        .map(from_row)
        .collect()
}

/// What a change to a member came to.
#[derive(Debug)]
pub enum TeamChange {
    /// Done; the member as they are now (as they were, when removed).
    Done(Developer),
    NotFound,
    /// Refused: it would leave the team without an owner.
    LastOwner,
    /// Refused: `by` may not do this to the member (`Role::may_manage`).
    NotAllowed(Developer),
}

/// Gives member `id` the role `to`, or removes them (`None`), as a developer of role `by`, in
/// one transaction that holds every owner's row: two owners demoting each other at once cannot
/// leave the team without one. Removal ends the member's sessions: their tokens name a
/// developer that no longer exists.
pub async fn change(db: &Db, id: Uuid, by: Role, to: Option<Role>) -> Result<TeamChange> {
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    let owners: Vec<Uuid> = tx
        .query("select id from developers where role = $1 for update", &[&Role::Owner])
        .await?
        .iter()
        .map(|r| r.try_get(0))
        .collect::<std::result::Result<_, _>>()?;
    let Some(member) =
        tx.query_opt("select * from developers where id = $1 for update", &[&id]).await?
    else {
        return Ok(TeamChange::NotFound);
    };
    let member = from_row(&member)?;
    if !by.may_manage(member.role, to) {
        return Ok(TeamChange::NotAllowed(member));
    }
    if member.role == Role::Owner && to != Some(Role::Owner) && owners.len() <= 1 {
        return Ok(TeamChange::LastOwner);
    }
    let changed = match to {
        Some(role) => from_row(
            &tx.query_one(
                "update developers set role = $2, updated_at = now() where id = $1 returning *",
                &[&id, &role],
            )
            .await?,
        )?,
        None => {
            tx.execute("delete from developers where id = $1", &[&id]).await?;
            member
        }
    };
    tx.commit().await?;
    Ok(TeamChange::Done(changed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admins_neither_touch_nor_make_owners_and_viewers_manage_nothing() {
        use Role::*;
        for from in [Owner, Admin, Viewer] {
            for to in [Some(Owner), Some(Admin), Some(Viewer), None] {
                assert!(Owner.may_manage(from, to));
                assert!(!Viewer.may_manage(from, to));
                assert_eq!(Admin.may_manage(from, to), from != Owner && to != Some(Owner));
            }
        }
    }
}
