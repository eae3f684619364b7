//! The builtin cryptographic plugin "DDS:Crypto:AES-GCM-GMAC" (DDS Security 1.1 §9.5),
//! byte-compatible with Cyclone DDS 0.10's plugin. Sans-I/O: the protocol core hands in byte
//! slices and gets byte vectors back; nothing here touches a socket or the clock.
//!
//! # Wire facts (established from Cyclone DDS 0.10.2, `src/security/...`)
//!
//! Paths below are relative to `src/security/builtin_plugins/cryptographic/src/` unless they
//! start with `src/`. Fast DDS (`src/cpp/security/cryptography/AESGCMGMAC_Transform.cpp`) was
//! read as a second opinion; its differences are noted.
//!
//! * **Transformation kinds** (`src/security/core/include/dds/security/core/dds_security_types.h`):
//!   NONE=0, AES128_GMAC=1, AES128_GCM=2, AES256_GMAC=3, AES256_GCM=4, carried as four octets
//!   read as a big-endian u32 (`crypto_utils.h` `CRYPTO_TRANSFORM_KIND`), so on the wire
//!   `00 00 00 k`. Key ids are four octets read big-endian (`CRYPTO_TRANSFORM_ID`).
//! * **KeyMaterial_AES_GCM_GMAC in a CryptoToken** (`crypto_key_exchange.c`
//!   `serialize_master_key_material`, `src/security/core/src/dds_security_serialize.c`
//!   `DDS_Security_Deserialize_KeyMaterial_AES_GCM_GMAC`): CDR **big-endian**, no
//!   encapsulation header: `kind[4] | u32 salt_len | salt | sender_key_id[4] | u32 key_len |
//!   master_sender_key | receiver_specific_key_id[4] | u32 len | master_receiver_specific_key`,
//!   the last length 0 when the receiver-specific key id is 0. Key and salt lengths are 16
//!   (AES-128 kinds) or 32 (AES-256 kinds) and must not be all zero (`check_crypto_keymaterial`).
//!   Token: class id `DDS:Crypto:AES_GCM_GMAC`, exactly one binary property `dds.cryp.keymat`
//!   (propagate = true), no plain properties (`src/security/builtin_plugins/include/crypto_tokens.h`,
//!   `check_crypto_tokens`). Trailing bytes after the structure are ignored by Cyclone.
//! * **Session keys** (`crypto_utils.c` `crypto_calculate_key_impl`):
//!   `HMAC-SHA256(key = master_key[..key_len], data = prefix | master_salt[..key_len] |
//!   session_id[4])` truncated to `key_len` (16 or 32), prefix `"SessionKey"` with the master
//!   sender key, `"SessionReceiverKey"` with the master receiver-specific key (and the *same*
//!   master salt). `session_id` enters as the four octets that go on the wire (Cyclone writes
//!   the u32 big-endian in both places; Fast DDS copies host bytes into both, which agrees).
//! * **IV** = `session_id[4] | init_vector_suffix[8]` (12 octets), exactly as in the
//!   CryptoHeader. Cyclone starts the suffix at a random u64 and increments it before every
//!   transform, writing it big-endian (`set_crypto_prefix`); Fast DDS draws it at random.
//! * **Session renewal** (`crypto_objects.c` `crypto_session_key_material_update`): a new
//!   session (id + 1, new key) when `block_counter + len / 16 >= max_blocks_per_session`.
//!   Cyclone's default `max_blocks_per_session` is `INT64_MAX` and it never advances the block
//!   counter, so in practice it keeps one session per key material (it starts at a random id).
//!   Fast DDS defaults to 32 *messages* per session and increments the id by one.
//! * **GCM**: AES-GCM with the session key and IV, no additional authenticated data; the tag
//!   is the 16-octet common MAC. **GMAC**: AES-GCM with no plaintext and the protected bytes as
//!   AAD (`crypto_cipher.c`: `EVP_EncryptUpdate` with a NULL output).
//! * **Receiver-specific MAC** (`crypto_transform.c` `add_specific_mac`, `check_reader_specific_mac`):
//!   GMAC under the receiver-specific session key, the same IV, AAD = the 16-octet common MAC.
//! * **CryptoHeader** (20 octets): `kind[4] | key_id[4] | session_id[4] | iv_suffix[8]`.
//!   **CryptoFooter**: `common_mac[16] | u32 BE count | count × (key_id[4] | mac[16])`.
//!   The CryptoHeader/Footer contents are big-endian whatever the submessage E flag says.
//! * **Submessage headers** written by Cyclone: `id | flags | u16 octetsToNextHeader` with only
//!   the E flag set according to the host (little-endian x86: flags `0x01`, length LE). The
//!   reader honours E for the length only; lengths must be multiples of 4 (`read_submsg_header`).
//! * **Serialized payload** (`encode_serialized_payload`): `CryptoHeader | (GCM: u32 BE n |
//!   ciphertext[n]) or (GMAC: plain payload) | common_mac[16] | u32 BE 0`; no submessage
//!   headers, never receiver-specific MACs (the decoder rejects a non-zero count).
//! * **Submessage** (`encode_submmessage_encrypt`): `SEC_PREFIX(0x31, len 20) CryptoHeader |
//!   (GCM: SEC_BODY(0x30, len 4+n) u32 BE n ciphertext[n]) or (GMAC: the plain submessage) |
//!   SEC_POSTFIX(0x32, len 20+20k) CryptoFooter`. The protected bytes are the whole plain
//!   submessage, header included.
//! * **RTPS message** (`encode_rtps_message_encrypt`): `RTPS header (20, in clear) |
//!   SRTPS_PREFIX(0x33, len 20) CryptoHeader | (GCM: SEC_BODY ...) or (GMAC: in clear) |
//!   SRTPS_POSTFIX(0x34) CryptoFooter`. The protected bytes are an INFO_SRC submessage
//!   (`0x0c | E | u16 20 | 0u32 | version[2] | vendor[2] | guid_prefix[12]`, copied from the RTPS
//!   header) followed by every submessage of the plain message. The decoded message Cyclone
//!   hands back is `RTPS header | INFO_SRC | submessages`. Fast DDS inserts no INFO_SRC.
//! * **Which kind and keys** (`src/security/core/src/dds_security_utils.c`
//!   `DDS_Security_protectionkind2transformationkind`, `crypto_key_factory.c`): SIGN and
//!   SIGN_WITH_ORIGIN_AUTHENTICATION give AES256_GMAC, ENCRYPT(_WITH_ORIGIN_AUTHENTICATION)
//!   AES256_GCM, the AES128 kinds only when the property `dds.sec.crypto.keysize` is "128".
//!   Key ids come from one counter starting at 1. Receiver-specific keys exist only with
//!   origin authentication: the key material sent to one remote copies the local salt, sender
//!   key and id and adds a fresh receiver-specific key with its own id. The key-exchange
//!   channel uses [`KeyMaterial::derive_key_exchange`] (AES256_GCM, key id 0).
//! * **Replay**: Cyclone does not check replays. We do, per remote key material, for
//!   submessages and messages (a 64-wide window over the IV suffix within a session, plus the
//!   previous session), but not for serialized payloads: Cyclone sends a sample's encoded
//!   payload unchanged in every retransmission. Fast DDS's random IV suffixes defeat a window;
//!   turn replay protection off for such peers ([`ReceiverCrypto::set_replay_protection`]).

mod keymat;
mod receiver;
mod sender;
mod session;
mod wire;

#[cfg(test)]
mod tests;

pub use keymat::{
    keymat_from_bytes, keymat_from_token_parts, keymat_to_bytes, keymat_token_parts, KeyMaterial,
    CRYPTO_TOKEN_CLASS_ID, CRYPTO_TOKEN_KEYMAT_PROPERTY,
};
pub use receiver::ReceiverCrypto;
pub use sender::{SenderCrypto, DEFAULT_MAX_BLOCKS_PER_SESSION, RTPS_HEADER_LEN};
pub use session::{
    receiver_specific_session_key, session_key, CipherPass, ReplayWindow, REPLAY_WINDOW,
};
pub use wire::{
    peek_message_header, peek_payload_header, peek_submessage_header, CryptoFooter, CryptoHeader,
    ReceiverSpecificMac, CRYPTO_HEADER_LEN, MAC_LEN, SMID_INFO_SRC, SMID_SEC_BODY,
    SMID_SEC_POSTFIX, SMID_SEC_PREFIX, SMID_SRTPS_POSTFIX, SMID_SRTPS_PREFIX,
};

use std::fmt;

/// CryptoTransformKind (DDS Security 1.1 §9.5.2.1.1, Table 65): what a key material protects
/// with. On the wire it is four octets holding a big-endian u32.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TransformKind {
    /// No protection (no keys).
    None,
    /// Authentication only: AES-128 GMAC.
    Aes128Gmac,
    /// Authenticated encryption: AES-128 GCM.
    Aes128Gcm,
    /// Authentication only: AES-256 GMAC.
    Aes256Gmac,
    /// Authenticated encryption: AES-256 GCM.
    Aes256Gcm,
}

impl TransformKind {
    /// The four kinds that carry keys, for tests and iteration.
    pub const KEYED: [TransformKind; 4] = [
        TransformKind::Aes128Gmac,
        TransformKind::Aes128Gcm,
        TransformKind::Aes256Gmac,
        TransformKind::Aes256Gcm,
    ];

    /// The kind's number (`CRYPTO_TRANSFORMATION_KIND_*`).
    pub fn to_u32(self) -> u32 {
        match self {
            TransformKind::None => 0,
            TransformKind::Aes128Gmac => 1,
            TransformKind::Aes128Gcm => 2,
            TransformKind::Aes256Gmac => 3,
            TransformKind::Aes256Gcm => 4,
        }
    }

    /// The kind for a number, if it is one of the five.
    pub fn from_u32(v: u32) -> Option<Self> {
        Some(match v {
            0 => TransformKind::None,
            1 => TransformKind::Aes128Gmac,
            2 => TransformKind::Aes128Gcm,
            3 => TransformKind::Aes256Gmac,
            4 => TransformKind::Aes256Gcm,
            _ => return None,
        })
    }

    /// The four wire octets (`00 00 00 k`).
    pub fn to_wire(self) -> [u8; 4] {
        self.to_u32().to_be_bytes()
    }

    /// Reads the four wire octets.
    pub fn from_wire(b: [u8; 4]) -> Option<Self> {
        Self::from_u32(u32::from_be_bytes(b))
    }

    /// Length in octets of the master salt, master keys and session keys: 16, 32, or 0 for NONE.
    pub fn key_len(self) -> usize {
        match self {
            TransformKind::None => 0,
            TransformKind::Aes128Gmac | TransformKind::Aes128Gcm => 16,
            TransformKind::Aes256Gmac | TransformKind::Aes256Gcm => 32,
        }
    }

    /// Whether the kind encrypts (GCM) rather than only authenticates (GMAC).
    pub fn encrypts(self) -> bool {
        matches!(self, TransformKind::Aes128Gcm | TransformKind::Aes256Gcm)
    }

    /// Whether the kind has keys (every kind but NONE).
    pub fn has_keys(self) -> bool {
        self != TransformKind::None
    }
}

impl fmt::Display for TransformKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TransformKind::None => "NONE",
            TransformKind::Aes128Gmac => "AES128_GMAC",
            TransformKind::Aes128Gcm => "AES128_GCM",
            TransformKind::Aes256Gmac => "AES256_GMAC",
            TransformKind::Aes256Gcm => "AES256_GCM",
        })
    }
}

/// Why a cryptographic transform or a key material decode failed. The receiver counts and
/// drops; nothing here is fatal to the participant.
#[derive(Debug)]
#[non_exhaustive]
pub enum CryptoError {
    /// The input does not have the expected layout.
    Malformed {
        /// What was wrong.
        what: &'static str,
    },
    /// A MAC did not verify: the bytes were changed in transit or the key is not the sender's.
    TamperedOrWrongKey,
    /// The (session id, IV suffix) was seen before, or is too old to tell.
    Replayed,
    /// The CryptoHeader names a key id this receiver does not hold.
    UnknownKeyId {
        /// The key id on the wire.
        key_id: u32,
    },
    /// The receiver holds a receiver-specific key but the footer has no MAC for it.
    MissingReceiverSpecificMac {
        /// The receiver-specific key id looked for.
        key_id: u32,
    },
    /// The CryptoHeader's transformation kind is not the key material's.
    KindMismatch {
        /// The key material's kind.
        expected: TransformKind,
        /// The kind number on the wire.
        found: u32,
    },
    /// The operation needs keys but the key material's kind is NONE.
    NoKeys,
    /// The input is too long for the wire format (a u16 submessage length) or for OpenSSL.
    TooLarge {
        /// What was too long.
        what: &'static str,
    },
    /// OpenSSL failed internally.
    OpenSsl(openssl::error::ErrorStack),
    /// The AES-GCM primitive (AWS-LC) refused or failed.
    Cipher {
        /// What failed.
        what: &'static str,
    },
}

impl fmt::Display for CryptoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CryptoError::Malformed { what } => write!(f, "malformed secure data: {what}"),
            CryptoError::TamperedOrWrongKey => {
                f.write_str("MAC verification failed: data tampered with or wrong key")
            }
            CryptoError::Replayed => {
                f.write_str("replayed or too old (session id, IV suffix) rejected")
            }
            CryptoError::UnknownKeyId { key_id } => write!(f, "unknown crypto key id {key_id:#x}"),
            CryptoError::MissingReceiverSpecificMac { key_id } => write!(
                f,
                "no receiver-specific MAC for our key id {key_id:#x} in the CryptoFooter"
            ),
            CryptoError::KindMismatch { expected, found } => write!(
                f,
                "transformation kind {found} on the wire, key material is {expected}"
            ),
            CryptoError::NoKeys => f.write_str("key material of kind NONE cannot protect data"),
            CryptoError::TooLarge { what } => write!(f, "too large: {what}"),
            CryptoError::OpenSsl(e) => write!(f, "OpenSSL failure: {e}"),
            CryptoError::Cipher { what } => write!(f, "AES-GCM failure: {what}"),
        }
    }
}

impl std::error::Error for CryptoError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CryptoError::OpenSsl(e) => Some(e),
            _ => None,
        }
    }
}

impl From<openssl::error::ErrorStack> for CryptoError {
    fn from(e: openssl::error::ErrorStack) -> Self {
        CryptoError::OpenSsl(e)
    }
}

/// Shorthand for a [`CryptoError::Malformed`].
pub(crate) fn malformed(what: &'static str) -> CryptoError {
    CryptoError::Malformed { what }
}
