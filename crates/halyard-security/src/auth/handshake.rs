//! The PKI-DH handshake (Request, Reply, Final) as a state machine.
//!
//! # Facts established (Cyclone DDS 0.10.2 `authentication/src/authentication.c`, spec §9.3.2.5)
//!
//! * Request `DDS:Auth:PKI-DH:1.0+Req`, no string properties, binary properties in this order:
//!   `c.id` (the identity certificate, PEM, no NUL), `c.perm` (the signed permissions document
//!   followed by one NUL; just a NUL without permissions), `c.pdata`, `c.dsign_algo`
//!   (`ECDSA-SHA256` or `RSASSA-PSS-SHA256` + NUL), `c.kagree_algo` (name + NUL), [`hash_c1`],
//!   `dh1`, `challenge1` (`begin_handshake_request`). The NUL comes from
//!   `DDS_Security_BinaryProperty_set_by_string` (strlen + 1); on receipt the algorithm names
//!   match with or without it (`str_octseq_equal`).
//! * Reply `+Reply`: `c.id`, `c.perm`, `c.pdata`, `c.dsign_algo`, `c.kagree_algo` (the
//!   Request's algorithm), `dh2`, `challenge1` (the initiator's), `challenge2` (ours),
//!   [`dh1`, `hash_c2`, `hash_c1`], `signature` (`begin_handshake_reply`).
//! * Final `+Final`: `challenge1`, `challenge2`, [`dh1`, `dh2`, `hash_c2`, `hash_c1`],
//!   `signature` (`process_handshake`). The bracketed properties are sent only when Cyclone's
//!   `IncludeOptionalFields` is set (default off: `HandshakeOptions::include_optional`); when
//!   received they must match.
//! * `hash_c1` / `hash_c2` = SHA-256 of the serialization of the sequence of the five binary
//!   properties `c.id, c.perm, c.pdata, c.dsign_algo, c.kagree_algo` of the Request / Reply,
//!   as sent (`get_hash_binary_property_seq`). That serialization (dds_security_serialize.c)
//!   is big-endian CDR: u32 count, then per property the name as a CDR string (u32 length
//!   including the NUL, bytes, NUL, padding to 4) and the value as u32 length + bytes.
//! * `signature` is over the same serialization of six properties (u32 count 6 first):
//!   Reply: `hash_c2, challenge2, dh2, challenge1, dh1, hash_c1`; Final: `hash_c1, challenge1,
//!   dh1, challenge2, dh2, hash_c2` (the hashes under their names `hash_c1` / `hash_c2`).
//!   `EVP_DigestSign` with SHA-256 (auth_utils.c `create_validate_asymmetrical_signature`):
//!   ECDSA gives the DER signature; RSA uses PSS with OpenSSL's default salt length, which on
//!   OpenSSL 3.0 (Debian bookworm) is the maximum for signing and auto-detected on
//!   verification; MGF1 uses SHA-256. We sign the same way and verify with an auto salt
//!   length. The algorithm follows the signer's certificate key, not `c.dsign_algo` (which
//!   must only be a known name).
//! * Checks on receipt (`validate_handshake_token_impl`): class id prefix; for Request/Reply
//!   the certificate verifies against our identity CA and is within its validity;
//!   `c.perm` may be empty; `c.pdata` must hold a participant GUID whose first 6 bytes equal
//!   the adjusted prefix derived from the certificate's subject (`validate_pdata`);
//!   `challenge1`/`challenge2` exactly 32 bytes; an echoed `dh1`/`dh2` equal to the key in use;
//!   the peer's challenge equal to its announced `future_challenge` (else it is taken from the
//!   message); our challenge echoed unchanged; the signature verifies.
//! * `c.pdata` (ddsi_security_exchange.c `auth_get_serialized_participant_data`): the
//!   participant's SPDP data as a big-endian parameter list **without** encapsulation header,
//!   ending with PID_SENTINEL; Cyclone's parser (dds_security_serialize.c
//!   `DDS_Security_Deserialize_ParticipantBuiltinTopicData`) needs the sentinel and a 16-byte
//!   PID_PARTICIPANT_GUID. We also require the GUID prefix to be the peer's.
//! * Shared secret: see [`super::kagree`]; `challenge1` is always the initiator's and
//!   `challenge2` the replier's (`process_handshake`).

use super::error::AuthError;
use super::identity::{
    adjusted_guid_prefix, subject_oneline, validate_peer_cert, CertAlgo, HandshakeRole,
    LocalIdentity, RemoteIdentity, CHALLENGE_LEN,
};
use super::kagree::{parse_public, EphemeralKey, KeyAgreement};
use super::{CLASS_ID_FINAL, CLASS_ID_REPLY, CLASS_ID_REQUEST};
use crate::random::SecureRandom;
use crate::token::{pid, DataHolder, TokenError};
use halyard_cdr::{CdrWriter, DataRepresentation, Endianness};
use openssl::hash::MessageDigest;
use openssl::pkey::{Id, PKey, PKeyRef, Private, Public};
use openssl::rsa::Padding;
use openssl::sha::sha256;
use openssl::sign::{RsaPssSaltlen, Signer, Verifier};
use openssl::x509::X509;
use zeroize::{Zeroize, ZeroizeOnDrop};

type Challenge = [u8; CHALLENGE_LEN];

/// Choices a participant makes for the handshakes it takes part in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HandshakeOptions {
    /// Send the optional `hash_c1`, `hash_c2`, `dh1`, `dh2` echoes (Cyclone's
    /// `IncludeOptionalFields`; off by default).
    pub include_optional: bool,
    /// The key agreement an initiator proposes (a replier follows the Request).
    pub key_agreement: KeyAgreement,
}

impl Default for HandshakeOptions {
    /// Cyclone's defaults: no optional fields, ECDH on P-256.
    fn default() -> Self {
        HandshakeOptions {
            include_optional: false,
            key_agreement: KeyAgreement::EcdhP256,
        }
    }
}

/// The outcome of a completed handshake (`SharedSecretHandle`, §8.3.2.11): both challenges
/// and SHA-256 of the key agreement. Zeroized on drop.
#[derive(Clone, PartialEq, Eq, Zeroize, ZeroizeOnDrop)]
pub struct SharedSecret {
    /// The initiator's challenge.
    pub challenge1: [u8; CHALLENGE_LEN],
    /// The replier's challenge.
    pub challenge2: [u8; CHALLENGE_LEN],
    /// SHA-256 of the raw Diffie-Hellman output.
    pub shared_secret: [u8; 32],
}

impl std::fmt::Debug for SharedSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedSecret { .. }")
    }
}

/// What the handshake established about the peer (for access control).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerIdentity {
    /// The peer's GUID prefix.
    pub guid_prefix: [u8; 12],
    /// Its identity certificate (PEM, as received in `c.id`).
    pub certificate_pem: Vec<u8>,
    /// Its certificate subject in Cyclone's form (`/C=NL/O=Example/CN=bob`).
    pub subject_name: String,
    /// Its certificate's algorithm.
    pub algo: CertAlgo,
    /// Its signed permissions document (`c.perm` without the trailing NUL; may be empty).
    pub permissions: Vec<u8>,
    /// Its serialized participant data (`c.pdata`).
    pub participant_data: Vec<u8>,
}

/// What [`Handshake::process`] asks of the caller.
#[derive(Debug)]
pub enum Step {
    /// (Initiator.) Send this Final message; the handshake is complete on this side.
    SendFinal {
        /// The `+Final` token.
        message: DataHolder,
        /// The shared secret.
        secret: SharedSecret,
    },
    /// (Replier.) The handshake is complete.
    Completed(SharedSecret),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    AwaitReply,
    AwaitFinal,
    Done,
}

/// One handshake with one remote participant.
pub struct Handshake {
    role: HandshakeRole,
    state: State,
    include_optional: bool,
    kagree: KeyAgreement,
    local_challenge: Challenge,
    remote_challenge: Option<Challenge>,
    key: EphemeralKey,
    /// The initiator's public key as compared and signed over in the Final.
    dh1: Vec<u8>,
    /// The replier's public key (empty until known to the initiator).
    dh2: Vec<u8>,
    peer_key: Option<PKey<Public>>,
    hash_c1: [u8; 32],
    hash_c2: [u8; 32],
    signer: PKey<Private>,
    ca: X509,
    remote_prefix: [u8; 12],
    peer_cert: Option<X509>,
    peer: Option<PeerIdentity>,
    secret: Option<SharedSecret>,
}

impl std::fmt::Debug for Handshake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handshake")
            .field("role", &self.role)
            .field("state", &self.state)
            .field("kagree", &self.kagree)
            .field("remote_prefix", &self.remote_prefix)
            .finish_non_exhaustive()
    }
}

/// The credentials a Request or Reply carries, validated.
struct Credentials {
    cert: X509,
    cert_pem: Vec<u8>,
    algo: CertAlgo,
    kagree: KeyAgreement,
    hash: [u8; 32],
    permissions: Vec<u8>,
    pdata: Vec<u8>,
}

impl Credentials {
    fn into_peer(self, guid_prefix: [u8; 12]) -> (X509, PeerIdentity) {
        let permissions = match self.permissions.split_last() {
            Some((0, doc)) => doc.to_vec(),
            _ => self.permissions,
        };
        let peer = PeerIdentity {
            guid_prefix,
            subject_name: subject_oneline(self.cert.subject_name()),
            certificate_pem: self.cert_pem,
            algo: self.algo,
            permissions,
            participant_data: self.pdata,
        };
        (self.cert, peer)
    }
}

impl Handshake {
    /// A handshake in its first state with nothing learnt from the peer yet.
    fn start(
        role: HandshakeRole,
        local: &LocalIdentity,
        remote_prefix: [u8; 12],
        include_optional: bool,
        key: EphemeralKey,
        local_challenge: Challenge,
    ) -> Handshake {
        Handshake {
            role,
            state: match role {
                HandshakeRole::Initiator => State::AwaitReply,
                HandshakeRole::Replier => State::AwaitFinal,
            },
            include_optional,
            kagree: key.algorithm(),
            local_challenge,
            remote_challenge: None,
            key,
            dh1: Vec::new(),
            dh2: Vec::new(),
            peer_key: None,
            hash_c1: [0; 32],
            hash_c2: [0; 32],
            signer: local.key.clone(),
            ca: local.ca.clone(),
            remote_prefix,
            peer_cert: None,
            peer: None,
            secret: None,
        }
    }
}

/// The optional echoes, when they are to be sent (Cyclone's `IncludeOptionalFields`).
fn optional<'a, const N: usize>(
    include: bool,
    props: [(&'static str, &'a [u8]); N],
) -> impl Iterator<Item = (&'static str, &'a [u8])> {
    props.into_iter().filter(move |_| include)
}

impl Handshake {
    /// Starts a handshake as initiator (`begin_handshake_request`): the Request token to send.
    /// `permissions` is the signed permissions document (S/MIME text; a NUL is appended as
    /// Cyclone does), `participant_data` our `c.pdata` (see [`pdata_participant_guid`]).
    pub fn begin_request(
        local: &LocalIdentity,
        remote: &RemoteIdentity,
        permissions: &[u8],
        participant_data: &[u8],
        options: &HandshakeOptions,
        rng: &mut dyn SecureRandom,
    ) -> Result<(Handshake, DataHolder), AuthError> {
        let kagree = options.key_agreement;
        let key = EphemeralKey::generate(kagree, rng)?;
        let own = own_credentials(local, permissions, participant_data, kagree, true);
        let hash_c1 = hash_credentials(&own)?;
        let dh1 = key.public().to_vec();
        let hash_c1_opt = optional(options.include_optional, [("hash_c1", &hash_c1[..])]);
        let token = DataHolder::new(CLASS_ID_REQUEST)
            .with_binaries(own.iter().map(|(n, v)| (*n, v.as_slice())))
            .with_binaries(hash_c1_opt)
            .with_binaries([("dh1", &dh1[..]), ("challenge1", &remote.local_challenge)]);
        let hs = Handshake {
            remote_challenge: remote.remote_challenge,
            dh1,
            hash_c1,
            ..Handshake::start(
                HandshakeRole::Initiator,
                local,
                remote.guid_prefix(),
                options.include_optional,
                key,
                remote.local_challenge,
            )
        };
        Ok((hs, token))
    }

    /// Answers a Request as replier (`begin_handshake_reply`): validates it (the peer's
    /// certificate against our CA at `now_unix_secs`) and gives the Reply token to send.
    #[allow(clippy::too_many_arguments)]
    pub fn begin_reply(
        local: &LocalIdentity,
        remote: &RemoteIdentity,
        request: &DataHolder,
        permissions: &[u8],
        participant_data: &[u8],
        options: &HandshakeOptions,
        now_unix_secs: i64,
        rng: &mut dyn SecureRandom,
    ) -> Result<(Handshake, DataHolder), AuthError> {
        check_class(request, CLASS_ID_REQUEST)?;
        let creds = validate_credentials(request, &local.ca, now_unix_secs, remote.guid_prefix())?;
        let dh1_raw = required_nonempty(request, "dh1")?;
        let (peer_key, dh1, encoding) = parse_public(creds.kagree, dh1_raw, "dh1")?;
        let challenge1 = required_challenge(request, "challenge1")?;
        if remote.remote_challenge.is_some_and(|c| c != challenge1) {
            return Err(AuthError::ChallengeMismatch("challenge1"));
        }
        check_optional(
            request,
            "hash_c1",
            &creds.hash,
            AuthError::HashMismatch("hash_c1"),
        )?;

        let key = EphemeralKey::generate_encoded(creds.kagree, encoding, rng)?;
        let nul = request
            .binary_property("c.kagree_algo")
            .is_none_or(|v| v.last() == Some(&0));
        let own = own_credentials(local, permissions, participant_data, creds.kagree, nul);
        let hash_c2 = hash_credentials(&own)?;
        let hash_c1 = creds.hash;
        let dh2 = key.public().to_vec();
        let challenge2 = remote.local_challenge;
        let signature = sign(
            &local.key,
            &[
                ("hash_c2", &hash_c2),
                ("challenge2", &challenge2),
                ("dh2", &dh2),
                ("challenge1", &challenge1),
                ("dh1", dh1_raw),
                ("hash_c1", &hash_c1),
            ],
        )?;
        let optionals = [
            ("dh1", dh1_raw),
            ("hash_c2", &hash_c2[..]),
            ("hash_c1", &hash_c1[..]),
        ];
        // Fast DDS 2.9 sends the optional fields and, as initiator, requires hash_c2 in the
        // Reply: a Request that carries hash_c1 gets them back.
        let include_optional =
            options.include_optional || request.binary_property("hash_c1").is_some();
        let token = DataHolder::new(CLASS_ID_REPLY)
            .with_binaries(own.iter().map(|(n, v)| (*n, v.as_slice())))
            .with_binaries([
                ("dh2", &dh2[..]),
                ("challenge1", &challenge1),
                ("challenge2", &challenge2),
            ])
            .with_binaries(optional(include_optional, optionals))
            .with_binaries([("signature", &signature[..])]);
        let (cert, peer) = creds.into_peer(remote.guid_prefix());
        let hs = Handshake {
            remote_challenge: Some(challenge1),
            dh1,
            dh2,
            peer_key: Some(peer_key),
            hash_c1,
            hash_c2,
            peer_cert: Some(cert),
            peer: Some(peer),
            ..Handshake::start(
                HandshakeRole::Replier,
                local,
                remote.guid_prefix(),
                include_optional,
                key,
                challenge2,
            )
        };
        Ok((hs, token))
    }

    /// Processes the next message: the Reply (initiator) or the Final (replier). On an error
    /// the handshake is unchanged (a later, valid message can still complete it).
    pub fn process(&mut self, message: &DataHolder, now_unix_secs: i64) -> Result<Step, AuthError> {
        match self.state {
            State::AwaitReply => self.process_reply(message, now_unix_secs),
            State::AwaitFinal => self.process_final(message),
            State::Done => Err(AuthError::UnexpectedMessage(
                "the handshake is already complete",
            )),
        }
    }

    fn process_reply(&mut self, reply: &DataHolder, now_unix_secs: i64) -> Result<Step, AuthError> {
        check_class(reply, CLASS_ID_REPLY)?;
        let creds = validate_credentials(reply, &self.ca, now_unix_secs, self.remote_prefix)?;
        if creds.kagree != self.kagree {
            return Err(AuthError::BadProperty {
                name: "c.kagree_algo",
                why: "differs from the Request's key agreement",
            });
        }
        check_optional(reply, "dh1", &self.dh1, AuthError::DhMismatch("dh1"))?;
        let challenge1 = required_challenge(reply, "challenge1")?;
        let challenge2 = required_challenge(reply, "challenge2")?;
        let signature = required_nonempty(reply, "signature")?;
        let dh2 = required_nonempty(reply, "dh2")?;
        let (peer_key, _, _) = parse_public(self.kagree, dh2, "dh2")?;
        if self.remote_challenge.is_some_and(|c| c != challenge2) {
            return Err(AuthError::ChallengeMismatch("challenge2"));
        }
        check_optional(
            reply,
            "hash_c1",
            &self.hash_c1,
            AuthError::HashMismatch("hash_c1"),
        )?;
        check_optional(
            reply,
            "hash_c2",
            &creds.hash,
            AuthError::HashMismatch("hash_c2"),
        )?;
        if challenge1 != self.local_challenge {
            return Err(AuthError::ChallengeMismatch("challenge1"));
        }
        verify(
            &*creds.cert.public_key()?,
            &[
                ("hash_c2", &creds.hash),
                ("challenge2", &challenge2),
                ("dh2", dh2),
                ("challenge1", &challenge1),
                ("dh1", &self.dh1),
                ("hash_c1", &self.hash_c1),
            ],
            signature,
        )?;
        self.send_final(creds, challenge1, challenge2, dh2, peer_key)
    }

    /// The initiator's last step, once the Reply checked out: sign, agree, answer.
    fn send_final(
        &mut self,
        creds: Credentials,
        challenge1: Challenge,
        challenge2: Challenge,
        dh2: &[u8],
        peer_key: PKey<Public>,
    ) -> Result<Step, AuthError> {
        let hash_c2 = creds.hash;
        let signature = sign(
            &self.signer,
            &[
                ("hash_c1", &self.hash_c1),
                ("challenge1", &challenge1),
                ("dh1", &self.dh1),
                ("challenge2", &challenge2),
                ("dh2", dh2),
                ("hash_c2", &hash_c2),
            ],
        )?;
        let shared = self.key.agree(&peer_key)?;
        let optionals = [
            ("dh1", &self.dh1[..]),
            ("dh2", dh2),
            ("hash_c2", &hash_c2[..]),
            ("hash_c1", &self.hash_c1[..]),
        ];
        let message = DataHolder::new(CLASS_ID_FINAL)
            .with_binaries([("challenge1", &challenge1), ("challenge2", &challenge2)])
            .with_binaries(optional(self.include_optional, optionals))
            .with_binaries([("signature", &signature[..])]);
        let secret = SharedSecret {
            challenge1,
            challenge2,
            shared_secret: *shared,
        };
        let (cert, peer) = creds.into_peer(self.remote_prefix);
        self.remote_challenge = Some(challenge2);
        self.dh2 = dh2.to_vec();
        self.hash_c2 = hash_c2;
        self.peer_key = Some(peer_key);
        self.peer_cert = Some(cert);
        self.peer = Some(peer);
        self.secret = Some(secret.clone());
        self.state = State::Done;
        Ok(Step::SendFinal { message, secret })
    }

    fn process_final(&mut self, fin: &DataHolder) -> Result<Step, AuthError> {
        check_class(fin, CLASS_ID_FINAL)?;
        check_optional(fin, "dh1", &self.dh1, AuthError::DhMismatch("dh1"))?;
        let challenge1 = required_challenge(fin, "challenge1")?;
        let challenge2 = required_challenge(fin, "challenge2")?;
        let signature = required_nonempty(fin, "signature")?;
        check_optional(fin, "dh2", &self.dh2, AuthError::DhMismatch("dh2"))?;
        if self.remote_challenge != Some(challenge1) {
            return Err(AuthError::ChallengeMismatch("challenge1"));
        }
        check_optional(
            fin,
            "hash_c1",
            &self.hash_c1,
            AuthError::HashMismatch("hash_c1"),
        )?;
        check_optional(
            fin,
            "hash_c2",
            &self.hash_c2,
            AuthError::HashMismatch("hash_c2"),
        )?;
        if challenge2 != self.local_challenge {
            return Err(AuthError::ChallengeMismatch("challenge2"));
        }
        let (Some(cert), Some(peer_key)) = (&self.peer_cert, &self.peer_key) else {
            return Err(AuthError::UnexpectedMessage("no Request was accepted"));
        };
        verify(
            &*cert.public_key()?,
            &[
                ("hash_c1", &self.hash_c1),
                ("challenge1", &challenge1),
                ("dh1", &self.dh1),
                ("challenge2", &challenge2),
                ("dh2", &self.dh2),
                ("hash_c2", &self.hash_c2),
            ],
            signature,
        )?;
        let shared = self.key.agree(peer_key)?;
        let secret = SharedSecret {
            challenge1,
            challenge2,
            shared_secret: *shared,
        };
        self.secret = Some(secret.clone());
        self.state = State::Done;
        Ok(Step::Completed(secret))
    }

    /// Which side this handshake is.
    pub fn role(&self) -> HandshakeRole {
        self.role
    }

    /// The key agreement in use.
    pub fn key_agreement(&self) -> KeyAgreement {
        self.kagree
    }

    /// Whether the handshake has completed on this side.
    pub fn is_complete(&self) -> bool {
        self.state == State::Done
    }

    /// The shared secret, once complete.
    pub fn shared_secret(&self) -> Option<&SharedSecret> {
        self.secret.as_ref()
    }

    /// The peer's validated credentials, once complete (for access control).
    pub fn peer(&self) -> Option<&PeerIdentity> {
        self.peer.as_ref().filter(|_| self.state == State::Done)
    }
}

#[cfg(test)]
impl Handshake {
    /// (Known-answer tests.) An initiator state rebuilt from a Request another implementation
    /// sent, so that its Reply can be checked; the ephemeral key is a stand-in.
    pub(crate) fn resume_initiator(
        local: &LocalIdentity,
        remote_prefix: [u8; 12],
        own_prefix: [u8; 12],
        request: &DataHolder,
        now_unix_secs: i64,
    ) -> Result<Handshake, AuthError> {
        let creds = validate_credentials(request, &local.ca, now_unix_secs, own_prefix)?;
        let key = EphemeralKey::generate(creds.kagree, &mut crate::random::SeededRandom::new(0))?;
        Ok(Handshake {
            dh1: required(request, "dh1")?.to_vec(),
            hash_c1: creds.hash,
            ..Handshake::start(
                HandshakeRole::Initiator,
                local,
                remote_prefix,
                false,
                key,
                required_challenge(request, "challenge1")?,
            )
        })
    }

    /// (Known-answer tests.) A replier state rebuilt from a Request and a Reply another
    /// implementation exchanged, so that its Final can be checked.
    pub(crate) fn resume_replier(
        local: &LocalIdentity,
        initiator_prefix: [u8; 12],
        replier_prefix: [u8; 12],
        request: &DataHolder,
        reply: &DataHolder,
        now_unix_secs: i64,
    ) -> Result<Handshake, AuthError> {
        let req = validate_credentials(request, &local.ca, now_unix_secs, initiator_prefix)?;
        let rep = validate_credentials(reply, &local.ca, now_unix_secs, replier_prefix)?;
        let (peer_key, dh1, _) = parse_public(req.kagree, required(request, "dh1")?, "dh1")?;
        let key = EphemeralKey::generate(req.kagree, &mut crate::random::SeededRandom::new(0))?;
        let hash_c1 = req.hash;
        let (cert, peer) = req.into_peer(initiator_prefix);
        Ok(Handshake {
            remote_challenge: Some(required_challenge(request, "challenge1")?),
            dh1,
            dh2: required(reply, "dh2")?.to_vec(),
            peer_key: Some(peer_key),
            hash_c1,
            hash_c2: rep.hash,
            peer_cert: Some(cert),
            peer: Some(peer),
            ..Handshake::start(
                HandshakeRole::Replier,
                local,
                initiator_prefix,
                false,
                key,
                required_challenge(reply, "challenge2")?,
            )
        })
    }
}

/// Our five credential properties, as sent (and hashed).
/// Our `c.*` properties. `nul`: strings end with a NUL, as Cyclone DDS writes (and expects)
/// them; Fast DDS 2.9 writes them bare and, as initiator, compares `c.dsign_algo` with the
/// bare name, so a replier answers in the form the Request used.
fn own_credentials(
    local: &LocalIdentity,
    permissions: &[u8],
    participant_data: &[u8],
    kagree: KeyAgreement,
    nul: bool,
) -> [(&'static str, Vec<u8>); 5] {
    let with_nul = |b: &[u8]| {
        let mut v = Vec::with_capacity(b.len() + 1);
        v.extend_from_slice(b);
        if nul {
            v.push(0);
        }
        v
    };
    [
        ("c.id", local.cert_pem.clone()),
        ("c.perm", with_nul(permissions)),
        ("c.pdata", participant_data.to_vec()),
        (
            "c.dsign_algo",
            with_nul(local.algo().dsign_algo().as_bytes()),
        ),
        ("c.kagree_algo", with_nul(kagree.name().as_bytes())),
    ]
}

/// Cyclone's big-endian serialization of a binary property sequence (hash and signature input).
fn serialize_properties(props: &[(&str, &[u8])]) -> Result<Vec<u8>, AuthError> {
    let mut buf = Vec::with_capacity(props.iter().map(|(n, v)| n.len() + v.len() + 12).sum());
    let mut w = CdrWriter::with_endianness(&mut buf, DataRepresentation::Xcdr1, Endianness::Big);
    let cdr = |e| AuthError::Token(TokenError::Cdr(e));
    w.write_seq_len(props.len()).map_err(cdr)?;
    for (name, value) in props {
        w.write_string(name).map_err(cdr)?;
        w.write_octets(value).map_err(cdr)?;
    }
    Ok(buf)
}

fn hash_credentials(own: &[(&'static str, Vec<u8>); 5]) -> Result<[u8; 32], AuthError> {
    let props: Vec<(&str, &[u8])> = own.iter().map(|(n, v)| (*n, v.as_slice())).collect();
    Ok(sha256(&serialize_properties(&props)?))
}

fn check_class(token: &DataHolder, expected: &'static str) -> Result<(), AuthError> {
    if token.class_id.starts_with(expected) {
        Ok(())
    } else {
        Err(AuthError::WrongClassId {
            expected,
            found: token.class_id.clone(),
        })
    }
}

fn required<'a>(token: &'a DataHolder, name: &'static str) -> Result<&'a [u8], AuthError> {
    token
        .binary_property(name)
        .ok_or(AuthError::MissingProperty(name))
}

fn required_nonempty<'a>(token: &'a DataHolder, name: &'static str) -> Result<&'a [u8], AuthError> {
    match required(token, name)? {
        [] => Err(AuthError::BadProperty {
            name,
            why: "is empty",
        }),
        v => Ok(v),
    }
}

fn required_challenge(token: &DataHolder, name: &'static str) -> Result<Challenge, AuthError> {
    required(token, name)?
        .try_into()
        .map_err(|_| AuthError::BadProperty {
            name,
            why: "is not 32 bytes",
        })
}

/// An optional echo: absent is fine, present must equal `expected`.
fn check_optional(
    token: &DataHolder,
    name: &str,
    expected: &[u8],
    err: AuthError,
) -> Result<(), AuthError> {
    match token.binary_property(name) {
        Some(v) if v != expected => Err(err),
        _ => Ok(()),
    }
}

/// Validates the five credential properties of a Request or Reply.
fn validate_credentials(
    token: &DataHolder,
    ca: &X509,
    now_unix_secs: i64,
    remote_prefix: [u8; 12],
) -> Result<Credentials, AuthError> {
    let c_id = required_nonempty(token, "c.id")?;
    let (cert, algo) = validate_peer_cert(c_id, ca, now_unix_secs)?;
    let c_perm = required(token, "c.perm")?;
    let c_pdata = required(token, "c.pdata")?;
    let guid = pdata_participant_guid(c_pdata)?;
    let expected = adjusted_guid_prefix(&cert, &[0; 12])?;
    if guid[..6] != expected[..6] || guid[..12] != remote_prefix[..] {
        return Err(AuthError::ParticipantGuidMismatch);
    }
    let dsign = required_nonempty(token, "c.dsign_algo")?;
    let dsign = dsign.strip_suffix(&[0]).unwrap_or(dsign);
    if ![CertAlgo::Rsa2048, CertAlgo::EcPrime256v1]
        .iter()
        .any(|a| a.dsign_algo().as_bytes() == dsign)
    {
        return Err(AuthError::BadProperty {
            name: "c.dsign_algo",
            why: "names no supported signature algorithm",
        });
    }
    let c_kagree = required_nonempty(token, "c.kagree_algo")?;
    let kagree = KeyAgreement::from_wire(c_kagree).ok_or(AuthError::BadProperty {
        name: "c.kagree_algo",
        why: "names no supported key agreement",
    })?;
    let hash = sha256(&serialize_properties(&[
        ("c.id", c_id),
        ("c.perm", c_perm),
        ("c.pdata", c_pdata),
        ("c.dsign_algo", required(token, "c.dsign_algo")?),
        ("c.kagree_algo", c_kagree),
    ])?);
    Ok(Credentials {
        cert,
        cert_pem: c_id.to_vec(),
        algo,
        kagree,
        hash,
        permissions: c_perm.to_vec(),
        pdata: c_pdata.to_vec(),
    })
}

/// The participant GUID in a `c.pdata`: a big-endian parameter list without encapsulation
/// header, which must carry a 16-byte PID_PARTICIPANT_GUID and end with PID_SENTINEL (as
/// Cyclone requires).
pub fn pdata_participant_guid(pdata: &[u8]) -> Result<[u8; 16], AuthError> {
    let mut rest = pdata;
    let mut guid = None;
    // Each parameter takes at least 4 bytes, so this loop is bounded by the input length.
    loop {
        let [p0, p1, l0, l1, tail @ ..] = rest else {
            return Err(AuthError::BadParticipantData("no PID_SENTINEL"));
        };
        let (id, len) = (
            u16::from_be_bytes([*p0, *p1]),
            usize::from(u16::from_be_bytes([*l0, *l1])),
        );
        if id == pid::SENTINEL {
            return guid.ok_or(AuthError::BadParticipantData("no PID_PARTICIPANT_GUID"));
        }
        let Some((value, next)) = tail.split_at_checked(len) else {
            return Err(AuthError::BadParticipantData("parameter beyond the data"));
        };
        if id == pid::PARTICIPANT_GUID {
            guid = Some(<[u8; 16]>::try_from(value).map_err(|_| {
                AuthError::BadParticipantData("PID_PARTICIPANT_GUID is not 16 bytes")
            })?);
        }
        // Parameters are 4-aligned: skip padding a sloppy writer left out of `len`.
        let pad = (4 - len % 4) % 4;
        rest = next.get(pad..).unwrap_or_default();
    }
}

fn sign(key: &PKeyRef<Private>, props: &[(&str, &[u8]); 6]) -> Result<Vec<u8>, AuthError> {
    let data = serialize_properties(props)?;
    let mut signer = Signer::new(MessageDigest::sha256(), key)?;
    if key.id() == Id::RSA {
        signer.set_rsa_padding(Padding::PKCS1_PSS)?;
        signer.set_rsa_pss_saltlen(RsaPssSaltlen::MAXIMUM_LENGTH)?;
        signer.set_rsa_mgf1_md(MessageDigest::sha256())?;
    }
    signer.update(&data)?;
    Ok(signer.sign_to_vec()?)
}

fn verify(
    key: &PKeyRef<Public>,
    props: &[(&str, &[u8]); 6],
    signature: &[u8],
) -> Result<(), AuthError> {
    let data = serialize_properties(props)?;
    let mut verifier = Verifier::new(MessageDigest::sha256(), key)?;
    if key.id() == Id::RSA {
        verifier.set_rsa_padding(Padding::PKCS1_PSS)?;
        // -2 on a verifying context is RSA_PSS_SALTLEN_AUTO: any salt length.
        verifier.set_rsa_pss_saltlen(RsaPssSaltlen::custom(-2))?;
        verifier.set_rsa_mgf1_md(MessageDigest::sha256())?;
    }
    verifier.update(&data)?;
    // A malformed signature makes OpenSSL report an error rather than `false`: both refuse.
    match verifier.verify(signature) {
        Ok(true) => Ok(()),
        _ => Err(AuthError::BadSignature),
    }
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn property_serialization_is_cyclones_big_endian_layout() {
        let s = serialize_properties(&[("ab", &[1, 2, 3]), ("c", &[])]).unwrap();
        let expected: Vec<u8> = [
            &[0, 0, 0, 2][..],
            &[0, 0, 0, 3, b'a', b'b', 0, 0],
            &[0, 0, 0, 3, 1, 2, 3, 0],
            &[0, 0, 0, 2, b'c', 0, 0, 0],
            &[0, 0, 0, 0],
        ]
        .concat();
        assert_eq!(s, expected);
    }

    #[test]
    fn pdata_parsing() {
        let mut p = vec![0x00, 0x15, 0x00, 0x04, 2, 5, 0, 0]; // PROTOCOL_VERSION
        p.extend_from_slice(&[0x00, 0x50, 0x00, 0x10]);
        p.extend_from_slice(&[9; 16]);
        let without_sentinel = p.clone();
        p.extend_from_slice(&[0x00, 0x01, 0x00, 0x00]);
        assert_eq!(pdata_participant_guid(&p).unwrap(), [9; 16]);
        assert!(pdata_participant_guid(&without_sentinel).is_err());
        assert!(pdata_participant_guid(&[0x00, 0x01, 0x00, 0x00]).is_err());
        assert!(pdata_participant_guid(&[0x00, 0x50, 0xff, 0xff, 0x00]).is_err());
        let short = [&[0x00, 0x50, 0x00, 0x08][..], &[1; 8], &[0, 1, 0, 0]].concat();
        assert!(pdata_participant_guid(&short).is_err());
    }
}
