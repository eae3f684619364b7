//! Byte layouts of the CryptoHeader, CryptoFooter and the secure submessages (DDS Security 1.1
//! §7.3.6, §9.5.2.3-5) as Cyclone DDS 0.10 writes them (`crypto_transform.c`). The crypto
//! contents are big-endian; submessage lengths follow the submessage's E flag.

use super::{malformed, CryptoError, TransformKind};

/// Length of a MAC (GMAC tag) and of the common MAC.
pub const MAC_LEN: usize = 16;
/// Length of a CryptoHeader: `kind[4] key_id[4] session_id[4] iv_suffix[8]`.
pub const CRYPTO_HEADER_LEN: usize = 20;
/// Length of a receiver-specific MAC entry: `key_id[4] mac[16]`.
pub(crate) const RS_MAC_LEN: usize = 4 + MAC_LEN;
/// Length of a CryptoFooter without receiver-specific MACs: `common_mac[16] count[4]`.
pub(crate) const FOOTER_BASE_LEN: usize = MAC_LEN + 4;
/// Length of a submessage header.
pub(crate) const SUBMSG_HEADER_LEN: usize = 4;
/// The E (endianness) flag of a submessage header.
pub(crate) const FLAG_E: u8 = 0x01;

/// Submessage id SEC_BODY.
pub const SMID_SEC_BODY: u8 = 0x30;
/// Submessage id SEC_PREFIX.
pub const SMID_SEC_PREFIX: u8 = 0x31;
/// Submessage id SEC_POSTFIX.
pub const SMID_SEC_POSTFIX: u8 = 0x32;
/// Submessage id SRTPS_PREFIX.
pub const SMID_SRTPS_PREFIX: u8 = 0x33;
/// Submessage id SRTPS_POSTFIX.
pub const SMID_SRTPS_POSTFIX: u8 = 0x34;
/// Submessage id INFO_SRC.
pub const SMID_INFO_SRC: u8 = 0x0c;

/// CryptoHeader (DDS Security 1.1 §9.5.2.3): the transform identifier (kind and key id), the
/// session id and the IV suffix. The IV is `session_id | init_vector_suffix`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CryptoHeader {
    /// The transformation kind number (kept raw: the receiver compares it with its key).
    pub transformation_kind: u32,
    /// The sender key id.
    pub transformation_key_id: u32,
    /// The session id, as the four wire octets.
    pub session_id: [u8; 4],
    /// The IV suffix, as the eight wire octets.
    pub init_vector_suffix: [u8; 8],
}

impl CryptoHeader {
    /// The 12-octet AES-GCM IV.
    pub fn iv(&self) -> [u8; 12] {
        let mut iv = [0u8; 12];
        iv[..4].copy_from_slice(&self.session_id);
        iv[4..].copy_from_slice(&self.init_vector_suffix);
        iv
    }

    /// The kind, if it is a known one.
    pub fn kind(&self) -> Option<TransformKind> {
        TransformKind::from_u32(self.transformation_kind)
    }

    /// Appends the 20 octets.
    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.transformation_kind.to_be_bytes());
        out.extend_from_slice(&self.transformation_key_id.to_be_bytes());
        out.extend_from_slice(&self.session_id);
        out.extend_from_slice(&self.init_vector_suffix);
    }

    /// Reads the first 20 octets of `b`.
    pub fn read(b: &[u8]) -> Result<Self, CryptoError> {
        let h: &[u8; CRYPTO_HEADER_LEN] = b
            .get(..CRYPTO_HEADER_LEN)
            .and_then(|s| s.try_into().ok())
            .ok_or(malformed("CryptoHeader truncated"))?;
        let [k0, k1, k2, k3, i0, i1, i2, i3, s0, s1, s2, s3, v0, v1, v2, v3, v4, v5, v6, v7] = *h;
        Ok(CryptoHeader {
            transformation_kind: u32::from_be_bytes([k0, k1, k2, k3]),
            transformation_key_id: u32::from_be_bytes([i0, i1, i2, i3]),
            session_id: [s0, s1, s2, s3],
            init_vector_suffix: [v0, v1, v2, v3, v4, v5, v6, v7],
        })
    }
}

/// One receiver-specific MAC of a CryptoFooter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReceiverSpecificMac {
    /// The receiver-specific key id.
    pub receiver_mac_key_id: u32,
    /// The MAC.
    pub receiver_mac: [u8; MAC_LEN],
}

/// CryptoFooter (DDS Security 1.1 §9.5.2.5): the common MAC and the receiver-specific MACs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CryptoFooter {
    /// The common MAC (the GCM tag or the GMAC).
    pub common_mac: [u8; MAC_LEN],
    /// The receiver-specific MACs.
    pub receiver_specific_macs: Vec<ReceiverSpecificMac>,
}

impl CryptoFooter {
    /// Appends `common_mac | u32 BE count | (key_id BE | mac)*`.
    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.common_mac);
        out.extend_from_slice(&(self.receiver_specific_macs.len() as u32).to_be_bytes());
        for m in &self.receiver_specific_macs {
            out.extend_from_slice(&m.receiver_mac_key_id.to_be_bytes());
            out.extend_from_slice(&m.receiver_mac);
        }
    }

    /// Reads a footer from `b` (trailing octets are ignored).
    pub fn read(b: &[u8]) -> Result<Self, CryptoError> {
        let v = FooterView::parse(b)?;
        Ok(CryptoFooter {
            common_mac: v.common_mac,
            receiver_specific_macs: v.macs().collect(),
        })
    }
}

/// A borrowed CryptoFooter: no allocation on the receive path.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FooterView<'a> {
    pub(crate) common_mac: [u8; MAC_LEN],
    macs: &'a [u8],
}

impl<'a> FooterView<'a> {
    /// Parses `b`; the count must fit in `b` (Cyclone `read_secure_postfix`).
    pub(crate) fn parse(b: &'a [u8]) -> Result<Self, CryptoError> {
        let common_mac: [u8; MAC_LEN] = b
            .get(..MAC_LEN)
            .and_then(|s| s.try_into().ok())
            .ok_or(malformed("CryptoFooter truncated"))?;
        let count = read_be_u32(b, MAC_LEN).ok_or(malformed("CryptoFooter truncated"))?;
        let rest = b.get(FOOTER_BASE_LEN..).unwrap_or(&[]);
        let count = usize::try_from(count).map_err(|_| malformed("CryptoFooter count"))?;
        if rest.len() / RS_MAC_LEN < count {
            return Err(malformed("CryptoFooter counts more MACs than it holds"));
        }
        Ok(FooterView {
            common_mac,
            macs: rest.get(..count * RS_MAC_LEN).unwrap_or(&[]),
        })
    }

    pub(crate) fn count(&self) -> usize {
        self.macs.len() / RS_MAC_LEN
    }

    pub(crate) fn macs(&self) -> impl Iterator<Item = ReceiverSpecificMac> + 'a {
        self.macs.chunks_exact(RS_MAC_LEN).map(|c| {
            let mut receiver_mac = [0u8; MAC_LEN];
            receiver_mac.copy_from_slice(&c[4..]);
            ReceiverSpecificMac {
                receiver_mac_key_id: u32::from_be_bytes([c[0], c[1], c[2], c[3]]),
                receiver_mac,
            }
        })
    }
}

pub(crate) fn read_be_u32(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
}

/// Appends a submessage header as Cyclone writes it on a little-endian host: E set, length LE.
pub(crate) fn put_submsg_header(out: &mut Vec<u8>, id: u8, len: usize) -> Result<(), CryptoError> {
    let len = u16::try_from(len).map_err(|_| CryptoError::TooLarge {
        what: "secure submessage longer than 65535 octets",
    })?;
    out.push(id);
    out.push(FLAG_E);
    out.extend_from_slice(&len.to_le_bytes());
    Ok(())
}

/// Overwrites the length of the submessage header at `at`.
pub(crate) fn patch_submsg_len(out: &mut [u8], at: usize, len: usize) -> Result<(), CryptoError> {
    let len = u16::try_from(len).map_err(|_| CryptoError::TooLarge {
        what: "secure submessage longer than 65535 octets",
    })?;
    let dst = out
        .get_mut(at + 2..at + 4)
        .ok_or(malformed("submessage header out of range"))?;
    dst.copy_from_slice(&len.to_le_bytes());
    Ok(())
}

/// A submessage read from a buffer: its id, flags, where it starts and where its body is.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Submsg {
    pub(crate) id: u8,
    pub(crate) start: usize,
    pub(crate) body: usize,
    pub(crate) end: usize,
}

/// Reads the submessage header at `at` in `b`; the body must fit (Cyclone `read_submsg_header`).
pub(crate) fn read_submsg(b: &[u8], at: usize) -> Result<Submsg, CryptoError> {
    let h = b
        .get(at..at + SUBMSG_HEADER_LEN)
        .ok_or(malformed("submessage header truncated"))?;
    let raw = [h[2], h[3]];
    let len = if h[1] & FLAG_E != 0 {
        u16::from_le_bytes(raw)
    } else {
        u16::from_be_bytes(raw)
    } as usize;
    let body = at + SUBMSG_HEADER_LEN;
    let end = body + len;
    if end > b.len() {
        return Err(malformed("submessage longer than the data"));
    }
    Ok(Submsg {
        id: h[0],
        start: at,
        body,
        end,
    })
}

/// Reads a prefix submessage of id `id` at `at` and its CryptoHeader.
pub(crate) fn read_prefix(
    b: &[u8],
    at: usize,
    id: u8,
    what: &'static str,
) -> Result<(CryptoHeader, usize), CryptoError> {
    let s = read_submsg(b, at)?;
    if s.id != id {
        return Err(malformed(what));
    }
    let h = CryptoHeader::read(b.get(s.body..s.end).unwrap_or(&[]))?;
    Ok((h, s.end))
}

/// The CryptoHeader of a secure submessage (starting at SEC_PREFIX), so that the caller can
/// find the key material by key id (Cyclone `preprocess_secure_submsg`).
pub fn peek_submessage_header(b: &[u8]) -> Result<CryptoHeader, CryptoError> {
    read_prefix(b, 0, SMID_SEC_PREFIX, "not a SEC_PREFIX").map(|(h, _)| h)
}

/// The CryptoHeader of a protected RTPS message (RTPS header, then SRTPS_PREFIX).
pub fn peek_message_header(b: &[u8]) -> Result<CryptoHeader, CryptoError> {
    read_prefix(
        b,
        20,
        SMID_SRTPS_PREFIX,
        "no SRTPS_PREFIX after the RTPS header",
    )
    .map(|(h, _)| h)
}

/// The CryptoHeader of an encoded serialized payload.
pub fn peek_payload_header(b: &[u8]) -> Result<CryptoHeader, CryptoError> {
    CryptoHeader::read(b)
}
