//! What developers set per provider: enabled or not, the live sync mode where it can be
//! switched, the granularity of 24/7 data. A provider without a row has its defaults.

use tokio_postgres::Row;

use crate::catalogue::providers::{DataGranularity, LiveSyncMode};
use crate::{Db, Error, Result};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderSetting {
    pub provider: String,
    pub is_enabled: bool,
    /// `None`: the provider's own mode.
    pub live_sync_mode: Option<LiveSyncMode>,
    /// `None`: the provider's default.
    pub data_granularity: Option<DataGranularity>,
}

/// A change; `None` leaves a field as it is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SettingChange {
    pub is_enabled: Option<bool>,
    pub live_sync_mode: Option<LiveSyncMode>,
    pub data_granularity: Option<DataGranularity>,
}

const COLUMNS: &str = "provider, is_enabled, live_sync_mode, data_granularity";

fn from_row(r: &Row) -> Result<ProviderSetting> {
    let mode: Option<String> = r.try_get(2)?;
    let granularity: Option<String> = r.try_get(3)?;
    Ok(ProviderSetting {
        provider: r.try_get(0)?,
        is_enabled: r.try_get(1)?,
        live_sync_mode: mode
            .map(|m| LiveSyncMode::parse(&m).ok_or(Error::Inconsistent("live_sync_mode")))
            .transpose()?,
        data_granularity: granularity
            .map(|g| DataGranularity::parse(&g).ok_or(Error::Inconsistent("data_granularity")))
            .transpose()?,
    })
}

/// `provider`'s setting among `settings` (every stored one, from [`all`]), if it has one.
pub fn of<'a>(settings: &'a [ProviderSetting], provider: &str) -> Option<&'a ProviderSetting> {
    settings.iter().find(|s| s.provider == provider)
}

/// Whether a provider with this setting is enabled: one without a setting is, as
/// [`is_enabled`] says in SQL.
pub fn enabled(setting: Option<&ProviderSetting>) -> bool {
    setting.is_none_or(|s| s.is_enabled)
}

/// Every stored setting.
pub async fn all(db: &Db) -> Result<Vec<ProviderSetting>> {
    let client = db.client().await?;
    let rows = client
        .query(&format!("select {COLUMNS} from provider_settings order by provider"), &[])
        .await?;
    rows.iter().map(from_row).collect()
}

/// Whether a developer left `provider` enabled (a provider without a setting is).
pub async fn is_enabled(db: &Db, provider: &str) -> Result<bool> {
    let client = db.client().await?;
    let row = client
        .query_opt(
            &client
                .prepare_cached("select is_enabled from provider_settings where provider = $1")
                .await?,
            &[&provider],
        )
        .await?;
    Ok(row.map(|r| r.try_get(0)).transpose()?.unwrap_or(true))
}

/// Applies `change` to `provider`'s setting (created with the defaults when missing).
pub async fn update(db: &Db, provider: &str, change: SettingChange) -> Result<ProviderSetting> {
    let client = db.client().await?;
    let row = client
        .query_one(
            &format!(
                "insert into provider_settings as s
                     (provider, is_enabled, live_sync_mode, data_granularity)
                 values ($1, coalesce($2, true), $3, $4)
                 on conflict (provider) do update set
                     is_enabled = coalesce($2, s.is_enabled),
                     live_sync_mode = coalesce($3, s.live_sync_mode),
                     data_granularity = coalesce($4, s.data_granularity),
                     updated_at = now()
                 returning {COLUMNS}"
            ),
            &[
                &provider,
                &change.is_enabled,
                &change.live_sync_mode.map(LiveSyncMode::as_str),
                &change.data_granularity.map(DataGranularity::as_str),
            ],
        )
        .await?;
    from_row(&row)
}

/// Enables or disables several providers at once, in one statement.
pub async fn set_enabled(db: &Db, changes: &[(String, bool)]) -> Result<()> {
    let (providers, enabled): (Vec<&str>, Vec<bool>) =
        changes.iter().map(|(p, e)| (p.as_str(), *e)).unzip();
    let client = db.client().await?;
    client
        .execute(
            "insert into provider_settings as s (provider, is_enabled)
             select * from unnest($1::text[], $2::bool[])
             on conflict (provider) do update set is_enabled = excluded.is_enabled,
                                                  updated_at = now()",
            &[&providers, &enabled],
        )
        .await?;
    Ok(())
}
