use std::fmt;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Errors of the data layer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("database error: {}", describe(.0))]
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
    /// What the code relies on did not hold (a bug, not bad input): said, not papered over.
    #[error("inconsistent data: {0}")]
    Inconsistent(&'static str),
    /// A stored secret that does not open under the master keys.
    #[error("stored secret {what}: {source}")]
    Sealed { what: String, source: crate::sealed::OpenError },
    /// A sealed sample block that does not decode.
    #[error("a sealed sample block: {0}")]
    Block(#[from] crate::blocks::CodecError),
    /// A stored payload that does not read as its type.
    #[error("unreadable {what}: {source}")]
    Payload { what: &'static str, source: serde_json::Error },
}

impl Error {
    /// Whether trying again later can succeed: lost connections, an unavailable or restarting
    /// server, deadlocks and serialization failures. A constraint violation or bad data will
    /// fail the same way every time.
    pub fn is_retriable(&self) -> bool {
        match self {
            Error::Pool(_) | Error::PoolBuild(_) => true,
            Error::Db(e) => match e.code() {
                // No SQLSTATE: the connection itself failed.
                None => true,
                Some(code) => {
                    let c = code.code();
                    c.starts_with("08") // connection exception
                        || c.starts_with("53") // insufficient resources
                        || c.starts_with("57") // operator intervention (shutdown, cancel)
                        || c == "40001" // serialization failure
                        || c == "40P01" // deadlock
                        || c.starts_with("58") // system error (I/O)
                }
            },
            _ => false,
        }
    }

    /// A deadlock or serialization failure: the transaction lost a race with another one and
    /// can be run again at once (e.g. under a stronger lock).
    pub fn is_contention(&self) -> bool {
        matches!(self, Error::Db(e) if e.code().is_some_and(|c| c.code() == "40P01" || c.code() == "40001"))
    }
}

/// What a unique-constraint violation was about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conflict {
    UserExternalId,
    DeveloperEmail,
    /// A vendor account already connected, and active, on another user.
    VendorAccount,
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Conflict::UserExternalId => "a user with this external_user_id",
            Conflict::DeveloperEmail => "a developer with this email",
            Conflict::VendorAccount => "another user connected to this vendor account",
        })
    }
}

/// A database error with the server's message (tokio-postgres' own Display says "db error").
fn describe(err: &tokio_postgres::Error) -> String {
    match err.as_db_error() {
        Some(db) => match db.detail() {
            Some(detail) => format!("{}: {} ({detail})", db.code().code(), db.message()),
            None => format!("{}: {}", db.code().code(), db.message()),
        },
        None => err.to_string(),
    }
}

/// The name of the unique constraint a database error violated, if that is what it is.
pub(crate) fn unique_violation(err: &tokio_postgres::Error) -> Option<&str> {
    let db = err.as_db_error()?;
    (*db.code() == tokio_postgres::error::SqlState::UNIQUE_VIOLATION)
        .then(|| db.constraint())
        .flatten()
}
