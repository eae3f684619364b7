//! The receiving side: one [`ReceiverCrypto`] per remote key material (as received in the
//! remote's CryptoToken, including the receiver-specific key it made for us, if any).
//!
//! Decoding parses the layout first (bounded, never panics), then checks in this order: the
//! kind and key id against the key material, the session (current, previous, or a newer one),
//! the replay window, our receiver-specific MAC when we hold a receiver-specific key, and the
//! common MAC (GCM tag or GMAC). Only after all of them pass is the IV suffix recorded and a
//! new session adopted; the plain bytes are appended to the caller's buffer, which is restored
//! on any failure. They are decrypted straight into that buffer (no copy of the ciphertext
//! first); the `*_overwriting` decoders write over what a reused buffer holds, so that it is
//! not initialised again for every datagram.

use super::sender::{info_src_for, RTPS_HEADER_LEN};
use super::session::{receiver_session_key, sender_session_key, ReplayWindow, SessionKey};
use super::wire::{
    read_be_u32, read_prefix, read_submsg, CryptoHeader, FooterView, CRYPTO_HEADER_LEN,
    FOOTER_BASE_LEN, SMID_INFO_SRC, SMID_SEC_BODY, SMID_SEC_POSTFIX, SMID_SEC_PREFIX,
    SMID_SRTPS_POSTFIX, SMID_SRTPS_PREFIX, SUBMSG_HEADER_LEN,
};
use super::{malformed, CryptoError, KeyMaterial};

struct RemoteSession {
    id: u32,
    key: SessionKey,
    rs_key: Option<SessionKey>,
    window: ReplayWindow,
}

/// What lies between the CryptoHeader and the CryptoFooter.
enum Body<'a> {
    /// GCM ciphertext.
    Encrypted(&'a [u8]),
    /// GMAC: the protected bytes in clear.
    Clear(&'a [u8]),
}

/// Which session a CryptoHeader's session id selects.
enum Slot {
    Current,
    Previous,
    New(RemoteSession),
}

/// Decoder for one remote key material. Keeps the current and previous sessions' keys (each
/// keyed once) and replay windows.
pub struct ReceiverCrypto {
    keymat: KeyMaterial,
    current: Option<RemoteSession>,
    previous: Option<RemoteSession>,
    replay_protection: bool,
}

impl std::fmt::Debug for ReceiverCrypto {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReceiverCrypto")
            .field("keymat", &self.keymat)
            .field("replay_protection", &self.replay_protection)
            .finish_non_exhaustive()
    }
}

impl ReceiverCrypto {
    /// A decoder for the remote key material `keymat` (which must have keys). Replay
    /// protection is on.
    pub fn new(keymat: KeyMaterial) -> Result<Self, CryptoError> {
        if !keymat.transformation_kind.has_keys() {
            return Err(CryptoError::NoKeys);
        }
        keymat.validate()?;
        Ok(ReceiverCrypto {
            keymat,
            current: None,
            previous: None,
            replay_protection: true,
        })
    }

    /// Turns the replay check of submessages and messages on or off (off for peers that draw
    /// IV suffixes at random, such as Fast DDS).
    pub fn set_replay_protection(&mut self, on: bool) {
        self.replay_protection = on;
    }

    /// The remote key material this decoder uses.
    pub fn key_material(&self) -> &KeyMaterial {
        &self.keymat
    }

    /// decode_serialized_payload (DDS Security 1.1 §8.5.1.9.9): appends the plain payload to
    /// `out`. No replay check: a sample's encoded payload is legitimately sent again in
    /// retransmissions.
    pub fn decode_serialized_payload(
        &mut self,
        encoded: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), CryptoError> {
        let h = CryptoHeader::read(encoded)?;
        self.check_transform(&h)?;
        let (body, footer_at) = if self.keymat.transformation_kind.encrypts() {
            let n =
                read_be_u32(encoded, CRYPTO_HEADER_LEN).ok_or(malformed("payload truncated"))?;
            let start = CRYPTO_HEADER_LEN + 4;
            let end = start
                .checked_add(n as usize)
                .filter(|&e| e <= encoded.len())
                .ok_or(malformed("payload ciphertext longer than the data"))?;
            (Body::Encrypted(&encoded[start..end]), end)
        } else {
            let end = encoded
                .len()
                .checked_sub(FOOTER_BASE_LEN)
                .filter(|&e| e >= CRYPTO_HEADER_LEN)
                .ok_or(malformed("payload truncated"))?;
            (Body::Clear(&encoded[CRYPTO_HEADER_LEN..end]), end)
        };
        let footer = FooterView::parse(encoded.get(footer_at..).unwrap_or(&[]))?;
        if footer.count() != 0 {
            return Err(malformed("receiver-specific MACs on a serialized payload"));
        }
        // A payload never carries receiver-specific MACs, even when its key material came
        // with a receiver-specific key (Fast DDS 2.9 sends one under origin authentication).
        let base = out.len();
        self.verify_and_output_with(&h, &footer, body, false, false, out, base, |_| Ok(()))
    }

    /// decode_datawriter_submessage / decode_datareader_submessage (DDS Security 1.1
    /// §8.5.1.9.7-8): `encoded` starts at a SEC_PREFIX (further submessages may follow);
    /// appends the plain submessage to `out` and returns how many octets of `encoded` the
    /// secure submessage (SEC_PREFIX to SEC_POSTFIX) took.
    pub fn decode_submessage(
        &mut self,
        encoded: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<usize, CryptoError> {
        let base = out.len();
        self.submessage_at(encoded, out, base)
    }

    /// [`ReceiverCrypto::decode_submessage`] into `out` from its start: on success `out` is
    /// the plain submessage. The octets `out` already holds are overwritten, not initialised
    /// again, so a buffer passed for every submessage costs no pass over it beyond the
    /// decryption. On failure `out` is left empty.
    pub fn decode_submessage_overwriting(
        &mut self,
        encoded: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<usize, CryptoError> {
        self.submessage_at(encoded, out, 0)
    }

    fn submessage_at(
        &mut self,
        encoded: &[u8],
        out: &mut Vec<u8>,
        base: usize,
    ) -> Result<usize, CryptoError> {
        let r = self.submessage_at_inner(encoded, out, base);
        if r.is_err() {
            out.truncate(base);
        }
        r
    }

    fn submessage_at_inner(
        &mut self,
        encoded: &[u8],
        out: &mut Vec<u8>,
        base: usize,
    ) -> Result<usize, CryptoError> {
        let (h, at) = read_prefix(encoded, 0, SMID_SEC_PREFIX, "not a SEC_PREFIX")?;
        self.check_transform(&h)?;
        let s = read_submsg(encoded, at)?;
        let body = if self.keymat.transformation_kind.encrypts() {
            if s.id != SMID_SEC_BODY {
                return Err(malformed("encrypted submessage without SEC_BODY"));
            }
            Body::Encrypted(sec_body_content(encoded, s.body, s.end)?)
        } else {
            Body::Clear(&encoded[s.start..s.end])
        };
        let p = read_submsg(encoded, s.end)?;
        if p.id != SMID_SEC_POSTFIX {
            return Err(malformed("no SEC_POSTFIX after the secure body"));
        }
        let footer = FooterView::parse(&encoded[p.body..p.end])?;
        let replay = self.replay_protection;
        self.verify_and_output(&h, &footer, body, replay, out, base, |_| Ok(()))?;
        Ok(p.end)
    }

    /// decode_rtps_message (DDS Security 1.1 §8.5.1.9.6): `encoded` is a whole datagram (RTPS
    /// header, SRTPS_PREFIX ... SRTPS_POSTFIX); appends `RTPS header | INFO_SRC | submessages`
    /// to `out`, as Cyclone returns it. An INFO_SRC at the start of the protected bytes must
    /// repeat the (unprotected) RTPS header's version, vendor id and GUID prefix.
    pub fn decode_rtps_message(
        &mut self,
        encoded: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), CryptoError> {
        let base = out.len();
        self.message_at(encoded, out, base)
    }

    /// [`ReceiverCrypto::decode_rtps_message`] into `out` from its start: on success `out` is
    /// the plain message. The octets `out` already holds are overwritten, not initialised
    /// again (see [`ReceiverCrypto::decode_submessage_overwriting`]). On failure `out` is left
    /// empty.
    pub fn decode_rtps_message_overwriting(
        &mut self,
        encoded: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), CryptoError> {
        self.message_at(encoded, out, 0)
    }

    fn message_at(
        &mut self,
        encoded: &[u8],
        out: &mut Vec<u8>,
        base: usize,
    ) -> Result<(), CryptoError> {
        let r = self.message_at_inner(encoded, out, base);
        if r.is_err() {
            out.truncate(base);
        }
        r
    }

    fn message_at_inner(
        &mut self,
        encoded: &[u8],
        out: &mut Vec<u8>,
        base: usize,
    ) -> Result<(), CryptoError> {
        let header: &[u8; RTPS_HEADER_LEN] = encoded
            .get(..RTPS_HEADER_LEN)
            .and_then(|s| s.try_into().ok())
            .ok_or(malformed("RTPS header truncated"))?;
        if &header[..4] != b"RTPS" {
            return Err(malformed("no RTPS protocol id"));
        }
        let (h, at) = read_prefix(
            encoded,
            RTPS_HEADER_LEN,
            SMID_SRTPS_PREFIX,
            "no SRTPS_PREFIX",
        )?;
        self.check_transform(&h)?;
        let (body, postfix_at) = if self.keymat.transformation_kind.encrypts() {
            let s = read_submsg(encoded, at)?;
            if s.id != SMID_SEC_BODY {
                return Err(malformed("encrypted message without SEC_BODY"));
            }
            (
                Body::Encrypted(sec_body_content(encoded, s.body, s.end)?),
                s.end,
            )
        } else {
            let end = find_clear_body_end(encoded, at)?;
            (Body::Clear(&encoded[at..end]), end)
        };
        let p = read_submsg(encoded, postfix_at)?;
        if p.id != SMID_SRTPS_POSTFIX {
            return Err(malformed("no SRTPS_POSTFIX after the secure body"));
        }
        let footer = FooterView::parse(&encoded[p.body..p.end])?;
        // The header first, over what `out` holds from `base` on (or appended).
        let body_at = base + RTPS_HEADER_LEN;
        if out.len() < body_at {
            out.resize(body_at, 0);
        }
        out.get_mut(base..body_at)
            .ok_or(malformed("output buffer shorter than the RTPS header"))?
            .copy_from_slice(header);
        let replay = self.replay_protection;
        let expect = info_src_for(header);
        self.verify_and_output(
            &h,
            &footer,
            body,
            replay,
            out,
            body_at,
            |plain| match plain.first() {
                Some(&SMID_INFO_SRC) if plain.get(8..24) != Some(&expect[8..]) => {
                    Err(malformed("INFO_SRC does not match the RTPS header"))
                }
                _ => Ok(()),
            },
        )
    }

    /// The kind and key id of `h` must be our key material's.
    fn check_transform(&self, h: &CryptoHeader) -> Result<(), CryptoError> {
        if h.transformation_kind != self.keymat.transformation_kind.to_u32() {
            return Err(CryptoError::KindMismatch {
                expected: self.keymat.transformation_kind,
                found: h.transformation_kind,
            });
        }
        if h.transformation_key_id != self.keymat.sender_key_id {
            return Err(CryptoError::UnknownKeyId {
                key_id: h.transformation_key_id,
            });
        }
        Ok(())
    }

    /// Picks the session of `id` without changing any state.
    fn select_session(&self, id: u32, replay: bool) -> Result<Slot, CryptoError> {
        if self.current.as_ref().is_some_and(|s| s.id == id) {
            return Ok(Slot::Current);
        }
        if self.previous.as_ref().is_some_and(|s| s.id == id) {
            return Ok(Slot::Previous);
        }
        if replay {
            if let Some(cur) = &self.current {
                // Sessions advance by one (Cyclone and Fast DDS); an id "behind" the current
                // one that we no longer track cannot be told from a replay.
                let ahead = id.wrapping_sub(cur.id);
                if ahead == 0 || ahead >= 1 << 31 {
                    return Err(CryptoError::Replayed);
                }
            }
        }
        Ok(Slot::New(RemoteSession {
            id,
            key: sender_session_key(&self.keymat, id.to_be_bytes())?,
            rs_key: None,
            window: ReplayWindow::default(),
        }))
    }

    /// Verifies everything, writes the plain bytes at `out[base..]` (`out` ends there after),
    /// runs `post_check` on them, then commits the session and replay state. On failure
    /// `out` is truncated to `base`.
    #[allow(clippy::too_many_arguments)]
    fn verify_and_output(
        &mut self,
        h: &CryptoHeader,
        footer: &FooterView<'_>,
        body: Body<'_>,
        replay: bool,
        out: &mut Vec<u8>,
        base: usize,
        post_check: impl FnOnce(&[u8]) -> Result<(), CryptoError>,
    ) -> Result<(), CryptoError> {
        self.verify_and_output_with(h, footer, body, replay, true, out, base, post_check)
    }

    /// [`ReceiverCrypto::verify_and_output`]; `receiver_specific`: a receiver-specific MAC is
    /// required when the key material has a receiver-specific key (never for payloads).
    #[allow(clippy::too_many_arguments)]
    fn verify_and_output_with(
        &mut self,
        h: &CryptoHeader,
        footer: &FooterView<'_>,
        body: Body<'_>,
        replay: bool,
        receiver_specific: bool,
        out: &mut Vec<u8>,
        base: usize,
        post_check: impl FnOnce(&[u8]) -> Result<(), CryptoError>,
    ) -> Result<(), CryptoError> {
        let id = u32::from_be_bytes(h.session_id);
        let suffix = u64::from_be_bytes(h.init_vector_suffix);
        let mut slot = self.select_session(id, replay)?;
        let Self {
            keymat,
            current,
            previous,
            ..
        } = self;
        let session = match &mut slot {
            Slot::Current => current.as_mut(),
            Slot::Previous => previous.as_mut(),
            Slot::New(s) => Some(s),
        }
        .ok_or(malformed("session vanished"))?;
        if replay {
            session.window.check(suffix)?;
        }
        let iv = h.iv();
        if receiver_specific && keymat.receiver_specific_key_id != 0 {
            let wanted = keymat.receiver_specific_key_id;
            let mac = footer
                .macs()
                .find(|m| m.receiver_mac_key_id == wanted)
                .ok_or(CryptoError::MissingReceiverSpecificMac { key_id: wanted })?;
            if session.rs_key.is_none() {
                session.rs_key = Some(receiver_session_key(keymat, h.session_id)?);
            }
            let rs_key = session
                .rs_key
                .as_ref()
                .ok_or(malformed("receiver-specific session key vanished"))?;
            rs_key
                .aead
                .verify_mac(&iv, &footer.common_mac, &mac.receiver_mac)?;
        }
        let r = match body {
            Body::Encrypted(ct) => {
                // Decrypted straight to where the plain bytes go: `resize` initialises only
                // what `out` did not hold yet (nothing, for a buffer reused at its length).
                out.resize(base + ct.len(), 0);
                let dst = out.get_mut(base..).unwrap_or_default();
                session.key.aead.open_into(&iv, ct, &footer.common_mac, dst)
            }
            Body::Clear(pt) => session
                .key
                .aead
                .verify_mac(&iv, pt, &footer.common_mac)
                .map(|()| {
                    out.truncate(base);
                    out.extend_from_slice(pt)
                }),
        }
        .and_then(|()| post_check(out.get(base..).unwrap_or(&[])));
        if let Err(e) = r {
            out.truncate(base);
            return Err(e);
        }
        session.window.record(suffix);
        if let Slot::New(s) = slot {
            *previous = current.take();
            *current = Some(s);
        }
        Ok(())
    }
}

/// The content of a SEC_BODY: `u32 BE n | n octets` within `[body, end)`.
fn sec_body_content(b: &[u8], body: usize, end: usize) -> Result<&[u8], CryptoError> {
    let n = read_be_u32(b, body).ok_or(malformed("SEC_BODY without a length"))? as usize;
    let start = body + 4;
    if start > end || n > end - start {
        return Err(malformed("SEC_BODY length exceeds the submessage"));
    }
    Ok(&b[start..start + n])
}

/// Under GMAC the protected bytes of a message are clear submessages, INFO_SRC first, up to
/// the SRTPS_POSTFIX (Cyclone `read_secure_rtps_body`); returns where the postfix starts.
fn find_clear_body_end(b: &[u8], at: usize) -> Result<usize, CryptoError> {
    let first = read_submsg(b, at)?;
    if first.id != SMID_INFO_SRC {
        return Err(malformed("signed message does not start with INFO_SRC"));
    }
    let mut pos = first.end;
    // Each step advances by at least a submessage header, so this ends.
    while pos + SUBMSG_HEADER_LEN <= b.len() {
        let s = read_submsg(b, pos)?;
        if s.id == SMID_SRTPS_POSTFIX {
            return Ok(pos);
        }
        pos = s.end;
    }
    Err(malformed("no SRTPS_POSTFIX in the signed message"))
}
