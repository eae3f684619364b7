//! Key hashes of serialized samples without decoding them whole.
//!
//! Halyard asks the type support for the key hash of every keyed sample a writer sends and,
//! when the writer gave none inline, of every sample a reader receives. Decoding the whole
//! sample into a `DynamicValue` for that costs one value per element of every sequence (a
//! 1 KiB payload is a thousand of them). For final and appendable structs whose key members
//! are primitives, enums or strings, this module reads only the key members and skips the
//! others by their lengths (octet runs, DHEADERs, string lengths), then hashes them with
//! `halyard-xtypes` (`dynamic::key_hash`, XTypes 1.3 §7.6.8). Anything else (mutable or
//! big-endian samples, nested or optional keys, an appendable sample from an older type
//! version) returns `None` and the caller decodes the sample whole.

use halyard_cdr::{DataRepresentation, Endianness, Extensibility};
use halyard_xtypes::dynamic::{self, primitive_size, TypeNode};
use halyard_xtypes::{DynamicType, DynamicValue, PrimitiveKind};

/// How to read or skip one member.
enum Plan {
    Prim(PrimitiveKind, usize),
    Enum,
    Str,
    Seq {
        elem: Box<Plan>,
        dheader: bool,
    },
    Array {
        elem: Box<Plan>,
        n: usize,
        dheader: bool,
    },
    Struct {
        appendable: bool,
        members: Vec<Plan>,
    },
}

fn plan(t: &DynamicType, depth: usize) -> Option<Plan> {
    if depth > 64 {
        return None;
    }
    Some(match t.resolved().node() {
        TypeNode::Primitive(p) if !matches!(p, PrimitiveKind::Char16 | PrimitiveKind::Float128) => {
            Plan::Prim(*p, primitive_size(*p)?)
        }
        TypeNode::Enum(e) if dynamic::enum_size(e.bit_bound) == 4 => Plan::Enum,
        TypeNode::String8 { .. } => Plan::Str,
        TypeNode::Sequence { element, .. } => Plan::Seq {
            elem: Box::new(plan(element, depth + 1)?),
            dheader: !element.is_primitive(),
        },
        TypeNode::Array { element, dims } => Plan::Array {
            elem: Box::new(plan(element, depth + 1)?),
            n: dims
                .iter()
                .try_fold(1usize, |a, d| a.checked_mul(*d as usize))?,
            dheader: !element.is_primitive(),
        },
        TypeNode::Struct(s) if s.extensibility != Extensibility::Mutable => {
            if s.members.iter().any(|m| m.optional) {
                return None;
            }
            Plan::Struct {
                appendable: s.extensibility == Extensibility::Appendable,
                members: s
                    .members
                    .iter()
                    .map(|m| plan(&m.ty, depth + 1))
                    .collect::<Option<_>>()?,
            }
        }
        _ => return None,
    })
}

/// The key scanner of a top-level struct type.
pub(crate) struct KeyScan {
    ty: DynamicType,
    appendable: bool,
    /// Each member's plan and whether it is a key.
    members: Vec<(Plan, bool)>,
    /// The value put in the non-key slots (their types' defaults).
    defaults: Vec<Option<DynamicValue>>,
}

impl KeyScan {
    /// A scanner for `ty`, or `None` when its shape is not covered.
    pub(crate) fn new(ty: &DynamicType) -> Option<KeyScan> {
        let s = ty.as_struct()?;
        if s.extensibility == Extensibility::Mutable || !s.has_key() {
            return None;
        }
        let mut members = Vec::with_capacity(s.members.len());
        let mut defaults = Vec::with_capacity(s.members.len());
        for m in &s.members {
            let p = plan(&m.ty, 1)?;
            let simple = matches!(p, Plan::Prim(..) | Plan::Enum | Plan::Str);
            if m.key && (!simple || m.optional) {
                return None;
            }
            defaults.push(Some(dynamic::default_value(&m.ty).ok()?));
            members.push((p, m.key));
        }
        Some(KeyScan {
            ty: ty.clone(),
            appendable: s.extensibility == Extensibility::Appendable,
            members,
            defaults,
        })
    }

    /// The key hash of a full serialized sample, `None` when it must be decoded whole.
    pub(crate) fn key_hash(&self, sample: &[u8]) -> Option<[u8; 16]> {
        let id = u16::from_be_bytes([*sample.first()?, *sample.get(1)?]);
        let (rep, end) = halyard_cdr::parse_encapsulation(id).ok()?;
        if end != Endianness::Little || sample.len() < 4 {
            return None;
        }
        let mut r = R {
            buf: sample,
            pos: 4,
            end: sample.len(),
            v2: rep == DataRepresentation::Xcdr2,
        };
        if r.v2 && self.appendable {
            let len = r.u32()? as usize;
            if len > r.remaining() {
                return None;
            }
            r.end = r.pos + len;
        }
        let mut slots = self.defaults.clone();
        for ((p, key), slot) in self.members.iter().zip(slots.iter_mut()) {
            if r.v2 && self.appendable && r.remaining() == 0 {
                return None;
            }
            if *key {
                *slot = Some(r.value(p)?);
            } else {
                r.skip(p)?;
            }
        }
        dynamic::key_hash(&self.ty, &DynamicValue::Struct(slots)).ok()
    }
}

/// A little-endian reader (alignment relative to the body after the 4-byte header).
struct R<'a> {
    buf: &'a [u8],
    pos: usize,
    end: usize,
    v2: bool,
}

impl<'a> R<'a> {
    fn remaining(&self) -> usize {
        self.end.saturating_sub(self.pos)
    }

    fn align(&mut self, size: usize) -> Option<()> {
        let a = size.clamp(1, if self.v2 { 4 } else { 8 });
        let pad = (a - (self.pos - 4) % a) % a;
        self.bytes(pad).map(|_| ())
    }

    fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.remaining() {
            return None;
        }
        let s = self.buf.get(self.pos..self.pos + n)?;
        self.pos += n;
        Some(s)
    }

    fn fixed<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.align(N)?;
        let mut b = [0u8; N];
        b.copy_from_slice(self.bytes(N)?);
        Some(b)
    }

    fn u32(&mut self) -> Option<u32> {
        self.fixed::<4>().map(u32::from_le_bytes)
    }

    /// Decodes a key member (primitive, enum or string).
    fn value(&mut self, p: &Plan) -> Option<DynamicValue> {
        use DynamicValue as V;
        use PrimitiveKind as K;
        Some(match p {
            Plan::Prim(k, _) => match k {
                K::Boolean => match self.bytes(1)? {
                    [0] => V::Bool(false),
                    [1] => V::Bool(true),
                    _ => return None,
                },
                K::Byte => V::Byte(self.fixed::<1>()?[0]),
                K::UInt8 => V::UInt8(self.fixed::<1>()?[0]),
                K::Int8 => V::Int8(self.fixed::<1>()?[0] as i8),
                K::Int16 => V::Int16(i16::from_le_bytes(self.fixed()?)),
                K::UInt16 => V::UInt16(u16::from_le_bytes(self.fixed()?)),
                K::Int32 => V::Int32(i32::from_le_bytes(self.fixed()?)),
                K::UInt32 => V::UInt32(u32::from_le_bytes(self.fixed()?)),
                K::Int64 => V::Int64(i64::from_le_bytes(self.fixed()?)),
                K::UInt64 => V::UInt64(u64::from_le_bytes(self.fixed()?)),
                K::Float32 => V::Float32(f32::from_le_bytes(self.fixed()?)),
                K::Float64 => V::Float64(f64::from_le_bytes(self.fixed()?)),
                K::Char8 => V::Char8(char::from(self.fixed::<1>()?[0])),
                K::Char16 | K::Float128 => return None,
            },
            Plan::Enum => V::Enum(i32::from_le_bytes(self.fixed()?)),
            Plan::Str => {
                let len = self.u32()? as usize;
                let (last, text) = self.bytes(len)?.split_last()?;
                if *last != 0 {
                    return None;
                }
                V::String(std::str::from_utf8(text).ok()?.to_owned())
            }
            _ => return None,
        })
    }

    /// Skips a member.
    fn skip(&mut self, p: &Plan) -> Option<()> {
        match p {
            Plan::Prim(_, size) => {
                self.align(*size)?;
                self.bytes(*size)?;
            }
            Plan::Enum => {
                self.u32()?;
            }
            Plan::Str => {
                let len = self.u32()? as usize;
                self.bytes(len)?;
            }
            Plan::Seq { elem, dheader } => {
                if self.v2 && *dheader {
                    let len = self.u32()? as usize;
                    self.bytes(len)?;
                } else {
                    let n = self.u32()? as usize;
                    self.skip_elements(elem, n)?;
                }
            }
            Plan::Array { elem, n, dheader } => {
                if self.v2 && *dheader {
                    let len = self.u32()? as usize;
                    self.bytes(len)?;
                } else {
                    self.skip_elements(elem, *n)?;
                }
            }
            Plan::Struct {
                appendable,
                members,
            } => {
                if self.v2 && *appendable {
                    let len = self.u32()? as usize;
                    self.bytes(len)?;
                } else {
                    for m in members {
                        self.skip(m)?;
                    }
                }
            }
        }
        Some(())
    }

    fn skip_elements(&mut self, elem: &Plan, n: usize) -> Option<()> {
        if n == 0 {
            return Some(());
        }
        if n > self.remaining() {
            return None;
        }
        if let Plan::Prim(_, size) = elem {
            self.align(*size)?;
            self.bytes(n.checked_mul(*size)?)?;
            return Some(());
        }
        for _ in 0..n {
            self.skip(elem)?;
        }
        Some(())
    }
}
