//! [`AuthError`]: why an identity, a token or a handshake message was refused.

use crate::token::TokenError;
use std::fmt;

/// Why authentication failed. Every refusal of peer input is one of these (never a panic).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthError {
    /// A PEM certificate or private key could not be parsed.
    BadPem {
        /// Which input ("identity CA", "identity certificate", "private key", "c.id").
        what: &'static str,
        /// OpenSSL's reason.
        detail: String,
    },
    /// The key is neither RSA-2048 nor EC P-256 (the only kinds PKI-DH and Cyclone accept).
    UnsupportedAlgorithm {
        /// Whose key.
        what: &'static str,
        /// What was found.
        detail: String,
    },
    /// The private key does not belong to the identity certificate.
    KeyMismatch,
    /// The certificate was not issued by our identity CA (or its chain fails to verify).
    WrongCa {
        /// The certificate's subject.
        subject: String,
        /// OpenSSL's verification error.
        detail: String,
    },
    /// The certificate's validity ended before the current time.
    Expired {
        /// The certificate's subject.
        subject: String,
        /// Its notAfter.
        not_after: String,
    },
    /// The certificate's validity starts after the current time.
    NotYetValid {
        /// The certificate's subject.
        subject: String,
        /// Its notBefore.
        not_before: String,
    },
    /// A token has the wrong class id (e.g. a Reply where a Final was expected).
    WrongClassId {
        /// What was expected.
        expected: &'static str,
        /// What came.
        found: String,
    },
    /// The remote IdentityToken is not a PKI-DH 1.x token.
    UnsupportedIdentityToken(String),
    /// A required (binary) property is absent.
    MissingProperty(&'static str),
    /// A property is present but unusable.
    BadProperty {
        /// The property.
        name: &'static str,
        /// Why.
        why: &'static str,
    },
    /// `c.pdata` is not a parameter list carrying PID_PARTICIPANT_GUID.
    BadParticipantData(&'static str),
    /// The GUID in `c.pdata` does not belong to the certificate's subject (or to the peer).
    ParticipantGuidMismatch,
    /// A challenge differs from the one promised or sent earlier (replay or mix-up).
    ChallengeMismatch(&'static str),
    /// `hash_c1` / `hash_c2` differs from the hash of the received properties.
    HashMismatch(&'static str),
    /// A `dh1` / `dh2` echoed by the peer differs from the key exchanged.
    DhMismatch(&'static str),
    /// The handshake signature does not verify with the peer's certificate.
    BadSignature,
    /// A message came after the handshake finished (or otherwise out of turn).
    UnexpectedMessage(&'static str),
    /// A token could not be encoded or decoded.
    Token(TokenError),
    /// OpenSSL failed on valid-looking input.
    Crypto(String),
}

impl fmt::Display for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use AuthError::*;
        match self {
            BadPem { what, detail } => write!(f, "cannot parse the {what} (PEM): {detail}"),
            UnsupportedAlgorithm { what, detail } => write!(
                f,
                "the {what} uses {detail}; PKI-DH supports only RSA-2048 and EC prime256v1"
            ),
            KeyMismatch => write!(f, "the private key does not match the identity certificate"),
            WrongCa { subject, detail } => write!(
                f,
                "certificate {subject} does not verify against the identity CA: {detail}"
            ),
            Expired { subject, not_after } => {
                write!(f, "certificate {subject} expired (notAfter {not_after})")
            }
            NotYetValid {
                subject,
                not_before,
            } => write!(
                f,
                "certificate {subject} is not yet valid (notBefore {not_before})"
            ),
            WrongClassId { expected, found } => {
                write!(
                    f,
                    "token class id {found:?} where {expected:?} was expected"
                )
            }
            UnsupportedIdentityToken(c) => {
                write!(
                    f,
                    "remote identity token class {c:?} is not DDS:Auth:PKI-DH:1.x"
                )
            }
            MissingProperty(n) => write!(f, "handshake token lacks property {n}"),
            BadProperty { name, why } => write!(f, "handshake token property {name}: {why}"),
            BadParticipantData(why) => write!(f, "c.pdata is unusable: {why}"),
            ParticipantGuidMismatch => write!(
                f,
                "the participant GUID in c.pdata does not derive from the certificate subject"
            ),
            ChallengeMismatch(which) => write!(f, "{which} does not match the expected challenge"),
            HashMismatch(which) => {
                write!(
                    f,
                    "{which} does not match the hash of the received properties"
                )
            }
            DhMismatch(which) => write!(f, "{which} differs from the exchanged public key"),
            BadSignature => write!(f, "the handshake signature does not verify"),
            UnexpectedMessage(why) => write!(f, "unexpected handshake message: {why}"),
            Token(e) => write!(f, "{e}"),
            Crypto(e) => write!(f, "OpenSSL failure: {e}"),
        }
    }
}

impl std::error::Error for AuthError {}

impl From<TokenError> for AuthError {
    fn from(e: TokenError) -> Self {
        AuthError::Token(e)
    }
}

impl From<openssl::error::ErrorStack> for AuthError {
    fn from(e: openssl::error::ErrorStack) -> Self {
        AuthError::Crypto(e.to_string())
    }
}
