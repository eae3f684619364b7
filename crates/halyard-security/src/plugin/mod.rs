//! The builtin plugins as one participant's [`ParticipantSecurity`]: PKI-DH authentication of
//! every remote participant over the stateless channel, then join access control from the
//! permissions it presented.
//!
//! # Per remote participant
//!
//! ```text
//! discovered (IdentityToken)      validate_remote_identity; send our AuthReq
//!   we initiate (smaller GUID) -> send Request ........ WaitReply   (Request resent)
//!   it initiates               -> ..................... WaitRequest
//! WaitRequest  + Request  -> send Reply ............... WaitFinal   (Reply resent)
//! WaitReply    + Reply    -> send Final ............... Done        (Final resent on a repeated Reply)
//! WaitFinal    + Final    -> .......................... Done
//! WaitFinal    + Request again (our Reply was lost) -> send the Reply again
//! Done: the peer's signed permissions must verify against our permissions CA, hold a grant
//!       for its certificate's subject, and (with join access control) let it join the domain;
//!       then it is Admitted, else Refused with the reason.
//! ```
//!
//! A message that fails validation changes nothing (a later good one may still complete the
//! handshake); it is counted in [`BuiltinSecurity::rejected_messages`]. Unsent answers are
//! resent with a doubling delay (200 ms up to 2 s) for as long as the peer's lease holds; the
//! core tells us when it is gone ([`ParticipantSecurity::forget`]).
//!
//! # Telling the refused side
//!
//! The handshake has no refusal message: a participant whose identity a peer does not accept
//! (another identity CA, an expired certificate) only sees its Request, or its Reply, go
//! unanswered. So both sides say it, once per peer, as a warning the participant writes to
//! standard error whatever the security log setting (`SecurityOutput::warnings`): the side
//! that refuses a peer's certificate at once, naming why; the side whose handshake is still
//! unfinished `UNANSWERED_WARNING` after discovery, while the peer's lease holds, as "identity
//! not accepted by peer", with the likely cause.
//!
//! # Key exchange and rtps protection
//!
//! Once a peer is admitted, both sides derive the key-exchange keys from the shared secret
//! and protect the builtin volatile secure channel with them (SEC_PREFIX … SEC_POSTFIX,
//! key id 0); over it each sends the other its participant crypto tokens. With
//! `rtps_protection_kind` SIGN or ENCRYPT every message of a user or secure builtin endpoint
//! is then protected whole with the sender's participant key (SRTPS_PREFIX … SRTPS_POSTFIX),
//! as Cyclone DDS does; SPDP, SEDP, participant messages, the handshake and the key exchange
//! stay outside it. A peer that has our keys must protect what rtps protection covers: a
//! plain sample of such an endpoint is dropped and counted.
//!
//! # Endpoints
//!
//! Metadata, data, discovery and liveliness protection, with the endpoint crypto tokens: see
//! the `endpoints` module.
//!
//! With rtps protection *_WITH_ORIGIN_AUTHENTICATION each peer is sent a copy of our
//! participant key material with its own receiver-specific key, and every protected message
//! carries a receiver-specific MAC for each participant it is for.

mod access;
mod endpoints;
mod handshake;
mod protection;

use crate::access::{
    identity_subject, Action, BasicProtectionKind, Decision, DomainRule, Governance, Permissions,
    ProtectionKind,
};
use crate::auth::{
    Handshake, HandshakeOptions, HandshakeRole, LocalIdentity, PeerIdentity, RemoteIdentity,
    SharedSecret, Step, CLASS_ID_AUTH_REQUEST, CLASS_ID_FINAL, CLASS_ID_REPLY, CLASS_ID_REQUEST,
};
use crate::crypto::{
    keymat_from_token_parts, keymat_token_parts, peek_submessage_header, KeyMaterial,
    ReceiverCrypto, SenderCrypto, TransformKind,
};
use crate::random::SecureRandom;
use crate::setup::files;
use crate::token::{
    DataHolder, MessageIdentity, ParticipantGenericMessage, GMCLASSID_AUTH_HANDSHAKE,
    GMCLASSID_AUTH_REQUEST, GMCLASSID_DATAREADER_CRYPTO_TOKENS, GMCLASSID_DATAWRITER_CRYPTO_TOKENS,
    GMCLASSID_PARTICIPANT_CRYPTO_TOKENS,
};
use halyard_cdr::Endianness;
use halyard_core::security::{Admission, ParticipantSecurity, Rejected, SecurityOutput};
use halyard_core::wire::discovery::{EncodedToken, ParticipantData, SecurityInfo};
use halyard_core::wire::{EntityId, Guid, GuidPrefix};
use halyard_core::Instant;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The files of one participant's secure identity, as `halyard security init` lays them out:
/// `DIR/{identity_ca.pem, permissions_ca.pem, governance.p7s}` and
/// `DIR/NAME/{identity.pem, identity_key.pem, permissions.p7s}`.
#[derive(Clone)]
pub struct SecurityFiles {
    /// The identity CA certificate (PEM).
    pub identity_ca: Vec<u8>,
    /// This participant's identity certificate (PEM).
    pub identity_certificate: Vec<u8>,
    /// Its private key (PEM).
    pub private_key: zeroize::Zeroizing<Vec<u8>>,
    /// The permissions CA certificate (PEM).
    pub permissions_ca: Vec<u8>,
    /// The signed governance document (S/MIME).
    pub governance: Vec<u8>,
    /// This participant's signed permissions document (S/MIME).
    pub permissions: Vec<u8>,
}

impl SecurityFiles {
    /// Reads the identity directory `DIR/NAME` (the value of `HALYARD_SECURITY`).
    pub fn load(identity_dir: &Path) -> Result<SecurityFiles, PluginError> {
        let dir = identity_dir.parent().unwrap_or(Path::new("."));
        let read =
            |p: PathBuf| std::fs::read(&p).map_err(|e| PluginError::Io { path: p, error: e });
        Ok(SecurityFiles {
            identity_ca: read(dir.join(files::IDENTITY_CA))?,
            identity_certificate: read(identity_dir.join(files::IDENTITY))?,
            private_key: zeroize::Zeroizing::new(read(identity_dir.join(files::IDENTITY_KEY))?),
            permissions_ca: read(dir.join(files::PERMISSIONS_CA))?,
            governance: read(dir.join(files::GOVERNANCE))?,
            permissions: read(identity_dir.join(files::PERMISSIONS))?,
        })
    }
}

/// Why the plugins could not be set up for a participant.
#[derive(Debug)]
#[non_exhaustive]
pub enum PluginError {
    /// A file could not be read.
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        error: std::io::Error,
    },
    /// Our identity is not valid (expired, not issued by the identity CA, key mismatch ...).
    Identity(crate::auth::AuthError),
    /// The governance or permissions document is not valid.
    Document {
        /// Which one.
        which: &'static str,
        /// Why.
        error: crate::access::AccessError,
    },
    /// The governance has no rule for the domain.
    NoDomainRule(u32),
    /// Our own permissions do not let us join the domain.
    NotPermitted(String),
}

impl fmt::Display for PluginError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PluginError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            PluginError::Identity(e) => write!(f, "our identity is not valid: {e}"),
            PluginError::Document { which, error } => write!(f, "the {which} document: {error}"),
            PluginError::NoDomainRule(d) => write!(f, "the governance has no rule for domain {d}"),
            PluginError::NotPermitted(why) => write!(f, "our permissions: {why}"),
        }
    }
}

impl std::error::Error for PluginError {}

#[derive(Debug)]
enum Phase {
    /// It begins: we wait for its Request.
    WaitRequest,
    /// We began: we wait for its Reply.
    WaitReply(Box<Handshake>),
    /// We replied: we wait for its Final.
    WaitFinal(Box<Handshake>),
    /// Authenticated (admitted or refused by access control).
    Done,
    /// Its identity is not acceptable.
    Failed,
}

/// What a received handshake message calls for.
enum Next {
    Nothing,
    /// It failed validation or came out of turn (counted).
    Reject,
    /// Send our last message again.
    Repeat,
    Reply(DataHolder),
    Final(DataHolder, SharedSecret, Option<PeerIdentity>),
    Completed(SharedSecret, Option<PeerIdentity>),
}

/// A message we may have to send again, and when.
struct Resend {
    message: ParticipantGenericMessage,
    at: Instant,
    delay: Duration,
}

struct Peer {
    remote: RemoteIdentity,
    phase: Phase,
    /// When it was discovered: a handshake unfinished long after is reported (see
    /// `handshake::UNANSWERED_WARNING`).
    since: Instant,
    /// Who it is, for the user: its GUID prefix and, when it announced them, its process.
    label: String,
    /// The user was told about it (at most once: `SecurityOutput::warnings`).
    warned: bool,
    /// Why we last refused a handshake message of its (a handshake that then stays
    /// unfinished is reported with it, not as a refusal by the peer).
    refusal: Option<String>,
    /// The last handshake message we sent (Request, Reply or Final), for resends and repeats.
    last: Option<ParticipantGenericMessage>,
    /// Resent until answered (Request, Reply); `None` once answered or for a Final.
    resend: Option<Resend>,
    admission: Admission,
    /// The shared secret and who the peer proved to be.
    secret: Option<SharedSecret>,
    identity: Option<PeerIdentity>,
    /// Its verified permissions and the subject they were granted for (once admitted).
    permissions: Option<(Permissions, String)>,
    /// The key-exchange keys (from the shared secret) protecting the volatile secure channel.
    kx: Option<(SenderCrypto, ReceiverCrypto)>,
    /// Its participant key material (from its participant crypto tokens): decodes what it
    /// protects with rtps protection.
    participant: Option<ReceiverCrypto>,
    /// The copy of our participant key material it was sent, with its receiver-specific key
    /// (rtps protection with origin authentication only).
    participant_sent: Option<KeyMaterial>,
    /// Its endpoints' key materials (from its endpoint crypto tokens), by sender key id.
    endpoint_keys: BTreeMap<u32, ReceiverCrypto>,
    /// It is a Fast DDS participant (vendor 1.15): it refuses an empty participant crypto
    /// token sequence ("Invalid CryptoTokenSeq length"), which Cyclone DDS needs.
    fast_dds: bool,
    /// Whether its protected data must never repeat an initialization vector (our replay
    /// window). Cyclone DDS 0.10 resends encoded submessages unchanged (a retransmitted
    /// HEARTBEAT's identical SEC_PREFIX..SEC_POSTFIX, seen on loopback) and checks no replay
    /// itself; for its participants replays are left to the RTPS layer, where a repeated
    /// sequence number or count is dropped as a duplicate and never delivered twice.
    replay_window: bool,
}

/// The builtin plugins (PKI-DH, Permissions) of one participant.
pub struct BuiltinSecurity {
    local: LocalIdentity,
    files: SecurityFiles,
    domain_id: u32,
    rule: DomainRule,
    /// Our `c.pdata`: PID_PARTICIPANT_GUID and the sentinel, big-endian, as Cyclone reads it.
    pdata: Vec<u8>,
    options: HandshakeOptions,
    peers: BTreeMap<GuidPrefix, Peer>,
    early_auth_requests: BTreeMap<GuidPrefix, DataHolder>,
    rng: Box<dyn SecureRandom>,
    wall_clock: Box<dyn Fn() -> i64 + Send>,
    next_sn: i64,
    rejected: u64,
    /// Our own permissions and subject (local access control).
    own: (Permissions, String),
    /// Our participant key material and its sender (when the governance protects anything
    /// with it), sent to every admitted peer in participant crypto tokens.
    participant_keys: Option<(KeyMaterial, SenderCrypto)>,
    /// Our endpoints' keys (see the `endpoints` module).
    local_endpoints: BTreeMap<EntityId, endpoints::LocalEndpoint>,
    /// Remote endpoints matched with ours, and what they protect.
    remote_endpoints: BTreeMap<Guid, endpoints::RemoteEndpoint>,
    /// The last sender key id given out (1 is the participant key material's).
    next_key_id: u32,
    /// The datagram being protected holds a volatile secure submessage (see `protection`).
    volatile_in_datagram: bool,
    /// The datagram being protected holds a protected submessage of an endpoint rtps
    /// protection covers.
    rtps_entity_in_datagram: bool,
}

impl BuiltinSecurity {
    /// Validates our identity and documents at the wall-clock time `wall_clock()` (Unix
    /// seconds) for `domain_id`. `candidate` is the GUID prefix the participant would have had:
    /// the participant must use [`BuiltinSecurity::guid_prefix`] instead (its first six bytes
    /// come from our certificate, as peers check).
    pub fn new(
        files: SecurityFiles,
        domain_id: u32,
        candidate: GuidPrefix,
        rng: Box<dyn SecureRandom>,
        wall_clock: Box<dyn Fn() -> i64 + Send>,
    ) -> Result<BuiltinSecurity, PluginError> {
        let now = wall_clock();
        let local = LocalIdentity::new(
            &files.identity_ca,
            &files.identity_certificate,
            &files.private_key,
            candidate.0,
            now,
        )
        .map_err(PluginError::Identity)?;
        let governance =
            Governance::from_smime(&files.governance, &files.permissions_ca).map_err(|error| {
                PluginError::Document {
                    which: "governance",
                    error,
                }
            })?;
        let rule = governance
            .domain_rule(domain_id)
            .cloned()
            .ok_or(PluginError::NoDomainRule(domain_id))?;
        let permissions = Permissions::from_smime(&files.permissions, &files.permissions_ca)
            .map_err(|error| PluginError::Document {
                which: "permissions",
                error,
            })?;
        let cert = openssl::x509::X509::from_pem(&files.identity_certificate)
            .map_err(|e| PluginError::Identity(e.into()))?;
        let subject = identity_subject(&cert);
        let grant = permissions.grant_for(&subject).cloned().ok_or_else(|| {
            PluginError::NotPermitted(format!("no grant for our subject {subject:?}"))
        })?;
        if let Decision::Deny(reason) = grant.may_join(domain_id, now) {
            return Err(PluginError::NotPermitted(format!(
                "may not join domain {domain_id}: {reason}"
            )));
        }
        let guid = Guid::new(GuidPrefix(local.guid_prefix()), EntityId::PARTICIPANT);
        let mut pdata = vec![0x00, 0x50, 0x00, 0x10];
        pdata.extend_from_slice(&guid.to_bytes());
        pdata.extend_from_slice(&[0x00, 0x01, 0x00, 0x00]);
        Ok(BuiltinSecurity {
            local,
            files,
            domain_id,
            rule,
            pdata,
            options: HandshakeOptions::default(),
            peers: BTreeMap::new(),
            early_auth_requests: BTreeMap::new(),
            rng,
            wall_clock,
            next_sn: 0,
            rejected: 0,
            own: (permissions, subject),
            participant_keys: None,
            local_endpoints: BTreeMap::new(),
            remote_endpoints: BTreeMap::new(),
            next_key_id: 1,
            volatile_in_datagram: false,
            rtps_entity_in_datagram: false,
        }
        .with_participant_keys())
    }

    /// The participant's GUID prefix (derived from our certificate's subject).
    pub fn guid_prefix(&self) -> GuidPrefix {
        GuidPrefix(self.local.guid_prefix())
    }

    /// Whether the governance asks for any cryptographic protection (of RTPS messages,
    /// discovery, liveliness, or any topic's metadata or data) in our domain.
    pub fn protection_required(&self) -> bool {
        let r = &self.rule;
        [
            r.rtps_protection_kind,
            r.discovery_protection_kind,
            r.liveliness_protection_kind,
        ]
        .iter()
        .any(|k| *k != ProtectionKind::None)
            || r.topic_rules.iter().any(|t| {
                t.metadata_protection_kind != ProtectionKind::None
                    || t.data_protection_kind != BasicProtectionKind::None
            })
    }

    /// Handshake messages that failed validation (dropped, the handshake unchanged).
    pub fn rejected_messages(&self) -> u64 {
        self.rejected
    }

    /// Whether the governance asks for protection Halyard does not implement yet (nothing
    /// today: every protection kind of DDS Security 1.1's builtin plugins is implemented).
    pub fn unsupported_protection(&self) -> Option<&'static str> {
        None
    }

    /// The shared secret of a completed handshake with `peer`.
    pub fn shared_secret(&self, peer: GuidPrefix) -> Option<&SharedSecret> {
        self.peers.get(&peer).and_then(|p| p.secret.as_ref())
    }

    /// Who `peer` proved to be in its handshake.
    pub fn peer_identity(&self, peer: GuidPrefix) -> Option<&PeerIdentity> {
        self.peers.get(&peer).and_then(|p| p.identity.as_ref())
    }
}

impl ParticipantSecurity for BuiltinSecurity {
    fn announce(&self, data: &mut ParticipantData) {
        let le = Endianness::Little;
        // Cyclone's tokens in SPDP carry their class ids only; ours carry the IdentityToken's
        // properties too (Cyclone accepts them).
        data.identity_token = self
            .local
            .identity_token()
            .to_parameter_value(le)
            .ok()
            .map(|cdr| EncodedToken {
                little_endian: true,
                cdr,
            });
        data.permissions_token = DataHolder::new(crate::access::PERMISSIONS_TOKEN_CLASS_ID)
            .to_parameter_value(le)
            .ok()
            .map(|cdr| EncodedToken {
                little_endian: true,
                cdr,
            });
        // What the governance says of this domain. Peers compare it with their own and do not
        // match a participant whose attributes differ.
        let info = self.rule.participant_security_info();
        data.security_info = Some(SecurityInfo {
            attributes: info.participant_security_attributes,
            plugin_attributes: info.plugin_participant_security_attributes,
        });
        // The secure builtin endpoints. Cyclone DDS counts a participant as secure only if it
        // announces the reliable secure SPDP writer (and an IdentityToken); without it,
        // Cyclone never runs a handshake with it.
        use halyard_core::wire::discovery::builtin_endpoint as be;
        data.builtin_endpoints |= be::PARTICIPANT_VOLATILE_MESSAGE_SECURE_WRITER
            | be::PARTICIPANT_VOLATILE_MESSAGE_SECURE_READER
            | be::SPDP_RELIABLE_PARTICIPANT_SECURE_WRITER
            | be::SPDP_RELIABLE_PARTICIPANT_SECURE_READER;
    }

    fn forget(&mut self, remote: GuidPrefix) {
        self.peers.remove(&remote);
        self.early_auth_requests.remove(&remote);
        let lo = Guid::new(remote, EntityId([0; 4]));
        let hi = Guid::new(remote, EntityId([0xff; 4]));
        let gone: Vec<Guid> = self
            .remote_endpoints
            .range(lo..=hi)
            .map(|(g, _)| *g)
            .collect();
        for g in gone {
            self.forget_remote(g);
        }
    }

    fn discovered(
        &mut self,
        now: Instant,
        remote: &ParticipantData,
        out: &mut SecurityOutput,
    ) -> Admission {
        self.on_discovered(now, remote, out)
    }

    fn stateless_message(
        &mut self,
        now: Instant,
        source: GuidPrefix,
        payload: &[u8],
        out: &mut SecurityOutput,
    ) {
        self.on_stateless_message(now, source, payload, out)
    }

    fn handle_timeout(&mut self, now: Instant, out: &mut SecurityOutput) {
        self.on_handshake_timeout(now, out)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.next_handshake_timeout()
    }

    fn check_local_endpoint(
        &self,
        topic: &str,
        partitions: &[String],
        writer: bool,
    ) -> Result<(), String> {
        self.local_topic_access(topic, partitions, writer)
    }

    fn check_remote_endpoint(
        &self,
        source: GuidPrefix,
        topic: &str,
        partitions: &[String],
        writer: bool,
    ) -> Result<(), String> {
        self.remote_topic_access(source, topic, partitions, writer)
    }

    fn volatile_message(
        &mut self,
        now: Instant,
        source: GuidPrefix,
        payload: &[u8],
        out: &mut SecurityOutput,
    ) {
        self.on_volatile_message(now, source, payload, out)
    }

    fn protect_submessage(
        &mut self,
        local: EntityId,
        destination: Option<GuidPrefix>,
        plain: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<bool, Rejected> {
        self.protect_volatile_submessage(local, destination, plain, out)
    }

    fn may_protect_submessage(&self, local: EntityId) -> bool {
        local == EntityId::P2P_VOLATILE_SECURE_WRITER
            || local == EntityId::P2P_VOLATILE_SECURE_READER
            || self.protects_submessages_of(local)
    }

    fn unprotect_submessage(
        &mut self,
        source: GuidPrefix,
        bytes: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<usize, Rejected> {
        self.unprotect_any_submessage(source, bytes, out)
    }

    fn protect_message(
        &mut self,
        destination: Option<GuidPrefix>,
        message: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<bool, Rejected> {
        self.protect_whole_message(destination, message, out)
    }

    fn unprotect_message(
        &mut self,
        source: GuidPrefix,
        message: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), Rejected> {
        self.unprotect_whole_message(source, message, out)
    }

    fn message_headroom(&self) -> usize {
        self.whole_message_headroom()
    }

    fn protect_message_in_place(
        &mut self,
        destination: Option<GuidPrefix>,
        buf: &mut Vec<u8>,
        headroom: usize,
    ) -> Result<bool, Rejected> {
        self.protect_whole_message_in_place(destination, buf, headroom)
    }

    fn accepts_plain_submessage(
        &self,
        source: GuidPrefix,
        remote: EntityId,
        local: EntityId,
        in_protected_message: bool,
    ) -> bool {
        self.plain_submessage_acceptable(source, remote, local, in_protected_message)
    }

    fn register_local_endpoint(
        &mut self,
        local: EntityId,
        topic: &str,
        writer: bool,
    ) -> Option<SecurityInfo> {
        self.register_local(local, topic, writer)
    }

    fn unregister_local_endpoint(&mut self, local: EntityId) {
        self.unregister_local(local)
    }

    fn match_remote_endpoint(
        &mut self,
        _now: Instant,
        local: EntityId,
        remote: Guid,
        info: Option<SecurityInfo>,
        out: &mut SecurityOutput,
    ) -> Result<(), String> {
        self.match_remote(local, remote, info, out)
    }

    fn forget_remote_endpoint(&mut self, remote: Guid) {
        self.forget_remote(remote)
    }

    fn protects_payload(&self, local: EntityId) -> bool {
        self.protects_local_payload(local)
    }

    fn encode_payload(
        &mut self,
        local: EntityId,
        plain: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<bool, Rejected> {
        self.encode_local_payload(local, plain, out)
    }

    fn decode_payload(
        &mut self,
        writer: Guid,
        encoded: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<bool, Rejected> {
        self.decode_remote_payload(writer, encoded, out)
    }

    fn liveliness_protected(&self) -> bool {
        self.rule.liveliness_protection_kind != ProtectionKind::None
    }
}
