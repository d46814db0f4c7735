//! Enums stored as `smallint` numbers (webhook delivery states are Svix's numbers, which the
//! attempt history shows as they are): `ToSql`/`FromSql` through the number, and an error, not
//! a guess, for a number the enum does not name.

/// Implements `code`, `from_code`, `ToSql` and `FromSql` for a fieldless `#[repr(i16)]` enum.
macro_rules! smallint_enum {
    ($name:ident { $($variant:ident),+ $(,)? }) => {
        impl $name {
            /// The number stored (and shown) for this state.
            pub fn code(self) -> i16 {
                self as i16
            }

            pub fn from_code(code: i16) -> Option<$name> {
                [$($name::$variant),+].into_iter().find(|v| v.code() == code)
            }
        }

        impl postgres_types::ToSql for $name {
            fn to_sql(
                &self,
                ty: &postgres_types::Type,
                out: &mut bytes::BytesMut,
            ) -> Result<postgres_types::IsNull, Box<dyn std::error::Error + Sync + Send>> {
                self.code().to_sql(ty, out)
            }

            postgres_types::accepts!(INT2);
            postgres_types::to_sql_checked!();
        }

        impl<'a> postgres_types::FromSql<'a> for $name {
            fn from_sql(
                ty: &postgres_types::Type,
                raw: &'a [u8],
            ) -> Result<$name, Box<dyn std::error::Error + Sync + Send>> {
                let code = i16::from_sql(ty, raw)?;
                $name::from_code(code)
                    .ok_or_else(|| format!("{code} is not a {}", stringify!($name)).into())
            }

            postgres_types::accepts!(INT2);
        }
    };
}

pub(crate) use smallint_enum;
