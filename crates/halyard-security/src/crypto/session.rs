//! Session keys, the AES-GCM/GMAC primitive with a reusable OpenSSL context, and the replay
//! window.
//!
//! Session key (Cyclone `crypto_utils.c` `crypto_calculate_key_impl`, DDS Security 1.1
//! §9.5.3.3.1): `HMAC-SHA256(master_key, "SessionKey" | master_salt | session_id)` truncated to
//! the kind's key length; the receiver-specific session key uses `"SessionReceiverKey"` and the
//! master receiver-specific key with the same salt.

use openssl::cipher::{Cipher, CipherRef};
use openssl::cipher_ctx::CipherCtx;
use openssl::hash::MessageDigest;
use openssl::pkey::PKey;
use openssl::sign::Signer;
use zeroize::Zeroizing;

use super::wire::MAC_LEN;
use super::{malformed, CryptoError, KeyMaterial, TransformKind};

/// A session key: the first `len` octets are the key.
pub(crate) struct SessionKey {
    pub(crate) bytes: Zeroizing<[u8; 32]>,
    pub(crate) len: usize,
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
    Ok(SessionKey { bytes, len: n })
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

/// AES-GCM / GMAC over one reusable OpenSSL cipher context.
pub(crate) struct Gcm {
    ctx: CipherCtx,
}

/// OpenSSL takes lengths as `int`.
pub(crate) const MAX_OPENSSL_LEN: usize = i32::MAX as usize;

fn cipher_for(key: &[u8]) -> &'static CipherRef {
    if key.len() == 32 {
        Cipher::aes_256_gcm()
    } else {
        Cipher::aes_128_gcm()
    }
}

impl Gcm {
    pub(crate) fn new() -> Result<Self, CryptoError> {
        Ok(Gcm {
            ctx: CipherCtx::new()?,
        })
    }

    /// Encrypts the concatenation of `parts` into `out` (exactly as long) and returns the tag.
    pub(crate) fn seal(
        &mut self,
        key: &[u8],
        iv: &[u8; 12],
        parts: &[&[u8]],
        out: &mut [u8],
    ) -> Result<[u8; MAC_LEN], CryptoError> {
        self.ctx
            .encrypt_init(Some(cipher_for(key)), Some(key), Some(iv))?;
        let mut at = 0;
        for p in parts {
            check_len(p.len())?;
            let dst = out
                .get_mut(at..at + p.len())
                .ok_or(malformed("GCM output buffer too short"))?;
            at += self.ctx.cipher_update(p, Some(dst))?;
        }
        self.ctx.cipher_final(&mut [])?;
        let mut tag = [0u8; MAC_LEN];
        self.ctx.tag(&mut tag)?;
        Ok(tag)
    }

    /// The GMAC tag of the concatenation of `parts` (AES-GCM with them as AAD, no plaintext).
    pub(crate) fn mac(
        &mut self,
        key: &[u8],
        iv: &[u8; 12],
        parts: &[&[u8]],
    ) -> Result<[u8; MAC_LEN], CryptoError> {
        self.ctx
            .encrypt_init(Some(cipher_for(key)), Some(key), Some(iv))?;
        for p in parts {
            check_len(p.len())?;
            self.ctx.cipher_update(p, None)?;
        }
        self.ctx.cipher_final(&mut [])?;
        let mut tag = [0u8; MAC_LEN];
        self.ctx.tag(&mut tag)?;
        Ok(tag)
    }

    /// Decrypts `ct` into `out` (exactly as long), verifying `tag`. On a bad tag `out` holds
    /// unauthenticated plaintext and the caller must discard it.
    pub(crate) fn open(
        &mut self,
        key: &[u8],
        iv: &[u8; 12],
        ct: &[u8],
        tag: &[u8; MAC_LEN],
        out: &mut [u8],
    ) -> Result<(), CryptoError> {
        check_len(ct.len())?;
        if out.len() != ct.len() {
            return Err(malformed("GCM output buffer of the wrong length"));
        }
        self.ctx
            .decrypt_init(Some(cipher_for(key)), Some(key), Some(iv))?;
        self.ctx.set_tag(tag)?;
        self.ctx.cipher_update(ct, Some(out))?;
        self.ctx
            .cipher_final(&mut [])
            .map_err(|_| CryptoError::TamperedOrWrongKey)?;
        Ok(())
    }

    /// Verifies the GMAC `tag` of the concatenation of `parts`, in constant time.
    pub(crate) fn verify_mac(
        &mut self,
        key: &[u8],
        iv: &[u8; 12],
        parts: &[&[u8]],
        tag: &[u8; MAC_LEN],
    ) -> Result<(), CryptoError> {
        let expect = self.mac(key, iv, parts)?;
        if openssl::memcmp::eq(&expect, tag) {
            Ok(())
        } else {
            Err(CryptoError::TamperedOrWrongKey)
        }
    }
}

fn check_len(n: usize) -> Result<(), CryptoError> {
    if n > MAX_OPENSSL_LEN {
        Err(CryptoError::TooLarge {
            what: "data longer than OpenSSL accepts (2^31 - 1 octets)",
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
