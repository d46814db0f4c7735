//! Data sources: a device or app of one user at one provider.

use deadpool_postgres::GenericClient;
use tokio_postgres::Row;
use uuid::Uuid;

use crate::{Db, Result};

#[derive(Debug, Clone, PartialEq)]
pub struct DataSource {
    pub id: Uuid,
    pub user_id: Uuid,
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
pub async fn list_for_user(db: &Db, user_id: Uuid) -> Result<Vec<DataSource>> {
    let client = db.client().await?;
    let sql = format!(
        "select {COLUMNS} from data_sources where user_id = $1
         order by provider, device_model nulls last, source nulls last, id"
    );
    client.query(&sql, &[&user_id]).await?.iter().map(from_row).collect()
}

/// The source with this identity, created when first seen.
pub async fn upsert(
    client: &impl GenericClient,
    user_id: Uuid,
    new: &NewDataSource,
) -> Result<DataSource> {
    let sql = format!(
        "insert into data_sources (id, user_id, provider, user_connection_id, device_model,
             device_manufacturer, software_version, source, device_type, original_source_name)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
         on conflict (user_id, provider, identity) do update
             set software_version = coalesce(excluded.software_version, data_sources.software_version),
                 device_type = coalesce(data_sources.device_type, excluded.device_type)
         returning {COLUMNS}"
    );
    let row = client
        .query_one(
            &sql,
            &[
                &Uuid::now_v7(),
                &user_id,
                &new.provider,
                &new.user_connection_id,
                &new.device_model,
                &new.device_manufacturer,
                &new.software_version,
                &new.source,
                &new.device_type,
                &new.original_source_name,
            ],
        )
        .await?;
    from_row(&row)
}
