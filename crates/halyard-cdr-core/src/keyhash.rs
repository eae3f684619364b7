//! The instance key hash (XTypes 1.3 §7.6.8, RTPS 2.5 §9.6.4.8).

use md5::{Digest, Md5};

use crate::{CdrError, CdrWriter, DataRepresentation, Endianness, TopicType};

/// Computes the 16-byte key hash: the key members serialized in XCDR2 big-endian, zero-padded
/// to 16 bytes when `T::key_max_size()` is at most 16, otherwise their MD5 digest.
/// Keyless types hash to all zeros.
pub fn key_hash<T: TopicType>(s: &T) -> Result<[u8; 16], CdrError> {
    let mut hash = [0u8; 16];
    if !T::has_key() {
        return Ok(hash);
    }
    let mut buf = Vec::with_capacity(16);
    s.encode_key(&mut CdrWriter::with_endianness(
        &mut buf,
        DataRepresentation::Xcdr2,
        Endianness::Big,
    ))?;
    match T::key_max_size() {
        Some(max) if max <= 16 && buf.len() <= 16 => hash[..buf.len()].copy_from_slice(&buf),
        _ => hash.copy_from_slice(&Md5::digest(&buf)),
    }
    Ok(hash)
}
