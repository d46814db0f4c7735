use std::fmt;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Errors of the data layer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("database error: {0}")]
    Db(#[from] tokio_postgres::Error),
    #[error("could not get a database connection: {0}")]
    Pool(#[from] deadpool_postgres::PoolError),
    #[error("could not build the database pool: {0}")]
    PoolBuild(#[from] deadpool_postgres::BuildError),
    #[error("migration failed: {0}")]
    Migration(#[from] refinery::Error),
    #[error(
        "TimescaleDB is not installed on this PostgreSQL server. wearhouse stores samples in a \
         TimescaleDB hypertable: run scripts/stack.sh (builds and installs it on Debian), or use \
         the timescale/timescaledb image"
    )]
    TimescaleMissing,
    #[error(
        "TimescaleDB is installed but not preloaded: add shared_preload_libraries = 'timescaledb' \
         to postgresql.conf and restart PostgreSQL (scripts/stack.sh does this)"
    )]
    TimescaleNotPreloaded,
    #[error("invalid DATABASE_URL: {0}")]
    Url(tokio_postgres::Error),
    /// A unique constraint refused a row; the payload names what already exists.
    #[error("{0} already exists")]
    Conflict(Conflict),
}

/// What a unique-constraint violation was about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conflict {
    UserExternalId,
    DeveloperEmail,
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Conflict::UserExternalId => "a user with this external_user_id",
            Conflict::DeveloperEmail => "a developer with this email",
        })
    }
}

/// The name of the unique constraint a database error violated, if that is what it is.
pub(crate) fn unique_violation(err: &tokio_postgres::Error) -> Option<&str> {
    let db = err.as_db_error()?;
    (*db.code() == tokio_postgres::error::SqlState::UNIQUE_VIOLATION)
        .then(|| db.constraint())
        .flatten()
}
