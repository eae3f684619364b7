//! Dynamic data: types learnt at run time ([`DynamicType`], built by
//! [`crate::TypeRegistry::build`]), their values ([`DynamicValue`]), the XCDR1/XCDR2 codec
//! ([`encode`], [`decode`]), key handling ([`key_hash`], [`encode_key`], [`decode_key`], and
//! [`KeyScan`] for key hashes without a full decode) and
//! JSON conversion ([`to_json`], [`from_json`]) and table cells ([`column_names`], [`columns`]).

pub(crate) mod build;
mod codec;
mod error;
mod json;
mod key;
mod keyscan;
mod table;
mod types;
mod value;
mod wire;

pub use codec::{decode, encapsulation_id, encode};
pub use error::{short_id, DynamicError};
pub use json::{from_json, to_json, JsonOptions};
pub use key::{decode_key, encode_key, key_hash, key_max_size};
pub use keyscan::KeyScan;
pub use table::{column_names, columns};
pub use types::*;
pub use value::DynamicValue;

use crate::PrimitiveKind;

/// Most values [`default_value`] creates (nested arrays multiply quickly).
pub const MAX_DEFAULT_VALUES: usize = 1 << 20;

/// The default value of a type: zero, false, empty, the default (or first) enumerator, no
/// bits, arrays of defaults, structs of defaults with optional members absent, unions with
/// the discriminator of their first case (or 0 and no case when they have none). Fails when
/// it would hold more than [`MAX_DEFAULT_VALUES`] values.
pub fn default_value(t: &DynamicType) -> Result<DynamicValue, DynamicError> {
    let mut budget = MAX_DEFAULT_VALUES;
    default_within(t, &mut budget)
}

pub(crate) fn default_within(
    t: &DynamicType,
    budget: &mut usize,
) -> Result<DynamicValue, DynamicError> {
    use DynamicValue as V;
    *budget = budget.checked_sub(1).ok_or(DynamicError::Limit {
        what: "number of values in a default value",
        limit: MAX_DEFAULT_VALUES,
    })?;
    Ok(match t.resolved().node() {
        TypeNode::Primitive(p) => default_primitive(*p),
        TypeNode::String8 { .. } | TypeNode::String16 { .. } => V::String(String::new()),
        TypeNode::Enum(e) => V::Enum(e.default_literal().map_or(0, |l| l.value)),
        TypeNode::Bitmask(_) => V::Bitmask(0),
        TypeNode::Sequence { .. } => V::Sequence(Vec::new()),
        TypeNode::Map { .. } => V::Map(Vec::new()),
        TypeNode::Array { element, dims } => {
            let n = usize::try_from(codec::array_len(dims)).unwrap_or(usize::MAX);
            if n > *budget {
                return Err(DynamicError::Limit {
                    what: "number of values in a default value",
                    limit: MAX_DEFAULT_VALUES,
                });
            }
            let mut items = Vec::with_capacity(n);
            for _ in 0..n {
                items.push(default_within(element, budget)?);
            }
            V::Array(items)
        }
        TypeNode::Struct(s) => {
            let mut slots = Vec::with_capacity(s.members.len());
            for m in &s.members {
                slots.push(if m.optional {
                    None
                } else {
                    Some(default_within(&m.ty, budget)?)
                });
            }
            V::Struct(slots)
        }
        TypeNode::Union(u) => {
            let first = u
                .cases
                .iter()
                .enumerate()
                .find(|(_, c)| !c.labels.is_empty());
            let (label, case) = match first {
                Some((i, c)) => {
                    let label = c.labels.first().map_or(0, |l| i64::from(*l));
                    (label, Some((i, Box::new(default_within(&c.ty, budget)?))))
                }
                None => (0, None),
            };
            V::Union {
                discriminator: Box::new(label_value(&u.discriminator, label)),
                case,
            }
        }
        TypeNode::Alias { .. } => V::Int32(0),
    })
}

fn default_primitive(p: PrimitiveKind) -> DynamicValue {
    use DynamicValue as V;
    match p {
        PrimitiveKind::Boolean => V::Bool(false),
        PrimitiveKind::Byte => V::Byte(0),
        PrimitiveKind::Int8 => V::Int8(0),
        PrimitiveKind::UInt8 => V::UInt8(0),
        PrimitiveKind::Int16 => V::Int16(0),
        PrimitiveKind::UInt16 => V::UInt16(0),
        PrimitiveKind::Int32 => V::Int32(0),
        PrimitiveKind::UInt32 => V::UInt32(0),
        PrimitiveKind::Int64 => V::Int64(0),
        PrimitiveKind::UInt64 => V::UInt64(0),
        PrimitiveKind::Float32 => V::Float32(0.0),
        PrimitiveKind::Float64 | PrimitiveKind::Float128 => V::Float64(0.0),
        PrimitiveKind::Char8 => V::Char8('\0'),
        PrimitiveKind::Char16 => V::Char16('\0'),
    }
}

/// The discriminator value of type `t` for integral `label` (truncating to the type's width).
pub fn label_value(t: &DynamicType, label: i64) -> DynamicValue {
    use DynamicValue as V;
    match t.resolved().node() {
        TypeNode::Enum(_) => V::Enum(label as i32),
        TypeNode::Primitive(p) => match p {
            PrimitiveKind::Boolean => V::Bool(label != 0),
            PrimitiveKind::Byte => V::Byte(label as u8),
            PrimitiveKind::Int8 => V::Int8(label as i8),
            PrimitiveKind::UInt8 => V::UInt8(label as u8),
            PrimitiveKind::Int16 => V::Int16(label as i16),
            PrimitiveKind::UInt16 => V::UInt16(label as u16),
            PrimitiveKind::UInt32 => V::UInt32(label as u32),
            PrimitiveKind::Int64 => V::Int64(label),
            PrimitiveKind::UInt64 => V::UInt64(label as u64),
            PrimitiveKind::Char8 => V::Char8(char::from(label as u8)),
            PrimitiveKind::Char16 => {
                V::Char16(char::from_u32(label as u32 & 0xffff).unwrap_or('\0'))
            }
            _ => V::Int32(label as i32),
        },
        _ => V::Int32(label as i32),
    }
}
