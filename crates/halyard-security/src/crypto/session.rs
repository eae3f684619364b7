//! Session keys, the AES-GCM/GMAC primitive keyed once per session key, and the replay
//! window.
//!
//! Session key (Cyclone `crypto_utils.c` `crypto_calculate_key_impl`, DDS Security 1.1
//! §9.5.3.3.1): `HMAC-SHA256(master_key, "SessionKey" | master_salt | session_id)` truncated to
//! the kind's key length; the receiver-specific session key uses `"SessionReceiverKey"` and the
//! master receiver-specific key with the same salt.

use aws_lc_rs::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_128_GCM, AES_256_GCM};
use openssl::hash::MessageDigest;
use openssl::pkey::PKey;
use openssl::sign::Signer;
use zeroize::Zeroizing;

use super::wire::MAC_LEN;
use super::{malformed, CryptoError, KeyMaterial, TransformKind};

/// A session key: the first `len` octets are the key; `aead` is its cipher, keyed once.
pub(crate) struct SessionKey {
    pub(crate) bytes: Zeroizing<[u8; 32]>,
    pub(crate) len: usize,
    pub(crate) aead: Aead,
}

impl SessionKey {
    pub(crate) fn key(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

fn derive(
    prefix: &[u8],
    kind: TransformKind,
    master_key: &[u8],
    master_salt: &[u8],
    session_id: [u8; 4],
) -> Result<SessionKey, CryptoError> {
    let n = kind.key_len();
    if n == 0 {
        return Err(CryptoError::NoKeys);
    }
    let (Some(key), Some(salt)) = (master_key.get(..n), master_salt.get(..n)) else {
        return Err(malformed(
            "master key or salt shorter than the kind's key length",
        ));
    };
    let pkey = PKey::hmac(key)?;
    let mut signer = Signer::new(MessageDigest::sha256(), &pkey)?;
    signer.update(prefix)?;
    signer.update(salt)?;
    signer.update(&session_id)?;
    let mut md = Zeroizing::new([0u8; 32]);
    signer.sign(&mut md[..])?;
    // HMAC-SHA256 is 32 octets; the 128-bit kinds keep the first 16.
    let mut bytes = Zeroizing::new([0u8; 32]);
    bytes[..n].copy_from_slice(&md[..n]);
    let aead = Aead::new(&bytes[..n])?;
    Ok(SessionKey {
        bytes,
        len: n,
        aead,
    })
}

/// The session key of `keymat`'s sender key for `session_id` (the four CryptoHeader octets).
/// Returns the key (16 or 32 octets).
pub fn session_key(
    keymat: &KeyMaterial,
    session_id: [u8; 4],
) -> Result<Zeroizing<Vec<u8>>, CryptoError> {
    let k = sender_session_key(keymat, session_id)?;
    Ok(Zeroizing::new(k.key().to_vec()))
}

/// The receiver-specific session key of `keymat` for `session_id`.
pub fn receiver_specific_session_key(
    keymat: &KeyMaterial,
    session_id: [u8; 4],
) -> Result<Zeroizing<Vec<u8>>, CryptoError> {
    let k = receiver_session_key(keymat, session_id)?;
    Ok(Zeroizing::new(k.key().to_vec()))
}

pub(crate) fn sender_session_key(
    keymat: &KeyMaterial,
    session_id: [u8; 4],
) -> Result<SessionKey, CryptoError> {
    derive(
        b"SessionKey",
        keymat.transformation_kind,
        &keymat.master_sender_key,
        &keymat.master_salt,
        session_id,
    )
}

pub(crate) fn receiver_session_key(
    keymat: &KeyMaterial,
    session_id: [u8; 4],
) -> Result<SessionKey, CryptoError> {
    derive(
        b"SessionReceiverKey",
        keymat.transformation_kind,
        &keymat.master_receiver_specific_key,
        &keymat.master_salt,
        session_id,
    )
}

/// The most plaintext [`Aead::seal_into`] takes after the main part (padding).
pub(crate) const MAX_SEAL_EXTRA: usize = 16;

/// AES-GCM / GMAC under one session key, with the key schedule made once (aws-lc-rs's
/// `LessSafeKey`, which takes the IV per call): a transform costs the cipher pass alone.
///
/// aws-lc-rs (AWS-LC) is used for this primitive only, because it is measurably faster here
/// than OpenSSL 3.0's EVP AES-GCM (AVX-512 VAES/VPCLMULQDQ code: `halyard security
/// cipher-bench` measures both); HMAC, X.509, S/MIME and DH stay with `openssl`. The key
/// schedule lives in AWS-LC's memory, which AWS-LC cleanses when it frees it.
pub(crate) struct Aead {
    key: LessSafeKey,
}

impl Aead {
    /// The AES-128 or AES-256 GCM key for `key` (16 or 32 octets).
    pub(crate) fn new(key: &[u8]) -> Result<Self, CryptoError> {
        let alg = if key.len() == 32 {
            &AES_256_GCM
        } else {
            &AES_128_GCM
        };
        let key = UnboundKey::new(alg, key).map_err(|_| CryptoError::Cipher {
            what: "AES-GCM key of the wrong length",
        })?;
        Ok(Aead {
            key: LessSafeKey::new(key),
        })
    }

    /// Encrypts `data` in place and returns the tag (no additional authenticated data).
    pub(crate) fn seal_in_place(
        &self,
        iv: &[u8; 12],
        data: &mut [u8],
    ) -> Result<[u8; MAC_LEN], CryptoError> {
        check_len(data.len())?;
        let tag = self
            .key
            .seal_in_place_separate_tag(Nonce::assume_unique_for_key(*iv), Aad::empty(), data)
            .map_err(|_| CryptoError::Cipher {
                what: "AES-GCM encryption failed",
            })?;
        let mut out = [0u8; MAC_LEN];
        out.copy_from_slice(tag.as_ref());
        Ok(out)
    }

    /// Encrypts `plain` followed by `extra` (at most [`MAX_SEAL_EXTRA`] octets: padding)
    /// into `out` (exactly as long as both) and returns the tag: the copy and the cipher in
    /// one pass over the data.
    pub(crate) fn seal_into(
        &self,
        iv: &[u8; 12],
        plain: &[u8],
        extra: &[u8],
        out: &mut [u8],
    ) -> Result<[u8; MAC_LEN], CryptoError> {
        check_len(plain.len() + extra.len())?;
        let failed = CryptoError::Cipher {
            what: "AES-GCM encryption failed",
        };
        if extra.len() > MAX_SEAL_EXTRA || out.len() != plain.len() + extra.len() {
            return Err(failed);
        }
        let (main, rest) = out.split_at_mut(plain.len());
        let mut extra_and_tag = [0u8; MAX_SEAL_EXTRA + MAC_LEN];
        let extra_and_tag = &mut extra_and_tag[..extra.len() + MAC_LEN];
        self.key
            .seal_out_of_place_scatter(
                Nonce::assume_unique_for_key(*iv),
                Aad::empty(),
                plain,
                main,
                extra,
                extra_and_tag,
            )
            .map_err(|_| failed)?;
        rest.copy_from_slice(&extra_and_tag[..extra.len()]);
        let mut tag = [0u8; MAC_LEN];
        tag.copy_from_slice(&extra_and_tag[extra.len()..]);
        Ok(tag)
    }

    /// The GMAC tag of `aad` (AES-GCM with it as additional authenticated data, no plaintext).
    pub(crate) fn mac(&self, iv: &[u8; 12], aad: &[u8]) -> Result<[u8; MAC_LEN], CryptoError> {
        check_len(aad.len())?;
        let tag = self
            .key
            .seal_in_place_separate_tag(Nonce::assume_unique_for_key(*iv), Aad::from(aad), &mut [])
            .map_err(|_| CryptoError::Cipher {
                what: "GMAC computation failed",
            })?;
        let mut out = [0u8; MAC_LEN];
        out.copy_from_slice(tag.as_ref());
        Ok(out)
    }

    /// Decrypts `ct` into `out` (exactly as long), verifying `tag`. On a bad tag `out` holds
    /// garbage and the caller must discard it.
    pub(crate) fn open_into(
        &self,
        iv: &[u8; 12],
        ct: &[u8],
        tag: &[u8; MAC_LEN],
        out: &mut [u8],
    ) -> Result<(), CryptoError> {
        check_len(ct.len())?;
        if out.len() != ct.len() {
            return Err(malformed("GCM output buffer of the wrong length"));
        }
        self.key
            .open_separate_gather(
                Nonce::assume_unique_for_key(*iv),
                Aad::empty(),
                ct,
                tag,
                out,
            )
            .map_err(|_| CryptoError::TamperedOrWrongKey)
    }

    /// Verifies the GMAC `tag` of `aad` (AWS-LC compares in constant time).
    pub(crate) fn verify_mac(
        &self,
        iv: &[u8; 12],
        aad: &[u8],
        tag: &[u8; MAC_LEN],
    ) -> Result<(), CryptoError> {
        check_len(aad.len())?;
        self.key
            .open_in_place_separate_tag(
                Nonce::assume_unique_for_key(*iv),
                Aad::from(aad),
                tag,
                &mut [],
            )
            .map(|_| ())
            .map_err(|_| CryptoError::TamperedOrWrongKey)
    }
}

/// One pass of the primitive every transform of a kind runs (GCM encryption in place, or a
/// GMAC over the data), under a fixed benchmark key, with the IV advancing per pass as a
/// sender's does: what `halyard security cipher-bench` times to give the cipher floor of the
/// security benchmark. Not for protecting anything.
pub struct CipherPass {
    aead: Aead,
    encrypts: bool,
    iv_suffix: u64,
}

impl std::fmt::Debug for CipherPass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CipherPass")
            .field("encrypts", &self.encrypts)
            .finish_non_exhaustive()
    }
}

impl CipherPass {
    /// The primitive of `kind` under a fixed key; `NoKeys` for NONE.
    pub fn new(kind: TransformKind) -> Result<Self, CryptoError> {
        let n = kind.key_len();
        if n == 0 {
            return Err(CryptoError::NoKeys);
        }
        let key: Vec<u8> = (1..=n as u8).collect();
        Ok(CipherPass {
            aead: Aead::new(&key)?,
            encrypts: kind.encrypts(),
            iv_suffix: 0,
        })
    }

    /// One pass over `data` (encrypted in place under GCM, only read under GMAC); the tag.
    pub fn run(&mut self, data: &mut [u8]) -> Result<[u8; MAC_LEN], CryptoError> {
        self.iv_suffix = self.iv_suffix.wrapping_add(1);
        let mut iv = [0u8; 12];
        iv[4..].copy_from_slice(&self.iv_suffix.to_be_bytes());
        if self.encrypts {
            self.aead.seal_in_place(&iv, data)
        } else {
            self.aead.mac(&iv, data)
        }
    }
}

/// The longest input a transform takes (AWS-LC and the wire's lengths count in 32 bits).
pub(crate) const MAX_CIPHER_LEN: usize = i32::MAX as usize;

fn check_len(n: usize) -> Result<(), CryptoError> {
    if n > MAX_CIPHER_LEN {
        Err(CryptoError::TooLarge {
            what: "data longer than a transform takes (2^31 - 1 octets)",
        })
    } else {
        Ok(())
    }
}

/// How many IV suffixes behind the highest one seen are still told apart.
pub const REPLAY_WINDOW: u64 = 64;

/// The IV suffixes seen in one session: the highest, and a bitmap of the [`REPLAY_WINDOW`]
/// below it. Cyclone increments the suffix by one per transform, so a window catches every
/// replay while tolerating reordering and the gaps of messages sent to others.
#[derive(Debug, Clone, Default)]
pub struct ReplayWindow {
    highest: Option<u64>,
    seen: u64,
}

impl ReplayWindow {
    /// Whether `suffix` would be accepted (not seen, not too old). Does not record it.
    pub fn check(&self, suffix: u64) -> Result<(), CryptoError> {
        let Some(h) = self.highest else {
            return Ok(());
        };
        if suffix > h {
            return Ok(());
        }
        let back = h - suffix;
        if back >= REPLAY_WINDOW || self.seen & (1u64 << back) != 0 {
            return Err(CryptoError::Replayed);
        }
        Ok(())
    }

    /// Records `suffix` as seen (call after the MAC verified and [`Self::check`] passed).
    pub fn record(&mut self, suffix: u64) {
        match self.highest {
            None => {
                self.highest = Some(suffix);
                self.seen = 1;
            }
            Some(h) if suffix > h => {
                let shift = suffix - h;
                self.seen = if shift >= REPLAY_WINDOW {
                    0
                } else {
                    self.seen << shift
                };
                self.seen |= 1;
                self.highest = Some(suffix);
            }
            Some(h) => {
                let back = h - suffix;
                if back < REPLAY_WINDOW {
                    self.seen |= 1u64 << back;
                }
            }
        }
    }
}
