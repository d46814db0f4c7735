//! Signed access tokens (JWT, HS256 with the deployment's secret key).
//!
//! Developer tokens come from the login; SDK tokens are issued for one end user and carry
//! `scope: "sdk"`. Both expire after the configured lifetime. A developer token also carries
//! the developer's credential version (`cv`): a password change moves it on, which ends every
//! token issued before.

use chrono::Utc;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use schema::ids::UserId;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Scope {
    Developer,
    Sdk,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Claims {
    /// The developer's or the end user's id.
    pub sub: String,
    pub scope: Scope,
    pub iat: i64,
    pub exp: i64,
    /// When the session began (the login): a renewed developer token keeps it, so a session
    /// ends however often it is renewed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<i64>,
    /// The developer's credential version when the token was issued (absent: 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cv: i32,
}

fn is_zero(n: &i32) -> bool {
    *n == 0
}

/// What a valid, unexpired token says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Verified {
    pub subject: Uuid,
    pub scope: Scope,
    /// The credential version it was issued under.
    pub version: i32,
}

pub(crate) struct TokenKeys {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
    lifetime_seconds: i64,
}

impl TokenKeys {
    pub(crate) fn new(secret: &[u8], lifetime_seconds: i64) -> TokenKeys {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.leeway = 5;
        validation.set_required_spec_claims(&["exp", "sub"]);
        TokenKeys {
            encoding: EncodingKey::from_secret(secret),
            decoding: DecodingKey::from_secret(secret),
            validation,
            lifetime_seconds,
        }
    }

    pub(crate) fn lifetime_seconds(&self) -> i64 {
        self.lifetime_seconds
    }

    /// An SDK token for an end user.
    pub(crate) fn issue_sdk(&self, user: UserId) -> Result<String, jsonwebtoken::errors::Error> {
        self.sign(user.0, Scope::Sdk, Utc::now().timestamp(), 0)
    }

    /// A developer token of a session that began at `began` (Unix seconds), under the
    /// developer's credential `version`.
    pub(crate) fn issue_developer(
        &self,
        developer: Uuid,
        began: i64,
        version: i32,
    ) -> Result<String, jsonwebtoken::errors::Error> {
        self.sign(developer, Scope::Developer, began, version)
    }

    fn sign(
        &self,
        subject: Uuid,
        scope: Scope,
        auth: i64,
        cv: i32,
    ) -> Result<String, jsonwebtoken::errors::Error> {
        let now = Utc::now().timestamp();
        let claims = Claims {
            sub: subject.to_string(),
            scope,
            iat: now,
            exp: now + self.lifetime_seconds,
            auth: Some(auth),
            cv,
        };
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
    }

    /// What a valid, unexpired token says.
    pub(crate) fn verify(&self, token: &str) -> Option<Verified> {
        let claims = self.claims(token)?;
        let subject = Uuid::parse_str(&claims.sub).ok()?;
        Some(Verified { subject, scope: claims.scope, version: claims.cv })
    }

    /// The claims of a valid, unexpired token.
    pub(crate) fn claims(&self, token: &str) -> Option<Claims> {
        jsonwebtoken::decode::<Claims>(token, &self.decoding, &self.validation)
            .ok()
            .map(|d| d.claims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_rejections() {
        let keys = TokenKeys::new(b"0123456789abcdef0123456789abcdef", 60);
        let id = Uuid::now_v7();
        let token = keys.issue_sdk(UserId(id)).unwrap_or_default();
        let sdk = Verified { subject: id, scope: Scope::Sdk, version: 0 };
        assert_eq!(keys.verify(&token), Some(sdk));
        let dev = keys.issue_developer(id, Utc::now().timestamp(), 3).unwrap_or_default();
        let developer = Verified { subject: id, scope: Scope::Developer, version: 3 };
        assert_eq!(keys.verify(&dev), Some(developer));

        let other = TokenKeys::new(b"another secret, another deployment", 60);
        assert_eq!(other.verify(&token), None, "signed with another key");

        let expired = TokenKeys::new(b"0123456789abcdef0123456789abcdef", -3600);
        let old = expired.issue_developer(id, Utc::now().timestamp(), 0).unwrap_or_default();
        assert_eq!(keys.verify(&old), None, "expired");
        assert_eq!(keys.verify("not.a.jwt"), None);
    }
}
