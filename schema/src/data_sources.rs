//! Data sources: a device or app of one user at one provider.

use deadpool_postgres::GenericClient;
use tokio_postgres::Row;
use uuid::Uuid;

use crate::ids::UserId;
use crate::{Db, Result};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct DataSource {
    pub id: Uuid,
    pub user_id: UserId,
    pub provider: String,
    pub user_connection_id: Option<Uuid>,
    pub device_model: Option<String>,
    pub device_manufacturer: Option<String>,
    pub software_version: Option<String>,
    pub source: Option<String>,
    pub device_type: Option<String>,
    pub original_source_name: Option<String>,
}

/// What identifies and describes a source when it is first seen.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NewDataSource {
    pub provider: String,
    pub user_connection_id: Option<Uuid>,
    pub device_model: Option<String>,
    pub device_manufacturer: Option<String>,
    pub software_version: Option<String>,
    pub source: Option<String>,
    pub device_type: Option<String>,
    pub original_source_name: Option<String>,
}

fn from_row(row: &Row) -> Result<DataSource> {
    Ok(DataSource {
        id: row.try_get("id")?,
        user_id: row.try_get("user_id")?,
        provider: row.try_get("provider")?,
        user_connection_id: row.try_get("user_connection_id")?,
        device_model: row.try_get("device_model")?,
        device_manufacturer: row.try_get("device_manufacturer")?,
        software_version: row.try_get("software_version")?,
        source: row.try_get("source")?,
        device_type: row.try_get("device_type")?,
        original_source_name: row.try_get("original_source_name")?,
    })
}

const COLUMNS: &str =
    "id, user_id, provider, user_connection_id, device_model, device_manufacturer,
    software_version, source, device_type, original_source_name";

/// A user's data sources ordered by provider and device model.
pub async fn list_for_user(db: &Db, user_id: UserId) -> Result<Vec<DataSource>> {
    list_with(&db.client().await?, user_id).await
}

/// `list_for_user` on a given connection, with the statement prepared once per connection.
pub(crate) async fn list_with(
    client: &deadpool_postgres::Client,
    user_id: UserId,
) -> Result<Vec<DataSource>> {
    let sql = format!(
        "select {COLUMNS} from data_sources where user_id = $1
         order by provider, device_model nulls last, source nulls last, id"
    );
    let statement = client.prepare_cached(&sql).await?;
    client.query(&statement, &[&user_id]).await?.iter().map(from_row).collect()
}

/// The identity the table derives (`device_model|source`), as the unique key sees it.
fn identity(s: &NewDataSource) -> String {
    format!("{}|{}", s.device_model.as_deref().unwrap_or(""), s.source.as_deref().unwrap_or(""))
}

/// What writing data does to the user's connection to its provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link {
    /// A phone's push is the connection: it is made active (created when first seen).
    Push,
    /// A cloud vendor's connection is the OAuth flow's: its status is left as it is (data a
    /// pull stores after a disconnection does not bring the connection back).
    Cloud,
}

/// Makes sure the user has a connection to `provider` (active, for a push) and stores every
/// source (created when first seen, linked to that connection), in one statement. Returns the
/// sources' ids in the order given.
pub async fn upsert_pushed(
    client: &impl GenericClient,
    user_id: UserId,
    provider: &str,
    link: Link,
    sources: &[NewDataSource],
) -> Result<Vec<Uuid>> {
    // One row per identity: a statement may not upsert the same row twice.
    let mut seen = std::collections::HashSet::new();
    let unique: Vec<&NewDataSource> = sources.iter().filter(|s| seen.insert(identity(s))).collect();
    let col = |f: fn(&NewDataSource) -> Option<&str>| -> Vec<Option<&str>> {
        unique.iter().map(|s| f(s)).collect()
    };
    let rows = client.query(&client.prepare_cached("with c as (
                 insert into connections (id, user_id, provider, status, last_synced_at)
                 values ($1, $2, $3, $10, case when $11 then now() end)
                 on conflict (user_id, provider) do update
                     set status = case when $11 then excluded.status else connections.status end,
                         last_synced_at = case when $11 then now()
                                               else connections.last_synced_at end,
                         updated_at = case when connections.status = excluded.status
                                           then connections.updated_at else now() end
                 returning id)
             insert into data_sources (id, user_id, provider, user_connection_id, device_model,
                 device_manufacturer, software_version, source, device_type, original_source_name)
             select gen_random_uuid(), $2, $3, c.id, s.*
             from c, unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[]) as s
             on conflict (user_id, provider, identity) do update
                 set software_version = coalesce(excluded.software_version, data_sources.software_version),
                     device_type = coalesce(data_sources.device_type, excluded.device_type),
                     user_connection_id = coalesce(data_sources.user_connection_id, excluded.user_connection_id)
             returning id, identity").await?,
            &[
                &Uuid::now_v7(),
                &user_id,
                &provider,
                &col(|s| s.device_model.as_deref()),
                &col(|s| s.device_manufacturer.as_deref()),
                &col(|s| s.software_version.as_deref()),
                &col(|s| s.source.as_deref()),
                &col(|s| s.device_type.as_deref()),
                &col(|s| s.original_source_name.as_deref()),
                &crate::connections::ConnectionStatus::Active,
                &(link == Link::Push),
            ],
        )
        .await?;
    let mut by_identity = std::collections::HashMap::with_capacity(rows.len());
    for r in &rows {
        by_identity.insert(r.try_get::<_, String>(1)?, r.try_get::<_, Uuid>(0)?);
    }
    sources
        .iter()
        .map(|s| {
            by_identity
                .get(&identity(s))
                .copied()
                .ok_or(crate::Error::Inconsistent("the source upsert skipped a source"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_matches_the_generated_column() {
        let s = NewDataSource {
            device_model: Some("Watch6,2".into()),
            source: Some("Watch".into()),
            ..Default::default()
        };
        assert_eq!(identity(&s), "Watch6,2|Watch");
        assert_eq!(identity(&NewDataSource::default()), "|");
    }
}
