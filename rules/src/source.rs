//! The `source` object of every data response: where a sample, session or summary came from.

use std::collections::HashMap;

use schema::data_sources::DataSource;
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

/// `{provider, source, device, device_type, device_name}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct SourceOut {
    pub provider: String,
    /// The app or device name the source reported.
    pub source: Option<String>,
    /// The device model (`Watch6,1`, `SM-R930`).
    pub device: Option<String>,
    /// `watch`, `band`, `phone`, `scale`, `ring`, `other` or `unknown`.
    pub device_type: Option<String>,
    /// A readable device name: the name the device reported, else its model.
    pub device_name: Option<String>,
}

impl From<&DataSource> for SourceOut {
    fn from(d: &DataSource) -> SourceOut {
        SourceOut {
            provider: d.provider.clone(),
            source: d.source.clone(),
            device: d.device_model.clone(),
            device_type: d.device_type.clone(),
            device_name: d.original_source_name.clone().or_else(|| d.device_model.clone()),
        }
    }
}

/// A user's sources by id, with a stand-in for one deleted since the read began.
#[derive(Debug, Default)]
pub struct Sources(HashMap<Uuid, SourceOut>);

impl Sources {
    pub fn new<'a>(sources: impl IntoIterator<Item = &'a DataSource>) -> Sources {
        Sources(sources.into_iter().map(|s| (s.id, SourceOut::from(s))).collect())
    }

    pub fn get(&self, id: Uuid) -> SourceOut {
        self.0.get(&id).cloned().unwrap_or_else(|| SourceOut {
            provider: "unknown".into(),
            source: None,
            device: None,
            device_type: None,
            device_name: None,
        })
    }
}
