//! The encapsulation header (RTPS 2.5 §10, XTypes 1.3 §7.6.3.1.2) and whole-sample
//! serialization.

use crate::{
    CdrDecode, CdrError, CdrReader, CdrWriter, DataRepresentation, Endianness, Extensibility,
    TopicType,
};

/// Classic CDR, big-endian.
pub const CDR_BE: u16 = 0x0000;
/// Classic CDR, little-endian.
pub const CDR_LE: u16 = 0x0001;
/// XCDR1 parameter list (mutable types), big-endian.
pub const PL_CDR_BE: u16 = 0x0002;
/// XCDR1 parameter list (mutable types), little-endian.
pub const PL_CDR_LE: u16 = 0x0003;
/// XCDR2 final types, big-endian.
pub const CDR2_BE: u16 = 0x0006;
/// XCDR2 final types, little-endian.
pub const CDR2_LE: u16 = 0x0007;
/// XCDR2 appendable (delimited) types, big-endian.
pub const D_CDR2_BE: u16 = 0x0008;
/// XCDR2 appendable (delimited) types, little-endian.
pub const D_CDR2_LE: u16 = 0x0009;
/// XCDR2 mutable types, big-endian.
pub const PL_CDR2_BE: u16 = 0x000a;
/// XCDR2 mutable types, little-endian.
pub const PL_CDR2_LE: u16 = 0x000b;

/// The little-endian encapsulation id for a representation and extensibility.
pub fn encapsulation_id(rep: DataRepresentation, ext: Extensibility) -> u16 {
    match (rep, ext) {
        (DataRepresentation::Xcdr1, Extensibility::Mutable) => PL_CDR_LE,
        (DataRepresentation::Xcdr1, _) => CDR_LE,
        (DataRepresentation::Xcdr2, Extensibility::Final) => CDR2_LE,
        (DataRepresentation::Xcdr2, Extensibility::Appendable) => D_CDR2_LE,
        (DataRepresentation::Xcdr2, Extensibility::Mutable) => PL_CDR2_LE,
    }
}

/// The representation and byte order an encapsulation id announces.
pub fn parse_encapsulation(id: u16) -> Result<(DataRepresentation, Endianness), CdrError> {
    let rep = match id {
        CDR_BE..=PL_CDR_LE => DataRepresentation::Xcdr1,
        CDR2_BE..=PL_CDR2_LE => DataRepresentation::Xcdr2,
        _ => return Err(CdrError::BadEncapsulation(id)),
    };
    let endianness = if id & 1 == 1 {
        Endianness::Little
    } else {
        Endianness::Big
    };
    Ok((rep, endianness))
}

/// Writes header + body produced by `body`, padding the body to a multiple of 4 and
/// recording the padding in the options; on failure `out` is left as it was.
fn encapsulate(
    out: &mut Vec<u8>,
    rep: DataRepresentation,
    ext: Extensibility,
    body: impl FnOnce(&mut CdrWriter<'_>) -> Result<(), CdrError>,
) -> Result<(), CdrError> {
    let start = out.len();
    out.extend_from_slice(&encapsulation_id(rep, ext).to_be_bytes());
    out.extend_from_slice(&[0, 0]);
    let body_start = out.len();
    if let Err(e) = body(&mut CdrWriter::new(out, rep)) {
        out.truncate(start);
        return Err(e);
    }
    let pad = (4 - (out.len() - body_start) % 4) % 4;
    out.resize(out.len() + pad, 0);
    out[body_start - 1] = pad as u8;
    Ok(())
}

/// Serializes a sample with its encapsulation header (XCDR1 → CDR_LE or PL_CDR_LE, XCDR2 →
/// CDR2_LE / D_CDR2_LE / PL_CDR2_LE by extensibility), appending to `out`.
pub fn serialize<T: TopicType>(
    s: &T,
    rep: DataRepresentation,
    out: &mut Vec<u8>,
) -> Result<(), CdrError> {
    encapsulate(out, rep, T::extensibility(), |w| s.encode(w))
}

/// Serializes the key members only (the serialized key of a DATA with the K flag or of a
/// dispose/unregister), with the same encapsulation header `serialize` would use.
pub fn serialize_key<T: TopicType>(
    s: &T,
    rep: DataRepresentation,
    out: &mut Vec<u8>,
) -> Result<(), CdrError> {
    encapsulate(out, rep, T::extensibility(), |w| s.encode_key(w))
}

/// Splits off and parses the encapsulation header, returning a reader over the body.
fn open(bytes: &[u8]) -> Result<CdrReader<'_>, CdrError> {
    let (header, body) = bytes.split_at_checked(4).ok_or(CdrError::Truncated)?;
    let (rep, endianness) = parse_encapsulation(u16::from_be_bytes([header[0], header[1]]))?;
    Ok(CdrReader::new(body, rep, endianness))
}

/// Deserializes a sample written by [`serialize`] (or any peer), accepting every little- and
/// big-endian encapsulation id; trailing padding is ignored.
pub fn deserialize<T: TopicType>(bytes: &[u8]) -> Result<T, CdrError> {
    T::decode(&mut open(bytes)?)
}

/// Deserializes a serialized key (from [`serialize_key`]); non-key members are defaulted.
pub fn deserialize_key<T: TopicType>(bytes: &[u8]) -> Result<T, CdrError> {
    T::decode_key(&mut open(bytes)?)
}

/// Decodes any [`CdrDecode`] value from an encapsulated buffer.
pub fn deserialize_value<T: CdrDecode>(bytes: &[u8]) -> Result<T, CdrError> {
    T::decode(&mut open(bytes)?)
}
