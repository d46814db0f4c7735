//! Id types: an id of one kind cannot be passed where another kind is wanted (a message id for
//! an endpoint's). Each is its value as stored and as sent: the same
//! column type, the same JSON (`serde(transparent)`), the same text.

use std::fmt;

use postgres_types::{FromSql, ToSql, Type};
use serde::{Deserialize, Serialize};

/// An id type over `$inner`, read and written as it.
macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident($inner:ty) $(, $derive:ident)*) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize $(, $derive)*)]
        #[serde(transparent)]
        pub struct $name(pub $inner);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl std::str::FromStr for $name {
            type Err = <$inner as std::str::FromStr>::Err;

            fn from_str(s: &str) -> Result<$name, Self::Err> {
                s.parse().map($name)
            }
        }

        impl From<$inner> for $name {
            fn from(id: $inner) -> $name {
                $name(id)
            }
        }

        impl ToSql for $name {
            fn to_sql(
                &self,
                ty: &Type,
                out: &mut bytes::BytesMut,
            ) -> Result<postgres_types::IsNull, Box<dyn std::error::Error + Sync + Send>> {
                self.0.to_sql(ty, out)
            }

            fn accepts(ty: &Type) -> bool {
                <$inner as ToSql>::accepts(ty)
            }

            postgres_types::to_sql_checked!();
        }

        impl<'a> FromSql<'a> for $name {
            fn from_sql(
                ty: &Type,
                raw: &'a [u8],
            ) -> Result<$name, Box<dyn std::error::Error + Sync + Send>> {
                <$inner as FromSql>::from_sql(ty, raw).map($name)
            }

            fn accepts(ty: &Type) -> bool {
                <$inner as FromSql>::accepts(ty)
            }
        }
    };
}

id_type!(
    /// An end user's id (`users`): whose data a row is, in every table.
    UserId(uuid::Uuid),
    Copy,
    Default
);
id_type!(
    /// A webhook endpoint's id (`ep_…`).
    EndpointId(String)
);
id_type!(
    /// A webhook message's id (`msg_…`).
    MessageId(String)
);
id_type!(
    /// A stored SDK batch's id (`sdk_batches`).
    BatchId(uuid::Uuid),
    Copy
);
id_type!(
    /// An export import's id (`imports`; its sync run and its samples' lineage share it).
    ImportId(uuid::Uuid),
    Copy
);
id_type!(
    /// An export of a user's record (`exports`; its sync run shares it).
    ExportId(uuid::Uuid),
    Copy
);
id_type!(
    /// A vendor pull's id (`vendor_pulls`).
    PullId(uuid::Uuid),
    Copy
);

id_type!(
    /// A series type's id (`series_types`; the `series_type_id` of every stored sample,
    /// rollup and block): stable, the catalogue's (`catalogue::series_types`).
    SeriesId(i16),
    Copy,
    Default
);

impl EndpointId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl MessageId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_their_values_as_sent() {
        let id = MessageId("msg_1".into());
        assert_eq!(serde_json::to_string(&id).ok().as_deref(), Some("\"msg_1\""));
        assert_eq!(id.to_string(), "msg_1");
        assert!(<EndpointId as ToSql>::accepts(&Type::TEXT));
        assert!(<MessageId as FromSql>::accepts(&Type::VARCHAR));
        assert!(!<MessageId as ToSql>::accepts(&Type::UUID));
        let batch = BatchId(uuid::Uuid::from_u128(7));
        assert_eq!(serde_json::to_value(batch).ok(), serde_json::to_value(batch.0).ok());
        assert!(
            <PullId as FromSql>::accepts(&Type::UUID) && !<ImportId as ToSql>::accepts(&Type::TEXT)
        );
    }
}
