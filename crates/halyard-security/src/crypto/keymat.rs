//! KeyMaterial_AES_GCM_GMAC (DDS Security 1.1 §9.5.2.1.1) and its CDR form in a CryptoToken.
//!
//! Layout (big-endian CDR, no encapsulation header; Cyclone `crypto_key_exchange.c`
//! `serialize_master_key_material`): `kind[4] | u32 n | salt[n] | sender_key_id[4] | u32 n |
//! master_sender_key[n] | receiver_specific_key_id[4] | u32 m | master_receiver_specific_key[m]`
//! with `m = 0` when the receiver-specific key id is 0. Decoding is bounded (no sequence longer
//! than 32 octets is accepted, nothing is allocated from a length on the wire) and validates
//! like Cyclone's `check_crypto_keymaterial`.

use openssl::hash::{hash, MessageDigest};
use openssl::pkey::PKey;
use openssl::sign::Signer;
use zeroize::{Zeroize, ZeroizeOnDrop, Zeroizing};

use super::{malformed, CryptoError, TransformKind};
use crate::random::SecureRandom;

/// Class id of a CryptoToken of this plugin (Cyclone `crypto_tokens.h` `DDS_CRYPTOTOKEN_CLASS_ID`).
pub const CRYPTO_TOKEN_CLASS_ID: &str = "DDS:Crypto:AES_GCM_GMAC";
/// Name of the CryptoToken's one binary property, holding [`keymat_to_bytes`] (propagated).
pub const CRYPTO_TOKEN_KEYMAT_PROPERTY: &str = "dds.cryp.keymat";

/// Longest key or salt of any kind (AES-256).
const MAX_KEY_LEN: usize = 32;

/// Master key material of one sender (and, optionally, one receiver-specific key), as carried
/// in a CryptoToken. Zeroized when dropped.
#[derive(Clone, PartialEq, Eq, Zeroize, ZeroizeOnDrop)]
pub struct KeyMaterial {
    /// Which transform the keys are for.
    #[zeroize(skip)]
    pub transformation_kind: TransformKind,
    /// Master salt (16 or 32 octets, empty for NONE).
    pub master_salt: Vec<u8>,
    /// Sender key id, the `transformation_key_id` of every CryptoHeader made with this key.
    pub sender_key_id: u32,
    /// Master sender key (16 or 32 octets, empty for NONE).
    pub master_sender_key: Vec<u8>,
    /// Receiver-specific key id, 0 when there is none.
    pub receiver_specific_key_id: u32,
    /// Master receiver-specific key (empty when the id is 0).
    pub master_receiver_specific_key: Vec<u8>,
}

impl std::fmt::Debug for KeyMaterial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyMaterial")
            .field("transformation_kind", &self.transformation_kind)
            .field("sender_key_id", &self.sender_key_id)
            .field("receiver_specific_key_id", &self.receiver_specific_key_id)
            .finish_non_exhaustive()
    }
}

impl KeyMaterial {
    /// Fresh master salt and sender key for `kind` with sender key id `key_id`, no
    /// receiver-specific key (Cyclone `crypto_key_factory.c` `generate_key`). For NONE the keys
    /// are empty.
    pub fn generate(kind: TransformKind, key_id: u32, rng: &mut dyn SecureRandom) -> Self {
        let n = kind.key_len();
        let mut master_salt = vec![0u8; n];
        let mut master_sender_key = vec![0u8; n];
        rng.fill(&mut master_salt);
        rng.fill(&mut master_sender_key);
        KeyMaterial {
            transformation_kind: kind,
            master_salt,
            sender_key_id: key_id,
            master_sender_key,
            receiver_specific_key_id: 0,
            master_receiver_specific_key: Vec::new(),
        }
    }

    /// A copy with a fresh receiver-specific key of id `key_id` (non-zero), for the one
    /// receiver this copy is sent to (Cyclone: the local P2P / writer-to-reader key material
    /// for origin authentication).
    pub fn with_receiver_specific_key(&self, key_id: u32, rng: &mut dyn SecureRandom) -> Self {
        let mut k = self.clone();
        k.receiver_specific_key_id = key_id;
        k.master_receiver_specific_key = vec![0u8; self.transformation_kind.key_len()];
        rng.fill(&mut k.master_receiver_specific_key);
        k
    }

    /// The key material of the key-exchange channel (ParticipantVolatileMessageSecure),
    /// derived from the handshake (DDS Security 1.1 §9.5.2.1.2, Tables 67 and 68; Cyclone
    /// `crypto_key_factory.c` `calculate_kx_keys`): AES256_GCM, key ids 0,
    /// `master_salt = HMAC-SHA256(SHA256(challenge1 | "keyexchange salt" | challenge2),
    /// shared_secret)`, `master_sender_key = HMAC-SHA256(SHA256(challenge2 | "key exchange key"
    /// | challenge1), shared_secret)`.
    pub fn derive_key_exchange(
        challenge1: &[u8],
        challenge2: &[u8],
        shared_secret: &[u8],
    ) -> Result<Self, CryptoError> {
        let salt = kx_hmac(challenge1, b"keyexchange salt", challenge2, shared_secret)?;
        let key = kx_hmac(challenge2, b"key exchange key", challenge1, shared_secret)?;
        Ok(KeyMaterial {
            transformation_kind: TransformKind::Aes256Gcm,
            master_salt: salt.to_vec(),
            sender_key_id: 0,
            master_sender_key: key.to_vec(),
            receiver_specific_key_id: 0,
            master_receiver_specific_key: Vec::new(),
        })
    }

    /// Checks the lengths and contents as Cyclone's `check_crypto_keymaterial` does.
    pub fn validate(&self) -> Result<(), CryptoError> {
        let n = self.transformation_kind.key_len();
        if !self.transformation_kind.has_keys() {
            return Ok(());
        }
        let usable = |k: &[u8]| k.len() == n && k.iter().any(|&b| b != 0);
        if !usable(&self.master_salt) {
            return Err(malformed("master_salt has the wrong length or is all zero"));
        }
        if !usable(&self.master_sender_key) {
            return Err(malformed(
                "master_sender_key has the wrong length or is all zero",
            ));
        }
        if self.receiver_specific_key_id != 0 && !usable(&self.master_receiver_specific_key) {
            return Err(malformed(
                "master_receiver_specific_key has the wrong length or is all zero",
            ));
        }
        Ok(())
    }
}

fn kx_hmac(
    first: &[u8],
    cookie: &[u8],
    last: &[u8],
    secret: &[u8],
) -> Result<Zeroizing<[u8; 32]>, CryptoError> {
    let mut input = Zeroizing::new(Vec::with_capacity(first.len() + cookie.len() + last.len()));
    input.extend_from_slice(first);
    input.extend_from_slice(cookie);
    input.extend_from_slice(last);
    let digest = hash(MessageDigest::sha256(), &input)?;
    let pkey = PKey::hmac(&digest)?;
    let mut signer = Signer::new(MessageDigest::sha256(), &pkey)?;
    signer.update(secret)?;
    let mut out = Zeroizing::new([0u8; 32]);
    let n = signer.sign(&mut out[..])?;
    if n != 32 {
        return Err(malformed("HMAC-SHA256 did not give 32 octets"));
    }
    Ok(out)
}

/// The CDR (big-endian) bytes of `k`, the value of the CryptoToken's `dds.cryp.keymat`.
pub fn keymat_to_bytes(k: &KeyMaterial) -> Vec<u8> {
    let mut out = Vec::with_capacity(24 + 3 * MAX_KEY_LEN);
    out.extend_from_slice(&k.transformation_kind.to_wire());
    put_seq(&mut out, &k.master_salt);
    out.extend_from_slice(&k.sender_key_id.to_be_bytes());
    put_seq(&mut out, &k.master_sender_key);
    out.extend_from_slice(&k.receiver_specific_key_id.to_be_bytes());
    if k.receiver_specific_key_id != 0 {
        put_seq(&mut out, &k.master_receiver_specific_key);
    } else {
        put_seq(&mut out, &[]);
    }
    out
}

fn put_seq(out: &mut Vec<u8>, s: &[u8]) {
    // Keys are at most 32 octets; the length always fits.
    out.extend_from_slice(&(s.len() as u32).to_be_bytes());
    out.extend_from_slice(s);
    while !out.len().is_multiple_of(4) {
        out.push(0);
    }
}

/// Decodes and validates a `dds.cryp.keymat` value. Bounded, never panics; trailing octets
/// after the structure are ignored, as Cyclone does.
pub fn keymat_from_bytes(b: &[u8]) -> Result<KeyMaterial, CryptoError> {
    let mut r = Reader { b, pos: 0 };
    let kind_raw = r.u32()?;
    let kind = TransformKind::from_u32(kind_raw)
        .ok_or(malformed("unknown transformation_kind in key material"))?;
    let master_salt = r.seq()?;
    let sender_key_id = r.u32()?;
    let master_sender_key = r.seq()?;
    let receiver_specific_key_id = r.u32()?;
    let mut master_receiver_specific_key = r.seq()?;
    if receiver_specific_key_id == 0 {
        master_receiver_specific_key.zeroize();
        master_receiver_specific_key.clear();
    }
    let k = KeyMaterial {
        transformation_kind: kind,
        master_salt,
        sender_key_id,
        master_sender_key,
        receiver_specific_key_id,
        master_receiver_specific_key,
    };
    k.validate()?;
    Ok(k)
}

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn u32(&mut self) -> Result<u32, CryptoError> {
        let end = self
            .pos
            .checked_add(4)
            .ok_or(malformed("key material overflow"))?;
        let s = self
            .b
            .get(self.pos..end)
            .ok_or(malformed("key material truncated"))?;
        self.pos = end;
        Ok(u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
    }

    fn seq(&mut self) -> Result<Vec<u8>, CryptoError> {
        let n = self.u32()? as usize;
        if n > MAX_KEY_LEN {
            return Err(malformed("key material sequence longer than 32 octets"));
        }
        let end = self.pos + n;
        let s = self
            .b
            .get(self.pos..end)
            .ok_or(malformed("key material sequence truncated"))?;
        let v = s.to_vec();
        // CDR pads to the next u32; the padding may be missing at the very end (as Cyclone
        // tolerates), the next read checks its own bounds.
        self.pos = end.div_ceil(4) * 4;
        Ok(v)
    }
}

/// The pieces of a CryptoToken carrying `k`: (class id, binary property name, value). The
/// property is propagated; the token has no plain properties.
pub fn keymat_token_parts(k: &KeyMaterial) -> (&'static str, &'static str, Vec<u8>) {
    (
        CRYPTO_TOKEN_CLASS_ID,
        CRYPTO_TOKEN_KEYMAT_PROPERTY,
        keymat_to_bytes(k),
    )
}

/// Reads a CryptoToken's pieces as Cyclone's `check_crypto_tokens` accepts them: the class id
/// must be [`CRYPTO_TOKEN_CLASS_ID`] and the binary properties exactly one, named
/// [`CRYPTO_TOKEN_KEYMAT_PROPERTY`], non-empty.
pub fn keymat_from_token_parts(
    class_id: &str,
    binary_properties: &[(&str, &[u8])],
) -> Result<KeyMaterial, CryptoError> {
    if class_id != CRYPTO_TOKEN_CLASS_ID {
        return Err(malformed(
            "CryptoToken class id is not DDS:Crypto:AES_GCM_GMAC",
        ));
    }
    match binary_properties {
        [(name, value)] if *name == CRYPTO_TOKEN_KEYMAT_PROPERTY && !value.is_empty() => {
            keymat_from_bytes(value)
        }
        _ => Err(malformed(
            "CryptoToken must hold exactly one non-empty binary property dds.cryp.keymat",
        )),
    }
}
