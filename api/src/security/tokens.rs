//! Signed access tokens (JWT, HS256 with the deployment's secret key).
//!
//! Developer tokens come from the login; SDK tokens are issued for one end user and carry
//! `scope: "sdk"`. Both expire after the configured lifetime.

use chrono::Utc;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    Developer,
    Sdk,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Claims {
    /// The developer's or the end user's id.
    pub sub: String,
    pub scope: Scope,
    pub iat: i64,
    pub exp: i64,
    /// When the session began (the login): a renewed developer token keeps it, so a session
    /// ends however often it is renewed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<i64>,
}

pub struct TokenKeys {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
    lifetime_seconds: i64,
}

impl TokenKeys {
    pub fn new(secret: &[u8], lifetime_seconds: i64) -> TokenKeys {
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

    pub fn lifetime_seconds(&self) -> i64 {
        self.lifetime_seconds
    }

    pub fn issue(
        &self,
        subject: Uuid,
        scope: Scope,
    ) -> Result<String, jsonwebtoken::errors::Error> {
        self.issue_in_session(subject, scope, Utc::now().timestamp())
    }

    /// A token of a session that began at `auth` (Unix seconds).
    pub fn issue_in_session(
        &self,
        subject: Uuid,
        scope: Scope,
        auth: i64,
    ) -> Result<String, jsonwebtoken::errors::Error> {
        let now = Utc::now().timestamp();
        let claims = Claims {
            sub: subject.to_string(),
            scope,
            iat: now,
            exp: now + self.lifetime_seconds,
            auth: Some(auth),
        };
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
    }

    /// The subject and scope of a valid, unexpired token.
    pub fn verify(&self, token: &str) -> Option<(Uuid, Scope)> {
        let claims = self.claims(token)?;
        let subject = Uuid::parse_str(&claims.sub).ok()?;
        Some((subject, claims.scope))
    }

    /// The claims of a valid, unexpired token.
    pub fn claims(&self, token: &str) -> Option<Claims> {
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
        let token = keys.issue(id, Scope::Sdk).unwrap_or_default();
        assert_eq!(keys.verify(&token), Some((id, Scope::Sdk)));

        let other = TokenKeys::new(b"another secret, another deployment", 60);
        assert_eq!(other.verify(&token), None, "signed with another key");

        let expired = TokenKeys::new(b"0123456789abcdef0123456789abcdef", -3600);
        let old = expired.issue(id, Scope::Developer).unwrap_or_default();
        assert_eq!(keys.verify(&old), None, "expired");
        assert_eq!(keys.verify("not.a.jwt"), None);
    }
}
