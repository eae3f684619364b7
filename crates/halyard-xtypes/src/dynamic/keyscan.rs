//! Key hashes of serialized samples without decoding them whole.
//!
//! A keyed topic needs the key hash of every sample a writer sends and, when the writer gave
//! none inline, of every sample a reader receives. Decoding the whole sample into a
//! [`DynamicValue`] for that costs one value per element of every sequence (a 1 KiB payload
//! is a thousand of them). For final and appendable structs whose key members are
//! primitives, enums or strings, [`KeyScan`] reads only the key members and skips the others
//! by their lengths (octet runs, DHEADERs, string lengths), then hashes them with
//! [`key_hash`](super::key_hash) (XTypes 1.3 §7.6.8). Anything else (mutable or big-endian
//! samples, nested keys, optional members, an appendable sample from an older type version)
//! gives `None` and the caller decodes the sample whole: the scanner is an optimisation,
//! never a second opinion, and its hash always equals that of a full decode.

use halyard_cdr_core::{DataRepresentation, Endianness, Extensibility};

use super::types::{enum_size, primitive_size, DynamicType, TypeNode};
use super::{default_value, key_hash, DynamicValue};
use crate::PrimitiveKind;

/// How to read or skip one member.
#[derive(Debug)]
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
        TypeNode::Enum(e) if enum_size(e.bit_bound) == 4 => Plan::Enum,
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

/// The key scanner of a top-level keyed struct type: computes the key hash of a serialized
/// sample by reading only its key members.
#[derive(Debug)]
pub struct KeyScan {
    ty: DynamicType,
    appendable: bool,
    /// Each member's plan and whether it is a key.
    members: Vec<(Plan, bool)>,
    /// The value put in the non-key slots (their types' defaults).
    defaults: Vec<Option<DynamicValue>>,
}

impl KeyScan {
    /// A scanner for `ty`, or `None` when its shape is not covered (not a keyed struct, a
    /// mutable one, a key member that is not a primitive, enum or string, ...).
    pub fn new(ty: &DynamicType) -> Option<KeyScan> {
        let s = ty.as_struct()?;
        if s.extensibility == Extensibility::Mutable || !s.has_key() {
            return None;
        }
        let mut members = Vec::with_capacity(s.members.len());
        let mut defaults = Vec::with_capacity(s.members.len());
        // An optional member is on the wire behind a presence flag or parameter header
        // that the plans do not read: such structs are left to the full decode.
        if s.members.iter().any(|m| m.optional) {
            return None;
        }
        for m in &s.members {
            let p = plan(&m.ty, 1)?;
            let simple = matches!(p, Plan::Prim(..) | Plan::Enum | Plan::Str);
            if m.key && !simple {
                return None;
            }
            defaults.push(Some(default_value(&m.ty).ok()?));
            members.push((p, m.key));
        }
        Some(KeyScan {
            ty: ty.clone(),
            appendable: s.extensibility == Extensibility::Appendable,
            members,
            defaults,
        })
    }

    /// The key hash of a full serialized sample (encapsulation header included), `None` when
    /// it must be decoded whole (big-endian, an appendable sample of an older type version
    /// without all members, a malformed sample, ...).
    pub fn key_hash(&self, sample: &[u8]) -> Option<[u8; 16]> {
        let id = u16::from_be_bytes([*sample.first()?, *sample.get(1)?]);
        let (rep, end) = halyard_cdr_core::parse_encapsulation(id).ok()?;
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
        key_hash(&self.ty, &DynamicValue::Struct(slots)).ok()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dynamic::{encode, MemberDesc, StructDesc};

    fn member(name: &str, ty: TypeNode, key: bool, optional: bool) -> MemberDesc {
        MemberDesc {
            name: name.into(),
            id: 0,
            ty: DynamicType::new(ty),
            key,
            optional,
            must_understand: false,
            external: false,
        }
    }

    fn strukt(extensibility: Extensibility, members: Vec<MemberDesc>) -> DynamicType {
        let members = members
            .into_iter()
            .enumerate()
            .map(|(i, m)| MemberDesc { id: i as u32, ..m })
            .collect();
        DynamicType::new(TypeNode::Struct(StructDesc {
            name: "S".into(),
            extensibility,
            base: None,
            members,
            own_start: 0,
            names_known: true,
            nested: false,
        }))
    }

    fn i32_t() -> TypeNode {
        TypeNode::Primitive(PrimitiveKind::Int32)
    }

    fn str_t() -> TypeNode {
        TypeNode::String8 { bound: 0 }
    }

    fn octets() -> TypeNode {
        TypeNode::Sequence {
            element: DynamicType::new(TypeNode::Primitive(PrimitiveKind::UInt8)),
            bound: 0,
        }
    }

    fn full(t: &DynamicType, bytes: &[u8]) -> [u8; 16] {
        key_hash(t, &crate::dynamic::decode(t, bytes).unwrap()).unwrap()
    }

    #[test]
    fn keys_after_skipped_members_hash_as_a_full_decode() {
        for ext in [Extensibility::Final, Extensibility::Appendable] {
            let t = strukt(
                ext,
                vec![
                    member("blob", octets(), false, false),
                    member("id", i32_t(), true, false),
                    member("note", str_t(), false, false),
                    member("name", str_t(), true, false),
                ],
            );
            let scan = KeyScan::new(&t).expect("covered");
            let v = DynamicValue::Struct(vec![
                Some(DynamicValue::Sequence(vec![DynamicValue::UInt8(7); 1000])),
                Some(DynamicValue::Int32(-3)),
                Some(DynamicValue::String("x".into())),
                Some(DynamicValue::String("a key".into())),
            ]);
            for rep in [DataRepresentation::Xcdr1, DataRepresentation::Xcdr2] {
                let bytes = encode(&t, &v, rep, Endianness::Little).unwrap();
                assert_eq!(
                    scan.key_hash(&bytes),
                    Some(full(&t, &bytes)),
                    "{ext:?} {rep:?}"
                );
                // Cut inside the key string.
                assert_eq!(scan.key_hash(&bytes[..bytes.len() - 5]), None);
                let be = encode(&t, &v, rep, Endianness::Big).unwrap();
                assert_eq!(scan.key_hash(&be), None, "big-endian falls back");
            }
        }
    }

    #[test]
    fn uncovered_shapes_fall_back() {
        // Mutable, keyless, and a struct-typed key are left to the full decode.
        let keyed = || vec![member("id", i32_t(), true, false)];
        assert!(KeyScan::new(&strukt(Extensibility::Mutable, keyed())).is_none());
        assert!(KeyScan::new(&strukt(
            Extensibility::Final,
            vec![member("id", i32_t(), false, false)]
        ))
        .is_none());
        let inner = strukt(Extensibility::Final, keyed());
        let nested = strukt(
            Extensibility::Final,
            vec![MemberDesc {
                ty: inner,
                ..member("in", i32_t(), true, false)
            }],
        );
        assert!(KeyScan::new(&nested).is_none());
        assert!(KeyScan::new(&strukt(Extensibility::Final, keyed())).is_some());
    }

    #[test]
    fn optional_members_before_the_key_hash_as_a_full_decode() {
        for ext in [Extensibility::Final, Extensibility::Appendable] {
            let t = strukt(
                ext,
                vec![
                    member("note", str_t(), false, true),
                    member("id", i32_t(), true, false),
                ],
            );
            let scan = KeyScan::new(&t);
            assert!(scan.is_none(), "optional members are not scanned");
            for note in [None, Some(DynamicValue::String("abcdefgh".into()))] {
                let v = DynamicValue::Struct(vec![note, Some(DynamicValue::Int32(9))]);
                for rep in [DataRepresentation::Xcdr1, DataRepresentation::Xcdr2] {
                    let bytes = encode(&t, &v, rep, Endianness::Little).unwrap();
                    if let Some(h) = scan.as_ref().and_then(|s| s.key_hash(&bytes)) {
                        assert_eq!(h, full(&t, &bytes), "{ext:?} {rep:?}");
                    }
                }
            }
        }
    }
}
