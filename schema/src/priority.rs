//! Source priority: the one rule that decides which source wins when several report the same
//! thing (a phone and a watch counting the same steps, a watch and a ring the same night).
//!
//! A source's rank is, in order: the user's own ordering of their sources; then its device
//! type's rank (the user's, else the deployment's, else watch, ring, band, phone, scale, other,
//! unknown); then its provider's rank (likewise; default phonehealth, google, samsung, then the
//! rest); then age (the first seen wins). Lower ranks win.

use std::collections::HashMap;

use deadpool_postgres::GenericClient;
use uuid::Uuid;

use crate::data_sources::DataSource;
use crate::ids::UserId;
use crate::{Db, Result};

pub const DEVICE_TYPES: &[&str] = &["watch", "ring", "band", "phone", "scale", "other", "unknown"];
pub const DEFAULT_PROVIDERS: &[&str] = &["phonehealth", "google", "samsung"];

/// Priorities at one scope (the deployment, or one user's overrides).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Priorities {
    /// Best first.
    pub providers: Vec<String>,
    pub device_types: Vec<String>,
    /// A user's own sources, best first (empty at the deployment scope).
    pub data_sources: Vec<Uuid>,
}

fn position(list: &[String], key: Option<&str>) -> Option<usize> {
    key.and_then(|k| list.iter().position(|x| x == k))
}

fn default_device(t: Option<&str>) -> usize {
    t.and_then(|t| DEVICE_TYPES.iter().position(|d| *d == t)).unwrap_or(DEVICE_TYPES.len())
}

fn default_provider(p: &str) -> usize {
    DEFAULT_PROVIDERS.iter().position(|d| *d == p).unwrap_or(DEFAULT_PROVIDERS.len())
}

/// Own place, device type (scope, place), provider (scope, place), id.
type SortKey = (usize, (u8, usize), (u8, usize), Uuid);

/// Ranks a user's sources (0 = best) by the rule above.
pub fn rank(sources: &[DataSource], global: &Priorities, user: &Priorities) -> HashMap<Uuid, i32> {
    let mut keyed: Vec<(SortKey, Uuid)> = sources
        .iter()
        .map(|s| {
            let own = user.data_sources.iter().position(|id| *id == s.id).unwrap_or(usize::MAX);
            // A place in the user's list beats any in the deployment's, which beats the
            // built-in order.
            let device = position(&user.device_types, s.device_type.as_deref())
                .map(|p| (0, p))
                .or_else(|| {
                    position(&global.device_types, s.device_type.as_deref()).map(|p| (1, p))
                })
                .unwrap_or_else(|| (2, default_device(s.device_type.as_deref())));
            let provider = position(&user.providers, Some(&s.provider))
                .map(|p| (0, p))
                .or_else(|| position(&global.providers, Some(&s.provider)).map(|p| (1, p)))
                .unwrap_or_else(|| (2, default_provider(&s.provider)));
            // Ids are time-ordered (UUIDv7): the first seen sorts first.
            ((own, device, provider, s.id), s.id)
        })
        .collect();
    keyed.sort();
    keyed.into_iter().enumerate().map(|(i, (_, id))| (id, i as i32)).collect()
}

async fn load(client: &impl GenericClient, user: Option<UserId>) -> Result<Priorities> {
    let rows = client
        .query(
            "select kind, key from source_priorities where user_id is not distinct from $1 order by kind, rank",
            &[&user],
        )
        .await?;
    let mut p = Priorities::default();
    for r in rows {
        push(&mut p, &r.try_get::<_, String>(0)?, r.try_get(1)?);
    }
    Ok(p)
}

fn push(p: &mut Priorities, kind: &str, key: String) {
    match kind {
        "provider" => p.providers.push(key),
        "device_type" => p.device_types.push(key),
        _ => {
            if let Ok(id) = Uuid::parse_str(&key) {
                p.data_sources.push(id);
            }
        }
    }
}

pub async fn global(db: &Db) -> Result<Priorities> {
    load(&db.client().await?, None).await
}

pub async fn for_user(db: &Db, user_id: UserId) -> Result<Priorities> {
    load(&db.client().await?, Some(user_id)).await
}

/// Replaces the priorities of a scope (`None`: the deployment's).
pub async fn set(db: &Db, user: Option<UserId>, p: &Priorities) -> Result<()> {
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    tx.execute("delete from source_priorities where user_id is not distinct from $1", &[&user])
        .await?;
    let sources: Vec<String> = p.data_sources.iter().map(Uuid::to_string).collect();
    for (kind, keys) in
        [("provider", &p.providers), ("device_type", &p.device_types), ("data_source", &sources)]
    {
        for (rank, key) in keys.iter().enumerate() {
            tx.execute(
                "insert into source_priorities (user_id, kind, key, rank) values ($1, $2, $3, $4)",
                &[&user, &kind, key, &(rank as i32)],
            )
            .await?;
        }
    }
    tx.commit().await?;
    Ok(())
}

/// A user's sources with their ranks, best first: `(source, rank)`.
pub async fn ranked_sources(db: &Db, user_id: UserId) -> Result<Vec<(DataSource, i32)>> {
    Ok(ranked_sources_of_existing(db, user_id).await?.unwrap_or_default())
}

/// [`ranked_sources`] of a user who exists; `None` when there is no such user. Every read
/// starts here: one connection, the three statements in flight at once.
pub async fn ranked_sources_of_existing(
    db: &Db,
    user_id: UserId,
) -> Result<Option<Vec<(DataSource, i32)>>> {
    let client = db.client().await?;
    let statement = client
        .prepare_cached(
            "select user_id is null, kind, key from source_priorities
             where user_id is null or user_id = $1 order by kind, rank",
        )
        .await?;
    let (exists, sources, rows) = tokio::try_join!(
        crate::users::exists_with(&client, user_id),
        crate::data_sources::list_with(&client, user_id),
        async { Ok(client.query(&statement, &[&user_id]).await?) },
    )?;
    if !exists {
        return Ok(None);
    }
    let (mut g, mut u) = (Priorities::default(), Priorities::default());
    for r in rows {
        let (global, kind, key): (bool, String, String) =
            (r.try_get(0)?, r.try_get(1)?, r.try_get(2)?);
        push(if global { &mut g } else { &mut u }, &kind, key);
    }
    let ranks = rank(&sources, &g, &u);
    let mut out: Vec<(DataSource, i32)> = sources
        .into_iter()
        .map(|s| {
            let r = ranks.get(&s.id).copied().unwrap_or(i32::MAX);
            (s, r)
        })
        .collect();
    out.sort_by_key(|(_, r)| *r);
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(id: u128, provider: &str, device: Option<&str>) -> DataSource {
        DataSource {
            id: Uuid::from_u128(id),
            user_id: UserId::default(),
            provider: provider.into(),
            user_connection_id: None,
            device_model: None,
            device_manufacturer: None,
            software_version: None,
            source: None,
            device_type: device.map(str::to_string),
            original_source_name: None,
        }
    }

    #[test]
    fn the_rule_in_order() {
        let sources = vec![
            src(1, "phonehealth", Some("phone")),
            src(2, "phonehealth", Some("watch")),
            src(3, "samsung", Some("ring")),
            src(4, "google", None),
            src(5, "google", Some("watch")),
        ];
        let none = Priorities::default();
        let r = rank(&sources, &none, &none);
        // Watches first (phonehealth before google), then the ring, the phone, the unknown.
        let order: Vec<u128> = {
            let mut v: Vec<_> = r.iter().collect();
            v.sort_by_key(|(_, rank)| **rank);
            v.into_iter().map(|(id, _)| id.as_u128()).collect()
        };
        assert_eq!(order, vec![2, 5, 3, 1, 4]);
        // The deployment prefers rings; a user prefers their phone over everything.
        let g = Priorities { device_types: vec!["ring".into()], ..Default::default() };
        let r = rank(&sources, &g, &none);
        assert_eq!(r[&Uuid::from_u128(3)], 0);
        let u = Priorities { data_sources: vec![Uuid::from_u128(1)], ..Default::default() };
        let r = rank(&sources, &g, &u);
        assert_eq!(r[&Uuid::from_u128(1)], 0);
        assert_eq!(r[&Uuid::from_u128(3)], 1);
        // Provider overrides break ties between sources of one device type.
        let u = Priorities { providers: vec!["google".into()], ..Default::default() };
        let r = rank(&sources, &none, &u);
        assert!(r[&Uuid::from_u128(5)] < r[&Uuid::from_u128(2)]);
        // A user's device order beats the deployment's, even at the same place in each list.
        let g = Priorities { device_types: vec!["phone".into()], ..Default::default() };
        let u = Priorities { device_types: vec!["ring".into()], ..Default::default() };
        let r = rank(&sources, &g, &u);
        assert_eq!(r[&Uuid::from_u128(3)], 0);
        assert_eq!(r[&Uuid::from_u128(1)], 1);
    }
}
