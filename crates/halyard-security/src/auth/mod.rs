//! "DDS:Auth:PKI-DH" (DDS Security 1.1 §9.3), interoperable with Cyclone DDS 0.10: X.509
//! identities, the validation of remote identities and the three-message handshake that
//! authenticates both participants and agrees a shared secret. Sans-I/O: no clock (the time
//! is a parameter), no network, randomness from [`SecureRandom`](crate::random::SecureRandom).
//!
//! The flow, for a local participant L and a discovered remote R:
//! 1. [`LocalIdentity::new`] once: the adjusted GUID prefix and the IdentityToken for SPDP.
//! 2. On discovering R (its IdentityToken from PID_IDENTITY_TOKEN):
//!    [`LocalIdentity::validate_remote_identity`] gives a [`RemoteIdentity`] with a
//!    [`HandshakeRole`] and maybe a `+AuthReq` token to send (class `dds.sec.auth_request`).
//! 3. The initiator calls [`Handshake::begin_request`] and sends the Request; the replier, on
//!    receiving it, calls [`Handshake::begin_reply`] and sends the Reply; the initiator's
//!    [`Handshake::process`] of the Reply gives [`Step::SendFinal`] (done on its side); the
//!    replier's `process` of the Final gives [`Step::Completed`]. Each message travels as the
//!    single DataHolder of a `dds.sec.auth` ParticipantGenericMessage.
//! 4. Both sides then hold equal [`SharedSecret`]s (for the crypto plugin) and the peer's
//!    [`PeerIdentity`] (certificate subject, permissions document, participant data) for
//!    access control.

#[cfg(test)]
mod cyclone_kat;
mod error;
mod handshake;
mod identity;
mod kagree;
#[cfg(test)]
mod tests;

pub use error::AuthError;
pub use handshake::{
    pdata_participant_guid, Handshake, HandshakeOptions, PeerIdentity, SharedSecret, Step,
};
pub use identity::{
    adjusted_guid_prefix, subject_oneline, CertAlgo, HandshakeRole, LocalIdentity, RemoteIdentity,
    CHALLENGE_LEN,
};
pub use kagree::KeyAgreement;

/// Class id of the IdentityToken (and base of the handshake tokens).
pub const CLASS_ID: &str = "DDS:Auth:PKI-DH:1.0";
/// Class id of the AuthRequest token.
pub const CLASS_ID_AUTH_REQUEST: &str = "DDS:Auth:PKI-DH:1.0+AuthReq";
/// Class id of the handshake Request token.
pub const CLASS_ID_REQUEST: &str = "DDS:Auth:PKI-DH:1.0+Req";
/// Class id of the handshake Reply token.
pub const CLASS_ID_REPLY: &str = "DDS:Auth:PKI-DH:1.0+Reply";
/// Class id of the handshake Final token.
pub const CLASS_ID_FINAL: &str = "DDS:Auth:PKI-DH:1.0+Final";
