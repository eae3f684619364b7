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
//! # What is not here yet
//!
//! The secure SEDP and participant-message endpoints (discovery and liveliness protection),
//! endpoint crypto tokens, and metadata and data protection.
//! [`BuiltinSecurity::unsupported_protection`] names the first such kind a governance asks
//! for; the DCPS layer refuses that configuration rather than run unprotected.

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
    GMCLASSID_AUTH_REQUEST, GMCLASSID_PARTICIPANT_CRYPTO_TOKENS,
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

/// Key id of our participant key material (key-exchange keys use 0).
const PARTICIPANT_KEY_ID: u32 = 1;

/// The crypto transform for a protection kind (Cyclone: SIGN -> AES256-GMAC, ENCRYPT ->
/// AES256-GCM).
fn transform_kind(k: ProtectionKind) -> TransformKind {
    match k {
        ProtectionKind::None => TransformKind::None,
        ProtectionKind::Sign | ProtectionKind::SignWithOriginAuthentication => {
            TransformKind::Aes256Gmac
        }
        ProtectionKind::Encrypt | ProtectionKind::EncryptWithOriginAuthentication => {
            TransformKind::Aes256Gcm
        }
    }
}

fn is_volatile(e: EntityId) -> bool {
    e == EntityId::P2P_VOLATILE_SECURE_WRITER || e == EntityId::P2P_VOLATILE_SECURE_READER
}

/// Whether rtps protection covers an endpoint's traffic: user endpoints and the secure
/// builtin ones. The other builtin endpoints (SPDP, SEDP, participant messages, and the
/// stateless and volatile secure channels, which must work before any key is known) are
/// never rtps-protected (as in Cyclone DDS's `maybe_rtps_protected`).
fn rtps_protected_entity(e: EntityId) -> bool {
    if e == EntityId::UNKNOWN {
        return false;
    }
    !e.is_builtin()
        || [
            EntityId::SEDP_PUBLICATIONS_SECURE_WRITER,
            EntityId::SEDP_PUBLICATIONS_SECURE_READER,
            EntityId::SEDP_SUBSCRIPTIONS_SECURE_WRITER,
            EntityId::SEDP_SUBSCRIPTIONS_SECURE_READER,
            EntityId::P2P_MESSAGE_SECURE_WRITER,
            EntityId::P2P_MESSAGE_SECURE_READER,
            EntityId::SPDP_RELIABLE_SECURE_WRITER,
            EntityId::SPDP_RELIABLE_SECURE_READER,
        ]
        .contains(&e)
}

/// What rtps protection makes of a message: (some submessage is of an rtps-protected
/// endpoint, some submessage must go plain: SPDP, the handshake, the key exchange).
fn rtps_kinds(message: &[u8]) -> (bool, bool) {
    use halyard_core::wire::Submessage as S;
    let Ok(m) = halyard_core::wire::Message::parse(message) else {
        return (false, true);
    };
    let (mut protected, mut plain) = (false, false);
    for sm in m.submessages() {
        let ids = match sm {
            Ok(S::Data(d)) => [d.writer_id, d.reader_id],
            Ok(S::DataFrag(d)) => [d.writer_id, d.reader_id],
            Ok(S::Heartbeat(h)) => [h.writer_id, h.reader_id],
            Ok(S::HeartbeatFrag(h)) => [h.writer_id, h.reader_id],
            Ok(S::Gap(g)) => [g.writer_id, g.reader_id],
            Ok(S::AckNack(a)) => [a.writer_id, a.reader_id],
            Ok(S::NackFrag(n)) => [n.writer_id, n.reader_id],
            // A protected submessage (SEC_PREFIX): the volatile channel's.
            Ok(S::Unknown { id: 0x31 }) => {
                plain = true;
                continue;
            }
            Ok(_) => continue,
            Err(_) => return (protected, true),
        };
        if ids.iter().any(|e| {
            [
                EntityId::SPDP_WRITER,
                EntityId::SPDP_READER,
                EntityId::P2P_STATELESS_MESSAGE_WRITER,
                EntityId::P2P_STATELESS_MESSAGE_READER,
                EntityId::P2P_VOLATILE_SECURE_WRITER,
                EntityId::P2P_VOLATILE_SECURE_READER,
            ]
            .contains(e)
        }) {
            plain = true;
        }
        protected |= ids.iter().any(|e| rtps_protected_entity(*e));
    }
    (protected, plain)
}

/// The reason a protected submessage or message was dropped.
fn why_rejected(e: crate::crypto::CryptoError) -> Rejected {
    use crate::crypto::CryptoError as E;
    Rejected(match e {
        E::TamperedOrWrongKey => "protected data failed its MAC (tampered, or a wrong key)",
        E::Replayed => "protected data replayed (an initialization vector seen before)",
        E::UnknownKeyId { .. } => "protected data names a key we do not have",
        E::MissingReceiverSpecificMac { .. } => "protected data lacks our receiver-specific MAC",
        E::KindMismatch { .. } => "protected data uses another transformation kind",
        _ => "protected data is malformed",
    })
}

/// The first resend delay of an unanswered handshake message (it doubles up to
/// [`MAX_RESEND`]).
const FIRST_RESEND: Duration = Duration::from_millis(200);
/// The longest resend delay.
const MAX_RESEND: Duration = Duration::from_secs(2);
/// AuthRequests kept from participants not discovered yet.
const MAX_EARLY_AUTH_REQUESTS: usize = 64;

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

    /// Makes our participant key material, of the kind rtps protection asks for.
    fn with_participant_keys(mut self) -> Self {
        let kind = transform_kind(self.rule.rtps_protection_kind);
        if kind != TransformKind::None {
            let km = KeyMaterial::generate(kind, PARTICIPANT_KEY_ID, self.rng.as_mut());
            if let Ok(sender) = SenderCrypto::new(km.clone(), self.rng.as_mut()) {
                self.participant_keys = Some((km, sender));
            }
        }
        self
    }

    /// Whether the governance asks for protection Halyard does not implement yet: anything
    /// but rtps protection (secure discovery and liveliness endpoints, metadata and data
    /// protection).
    pub fn unsupported_protection(&self) -> Option<&'static str> {
        let r = &self.rule;
        if r.discovery_protection_kind != ProtectionKind::None {
            return Some("discovery_protection_kind");
        }
        if r.liveliness_protection_kind != ProtectionKind::None {
            return Some("liveliness_protection_kind");
        }
        for t in &r.topic_rules {
            if t.metadata_protection_kind != ProtectionKind::None {
                return Some("metadata_protection_kind");
            }
            if t.data_protection_kind != BasicProtectionKind::None {
                return Some("data_protection_kind");
            }
            if t.enable_discovery_protection || t.enable_liveliness_protection {
                return Some("enable_discovery_protection / enable_liveliness_protection");
            }
        }
        None
    }

    /// After admitting `peer`: the key-exchange keys, and our participant crypto tokens to it.
    fn start_key_exchange(&mut self, peer: GuidPrefix, out: &mut SecurityOutput) {
        let Some(p) = self.peers.get_mut(&peer) else {
            return;
        };
        let Some(secret) = &p.secret else {
            return;
        };
        let Ok(kx) = KeyMaterial::derive_key_exchange(
            &secret.challenge1,
            &secret.challenge2,
            &secret.shared_secret,
        ) else {
            return;
        };
        let (Ok(tx), Ok(mut rx)) = (
            SenderCrypto::new(kx.clone(), self.rng.as_mut()),
            ReceiverCrypto::new(kx),
        ) else {
            return;
        };
        rx.set_replay_protection(p.replay_window);
        p.kx = Some((tx, rx));
        let Some((km, _)) = &self.participant_keys else {
            return;
        };
        let (class, name, bytes) = keymat_token_parts(km);
        let token = DataHolder::new(class).with_binary(name, &bytes);
        self.next_sn += 1;
        let me = Guid::new(self.guid_prefix(), EntityId::P2P_VOLATILE_SECURE_WRITER);
        let m = ParticipantGenericMessage {
            message_identity: MessageIdentity {
                source_guid: me.to_bytes(),
                sequence_number: self.next_sn,
            },
            related_message_identity: MessageIdentity::default(),
            destination_participant_guid: Guid::new(peer, EntityId::PARTICIPANT).to_bytes(),
            destination_endpoint_guid: [0; 16],
            source_endpoint_guid: [0; 16],
            message_class_id: GMCLASSID_PARTICIPANT_CRYPTO_TOKENS.to_owned(),
            message_data: vec![token],
        };
        if let Ok(payload) = m.to_payload() {
            out.volatile.push((peer, payload));
        }
    }

    /// The shared secret of a completed handshake with `peer`.
    pub fn shared_secret(&self, peer: GuidPrefix) -> Option<&SharedSecret> {
        self.peers.get(&peer).and_then(|p| p.secret.as_ref())
    }

    /// Who `peer` proved to be in its handshake.
    pub fn peer_identity(&self, peer: GuidPrefix) -> Option<&PeerIdentity> {
        self.peers.get(&peer).and_then(|p| p.identity.as_ref())
    }

    fn message(
        &mut self,
        to: GuidPrefix,
        class: &str,
        related: MessageIdentity,
        token: DataHolder,
    ) -> ParticipantGenericMessage {
        self.next_sn += 1;
        let me = Guid::new(self.guid_prefix(), EntityId::P2P_STATELESS_MESSAGE_WRITER);
        ParticipantGenericMessage {
            message_identity: MessageIdentity {
                source_guid: me.to_bytes(),
                sequence_number: self.next_sn,
            },
            related_message_identity: related,
            destination_participant_guid: Guid::new(to, EntityId::PARTICIPANT).to_bytes(),
            destination_endpoint_guid: [0; 16],
            source_endpoint_guid: [0; 16],
            message_class_id: class.to_owned(),
            message_data: vec![token],
        }
    }

    /// Queues `m` for sending (and again, with a new sequence number, if it is resent).
    fn send(out: &mut SecurityOutput, to: GuidPrefix, m: &ParticipantGenericMessage) {
        if let Ok(payload) = m.to_payload() {
            out.stateless.push((to, payload));
        }
    }

    /// Sends a handshake message that is resent until answered.
    fn send_until_answered(
        &mut self,
        now: Instant,
        to: GuidPrefix,
        m: ParticipantGenericMessage,
        out: &mut SecurityOutput,
    ) {
        Self::send(out, to, &m);
        if let Some(p) = self.peers.get_mut(&to) {
            p.last = Some(m.clone());
            p.resend = Some(Resend {
                message: m,
                at: now + FIRST_RESEND,
                delay: FIRST_RESEND,
            });
        }
    }

    /// The handshake with `from` is complete: access control decides.
    fn completed(
        &mut self,
        from: GuidPrefix,
        secret: SharedSecret,
        identity: Option<PeerIdentity>,
    ) {
        let (decision, permissions) = match &identity {
            Some(id) => self.judge(id),
            None => (
                Admission::Refused("the handshake named no peer identity".into()),
                None,
            ),
        };
        if let Some(p) = self.peers.get_mut(&from) {
            p.phase = Phase::Done;
            p.resend = None;
            p.secret = Some(secret);
            p.identity = identity;
            p.admission = decision;
            p.permissions = permissions;
        }
    }

    /// Access control for an authenticated peer: its permissions, signed by our permissions
    /// CA, must grant its certificate's subject the right to join our domain.
    fn judge(&self, id: &PeerIdentity) -> (Admission, Option<(Permissions, String)>) {
        match self.judge_inner(id) {
            Ok(p) => (Admission::Admitted, Some(p)),
            Err(why) => (Admission::Refused(why), None),
        }
    }

    fn judge_inner(&self, id: &PeerIdentity) -> Result<(Permissions, String), String> {
        let permissions = Permissions::from_smime(&id.permissions, &self.files.permissions_ca)
            .map_err(|e| format!("its permissions document: {e}"))?;
        let cert = openssl::x509::X509::from_pem(&id.certificate_pem)
            .map_err(|_| "its certificate does not parse".to_string())?;
        let subject = identity_subject(&cert);
        let grant = permissions
            .grant_for(&subject)
            .ok_or_else(|| format!("its permissions hold no grant for {subject:?}"))?;
        if self.rule.enable_join_access_control {
            if let Decision::Deny(reason) = grant.may_join(self.domain_id, (self.wall_clock)()) {
                return Err(format!(
                    "{subject:?} may not join domain {}: {reason}",
                    self.domain_id
                ));
            }
        }
        Ok((permissions, subject))
    }

    /// Whether the grant of `subject` in `permissions` lets it publish (`writer`) or subscribe
    /// to `topic` in `partitions`, where the governance asks for that check.
    fn topic_access(
        &self,
        (permissions, subject): &(Permissions, String),
        topic: &str,
        partitions: &[String],
        writer: bool,
    ) -> Result<(), String> {
        let Some(rule) = self.rule.topic_rule(topic) else {
            return Ok(());
        };
        let checked = if writer {
            rule.enable_write_access_control
        } else {
            rule.enable_read_access_control
        };
        if !checked {
            return Ok(());
        }
        let Some(grant) = permissions.grant_for(subject) else {
            return Err(format!("no grant for {subject:?}"));
        };
        let parts: Vec<&str> = partitions.iter().map(String::as_str).collect();
        let action = if writer {
            Action::Publish
        } else {
            Action::Subscribe
        };
        match grant.check(self.domain_id, action, topic, &parts, (self.wall_clock)()) {
            Decision::Allow(_) => Ok(()),
            Decision::Deny(reason) => Err(format!(
                "{subject:?} may not {} topic {topic:?} in partitions {parts:?}: {reason}",
                if writer { "publish" } else { "subscribe to" }
            )),
        }
    }

    fn on_auth_request(&mut self, from: GuidPrefix, token: &DataHolder) {
        let accepted = match self.peers.get_mut(&from) {
            Some(p) => p.remote.receive_auth_request(token).is_ok(),
            None if self.early_auth_requests.len() < MAX_EARLY_AUTH_REQUESTS => {
                self.early_auth_requests.insert(from, token.clone());
                true
            }
            None => true,
        };
        if !accepted {
            self.rejected += 1;
        }
    }

    fn on_handshake(
        &mut self,
        now: Instant,
        from: GuidPrefix,
        m: &ParticipantGenericMessage,
        out: &mut SecurityOutput,
    ) {
        let Some(token) = m.message_data.first() else {
            self.rejected += 1;
            return;
        };
        let wall = (self.wall_clock)();
        let Some(peer) = self.peers.get_mut(&from) else {
            return;
        };
        let phase = std::mem::replace(&mut peer.phase, Phase::Failed);
        let (phase, next) = match (phase, token.class_id.as_str()) {
            (Phase::WaitRequest, CLASS_ID_REQUEST) => match Handshake::begin_reply(
                &self.local,
                &peer.remote,
                token,
                &self.files.permissions,
                &self.pdata,
                &self.options,
                wall,
                self.rng.as_mut(),
            ) {
                Ok((hs, reply)) => (Phase::WaitFinal(Box::new(hs)), Next::Reply(reply)),
                Err(_) => (Phase::WaitRequest, Next::Reject),
            },
            // Our Reply was lost: the initiator asks again.
            (p @ Phase::WaitFinal(_), CLASS_ID_REQUEST) => (p, Next::Repeat),
            (Phase::WaitReply(mut hs), CLASS_ID_REPLY) => match hs.process(token, wall) {
                Ok(Step::SendFinal { message, secret }) => {
                    let identity = hs.peer().cloned();
                    (Phase::Done, Next::Final(message, secret, identity))
                }
                Ok(Step::Completed(_)) | Err(_) => (Phase::WaitReply(hs), Next::Reject),
            },
            // Our Final was lost: the replier repeats its Reply.
            (Phase::Done, CLASS_ID_REPLY) => (Phase::Done, Next::Repeat),
            (Phase::WaitFinal(mut hs), CLASS_ID_FINAL) => match hs.process(token, wall) {
                Ok(Step::Completed(secret)) => {
                    let identity = hs.peer().cloned();
                    (Phase::Done, Next::Completed(secret, identity))
                }
                Ok(Step::SendFinal { .. }) | Err(_) => (Phase::WaitFinal(hs), Next::Reject),
            },
            // Repeats of a completed exchange (Cyclone resends its Final).
            (Phase::Done, CLASS_ID_FINAL | CLASS_ID_REQUEST) => (Phase::Done, Next::Nothing),
            (p, _) => (p, Next::Reject),
        };
        peer.phase = phase;
        let last = peer.last.clone();
        match next {
            Next::Nothing => {}
            Next::Reject => self.rejected += 1,
            Next::Repeat => {
                if let Some(last) = last {
                    Self::send(out, from, &last);
                }
            }
            Next::Reply(reply) => {
                let reply = self.message(from, GMCLASSID_AUTH_HANDSHAKE, m.message_identity, reply);
                self.send_until_answered(now, from, reply, out);
            }
            Next::Final(token, secret, identity) => {
                let fin = self.message(from, GMCLASSID_AUTH_HANDSHAKE, m.message_identity, token);
                Self::send(out, from, &fin);
                if let Some(p) = self.peers.get_mut(&from) {
                    p.last = Some(fin);
                }
                self.completed(from, secret, identity);
                self.report(from, out);
            }
            Next::Completed(secret, identity) => {
                self.completed(from, secret, identity);
                self.report(from, out);
            }
        }
    }

    fn report(&mut self, peer: GuidPrefix, out: &mut SecurityOutput) {
        let Some(p) = self.peers.get(&peer) else {
            return;
        };
        let admission = p.admission.clone();
        if admission == Admission::Admitted {
            self.start_key_exchange(peer, out);
        }
        out.admissions.push((peer, admission));
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

    fn discovered(
        &mut self,
        now: Instant,
        remote: &ParticipantData,
        out: &mut SecurityOutput,
    ) -> Admission {
        let prefix = remote.guid.prefix;
        if let Some(p) = self.peers.get(&prefix) {
            return p.admission.clone();
        }
        let Some(encoded) = &remote.identity_token else {
            return if self.rule.allow_unauthenticated_participants {
                Admission::Admitted
            } else {
                Admission::Refused(
                    "it announced no identity and the governance does not allow \
                     unauthenticated participants"
                        .into(),
                )
            };
        };
        let endianness = if encoded.little_endian {
            Endianness::Little
        } else {
            Endianness::Big
        };
        let token = match DataHolder::from_parameter_value(&encoded.cdr, endianness) {
            Ok(t) => t,
            Err(e) => return Admission::Refused(format!("its identity token: {e}")),
        };
        let early = self.early_auth_requests.remove(&prefix);
        let remote_identity = match self.local.validate_remote_identity(
            &token,
            prefix.0,
            early.as_ref(),
            self.rng.as_mut(),
        ) {
            Ok(r) => r,
            Err(e) => return Admission::Refused(format!("its identity: {e}")),
        };
        let role = remote_identity.role();
        let auth_request = remote_identity.auth_request().cloned();
        self.peers.insert(
            prefix,
            Peer {
                remote: remote_identity,
                phase: Phase::WaitRequest,
                last: None,
                resend: None,
                admission: Admission::Pending,
                secret: None,
                identity: None,
                permissions: None,
                kx: None,
                participant: None,
                replay_window: remote.vendor_id == halyard_core::wire::VendorId::HALYARD,
            },
        );
        if let Some(req) = auth_request {
            let m = self.message(
                prefix,
                GMCLASSID_AUTH_REQUEST,
                MessageIdentity::default(),
                req,
            );
            Self::send(out, prefix, &m);
        }
        if role == HandshakeRole::Initiator {
            let perm = self.files.permissions.clone();
            let Some(peer) = self.peers.get(&prefix) else {
                return Admission::Pending;
            };
            match Handshake::begin_request(
                &self.local,
                &peer.remote,
                &perm,
                &self.pdata,
                &self.options,
                self.rng.as_mut(),
            ) {
                Ok((hs, request)) => {
                    if let Some(p) = self.peers.get_mut(&prefix) {
                        p.phase = Phase::WaitReply(Box::new(hs));
                    }
                    let m = self.message(
                        prefix,
                        GMCLASSID_AUTH_HANDSHAKE,
                        MessageIdentity::default(),
                        request,
                    );
                    self.send_until_answered(now, prefix, m, out);
                }
                Err(e) => {
                    if let Some(p) = self.peers.get_mut(&prefix) {
                        p.phase = Phase::Failed;
                        p.admission = Admission::Refused(format!("handshake: {e}"));
                        return p.admission.clone();
                    }
                }
            }
        }
        Admission::Pending
    }

    fn stateless_message(
        &mut self,
        now: Instant,
        source: GuidPrefix,
        payload: &[u8],
        out: &mut SecurityOutput,
    ) {
        let Ok(m) = ParticipantGenericMessage::from_payload(payload) else {
            self.rejected += 1;
            return;
        };
        let me = Guid::new(self.guid_prefix(), EntityId::PARTICIPANT).to_bytes();
        if m.destination_participant_guid != me && m.destination_participant_guid != [0; 16] {
            return;
        }
        match (m.message_class_id.as_str(), m.message_data.first()) {
            (GMCLASSID_AUTH_REQUEST, Some(t)) if t.class_id == CLASS_ID_AUTH_REQUEST => {
                self.on_auth_request(source, t)
            }
            (GMCLASSID_AUTH_HANDSHAKE, Some(_)) => self.on_handshake(now, source, &m, out),
            _ => self.rejected += 1,
        }
    }

    fn handle_timeout(&mut self, now: Instant, out: &mut SecurityOutput) {
        let mut due = Vec::new();
        for (prefix, p) in self.peers.iter_mut() {
            if let Some(r) = p.resend.as_mut().filter(|r| r.at <= now) {
                r.delay = (r.delay * 2).min(MAX_RESEND);
                r.at = now + r.delay;
                due.push((*prefix, r.message.clone()));
            }
        }
        for (prefix, mut m) in due {
            self.next_sn += 1;
            m.message_identity.sequence_number = self.next_sn;
            Self::send(out, prefix, &m);
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.peers
            .values()
            .filter_map(|p| p.resend.as_ref().map(|r| r.at))
            .min()
    }

    fn forget(&mut self, remote: GuidPrefix) {
        self.peers.remove(&remote);
        self.early_auth_requests.remove(&remote);
    }

    fn check_local_endpoint(
        &self,
        topic: &str,
        partitions: &[String],
        writer: bool,
    ) -> Result<(), String> {
        self.topic_access(&self.own, topic, partitions, writer)
    }

    fn volatile_message(
        &mut self,
        _now: Instant,
        source: GuidPrefix,
        payload: &[u8],
        _out: &mut SecurityOutput,
    ) {
        let Ok(m) = ParticipantGenericMessage::from_payload(payload) else {
            self.rejected += 1;
            return;
        };
        let me = Guid::new(self.guid_prefix(), EntityId::PARTICIPANT).to_bytes();
        if m.destination_participant_guid != me {
            return;
        }
        if m.message_class_id != GMCLASSID_PARTICIPANT_CRYPTO_TOKENS {
            // Endpoint crypto tokens: needed only for metadata and data protection, which
            // this plugin does not provide yet (such governances are refused).
            return;
        }
        let Some(token) = m.message_data.first() else {
            self.rejected += 1;
            return;
        };
        let props: Vec<(&str, &[u8])> = token
            .binary_properties
            .iter()
            .map(|b| (b.name.as_str(), b.value.as_slice()))
            .collect();
        let decoded =
            keymat_from_token_parts(&token.class_id, &props).and_then(ReceiverCrypto::new);
        match (decoded, self.peers.get_mut(&source)) {
            (Ok(mut rx), Some(p)) => {
                rx.set_replay_protection(p.replay_window);
                p.participant = Some(rx)
            }
            _ => self.rejected += 1,
        }
    }

    fn protect_submessage(
        &mut self,
        local: EntityId,
        destination: Option<GuidPrefix>,
        plain: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<bool, Rejected> {
        if !is_volatile(local) {
            return Ok(false);
        }
        let kx = destination
            .and_then(|d| self.peers.get_mut(&d))
            .and_then(|p| p.kx.as_mut())
            .ok_or(Rejected(
                "volatile secure message for a participant without key-exchange keys",
            ))?;
        kx.0.encode_submessage(plain, &[], out)
            .map(|_| true)
            .map_err(|_| Rejected("volatile secure submessage could not be encoded"))
    }

    fn unprotect_submessage(
        &mut self,
        source: GuidPrefix,
        bytes: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<usize, Rejected> {
        let header = peek_submessage_header(bytes).map_err(|_| Rejected("malformed SEC_PREFIX"))?;
        let p = self
            .peers
            .get_mut(&source)
            .ok_or(Rejected("protected submessage from an unknown participant"))?;
        let rx = if header.transformation_key_id == 0 {
            p.kx.as_mut().map(|kx| &mut kx.1)
        } else {
            p.participant.as_mut()
        };
        let rx = rx.ok_or(Rejected("no key for this protected submessage"))?;
        rx.decode_submessage(bytes, out).map_err(why_rejected)
    }

    fn protect_message(
        &mut self,
        _destination: Option<GuidPrefix>,
        message: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<bool, Rejected> {
        let Some((_, sender)) = self.participant_keys.as_mut() else {
            return Ok(false);
        };
        let (protected, plain) = rtps_kinds(message);
        if !protected || plain {
            return Ok(false);
        }
        let (Some(header), Some(body)) = (message.get(..20), message.get(20..)) else {
            return Ok(false);
        };
        let mut h = [0u8; 20];
        h.copy_from_slice(header);
        sender
            .encode_rtps_message(&h, body, &[], out)
            .map(|_| true)
            .map_err(|_| Rejected("message could not be protected"))
    }

    fn unprotect_message(
        &mut self,
        source: GuidPrefix,
        message: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), Rejected> {
        let rx = self
            .peers
            .get_mut(&source)
            .and_then(|p| p.participant.as_mut())
            .ok_or(Rejected(
                "protected message from a participant whose keys we lack",
            ))?;
        rx.decode_rtps_message(message, out).map_err(why_rejected)
    }

    fn accepts_plain_message(&self, source: GuidPrefix, message: &[u8]) -> bool {
        // Under rtps protection a peer that has our keys must protect what rtps protection
        // covers (user and secure builtin endpoints); the other builtin endpoints always
        // come plain. Before its keys arrive a peer cannot protect.
        let keyed = self
            .peers
            .get(&source)
            .is_some_and(|p| p.participant.is_some());
        self.rule.rtps_protection_kind == ProtectionKind::None || !keyed || !rtps_kinds(message).0
    }

    fn accepts_plain_submessage(
        &self,
        _source: GuidPrefix,
        remote: EntityId,
        local: EntityId,
    ) -> bool {
        !(is_volatile(remote) || is_volatile(local))
    }

    fn check_remote_endpoint(
        &self,
        source: GuidPrefix,
        topic: &str,
        partitions: &[String],
        writer: bool,
    ) -> Result<(), String> {
        match self.peers.get(&source).and_then(|p| p.permissions.as_ref()) {
            Some(granted) => self.topic_access(granted, topic, partitions, writer),
            // Admitted without authentication (allow_unauthenticated_participants): only
            // topics without access control.
            None => match self.rule.topic_rule(topic) {
                Some(r)
                    if (writer && r.enable_write_access_control)
                        || (!writer && r.enable_read_access_control) =>
                {
                    Err(
                        "an unauthenticated participant may not use an access-controlled topic"
                            .into(),
                    )
                }
                _ => Ok(()),
            },
        }
    }
}
