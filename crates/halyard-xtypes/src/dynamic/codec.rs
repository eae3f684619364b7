//! Encoding and decoding of [`DynamicValue`]s in XCDR1 and XCDR2 (XTypes 1.3 §7.4), laid out
//! exactly as Cyclone DDS 11 writes them:
//!
//! * XCDR2: DHEADER before appendable and mutable structs and unions and before sequences,
//!   arrays and maps whose elements are not primitive (enums and bitmasks count as
//!   non-primitive, as in Cyclone's `is_primitive_type`); EMHEADER length codes chosen like
//!   Cyclone's `get_length_code` (0..=3 for fixed sizes, 5 for strings and DHEADER'd
//!   collections, 6/7 for sequences of 4/8-byte primitives, 4 otherwise); must-understand
//!   only on `@must_understand` members.
//! * XCDR1: mutable structs (and optional members of the others) as parameters with the
//!   long (PID_EXTENDED) header, the must-understand bit set in its short part, the value
//!   aligned as if it started at 0 mod 8, and a list end of 0x7f02.
//!
//! Decoding accepts every encapsulation id; skips unknown mutable members (fails on unknown
//! must-understand ones); defaults missing non-optional members of mutable structs and the
//! trailing members an appendable writer did not send; and reads short XCDR1 parameter headers too.

use halyard_cdr_core::{parse_encapsulation, DataRepresentation, Endianness, Extensibility};

use super::types::*;
use super::value::DynamicValue;
use super::wire::{truncated, In, Out};
use super::{default_within, DynamicError, MAX_DEFAULT_VALUES};
use crate::PrimitiveKind;

const PID_EXTENDED: u16 = 0x3f01;
const PID_LIST_END: u16 = 0x3f02;
const PID_MU: u16 = 0x4000;
const PL_LONG_MU: u32 = 0x4000_0000;
const PL_LONG_ID_MASK: u32 = 0x0fff_ffff;
const EM_MU: u32 = 0x8000_0000;
/// Most elements a collection of zero-sized elements may claim.
const MAX_EMPTY_ELEMENTS: usize = 1 << 16;

/// The encapsulation identifier (big-endian variant when `endianness` is big).
pub fn encapsulation_id(t: &DynamicType, rep: DataRepresentation, endianness: Endianness) -> u16 {
    let ext = top_extensibility(t);
    let le = halyard_cdr_core::encapsulation_id(rep, ext);
    match endianness {
        Endianness::Little => le,
        Endianness::Big => le & !1,
    }
}

fn top_extensibility(t: &DynamicType) -> Extensibility {
    match t.resolved().node() {
        TypeNode::Struct(s) => s.extensibility,
        TypeNode::Union(u) => u.extensibility,
        _ => Extensibility::Final,
    }
}

/// Encodes a sample with its 4-byte encapsulation header (body padded to 4, the padding
/// recorded in the options as Cyclone does).
pub fn encode(
    t: &DynamicType,
    v: &DynamicValue,
    rep: DataRepresentation,
    endianness: Endianness,
) -> Result<Vec<u8>, DynamicError> {
    encapsulated(t, rep, endianness, |out| write_value(out, t, v))
}

pub(crate) fn encapsulated(
    t: &DynamicType,
    rep: DataRepresentation,
    endianness: Endianness,
    body: impl FnOnce(&mut Out) -> Result<(), DynamicError>,
) -> Result<Vec<u8>, DynamicError> {
    let mut out = Out {
        buf: Vec::with_capacity(64),
        origin: 4,
        rep,
        be: endianness == Endianness::Big,
    };
    out.buf
        .extend_from_slice(&encapsulation_id(t, rep, endianness).to_be_bytes());
    out.buf.extend_from_slice(&[0, 0]);
    body(&mut out)?;
    let pad = (4 - (out.buf.len() - 4) % 4) % 4;
    out.buf.resize(out.buf.len() + pad, 0);
    out.buf[3] = pad as u8;
    Ok(out.buf)
}

/// Decodes a sample (encapsulation header included, any encapsulation id).
pub fn decode(t: &DynamicType, bytes: &[u8]) -> Result<DynamicValue, DynamicError> {
    let mut r = open(bytes)?;
    read_value(&mut r, t)
}

pub(crate) fn open(bytes: &[u8]) -> Result<In<'_>, DynamicError> {
    let header = bytes.get(..4).ok_or_else(truncated)?;
    let id = u16::from_be_bytes([header[0], header[1]]);
    let (rep, endianness) = parse_encapsulation(id)
        .map_err(|_| DynamicError::decode(format!("unknown encapsulation id {id:#06x}")))?;
    Ok(In {
        buf: bytes,
        pos: 4,
        end: bytes.len(),
        origin: 4,
        rep,
        be: endianness == Endianness::Big,
        defaults_left: MAX_DEFAULT_VALUES,
    })
}

fn mismatch(t: &DynamicType, v: &DynamicValue) -> DynamicError {
    DynamicError::value(format!(
        "value {} does not fit type {}",
        short(v),
        type_label(t)
    ))
}

fn short(v: &DynamicValue) -> String {
    let s = format!("{v:?}");
    s.chars().take(40).collect()
}

/// A short description of a type for messages.
pub(crate) fn type_label(t: &DynamicType) -> String {
    match t.node() {
        TypeNode::Primitive(p) => format!("{p:?}"),
        TypeNode::String8 { .. } => "string".into(),
        TypeNode::String16 { .. } => "wstring".into(),
        TypeNode::Sequence { .. } => "sequence".into(),
        TypeNode::Array { .. } => "array".into(),
        TypeNode::Map { .. } => "map".into(),
        _ => t.name().unwrap_or("?").to_owned(),
    }
}

// ---------------------------------------------------------------------------------------------
// Encoding

pub(crate) fn write_value(
    out: &mut Out,
    t: &DynamicType,
    v: &DynamicValue,
) -> Result<(), DynamicError> {
    use DynamicValue as V;
    let t = t.resolved();
    match (t.node(), v) {
        (TypeNode::Primitive(p), v) => write_primitive(out, *p, v).ok_or_else(|| mismatch(t, v)),
        (TypeNode::String8 { bound }, V::String(s)) => write_string8(out, *bound, s),
        (TypeNode::String16 { bound }, V::String(s)) => write_string16(out, *bound, s),
        (TypeNode::Enum(e), V::Enum(x)) => {
            if e.by_value(*x).is_none() {
                return Err(DynamicError::value(format!(
                    "{x} is no enumerator of {}",
                    e.name
                )));
            }
            write_sized(out, enum_size(e.bit_bound), *x as i64 as u64);
            Ok(())
        }
        (TypeNode::Bitmask(b), V::Bitmask(x)) => {
            if b.bit_bound < 64 && x >> b.bit_bound != 0 {
                return Err(DynamicError::value(format!(
                    "bits {x:#x} beyond bit_bound {}",
                    b.bit_bound
                )));
            }
            write_sized(out, bitmask_size(b.bit_bound), *x);
            Ok(())
        }
        (TypeNode::Sequence { .. } | TypeNode::Array { .. } | TypeNode::Map { .. }, _) => {
            write_collection(out, t, v)
        }
        (TypeNode::Struct(s), V::Struct(slots)) => write_struct(out, s, slots),
        (
            TypeNode::Union(u),
            V::Union {
                discriminator,
                case,
            },
        ) => {
            let case = case.as_ref().map(|(i, v)| (*i, &**v));
            write_union(out, u, discriminator, case)
        }
        _ => Err(mismatch(t, v)),
    }
}

/// Sequences, arrays and maps (a DHEADER first in XCDR2 unless the elements are primitive).
fn write_collection(out: &mut Out, t: &DynamicType, v: &DynamicValue) -> Result<(), DynamicError> {
    let over = |n: usize, bound: u32| bound != 0 && n > bound as usize;
    match (t.node(), v) {
        (TypeNode::Sequence { element, bound }, DynamicValue::Sequence(items)) => {
            if over(items.len(), *bound) {
                return Err(DynamicError::value(format!(
                    "{} elements exceed the bound {bound}",
                    items.len()
                )));
            }
            with_dheader(out, !element.is_primitive(), |out| {
                out.u32(count(items.len())?);
                write_elements(out, element, items)
            })
        }
        (TypeNode::Array { element, dims }, DynamicValue::Array(items)) => {
            let n = array_len(dims);
            if items.len() as u64 != n {
                return Err(DynamicError::value(format!(
                    "array has {} elements, type wants {n}",
                    items.len()
                )));
            }
            with_dheader(out, !element.is_primitive(), |out| {
                write_elements(out, element, items)
            })
        }
        (TypeNode::Map { key, value, bound }, DynamicValue::Map(pairs)) => {
            if over(pairs.len(), *bound) {
                return Err(DynamicError::value(format!(
                    "{} entries exceed the bound {bound}",
                    pairs.len()
                )));
            }
            with_dheader(out, !(key.is_primitive() && value.is_primitive()), |out| {
                out.u32(count(pairs.len())?);
                for (i, (k, v)) in pairs.iter().enumerate() {
                    write_value(out, key, k).map_err(|e| e.at(&format!("[{i}]")))?;
                    write_value(out, value, v).map_err(|e| e.at(&format!("[{i}]")))?;
                }
                Ok(())
            })
        }
        _ => Err(mismatch(t, v)),
    }
}

fn count(n: usize) -> Result<u32, DynamicError> {
    u32::try_from(n).map_err(|_| DynamicError::value("more than 2^32 elements"))
}

/// The number of elements of an array (saturating: dimensions come from peers).
pub(crate) fn array_len(dims: &[u32]) -> u64 {
    dims.iter()
        .fold(1u64, |n, d| n.saturating_mul(u64::from(*d)))
}

fn write_elements(
    out: &mut Out,
    element: &DynamicType,
    items: &[DynamicValue],
) -> Result<(), DynamicError> {
    for (i, item) in items.iter().enumerate() {
        write_value(out, element, item).map_err(|e| e.at(&format!("[{i}]")))?;
    }
    Ok(())
}

fn with_dheader(
    out: &mut Out,
    non_primitive: bool,
    f: impl FnOnce(&mut Out) -> Result<(), DynamicError>,
) -> Result<(), DynamicError> {
    if out.rep != DataRepresentation::Xcdr2 || !non_primitive {
        return f(out);
    }
    let at = out.reserve_u32();
    f(out)?;
    out.close_len(at)
}

fn write_sized(out: &mut Out, size: usize, x: u64) {
    let b = x.to_le_bytes();
    out.prim(&b[..size]);
}

fn write_primitive(out: &mut Out, p: PrimitiveKind, v: &DynamicValue) -> Option<()> {
    use DynamicValue as V;
    use PrimitiveKind as P;
    match (p, v) {
        (P::Boolean, V::Bool(b)) => out.buf.push(u8::from(*b)),
        (P::Byte, V::Byte(x)) | (P::UInt8, V::UInt8(x)) => out.buf.push(*x),
        (P::Int8, V::Int8(x)) => out.buf.push(*x as u8),
        (P::Int16, V::Int16(x)) => out.prim(&x.to_le_bytes()),
        (P::UInt16, V::UInt16(x)) => out.prim(&x.to_le_bytes()),
        (P::Int32, V::Int32(x)) => out.prim(&x.to_le_bytes()),
        (P::UInt32, V::UInt32(x)) => out.prim(&x.to_le_bytes()),
        (P::Int64, V::Int64(x)) => out.prim(&x.to_le_bytes()),
        (P::UInt64, V::UInt64(x)) => out.prim(&x.to_le_bytes()),
        (P::Float32, V::Float32(x)) => out.prim(&x.to_le_bytes()),
        (P::Float64, V::Float64(x)) => out.prim(&x.to_le_bytes()),
        (P::Char8, V::Char8(c)) => out.buf.push(u8::try_from(u32::from(*c)).ok()?),
        (P::Char16, V::Char16(c)) => out.prim(&u16::try_from(u32::from(*c)).ok()?.to_le_bytes()),
        _ => return None,
    }
    Some(())
}

fn write_string8(out: &mut Out, bound: u32, s: &str) -> Result<(), DynamicError> {
    if bound != 0 && s.len() > bound as usize {
        return Err(DynamicError::value(format!(
            "string of {} bytes exceeds the bound {bound}",
            s.len()
        )));
    }
    if s.contains('\0') {
        return Err(DynamicError::value("string contains a NUL character"));
    }
    out.u32(count(s.len() + 1)?);
    out.buf.extend_from_slice(s.as_bytes());
    out.buf.push(0);
    Ok(())
}

/// `wstring`: XCDR2 only (byte length, then UTF-16 code units, no terminator).
fn write_string16(out: &mut Out, bound: u32, s: &str) -> Result<(), DynamicError> {
    if out.rep == DataRepresentation::Xcdr1 {
        return Err(DynamicError::Unsupported("wstring in XCDR1"));
    }
    let units: Vec<u16> = s.encode_utf16().collect();
    if bound != 0 && units.len() > bound as usize {
        return Err(DynamicError::value(format!(
            "wstring of {} characters exceeds the bound {bound}",
            units.len()
        )));
    }
    out.u32(count(units.len() * 2)?);
    for u in units {
        out.u16(u);
    }
    Ok(())
}

fn write_struct(
    out: &mut Out,
    s: &StructDesc,
    slots: &[Option<DynamicValue>],
) -> Result<(), DynamicError> {
    if slots.len() != s.members.len() {
        return Err(DynamicError::value(format!(
            "struct {} has {} members, value has {}",
            s.name,
            s.members.len(),
            slots.len()
        )));
    }
    let xcdr2 = out.rep == DataRepresentation::Xcdr2;
    let dheader = (xcdr2 && s.extensibility != Extensibility::Final).then(|| out.reserve_u32());
    for (m, slot) in s.members.iter().zip(slots) {
        write_member(out, s.extensibility, m, slot.as_ref()).map_err(|e| e.at(&m.name))?;
    }
    if !xcdr2 && s.extensibility == Extensibility::Mutable {
        out.align(4);
        out.u16(PID_LIST_END | PID_MU);
        out.u16(0);
    }
    match dheader {
        Some(at) => out.close_len(at),
        None => Ok(()),
    }
}

fn write_member(
    out: &mut Out,
    ext: Extensibility,
    m: &MemberDesc,
    v: Option<&DynamicValue>,
) -> Result<(), DynamicError> {
    let v = match (v, m.optional) {
        (Some(v), _) => Some(v),
        (None, true) => None,
        (None, false) => return Err(DynamicError::value("non-optional member is absent")),
    };
    match (out.rep, ext) {
        (DataRepresentation::Xcdr2, Extensibility::Mutable) => match v {
            Some(v) => write_emheader_member(out, m.id, m.must_understand, &m.ty, v),
            None => Ok(()),
        },
        (DataRepresentation::Xcdr1, Extensibility::Mutable) => match v {
            Some(v) => write_param(out, m.id, m.must_understand, ParamEnd::Padded, |out| {
                write_value(out, &m.ty, v)
            }),
            None => Ok(()),
        },
        (DataRepresentation::Xcdr2, _) if m.optional => {
            out.buf.push(u8::from(v.is_some()));
            v.map_or(Ok(()), |v| write_value(out, &m.ty, v))
        }
        (DataRepresentation::Xcdr1, _) if m.optional => {
            write_param(out, m.id, m.must_understand, ParamEnd::Exact, |out| {
                v.map_or(Ok(()), |v| write_value(out, &m.ty, v))
            })
        }
        _ => v.map_or(Ok(()), |v| write_value(out, &m.ty, v)),
    }
}

/// How an XCDR1 parameter's length is closed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ParamEnd {
    /// A member of a mutable struct: the value is padded to 4 and the padding counted (as
    /// XTypes 1.1 said and RTI expects; Cyclone's `dds_stream_write_xcdr1_pl_member`).
    Padded,
    /// An optional member of a final/appendable struct or a mutable union member: the exact
    /// length.
    Exact,
}

/// An XCDR1 parameter as Cyclone 11 writes it: long header, value aligned as if at 0 mod 8.
fn write_param(
    out: &mut Out,
    id: u32,
    must_understand: bool,
    end: ParamEnd,
    f: impl FnOnce(&mut Out) -> Result<(), DynamicError>,
) -> Result<(), DynamicError> {
    if id > PL_LONG_ID_MASK {
        return Err(DynamicError::value(format!(
            "member id {id:#x} too large for a parameter header"
        )));
    }
    out.align(4);
    out.u16(PID_EXTENDED | PID_MU);
    out.u16(8);
    out.u32(id | if must_understand { PL_LONG_MU } else { 0 });
    let at = out.reserve_u32();
    let saved = out.origin;
    out.origin += (out.buf.len() - out.origin) % 8;
    let r = f(out);
    out.origin = saved;
    r?;
    if end == ParamEnd::Padded {
        let pad = (4 - (out.buf.len() - at - 4) % 4) % 4;
        out.buf.resize(out.buf.len() + pad, 0);
    }
    out.close_len(at)
}

/// Cyclone's EMHEADER length code for a member of type `t` (`get_length_code`).
fn length_code(t: &DynamicType) -> u32 {
    if let Some(size) = t.fixed_size() {
        return match size {
            1 => 0,
            2 => 1,
            4 => 2,
            _ => 3,
        };
    }
    match t.resolved().node() {
        TypeNode::String8 { .. } | TypeNode::String16 { .. } => 5,
        TypeNode::Sequence { element, .. } => match element.resolved().node() {
            TypeNode::Primitive(p) => match primitive_size(*p) {
                Some(1) => 5,
                Some(4) => 6,
                Some(8) => 7,
                _ => 4,
            },
            _ => 5,
        },
        TypeNode::Array { element, .. } if element.is_primitive() => 4,
        TypeNode::Array { .. } => 5,
        _ => 4,
    }
}

fn write_emheader_member(
    out: &mut Out,
    id: u32,
    must_understand: bool,
    t: &DynamicType,
    v: &DynamicValue,
) -> Result<(), DynamicError> {
    if id > PL_LONG_ID_MASK {
        return Err(DynamicError::value(format!(
            "member id {id:#x} too large for an EMHEADER"
        )));
    }
    let lc = length_code(t);
    out.u32(if must_understand { EM_MU } else { 0 } | (lc << 28) | id);
    if lc != 4 {
        return write_value(out, t, v);
    }
    let at = out.reserve_u32();
    write_value(out, t, v)?;
    out.close_len(at)
}

fn write_union(
    out: &mut Out,
    u: &UnionDesc,
    disc: &DynamicValue,
    case: Option<(usize, &DynamicValue)>,
) -> Result<(), DynamicError> {
    let label = disc
        .as_label()
        .ok_or_else(|| DynamicError::value("discriminator is not integral").at("discriminator"))?;
    let selected = u.case_for(label);
    let case = match (case, selected) {
        (Some((i, v)), Some(s)) if i == s => u.cases.get(i).map(|c| (c, v)),
        (None, None) => None,
        _ => {
            return Err(DynamicError::value(format!(
                "discriminator {label} does not select the case given"
            )))
        }
    };
    let xcdr2 = out.rep == DataRepresentation::Xcdr2;
    match u.extensibility {
        // Cyclone's dds_stream_write_mutable_uni: the discriminator as must-understand
        // parameter 0, the case as a parameter of its id, then the list end.
        Extensibility::Mutable if !xcdr2 => {
            write_param(out, 0, true, ParamEnd::Exact, |out| {
                write_value(out, &u.discriminator, disc).map_err(|e| e.at("discriminator"))
            })?;
            if let Some((c, v)) = case {
                write_param(out, c.id, false, ParamEnd::Exact, |out| {
                    write_value(out, &c.ty, v).map_err(|e| e.at(&c.name))
                })?;
            }
            out.align(4);
            out.u16(PID_LIST_END | PID_MU);
            out.u16(0);
            Ok(())
        }
        Extensibility::Mutable => with_dheader(out, true, |out| {
            let at = write_em_nextint(out, 0, true);
            write_value(out, &u.discriminator, disc).map_err(|e| e.at("discriminator"))?;
            out.close_len(at)?;
            if let Some((c, v)) = case {
                let at = write_em_nextint(out, c.id, false);
                write_value(out, &c.ty, v).map_err(|e| e.at(&c.name))?;
                out.close_len(at)?;
            }
            Ok(())
        }),
        ext => with_dheader(out, ext == Extensibility::Appendable, |out| {
            write_value(out, &u.discriminator, disc).map_err(|e| e.at("discriminator"))?;
            match case {
                Some((c, v)) => write_value(out, &c.ty, v).map_err(|e| e.at(&c.name)),
                None => Ok(()),
            }
        }),
    }
}

fn write_em_nextint(out: &mut Out, id: u32, mu: bool) -> usize {
    out.u32(if mu { EM_MU } else { 0 } | (4 << 28) | (id & PL_LONG_ID_MASK));
    out.reserve_u32()
}

// ---------------------------------------------------------------------------------------------
// Decoding

pub(crate) fn read_value(r: &mut In<'_>, t: &DynamicType) -> Result<DynamicValue, DynamicError> {
    let t = t.resolved();
    Ok(match t.node() {
        TypeNode::Primitive(p) => read_primitive(r, *p)?,
        TypeNode::String8 { bound } => DynamicValue::String(read_string8(r, *bound)?),
        TypeNode::String16 { bound } => DynamicValue::String(read_string16(r, *bound)?),
        TypeNode::Enum(e) => {
            let x = read_sized(r, enum_size(e.bit_bound))?;
            let x = sign_extend(x, enum_size(e.bit_bound)) as i32;
            if e.by_value(x).is_none() {
                return Err(DynamicError::decode(format!(
                    "{x} is no enumerator of {}",
                    e.name
                )));
            }
            DynamicValue::Enum(x)
        }
        TypeNode::Bitmask(b) => DynamicValue::Bitmask(read_sized(r, bitmask_size(b.bit_bound))?),
        TypeNode::Sequence { element, bound } => {
            let element = element.clone();
            let bound = *bound;
            read_dheadered(r, !element.is_primitive(), |r| {
                let n = r.u32()? as usize;
                if bound != 0 && n > bound as usize {
                    return Err(DynamicError::decode(format!(
                        "{n} elements exceed the bound {bound}"
                    )));
                }
                read_elements(r, &element, n).map(DynamicValue::Sequence)
            })?
        }
        TypeNode::Array { element, dims } => {
            let n = usize::try_from(array_len(dims))
                .map_err(|_| DynamicError::decode("array too large"))?;
            read_dheadered(r, !element.is_primitive(), |r| read_elements(r, element, n))
                .map(DynamicValue::Array)?
        }
        TypeNode::Map { key, value, bound } => read_map(r, key, value, *bound)?,
        TypeNode::Struct(s) => read_struct(r, s)?,
        TypeNode::Union(u) => read_union(r, u)?,
        TypeNode::Alias { .. } => return Err(DynamicError::decode("unresolved alias")),
    })
}

fn read_map(
    r: &mut In<'_>,
    key: &DynamicType,
    value: &DynamicType,
    bound: u32,
) -> Result<DynamicValue, DynamicError> {
    read_dheadered(r, !(key.is_primitive() && value.is_primitive()), |r| {
        let n = r.u32()? as usize;
        if bound != 0 && n > bound as usize {
            return Err(DynamicError::decode(format!(
                "{n} entries exceed the bound {bound}"
            )));
        }
        check_count(r, n, min_size(key).saturating_add(min_size(value)))?;
        let mut pairs = Vec::with_capacity(n.min(r.remaining()));
        for i in 0..n {
            let k = read_value(r, key).map_err(|e| e.at(&format!("[{i}]")))?;
            let v = read_value(r, value).map_err(|e| e.at(&format!("[{i}]")))?;
            pairs.push((k, v));
        }
        Ok(DynamicValue::Map(pairs))
    })
}

fn check_count(r: &In<'_>, n: usize, min_size: usize) -> Result<(), DynamicError> {
    let limit = r
        .remaining()
        .checked_div(min_size)
        .unwrap_or(MAX_EMPTY_ELEMENTS);
    if n > limit {
        return Err(DynamicError::decode(format!(
            "count {n} exceeds what the input can hold ({limit})"
        )));
    }
    Ok(())
}

/// A lower bound of the encoded size of `t` (used to refuse absurd counts before allocating).
fn min_size(t: &DynamicType) -> usize {
    if let Some(s) = t.fixed_size() {
        return s;
    }
    match t.resolved().node() {
        TypeNode::String8 { .. } | TypeNode::String16 { .. } => 4,
        TypeNode::Sequence { .. } | TypeNode::Map { .. } => 4,
        TypeNode::Array { element, dims } => {
            min_size(element).saturating_mul(usize::try_from(array_len(dims)).unwrap_or(usize::MAX))
        }
        TypeNode::Struct(s) if s.extensibility != Extensibility::Final => 4,
        TypeNode::Struct(s) => s
            .members
            .iter()
            .filter(|m| !m.optional)
            .map(|m| min_size(&m.ty))
            .fold(0, usize::saturating_add),
        TypeNode::Union(u) => min_size(&u.discriminator),
        _ => 1,
    }
}

fn read_elements(
    r: &mut In<'_>,
    element: &DynamicType,
    n: usize,
) -> Result<Vec<DynamicValue>, DynamicError> {
    check_count(r, n, min_size(element))?;
    let mut v = Vec::with_capacity(n.min(r.remaining()));
    for i in 0..n {
        v.push(read_value(r, element).map_err(|e| e.at(&format!("[{i}]")))?);
    }
    Ok(v)
}

fn read_dheadered<T>(
    r: &mut In<'_>,
    non_primitive: bool,
    f: impl FnOnce(&mut In<'_>) -> Result<T, DynamicError>,
) -> Result<T, DynamicError> {
    if r.rep != DataRepresentation::Xcdr2 || !non_primitive {
        return f(r);
    }
    let len = r.u32()? as usize;
    let outer = r.enter(len)?;
    let v = f(r)?;
    r.leave(outer);
    Ok(v)
}

fn read_sized(r: &mut In<'_>, size: usize) -> Result<u64, DynamicError> {
    Ok(match size {
        1 => u64::from(r.prim::<1>()?[0]),
        2 => u64::from(u16::from_le_bytes(r.prim::<2>()?)),
        4 => u64::from(u32::from_le_bytes(r.prim::<4>()?)),
        _ => u64::from_le_bytes(r.prim::<8>()?),
    })
}

fn sign_extend(x: u64, size: usize) -> i64 {
    match size {
        1 => i64::from(x as u8 as i8),
        2 => i64::from(x as u16 as i16),
        4 => i64::from(x as u32 as i32),
        _ => x as i64,
    }
}

fn read_primitive(r: &mut In<'_>, p: PrimitiveKind) -> Result<DynamicValue, DynamicError> {
    use DynamicValue as V;
    use PrimitiveKind as P;
    Ok(match p {
        P::Boolean => match r.prim::<1>()?[0] {
            0 => V::Bool(false),
            1 => V::Bool(true),
            b => return Err(DynamicError::decode(format!("boolean octet {b:#04x}"))),
        },
        P::Byte => V::Byte(r.prim::<1>()?[0]),
        P::UInt8 => V::UInt8(r.prim::<1>()?[0]),
        P::Int8 => V::Int8(r.prim::<1>()?[0] as i8),
        P::Int16 => V::Int16(i16::from_le_bytes(r.prim()?)),
        P::UInt16 => V::UInt16(u16::from_le_bytes(r.prim()?)),
        P::Int32 => V::Int32(i32::from_le_bytes(r.prim()?)),
        P::UInt32 => V::UInt32(u32::from_le_bytes(r.prim()?)),
        P::Int64 => V::Int64(i64::from_le_bytes(r.prim()?)),
        P::UInt64 => V::UInt64(u64::from_le_bytes(r.prim()?)),
        P::Float32 => V::Float32(f32::from_le_bytes(r.prim()?)),
        P::Float64 => V::Float64(f64::from_le_bytes(r.prim()?)),
        P::Char8 => V::Char8(char::from(r.prim::<1>()?[0])),
        P::Char16 => {
            let u = u16::from_le_bytes(r.prim()?);
            V::Char16(
                char::from_u32(u32::from(u))
                    .ok_or_else(|| DynamicError::decode("wchar is a lone surrogate"))?,
            )
        }
        P::Float128 => return Err(DynamicError::Unsupported("float128 (long double) values")),
    })
}

fn read_string8(r: &mut In<'_>, bound: u32) -> Result<String, DynamicError> {
    let n = r.u32()? as usize;
    let bytes = r.bytes(n)?;
    let text = match bytes.split_last() {
        Some((0, text)) => text,
        _ => return Err(DynamicError::decode("string lacks its NUL terminator")),
    };
    if bound != 0 && text.len() > bound as usize {
        return Err(DynamicError::decode(format!(
            "string of {} bytes exceeds the bound {bound}",
            text.len()
        )));
    }
    String::from_utf8(text.to_vec()).map_err(|_| DynamicError::decode("string is not UTF-8"))
}

fn read_string16(r: &mut In<'_>, bound: u32) -> Result<String, DynamicError> {
    if r.rep == DataRepresentation::Xcdr1 {
        return Err(DynamicError::Unsupported("wstring in XCDR1"));
    }
    let n = r.u32()? as usize;
    if !n.is_multiple_of(2) {
        return Err(DynamicError::decode("wstring byte length is odd"));
    }
    let bytes = r.bytes(n)?;
    let units: Vec<u16> = bytes
        .chunks_exact(2)
        .map(|c| {
            if r.be {
                u16::from_be_bytes([c[0], c[1]])
            } else {
                u16::from_le_bytes([c[0], c[1]])
            }
        })
        .collect();
    if bound != 0 && units.len() > bound as usize {
        return Err(DynamicError::decode(format!(
            "wstring exceeds the bound {bound}"
        )));
    }
    String::from_utf16(&units).map_err(|_| DynamicError::decode("wstring is not UTF-16"))
}

fn read_struct(r: &mut In<'_>, s: &StructDesc) -> Result<DynamicValue, DynamicError> {
    let xcdr2 = r.rep == DataRepresentation::Xcdr2;
    if s.extensibility == Extensibility::Mutable {
        return read_dheadered(r, xcdr2, |r| read_mutable(r, s));
    }
    read_dheadered(r, s.extensibility == Extensibility::Appendable, |r| {
        let mut slots = Vec::with_capacity(s.members.len());
        for m in &s.members {
            // An appendable writer of an older version may stop early (XTypes 1.3 §7.4.3.5.2).
            if xcdr2 && s.extensibility == Extensibility::Appendable && r.remaining() == 0 {
                slots.push(if m.optional {
                    None
                } else {
                    Some(default_within(&m.ty, &mut r.defaults_left)?)
                });
                continue;
            }
            slots.push(read_member(r, m).map_err(|e| e.at(&m.name))?);
        }
        Ok(DynamicValue::Struct(slots))
    })
}

fn read_member(r: &mut In<'_>, m: &MemberDesc) -> Result<Option<DynamicValue>, DynamicError> {
    if !m.optional {
        return read_value(r, &m.ty).map(Some);
    }
    if r.rep == DataRepresentation::Xcdr2 {
        return match r.prim::<1>()?[0] {
            0 => Ok(None),
            1 => read_value(r, &m.ty).map(Some),
            b => Err(DynamicError::decode(format!("presence flag {b:#04x}"))),
        };
    }
    let h = read_param_header(r)?
        .ok_or_else(|| DynamicError::decode("list end in place of an optional member"))?;
    if h.len == 0 {
        return Ok(None);
    }
    read_param_body(r, &h, &m.ty).map(Some)
}

struct Header {
    id: u32,
    must_understand: bool,
    len: usize,
}

/// An XCDR1 parameter header (short or long); `None` at the list end.
fn read_param_header(r: &mut In<'_>) -> Result<Option<Header>, DynamicError> {
    r.align(4)?;
    let pid = r.u16()?;
    let slen = usize::from(r.u16()?);
    match pid & 0x3fff {
        PID_LIST_END => Ok(None),
        PID_EXTENDED => {
            if slen != 8 {
                return Err(DynamicError::decode(
                    "extended parameter header of bad length",
                ));
            }
            let id = r.u32()?;
            let len = r.u32()? as usize;
            Ok(Some(Header {
                id: id & PL_LONG_ID_MASK,
                must_understand: id & PL_LONG_MU != 0,
                len,
            }))
        }
        id => Ok(Some(Header {
            id: u32::from(id),
            must_understand: pid & PID_MU != 0,
            len: slen,
        })),
    }
}

fn read_param_body(
    r: &mut In<'_>,
    h: &Header,
    t: &DynamicType,
) -> Result<DynamicValue, DynamicError> {
    let outer = r.enter(h.len)?;
    let saved = r.origin;
    r.origin += (r.pos - r.origin) % 8;
    let v = read_value(r, t);
    r.origin = saved;
    r.leave(outer);
    v
}

fn read_mutable(r: &mut In<'_>, s: &StructDesc) -> Result<DynamicValue, DynamicError> {
    let mut slots: Vec<Option<DynamicValue>> = vec![None; s.members.len()];
    let limit = r.remaining() / 4 + 1;
    for _ in 0..limit {
        let (h, lc_overlaps) = match r.rep {
            DataRepresentation::Xcdr1 => match read_param_header(r)? {
                Some(h) => (h, false),
                None => break,
            },
            DataRepresentation::Xcdr2 if r.remaining() == 0 => break,
            DataRepresentation::Xcdr2 => read_emheader(r)?,
        };
        let _ = lc_overlaps;
        let Some((i, m)) = s.members.iter().enumerate().find(|(_, m)| m.id == h.id) else {
            if h.must_understand {
                return Err(DynamicError::decode(format!(
                    "unknown member {:#x} is must-understand",
                    h.id
                )));
            }
            r.enter(h.len).map(|outer| r.leave(outer))?;
            continue;
        };
        let v = match r.rep {
            DataRepresentation::Xcdr1 => read_param_body(r, &h, &m.ty),
            DataRepresentation::Xcdr2 => {
                let outer = r.enter(h.len)?;
                let v = read_value(r, &m.ty);
                r.leave(outer);
                v
            }
        };
        slots[i] = Some(v.map_err(|e| e.at(&m.name))?);
    }
    for (slot, m) in slots.iter_mut().zip(&s.members) {
        if slot.is_none() && !m.optional {
            *slot = Some(default_within(&m.ty, &mut r.defaults_left)?);
        }
    }
    Ok(DynamicValue::Struct(slots))
}

/// An XCDR2 EMHEADER (+ NEXTINT); for length codes 5..=7 the NEXTINT is left in place
/// because it is also the start of the member's value.
fn read_emheader(r: &mut In<'_>) -> Result<(Header, bool), DynamicError> {
    let h = r.u32()?;
    let lc = (h >> 28) & 7;
    let len = match lc {
        0..=3 => 1usize << lc,
        4 => r.u32()? as usize,
        _ => {
            let at = r.pos;
            let next = r.u32()? as usize;
            r.pos = at;
            let unit = [1usize, 4, 8][(lc - 5) as usize];
            next.checked_mul(unit)
                .and_then(|n| n.checked_add(4))
                .ok_or_else(|| DynamicError::decode("EMHEADER length overflows"))?
        }
    };
    Ok((
        Header {
            id: h & PL_LONG_ID_MASK,
            must_understand: h & EM_MU != 0,
            len,
        },
        lc >= 5,
    ))
}

fn read_union(r: &mut In<'_>, u: &UnionDesc) -> Result<DynamicValue, DynamicError> {
    match u.extensibility {
        Extensibility::Mutable => {
            let xcdr2 = r.rep == DataRepresentation::Xcdr2;
            read_dheadered(r, xcdr2, |r| read_mutable_union(r, u))
        }
        ext => read_dheadered(r, ext == Extensibility::Appendable, |r| {
            let disc = read_value(r, &u.discriminator).map_err(|e| e.at("discriminator"))?;
            let case = match select(u, &disc)? {
                Some(i) => Some((i, Box::new(read_case(r, u, i)?))),
                None => None,
            };
            Ok(DynamicValue::Union {
                discriminator: Box::new(disc),
                case,
            })
        }),
    }
}

/// The next member header of a mutable type (parameter or EMHEADER); `None` at the end.
fn next_part(r: &mut In<'_>) -> Result<Option<Header>, DynamicError> {
    match r.rep {
        DataRepresentation::Xcdr1 => read_param_header(r),
        DataRepresentation::Xcdr2 if r.remaining() == 0 => Ok(None),
        DataRepresentation::Xcdr2 => read_emheader(r).map(|(h, _)| Some(h)),
    }
}

/// The value of a member whose header was just read.
fn part_body(r: &mut In<'_>, h: &Header, t: &DynamicType) -> Result<DynamicValue, DynamicError> {
    match r.rep {
        DataRepresentation::Xcdr1 => read_param_body(r, h, t),
        DataRepresentation::Xcdr2 => {
            let outer = r.enter(h.len)?;
            let v = read_value(r, t);
            r.leave(outer);
            v
        }
    }
}

/// A mutable union: the discriminator (member 0), then the selected case; in XCDR1 the
/// parameter list end (anything else before it is skipped).
fn read_mutable_union(r: &mut In<'_>, u: &UnionDesc) -> Result<DynamicValue, DynamicError> {
    let h = next_part(r)?.ok_or_else(|| DynamicError::decode("union without discriminator"))?;
    let disc = part_body(r, &h, &u.discriminator).map_err(|e| e.at("discriminator"))?;
    let mut case = None;
    let mut ended = false;
    if let Some(i) = select(u, &disc)? {
        match next_part(r)? {
            Some(h) => {
                let c = u
                    .cases
                    .get(i)
                    .ok_or_else(|| DynamicError::decode("case index"))?;
                let v = part_body(r, &h, &c.ty).map_err(|e| e.at(&c.name))?;
                case = Some((i, Box::new(v)));
            }
            None => ended = true,
        }
    }
    // XCDR1: up to and including the list end (XCDR2: the DHEADER window is left anyway).
    if r.rep == DataRepresentation::Xcdr1 && !ended {
        for _ in 0..r.remaining() / 4 + 1 {
            let Some(h) = read_param_header(r)? else {
                break;
            };
            r.enter(h.len).map(|outer| r.leave(outer))?;
        }
    }
    Ok(DynamicValue::Union {
        discriminator: Box::new(disc),
        case,
    })
}

fn select(u: &UnionDesc, disc: &DynamicValue) -> Result<Option<usize>, DynamicError> {
    let label = disc
        .as_label()
        .ok_or_else(|| DynamicError::decode("discriminator is not integral"))?;
    Ok(u.case_for(label))
}

fn read_case(r: &mut In<'_>, u: &UnionDesc, i: usize) -> Result<DynamicValue, DynamicError> {
    let c = u
        .cases
        .get(i)
        .ok_or_else(|| DynamicError::decode("case index"))?;
    read_value(r, &c.ty).map_err(|e| e.at(&c.name))
}
