//! Who may call what: each operation's [`Need`] (in `operations::OPERATIONS`) against what the
//! caller was granted, a developer's role or an API key's scopes. The auth extractors apply it
//! as they authenticate, so no handler runs for a caller it refuses, and the refusal names
//! what is missing.

use schema::api_keys::{Scope, Scopes};
use schema::developers::Role;

use crate::error::{ApiError, ApiResult};

/// What calling an operation needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Need {
    /// Nothing: anyone (login, vendors' notifications, connect pages...).
    Public,
    /// A developer of any role, about their own account.
    Account,
    /// Reading users and their data: the `read` scope, or any role.
    Read,
    /// Changing users and their data: the `write` scope, or an owner or admin.
    Write,
    /// Minting SDK tokens and invitation codes: the `sdk` scope, or an owner or admin.
    Sdk,
    /// The deployment's settings (keys, webhooks, providers, team, audit): an owner or admin.
    Manage,
}

impl Need {
    /// The API key scope that grants it, if a key can have it at all.
    pub(crate) fn scope(self) -> Option<Scope> {
        match self {
            Need::Read => Some(Scope::Read),
            Need::Write => Some(Scope::Write),
            Need::Sdk => Some(Scope::Sdk),
            Need::Public | Need::Account | Need::Manage => None,
        }
    }

    /// The developer roles that have it.
    pub(crate) fn roles(self) -> &'static [Role] {
        match self {
            Need::Public | Need::Account | Need::Read => &[Role::Owner, Role::Admin, Role::Viewer],
            Need::Write | Need::Sdk | Need::Manage => &[Role::Owner, Role::Admin],
        }
    }
}

/// What an authenticated caller was granted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Grant {
    Role(Role),
    Scopes(Scopes),
}

/// Whether `grant` has `need`; the contract's 403 naming what is missing otherwise.
pub(crate) fn check(grant: Grant, need: Need) -> ApiResult<()> {
    match grant {
        Grant::Role(role) if need.roles().contains(&role) => Ok(()),
        Grant::Role(role) => Err(ApiError::forbidden(format!(
            "The {} role cannot do this: it needs the owner or admin role",
            role.as_str()
        ))),
        Grant::Scopes(_) if need == Need::Public => Ok(()),
        Grant::Scopes(scopes) => match need.scope() {
            Some(scope) if scopes.has(scope) => Ok(()),
            Some(scope) => Err(ApiError::forbidden(format!(
                "This API key lacks the '{}' scope",
                scope.as_str()
            ))),
            None => Err(ApiError::forbidden("API keys cannot do this: it needs a developer")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed(grant: Grant, need: Need) -> bool {
        check(grant, need).is_ok()
    }

    #[test]
    fn roles_and_scopes_grant_what_they_say() {
        use Need::*;
        let needs = [Public, Account, Read, Write, Sdk, Manage];
        for need in needs {
            assert!(allowed(Grant::Role(Role::Owner), need));
            assert!(allowed(Grant::Role(Role::Admin), need));
            assert_eq!(
                allowed(Grant::Role(Role::Viewer), need),
                matches!(need, Public | Account | Read)
            );
            assert_eq!(
                allowed(Grant::Scopes(Scopes::ALL), need),
                !matches!(need, Account | Manage)
            );
            let read = Grant::Scopes(Scopes::of([Scope::Read]));
            assert_eq!(allowed(read, need), matches!(need, Public | Read));
        }
        let err = check(Grant::Scopes(Scopes::of([Scope::Read])), Write).err();
        assert!(matches!(err, Some(ApiError::Client { status, ref detail, .. })
            if status == 403 && detail.contains("'write' scope")));
    }
}
