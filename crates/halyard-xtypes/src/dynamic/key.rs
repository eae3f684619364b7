//! Keys of dynamic samples (XTypes 1.3 §7.6.8), computed exactly as `halyard-cdr`'s
//! `key_hash` does for derived types: the key members, flattened (a struct-typed key member
//! contributes its own key members, or all its members when it has none; mutable structs in
//! member-id order), serialized XCDR2 big-endian without struct headers; zero-padded to 16
//! bytes when the maximum key size is at most 16, otherwise their MD5.

use halyard_cdr_core::{DataRepresentation, Endianness, Extensibility};
use md5::{Digest, Md5};

use super::codec::{encapsulated, open, read_value, write_value};
use super::types::*;
use super::wire::{In, Out};
use super::{default_within, DynamicError, DynamicValue};

/// The members serialized when `s` is (part of) a key, as indices, in key order.
fn effective_keys(s: &StructDesc) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..s.members.len()).filter(|i| s.members[*i].key).collect();
    if idx.is_empty() {
        idx = (0..s.members.len()).collect();
    }
    if s.extensibility == Extensibility::Mutable {
        idx.sort_by_key(|i| s.members[*i].id);
    }
    idx
}

fn write_key_members(out: &mut Out, t: &DynamicType, v: &DynamicValue) -> Result<(), DynamicError> {
    let Some(s) = t.as_struct() else {
        return write_value(out, t, v);
    };
    let DynamicValue::Struct(slots) = v else {
        return Err(DynamicError::value("expected a struct value"));
    };
    for i in effective_keys(s) {
        let m = &s.members[i];
        let slot = slots.get(i).and_then(Option::as_ref);
        if m.optional {
            // Only reachable through a keyless struct used as a key: like halyard-cdr's
            // `Option<T>`, a presence octet then the value.
            out.buf.push(u8::from(slot.is_some()));
        }
        let Some(mv) = slot else {
            if m.optional {
                continue;
            }
            return Err(DynamicError::value("key member is absent").at(&m.name));
        };
        write_key_members(out, &m.ty, mv).map_err(|e| e.at(&m.name))?;
    }
    Ok(())
}

fn read_key_members(r: &mut In<'_>, t: &DynamicType) -> Result<DynamicValue, DynamicError> {
    let Some(s) = t.as_struct() else {
        return read_value(r, t);
    };
    let mut slots: Vec<Option<DynamicValue>> = Vec::with_capacity(s.members.len());
    for m in &s.members {
        slots.push(if m.optional {
            None
        } else {
            Some(default_within(&m.ty, &mut r.defaults_left)?)
        });
    }
    for i in effective_keys(s) {
        let m = &s.members[i];
        if m.optional {
            match r.bytes(1)?.first() {
                Some(0) => continue,
                Some(1) => {}
                _ => return Err(DynamicError::decode("presence flag").at(&m.name)),
            }
        }
        slots[i] = Some(read_key_members(r, &m.ty).map_err(|e| e.at(&m.name))?);
    }
    Ok(DynamicValue::Struct(slots))
}

/// The serialized key (encapsulation header + flattened key members), as a DATA with the K
/// flag or a dispose carries it.
pub fn encode_key(
    t: &DynamicType,
    v: &DynamicValue,
    rep: DataRepresentation,
    endianness: Endianness,
) -> Result<Vec<u8>, DynamicError> {
    encapsulated(t, rep, endianness, |out| write_key_members(out, t, v))
}

/// Decodes a serialized key; members that are not keys get their default values.
pub fn decode_key(t: &DynamicType, bytes: &[u8]) -> Result<DynamicValue, DynamicError> {
    let mut r = open(bytes)?;
    read_key_members(&mut r, t)
}

/// The largest size of the flattened XCDR2 key of `t` starting at `offset`; `None` when
/// unbounded (strings, sequences, maps, unions).
fn key_max_end(t: &DynamicType, offset: usize) -> Option<usize> {
    if let Some(size) = t.fixed_size() {
        return offset.next_multiple_of(size.min(4)).checked_add(size);
    }
    match t.resolved().node() {
        TypeNode::Struct(s) => effective_keys(s)
            .into_iter()
            .try_fold(offset, |o, i| key_max_end(&s.members[i].ty, o)),
        TypeNode::Array { element, dims }
            if element.is_primitive() || element.fixed_size().is_some() =>
        {
            let n = usize::try_from(super::codec::array_len(dims)).ok()?;
            let size = element.fixed_size()?;
            if n == 0 {
                return Some(offset);
            }
            offset
                .next_multiple_of(size.min(4))
                .checked_add(size.checked_mul(n)?)
        }
        _ => None,
    }
}

/// The maximum size of the key serialization of `t`, `None` when unbounded.
pub fn key_max_size(t: &DynamicType) -> Option<usize> {
    key_max_end(t, 0)
}

/// The 16-byte key hash of a sample (all zeros when the type has no key).
pub fn key_hash(t: &DynamicType, v: &DynamicValue) -> Result<[u8; 16], DynamicError> {
    let mut hash = [0u8; 16];
    if !t.as_struct().is_some_and(StructDesc::has_key) {
        return Ok(hash);
    }
    let mut out = Out {
        buf: Vec::with_capacity(16),
        origin: 0,
        rep: DataRepresentation::Xcdr2,
        be: true,
    };
    write_key_members(&mut out, t, v)?;
    let buf = out.buf;
    match key_max_size(t) {
        Some(max) if max <= 16 && buf.len() <= 16 => hash[..buf.len()].copy_from_slice(&buf),
        _ => hash.copy_from_slice(&Md5::digest(&buf)),
    }
    Ok(hash)
}
