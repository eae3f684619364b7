//! The sending side: one [`SenderCrypto`] per local key material (a participant's, a writer's
//! or a reader's), producing the encoded payload, secure submessage or secure RTPS message of
//! Cyclone's `crypto_transform.c` into a caller-provided buffer.
//!
//! Per transform the session is renewed when needed (`max_blocks_per_session`), the IV suffix
//! is incremented, then the CryptoHeader, the body (ciphertext, or the plain bytes under GMAC)
//! and the CryptoFooter are appended. The body is made with one copy and one cipher pass: the
//! plain bytes are appended where they go and encrypted there in place (under GMAC, the MAC
//! reads them there); the session key's cipher is keyed once per session, not per transform. Receiver-specific MACs (origin authentication) are added
//! for every receiver key material given that has a receiver-specific key.

use zeroize::Zeroizing;

use super::session::{receiver_session_key, sender_session_key, SessionKey};
use super::wire::{
    patch_submsg_len, put_submsg_header, CryptoHeader, CRYPTO_HEADER_LEN, FLAG_E, FOOTER_BASE_LEN,
    MAC_LEN, RS_MAC_LEN, SMID_INFO_SRC, SMID_SEC_BODY, SMID_SEC_POSTFIX, SMID_SEC_PREFIX,
    SMID_SRTPS_POSTFIX, SMID_SRTPS_PREFIX, SUBMSG_HEADER_LEN,
};
use super::{CryptoError, KeyMaterial};
use crate::random::SecureRandom;

/// Cyclone's `max_blocks_per_session` (`crypto_objects.c`: `INT64_MAX`, "should be a config
/// parameter"): in effect one session per key material.
pub const DEFAULT_MAX_BLOCKS_PER_SESSION: u64 = i64::MAX as u64;

/// Length of the RTPS message header (RTPS 2.5 §9.4.4).
pub const RTPS_HEADER_LEN: usize = 20;

/// The AES block size the session counts in.
const BLOCK_LEN: u64 = 16;

/// Most receiver-specific session keys kept per session; the cache is cleared past it.
const RS_CACHE_MAX: usize = 256;

/// Length of the INFO_SRC submessage the message transform inserts.
const INFO_SRC_LEN: usize = 24;

struct RsCacheEntry {
    key_id: u32,
    master: Zeroizing<Vec<u8>>,
    key: SessionKey,
}

/// Encoder for one local key material: holds the current session (its key keyed once) and the
/// IV suffix counter. Not thread-safe by design; wrap it in a lock per key material.
pub struct SenderCrypto {
    keymat: KeyMaterial,
    session_id: u32,
    key: SessionKey,
    blocks: u64,
    max_blocks_per_session: u64,
    iv_suffix: u64,
    rs_cache: Vec<RsCacheEntry>,
}

impl std::fmt::Debug for SenderCrypto {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SenderCrypto")
            .field("keymat", &self.keymat)
            .field("session_id", &self.session_id)
            .field("blocks", &self.blocks)
            .finish_non_exhaustive()
    }
}

impl SenderCrypto {
    /// An encoder for `keymat` (which must have keys), starting at a random session id and IV
    /// suffix as Cyclone does.
    pub fn new(keymat: KeyMaterial, rng: &mut dyn SecureRandom) -> Result<Self, CryptoError> {
        if !keymat.transformation_kind.has_keys() {
            return Err(CryptoError::NoKeys);
        }
        keymat.validate()?;
        let mut r = [0u8; 12];
        rng.fill(&mut r);
        let session_id = u32::from_be_bytes([r[0], r[1], r[2], r[3]]);
        let iv_suffix = u64::from_be_bytes([r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11]]);
        let key = sender_session_key(&keymat, session_id.to_be_bytes())?;
        Ok(SenderCrypto {
            keymat,
            session_id,
            key,
            blocks: 0,
            max_blocks_per_session: DEFAULT_MAX_BLOCKS_PER_SESSION,
            iv_suffix,
            rs_cache: Vec::new(),
        })
    }

    /// An encoder with a fixed session id and IV suffix (the next transform uses
    /// `iv_suffix + 1`), for known-answer tests.
    #[cfg(test)]
    pub(crate) fn with_state(
        keymat: KeyMaterial,
        session_id: u32,
        iv_suffix: u64,
    ) -> Result<Self, CryptoError> {
        let key = sender_session_key(&keymat, session_id.to_be_bytes())?;
        Ok(SenderCrypto {
            keymat,
            session_id,
            key,
            blocks: 0,
            max_blocks_per_session: DEFAULT_MAX_BLOCKS_PER_SESSION,
            iv_suffix,
            rs_cache: Vec::new(),
        })
    }

    /// Renew the session once `max_blocks` AES blocks (16 octets) were protected under it.
    pub fn set_max_blocks_per_session(&mut self, max_blocks: u64) {
        self.max_blocks_per_session = max_blocks.max(1);
    }

    /// The key material this encoder uses.
    pub fn key_material(&self) -> &KeyMaterial {
        &self.keymat
    }

    /// The current session id (wire octets).
    pub fn session_id(&self) -> [u8; 4] {
        self.session_id.to_be_bytes()
    }

    /// The CryptoHeader for the next transform of `len` octets, renewing the session first if
    /// `len` would take it past `max_blocks_per_session`.
    fn next_header(&mut self, len: usize) -> Result<CryptoHeader, CryptoError> {
        let blocks = (len as u64).div_ceil(BLOCK_LEN);
        if self.blocks.saturating_add(blocks) > self.max_blocks_per_session {
            let id = self.session_id.wrapping_add(1);
            self.key = sender_session_key(&self.keymat, id.to_be_bytes())?;
            self.session_id = id;
            self.blocks = 0;
            self.rs_cache.clear();
        }
        self.blocks = self.blocks.saturating_add(blocks);
        self.iv_suffix = self.iv_suffix.wrapping_add(1);
        Ok(CryptoHeader {
            transformation_kind: self.keymat.transformation_kind.to_u32(),
            transformation_key_id: self.keymat.sender_key_id,
            session_id: self.session_id.to_be_bytes(),
            init_vector_suffix: self.iv_suffix.to_be_bytes(),
        })
    }

    /// encode_serialized_payload (DDS Security 1.1 §8.5.1.9.1, §9.5.3.3.4.4): appends
    /// `CryptoHeader | (GCM: u32 BE n | ciphertext) or (GMAC: plain) | common_mac | u32 0` to
    /// `out`. On error `out` is left as it was.
    pub fn encode_serialized_payload(
        &mut self,
        plain: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), CryptoError> {
        self.payload_parts_into(&[plain], out)
    }

    /// As [`SenderCrypto::encode_serialized_payload`], with `plain` padded with zeros to a
    /// multiple of four octets first (what Cyclone DDS encodes, and what lets a signed
    /// payload's footer be found from the end of a submessage padded to four octets).
    pub fn encode_serialized_payload_padded(
        &mut self,
        plain: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), CryptoError> {
        let pad = &[0u8; 3][..(4 - plain.len() % 4) % 4];
        self.payload_parts_into(&[plain, pad], out)
    }

    /// Appends the encoded payload of `parts` (one after the other) to `out`; on error `out`
    /// is left as it was.
    fn payload_parts_into(
        &mut self,
        parts: &[&[u8]],
        out: &mut Vec<u8>,
    ) -> Result<(), CryptoError> {
        let base = out.len();
        let r = self.payload_parts_unguarded(parts, out);
        if r.is_err() {
            out.truncate(base);
        }
        r
    }

    fn payload_parts_unguarded(
        &mut self,
        parts: &[&[u8]],
        out: &mut Vec<u8>,
    ) -> Result<(), CryptoError> {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let len32 = u32::try_from(len).map_err(|_| CryptoError::TooLarge {
            what: "payload longer than 2^32 - 1 octets",
        })?;
        let h = self.next_header(len)?;
        out.reserve(CRYPTO_HEADER_LEN + 4 + len + FOOTER_BASE_LEN);
        h.write(out);
        let tag = self.protect(&h, parts, len32, out)?;
        out.extend_from_slice(&tag);
        out.extend_from_slice(&0u32.to_be_bytes());
        Ok(())
    }

    /// Appends the protected body of `parts`: under GCM `u32 BE n | ciphertext`, under GMAC
    /// the plain bytes; returns the common MAC. The parts are copied once, to where they go,
    /// and encrypted (or MACed) there.
    fn protect(
        &mut self,
        h: &CryptoHeader,
        parts: &[&[u8]],
        len32: u32,
        out: &mut Vec<u8>,
    ) -> Result<[u8; MAC_LEN], CryptoError> {
        let iv = h.iv();
        let encrypts = self.keymat.transformation_kind.encrypts();
        if encrypts {
            out.extend_from_slice(&len32.to_be_bytes());
            // One part and some padding: encrypted straight to where it goes (one pass
            // instead of a copy and an in-place pass).
            let fused = match parts {
                [main] => Some((*main, &[][..])),
                [main, extra] if extra.len() <= super::session::MAX_SEAL_EXTRA => {
                    Some((*main, *extra))
                }
                _ => None,
            };
            if let Some((main, extra)) = fused {
                let start = out.len();
                out.resize(start + main.len() + extra.len(), 0);
                let body = out.get_mut(start..).unwrap_or_default();
                return self.key.aead.seal_into(&iv, main, extra, body);
            }
        }
        let start = out.len();
        for p in parts {
            out.extend_from_slice(p);
        }
        let body = out.get_mut(start..).unwrap_or_default();
        if encrypts {
            self.key.aead.seal_in_place(&iv, body)
        } else {
            self.key.aead.mac(&iv, body)
        }
    }

    /// encode_datawriter_submessage / encode_datareader_submessage (DDS Security 1.1
    /// §8.5.1.9.2-3): protects one whole RTPS submessage (header and body) and appends
    /// `SEC_PREFIX | SEC_BODY or the plain submessage | SEC_POSTFIX` to `out`. A receiver-specific
    /// MAC is added for each of `receivers` (the key materials sent to each remote endpoint)
    /// that has a receiver-specific key. On error `out` is left as it was.
    pub fn encode_submessage(
        &mut self,
        plain_submessage: &[u8],
        receivers: &[&KeyMaterial],
        out: &mut Vec<u8>,
    ) -> Result<(), CryptoError> {
        let base = out.len();
        let r = self.secure_into(
            (SMID_SEC_PREFIX, SMID_SEC_POSTFIX),
            &[plain_submessage],
            receivers,
            out,
        );
        if r.is_err() {
            out.truncate(base);
        }
        r
    }

    /// encode_rtps_message (DDS Security 1.1 §8.5.1.9.4): appends `rtps_header |
    /// SRTPS_PREFIX | SEC_BODY or (INFO_SRC | submessages) | SRTPS_POSTFIX` to `out`. The
    /// protected bytes are an INFO_SRC copied from the header followed by `submessages` (every
    /// submessage after the RTPS header), as Cyclone builds them. On error `out` is left as it
    /// was.
    pub fn encode_rtps_message(
        &mut self,
        rtps_header: &[u8; RTPS_HEADER_LEN],
        submessages: &[u8],
        receivers: &[&KeyMaterial],
        out: &mut Vec<u8>,
    ) -> Result<(), CryptoError> {
        let base = out.len();
        out.extend_from_slice(rtps_header);
        let info_src = info_src_for(rtps_header);
        let r = self.secure_into(
            (SMID_SRTPS_PREFIX, SMID_SRTPS_POSTFIX),
            &[&info_src, submessages],
            receivers,
            out,
        );
        if r.is_err() {
            out.truncate(base);
        }
        r
    }

    /// Octets [`SenderCrypto::encode_rtps_message_in_place`] needs between the RTPS header
    /// and the submessages: SRTPS_PREFIX, SEC_BODY's header and length (when encrypting) and
    /// the INFO_SRC.
    pub fn message_headroom(&self) -> usize {
        let body = if self.keymat.transformation_kind.encrypts() {
            SUBMSG_HEADER_LEN + 4
        } else {
            0
        };
        SUBMSG_HEADER_LEN + CRYPTO_HEADER_LEN + body + INFO_SRC_LEN
    }

    /// [`SenderCrypto::encode_rtps_message`] in place, with no copy of the submessages:
    /// `buf` is the RTPS header, [`SenderCrypto::message_headroom`] free octets, then the
    /// submessages (`headroom`, the caller's word for it, must be that number); on success it
    /// is the protected message, the same octets `encode_rtps_message` makes. The checks that
    /// can fail come before `buf` is changed; should a later step fail all the same, `buf`
    /// must not be sent.
    pub fn encode_rtps_message_in_place(
        &mut self,
        buf: &mut Vec<u8>,
        headroom: usize,
        receivers: &[&KeyMaterial],
    ) -> Result<(), CryptoError> {
        if headroom != self.message_headroom() {
            return Err(super::malformed(
                "headroom is not what this transform needs",
            ));
        }
        let body_at = RTPS_HEADER_LEN + headroom - INFO_SRC_LEN;
        let header: [u8; RTPS_HEADER_LEN] = buf
            .get(..RTPS_HEADER_LEN)
            .and_then(|h| h.try_into().ok())
            .ok_or(super::malformed("message shorter than an RTPS header"))?;
        let len = buf
            .len()
            .checked_sub(body_at)
            .filter(|&n| n >= INFO_SRC_LEN)
            .ok_or(super::malformed("message shorter than its headroom"))?;
        let len32 = self.check_secure_len(len)?;
        for r in receivers.iter().filter(|r| r.receiver_specific_key_id != 0) {
            self.check_receiver_kind(r)?;
        }
        let h = self.next_header(len)?;
        // The prefix, SEC_BODY and INFO_SRC, written over the headroom.
        let mut head = Vec::with_capacity(headroom);
        put_submsg_header(&mut head, SMID_SRTPS_PREFIX, CRYPTO_HEADER_LEN)?;
        h.write(&mut head);
        if self.keymat.transformation_kind.encrypts() {
            put_submsg_header(&mut head, SMID_SEC_BODY, 4 + len)?;
            head.extend_from_slice(&len32.to_be_bytes());
        }
        head.extend_from_slice(&info_src_for(&header));
        buf.get_mut(RTPS_HEADER_LEN..RTPS_HEADER_LEN + headroom)
            .filter(|d| d.len() == head.len())
            .ok_or(super::malformed("headroom of the wrong length"))?
            .copy_from_slice(&head);
        let iv = h.iv();
        let body = buf.get_mut(body_at..).unwrap_or_default();
        let common_mac = if self.keymat.transformation_kind.encrypts() {
            self.key.aead.seal_in_place(&iv, body)?
        } else {
            self.key.aead.mac(&iv, body)?
        };
        self.put_footer(SMID_SRTPS_POSTFIX, &iv, &common_mac, receivers, buf)
    }

    /// The length of the protected bytes of a submessage or message transform as the wire's
    /// u32, if SEC_BODY's 16-bit length can carry them and they are whole submessages.
    fn check_secure_len(&self, len: usize) -> Result<u32, CryptoError> {
        let len32 = u32::try_from(len)
            .ok()
            .filter(|&n| n as usize + 8 <= usize::from(u16::MAX))
            .ok_or(CryptoError::TooLarge {
                what: "protected submessages longer than a submessage can carry",
            })?;
        if !len.is_multiple_of(4) {
            // Cyclone's read_submsg_header rejects submessage lengths that are not multiples of
            // 4, and it does not pad: the caller must hand in padded submessages.
            return Err(super::malformed(
                "plain submessages must total a multiple of 4 octets",
            ));
        }
        Ok(len32)
    }

    /// Appends the postfix of id `postfix_id`: the common MAC and a receiver-specific MAC for
    /// each of `receivers` with a receiver-specific key.
    fn put_footer(
        &mut self,
        postfix_id: u8,
        iv: &[u8; 12],
        common_mac: &[u8; MAC_LEN],
        receivers: &[&KeyMaterial],
        out: &mut Vec<u8>,
    ) -> Result<(), CryptoError> {
        let rs_count = receivers
            .iter()
            .filter(|r| r.receiver_specific_key_id != 0)
            .count();
        let footer_at = out.len();
        put_submsg_header(out, postfix_id, FOOTER_BASE_LEN)?;
        out.extend_from_slice(common_mac);
        out.extend_from_slice(&(rs_count as u32).to_be_bytes());
        for r in receivers.iter().filter(|r| r.receiver_specific_key_id != 0) {
            let mac = self.receiver_mac(r, iv, common_mac)?;
            out.extend_from_slice(&r.receiver_specific_key_id.to_be_bytes());
            out.extend_from_slice(&mac);
        }
        patch_submsg_len(out, footer_at, FOOTER_BASE_LEN + rs_count * RS_MAC_LEN)
    }

    /// The shared shape of the submessage and message transforms.
    fn secure_into(
        &mut self,
        (prefix_id, postfix_id): (u8, u8),
        parts: &[&[u8]],
        receivers: &[&KeyMaterial],
        out: &mut Vec<u8>,
    ) -> Result<(), CryptoError> {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let len32 = self.check_secure_len(len)?;
        let h = self.next_header(len)?;
        let rs_count = receivers
            .iter()
            .filter(|r| r.receiver_specific_key_id != 0)
            .count();
        out.reserve(4 + CRYPTO_HEADER_LEN + 8 + len + 4 + FOOTER_BASE_LEN + rs_count * RS_MAC_LEN);
        put_submsg_header(out, prefix_id, CRYPTO_HEADER_LEN)?;
        h.write(out);
        if self.keymat.transformation_kind.encrypts() {
            put_submsg_header(out, SMID_SEC_BODY, 4 + len)?;
        }
        let common_mac = self.protect(&h, parts, len32, out)?;
        self.put_footer(postfix_id, &h.iv(), &common_mac, receivers, out)
    }

    /// A receiver key material must be of our kind.
    fn check_receiver_kind(&self, r: &KeyMaterial) -> Result<(), CryptoError> {
        if r.transformation_kind != self.keymat.transformation_kind {
            return Err(CryptoError::KindMismatch {
                expected: self.keymat.transformation_kind,
                found: r.transformation_kind.to_u32(),
            });
        }
        Ok(())
    }

    /// The receiver-specific MAC of `common_mac` for receiver key material `r`.
    fn receiver_mac(
        &mut self,
        r: &KeyMaterial,
        iv: &[u8; 12],
        common_mac: &[u8; MAC_LEN],
    ) -> Result<[u8; MAC_LEN], CryptoError> {
        self.check_receiver_kind(r)?;
        let hit = self.rs_cache.iter().position(|e| {
            e.key_id == r.receiver_specific_key_id
                && e.master.as_slice() == r.master_receiver_specific_key.as_slice()
        });
        let idx = match hit {
            Some(i) => i,
            None => {
                if self.rs_cache.len() >= RS_CACHE_MAX {
                    self.rs_cache.clear();
                }
                let key = receiver_session_key(r, self.session_id.to_be_bytes())?;
                self.rs_cache.push(RsCacheEntry {
                    key_id: r.receiver_specific_key_id,
                    master: Zeroizing::new(r.master_receiver_specific_key.clone()),
                    key,
                });
                self.rs_cache.len() - 1
            }
        };
        match self.rs_cache.get(idx) {
            Some(e) => e.key.aead.mac(iv, common_mac),
            None => Err(CryptoError::NoKeys),
        }
    }
}

/// The INFO_SRC Cyclone inserts (`init_info_src`): `0x0c | E | u16 20 | 0u32 | version |
/// vendor id | guid prefix`, the last three copied from the RTPS header.
pub(crate) fn info_src_for(rtps_header: &[u8; RTPS_HEADER_LEN]) -> [u8; INFO_SRC_LEN] {
    let mut s = [0u8; INFO_SRC_LEN];
    s[0] = SMID_INFO_SRC;
    s[1] = FLAG_E;
    s[2..4].copy_from_slice(&20u16.to_le_bytes());
    s[8..].copy_from_slice(&rtps_header[4..]);
    s
}
