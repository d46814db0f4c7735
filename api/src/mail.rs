//! Mail the service sends: invitations to join the team, through the SMTP server of `SMTP_URL`
//! (`smtps://` for TLS, `smtp://…?tls=required` for STARTTLS, plain `smtp://` for a relay on
//! the same host).

use std::time::Duration;

use chrono::{DateTime, Utc};
use lettre::message::Mailbox;
use lettre::message::header::ContentType;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use schema::developers::Role;

/// How long sending one mail may take.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum MailError {
    #[error("SMTP: {0}")]
    Smtp(#[from] lettre::transport::smtp::Error),
    #[error("an address: {0}")]
    Address(#[from] lettre::address::AddressError),
    #[error("building the mail: {0}")]
    Build(#[from] lettre::error::Error),
    #[error("the mail server did not answer within {0:?}")]
    Timeout(Duration),
}

/// Sends mail through one SMTP server.
#[derive(Clone)]
pub struct Mailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

impl std::fmt::Debug for Mailer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The URL holds the server's password: not shown.
        f.debug_struct("Mailer").field("from", &self.from.to_string()).finish_non_exhaustive()
    }
}

/// An invitation to send.
#[derive(Debug, Clone, Copy)]
pub struct Invitation<'a> {
    pub to: &'a str,
    pub url: &'a str,
    pub role: Role,
    pub invited_by: &'a str,
    pub deployment: &'a str,
    pub expires_at: DateTime<Utc>,
}

impl Mailer {
    /// A mailer for the server of `url`, sending as `from` (`Name <address>` or an address).
    pub fn new(url: &str, from: &str) -> Result<Mailer, MailError> {
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)?
            .timeout(Some(SEND_TIMEOUT))
            .build();
        Ok(Mailer { transport, from: from.parse()? })
    }

    pub(crate) async fn send_invitation(&self, letter: &Invitation<'_>) -> Result<(), MailError> {
        let body = format!(
            "{by} invites you to join the team of {deployment} as {role}.\n\n\
             Accept the invitation and choose your password here:\n{url}\n\n\
             The link works once, until {expires} UTC. If you did not expect it, ignore this \
             mail.\n",
            by = letter.invited_by,
            deployment = letter.deployment,
            role = letter.role.as_str(),
            url = letter.url,
            expires = letter.expires_at.format("%Y-%m-%d %H:%M"),
        );
        let message = Message::builder()
            .from(self.from.clone())
            .to(letter.to.parse()?)
            .subject(format!("Join {} on wearhouse", letter.deployment))
            .header(ContentType::TEXT_PLAIN)
            .body(body)?;
        match tokio::time::timeout(SEND_TIMEOUT, self.transport.send(message)).await {
            Ok(sent) => sent.map(|_| ()).map_err(Into::into),
            Err(_) => Err(MailError::Timeout(SEND_TIMEOUT)),
        }
    }
}
