//! The XCDR2 decoder (see the design comment of the `codec` module).

use crate::codec::{FormCodec, MAX_DEPTH, NAME_MAX_LEN};
use crate::identifier::{EquivalenceKind, PlainCollectionHeader, PrimitiveKind, TypeIdentifier};
use crate::info::*;
use crate::kinds::*;
use crate::object::*;
use crate::XTypesError;

type Res<T> = Result<T, XTypesError>;

/// A bounds-checked XCDR2 reader over a window of a byte slice.
#[derive(Debug)]
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    end: usize,
    big_endian: bool,
    depth: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8], big_endian: bool) -> Self {
        Reader {
            buf,
            pos: 0,
            end: buf.len(),
            big_endian,
            depth: 0,
        }
    }

    fn remaining(&self) -> usize {
        self.end - self.pos
    }

    fn bytes(&mut self, n: usize) -> Res<&'a [u8]> {
        if n > self.remaining() {
            return Err(XTypesError::Truncated);
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn align(&mut self, a: usize) -> Res<()> {
        let pad = (a - self.pos % a) % a;
        self.bytes(pad).map(|_| ())
    }

    pub(crate) fn array<const N: usize>(&mut self) -> Res<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.bytes(N)?);
        Ok(a)
    }

    fn u8(&mut self) -> Res<u8> {
        Ok(self.bytes(1)?[0])
    }

    fn u16(&mut self) -> Res<u16> {
        self.align(2)?;
        let b = self.array::<2>()?;
        Ok(if self.big_endian {
            u16::from_be_bytes(b)
        } else {
            u16::from_le_bytes(b)
        })
    }

    fn u32(&mut self) -> Res<u32> {
        self.align(4)?;
        let b = self.array::<4>()?;
        Ok(if self.big_endian {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        })
    }

    fn i32(&mut self) -> Res<i32> {
        self.u32().map(|v| v as i32)
    }

    pub(crate) fn bool(&mut self) -> Res<bool> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(XTypesError::BadBool(b)),
        }
    }

    /// A count of elements each at least `min_size` bytes long.
    fn count(&mut self, what: &'static str, min_size: usize) -> Res<usize> {
        let n = self.u32()? as usize;
        let limit = self.remaining() / min_size.max(1);
        if n > limit {
            return Err(too_large(what, n, limit));
        }
        Ok(n)
    }

    /// A `string<256>`.
    pub(crate) fn name(&mut self, what: &'static str) -> Res<String> {
        let len = self.u32()? as usize;
        if len == 0 {
            return Err(XTypesError::BadString("length 0 (no NUL)"));
        }
        if len - 1 > NAME_MAX_LEN {
            return Err(too_large(what, len - 1, NAME_MAX_LEN));
        }
        let b = self.bytes(len)?;
        let (text, nul) = b.split_at(len - 1);
        if nul != [0] || text.contains(&0) {
            return Err(XTypesError::BadString("missing or interior NUL"));
        }
        String::from_utf8(text.to_vec()).map_err(|_| XTypesError::BadString("not UTF-8"))
    }

    /// Reads a DHEADER and runs `f` inside its window; unread bytes are skipped.
    fn delimited<T>(&mut self, f: impl FnOnce(&mut Self) -> Res<T>) -> Res<T> {
        let len = self.u32()? as usize;
        self.window(len, f)
    }

    fn window<T>(&mut self, len: usize, f: impl FnOnce(&mut Self) -> Res<T>) -> Res<T> {
        if len > self.remaining() {
            return Err(too_large("DHEADER", len, self.remaining()));
        }
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(XTypesError::TooDeep);
        }
        let outer = self.end;
        self.end = self.pos + len;
        let v = f(self)?;
        self.pos = self.end;
        self.end = outer;
        self.depth -= 1;
        Ok(v)
    }

    /// A sequence of non-primitive elements (DHEADER, count, elements).
    fn seq<T>(
        &mut self,
        what: &'static str,
        min_size: usize,
        mut each: impl FnMut(&mut Self) -> Res<T>,
    ) -> Res<Vec<T>> {
        self.delimited(|r| {
            let n = r.count(what, min_size)?;
            (0..n).map(|_| each(r)).collect()
        })
    }

    /// Fails unless only padding (< 4 zero bytes) is left.
    pub(crate) fn finish(&self) -> Res<()> {
        let rest = &self.buf[self.pos..self.end];
        if rest.len() >= 4 || rest.iter().any(|b| *b != 0) {
            return Err(XTypesError::Invalid("trailing bytes after the value"));
        }
        Ok(())
    }
}

fn too_large(what: &'static str, length: usize, limit: usize) -> XTypesError {
    XTypesError::LengthTooLarge {
        what,
        length: length as u64,
        limit: limit as u64,
    }
}

fn plain_header(r: &mut Reader<'_>) -> Res<PlainCollectionHeader> {
    let ek = r.u8()?;
    let equiv_kind = EquivalenceKind::from_octet(ek).ok_or(XTypesError::UnknownDiscriminator {
        what: "PlainCollectionHeader.equiv_kind",
        value: ek,
    })?;
    Ok(PlainCollectionHeader {
        equiv_kind,
        element_flags: r.u16()?,
    })
}

fn hash_kind(d: u8) -> Option<EquivalenceKind> {
    match d {
        EK_MINIMAL => Some(EquivalenceKind::Minimal),
        EK_COMPLETE => Some(EquivalenceKind::Complete),
        _ => None,
    }
}

/// Reads a TypeIdentifier, bounding the nesting depth.
pub(crate) fn read_ti(r: &mut Reader<'_>) -> Res<TypeIdentifier> {
    r.depth += 1;
    if r.depth > MAX_DEPTH {
        return Err(XTypesError::TooDeep);
    }
    let t = read_ti_body(r)?;
    r.depth -= 1;
    Ok(t)
}

fn boxed(r: &mut Reader<'_>) -> Res<Box<TypeIdentifier>> {
    read_ti(r).map(Box::new)
}

fn read_ti_body(r: &mut Reader<'_>) -> Res<TypeIdentifier> {
    use TypeIdentifier as T;
    let d = r.u8()?;
    if let Some(p) = PrimitiveKind::from_type_kind(d) {
        return Ok(T::Primitive(p));
    }
    if let Some(kind) = hash_kind(d) {
        return Ok(T::Hash {
            kind,
            hash: r.array::<14>()?,
        });
    }
    Ok(match d {
        TK_NONE => T::None,
        TI_STRING8_SMALL => T::String8Small { bound: r.u8()? },
        TI_STRING16_SMALL => T::String16Small { bound: r.u8()? },
        TI_STRING8_LARGE => T::String8Large { bound: r.u32()? },
        TI_STRING16_LARGE => T::String16Large { bound: r.u32()? },
        TI_PLAIN_SEQUENCE_SMALL => T::PlainSequenceSmall {
            header: plain_header(r)?,
            bound: r.u8()?,
            element: boxed(r)?,
        },
        TI_PLAIN_SEQUENCE_LARGE => T::PlainSequenceLarge {
            header: plain_header(r)?,
            bound: r.u32()?,
            element: boxed(r)?,
        },
        TI_PLAIN_ARRAY_SMALL => {
            let header = plain_header(r)?;
            let n = r.count("SBoundSeq", 1)?;
            let bounds = r.bytes(n)?.to_vec();
            T::PlainArraySmall {
                header,
                bounds,
                element: boxed(r)?,
            }
        }
        TI_PLAIN_ARRAY_LARGE => {
            let header = plain_header(r)?;
            let n = r.count("LBoundSeq", 4)?;
            let bounds = (0..n).map(|_| r.u32()).collect::<Res<_>>()?;
            T::PlainArrayLarge {
                header,
                bounds,
                element: boxed(r)?,
            }
        }
        TI_PLAIN_MAP_SMALL => T::PlainMapSmall {
            header: plain_header(r)?,
            bound: r.u8()?,
            element: boxed(r)?,
            key_flags: r.u16()?,
            key: boxed(r)?,
        },
        TI_PLAIN_MAP_LARGE => T::PlainMapLarge {
            header: plain_header(r)?,
            bound: r.u32()?,
            element: boxed(r)?,
            key_flags: r.u16()?,
            key: boxed(r)?,
        },
        TI_STRONGLY_CONNECTED_COMPONENT => r.delimited(|r| {
            let d = r.u8()?;
            let kind = hash_kind(d).ok_or(XTypesError::UnknownDiscriminator {
                what: "TypeObjectHashId",
                value: d,
            })?;
            Ok(T::StronglyConnectedComponent {
                kind,
                hash: r.array::<14>()?,
                scc_length: r.i32()?,
                scc_index: r.i32()?,
            })
        })?,
        value => {
            return Err(XTypesError::UnknownDiscriminator {
                what: "TypeIdentifier",
                value,
            })
        }
    })
}

fn read_element<F: FormCodec>(r: &mut Reader<'_>) -> Res<CollectionElement> {
    r.delimited(|r| {
        let element_flags = r.u16()?;
        let type_id = read_ti(r)?;
        F::read_annotations(r)?;
        Ok(CollectionElement {
            element_flags,
            type_id,
        })
    })
}

fn read_struct<F: FormCodec>(r: &mut Reader<'_>) -> Res<StructType<F>> {
    let struct_flags = r.u16()?;
    let (base_type, detail) = r.delimited(|r| Ok((read_ti(r)?, F::read_type_detail(r)?)))?;
    let members = r.seq("StructMemberSeq", 12, |r| {
        r.delimited(|r| {
            Ok(StructMember {
                member_id: r.u32()?,
                member_flags: r.u16()?,
                member_type_id: read_ti(r)?,
                detail: F::read_member_detail(r)?,
            })
        })
    })?;
    Ok(StructType {
        struct_flags,
        base_type,
        detail,
        members,
    })
}

fn read_union<F: FormCodec>(r: &mut Reader<'_>) -> Res<UnionType<F>> {
    let union_flags = r.u16()?;
    let detail = r.delimited(|r| F::read_type_detail(r))?;
    let (discriminator_flags, discriminator_type) = r.delimited(|r| {
        let v = (r.u16()?, read_ti(r)?);
        F::read_annotations(r)?;
        Ok(v)
    })?;
    let members = r.seq("UnionMemberSeq", 16, |r| {
        r.delimited(|r| {
            let member_id = r.u32()?;
            let member_flags = r.u16()?;
            let type_id = read_ti(r)?;
            let n = r.count("UnionCaseLabelSeq", 4)?;
            let labels = (0..n).map(|_| r.i32()).collect::<Res<_>>()?;
            let detail = F::read_member_detail(r)?;
            Ok(UnionMember {
                member_id,
                member_flags,
                type_id,
                labels,
                detail,
            })
        })
    })?;
    Ok(UnionType {
        union_flags,
        detail,
        discriminator_flags,
        discriminator_type,
        members,
    })
}

fn read_alias<F: FormCodec>(r: &mut Reader<'_>) -> Res<AliasType<F>> {
    let alias_flags = r.u16()?;
    let detail = r.delimited(|r| F::read_type_detail(r))?;
    let (related_flags, related_type) = r.delimited(|r| {
        let v = (r.u16()?, read_ti(r)?);
        F::read_annotations(r)?;
        Ok(v)
    })?;
    Ok(AliasType {
        alias_flags,
        detail,
        related_flags,
        related_type,
    })
}

fn read_collection_header<F: FormCodec>(r: &mut Reader<'_>) -> Res<(u32, Option<F::TypeDetail>)> {
    r.delimited(|r| Ok((r.u32()?, F::read_opt_type_detail(r)?)))
}

fn read_array<F: FormCodec>(r: &mut Reader<'_>) -> Res<ArrayType<F>> {
    let body = |r: &mut Reader<'_>| -> Res<ArrayType<F>> {
        let collection_flag = r.u16()?;
        let (bounds, detail) = r.delimited(|r| {
            let n = r.count("LBoundSeq", 4)?;
            let bounds = (0..n).map(|_| r.u32()).collect::<Res<Vec<_>>>()?;
            Ok((bounds, F::read_type_detail(r)?))
        })?;
        let element = read_element::<F>(r)?;
        Ok(ArrayType {
            collection_flag,
            bounds,
            detail,
            element,
        })
    };
    if F::ARRAY_APPENDABLE {
        r.delimited(body)
    } else {
        body(r)
    }
}

fn read_enum_header<F: FormCodec>(r: &mut Reader<'_>) -> Res<(u16, F::TypeDetail)> {
    r.delimited(|r| Ok((r.u16()?, F::read_type_detail(r)?)))
}

fn read_enum<F: FormCodec>(r: &mut Reader<'_>) -> Res<EnumType<F>> {
    let enum_flags = r.u16()?;
    let (bit_bound, detail) = read_enum_header::<F>(r)?;
    let literals = r.seq("EnumeratedLiteralSeq", 12, |r| {
        r.delimited(|r| {
            let (value, flags) = r.delimited(|r| Ok((r.i32()?, r.u16()?)))?;
            Ok(EnumLiteral {
                value,
                flags,
                detail: F::read_member_detail(r)?,
            })
        })
    })?;
    Ok(EnumType {
        enum_flags,
        bit_bound,
        detail,
        literals,
    })
}

fn read_bitmask<F: FormCodec>(r: &mut Reader<'_>) -> Res<BitmaskType<F>> {
    r.delimited(|r| {
        let bitmask_flags = r.u16()?;
        let (bit_bound, detail) = read_enum_header::<F>(r)?;
        let flags = r.seq("BitflagSeq", 8, |r| {
            r.delimited(|r| {
                Ok(Bitflag {
                    position: r.u16()?,
                    flags: r.u16()?,
                    detail: F::read_member_detail(r)?,
                })
            })
        })?;
        Ok(BitmaskType {
            bitmask_flags,
            bit_bound,
            detail,
            flags,
        })
    })
}

fn read_body<F: FormCodec>(r: &mut Reader<'_>) -> Res<TypeObjectBody<F>> {
    Ok(match r.u8()? {
        TK_ALIAS => TypeObjectBody::Alias(read_alias(r)?),
        TK_STRUCTURE => TypeObjectBody::Struct(read_struct(r)?),
        TK_UNION => TypeObjectBody::Union(read_union(r)?),
        TK_SEQUENCE => {
            let collection_flag = r.u16()?;
            let (bound, detail) = read_collection_header::<F>(r)?;
            let element = read_element::<F>(r)?;
            TypeObjectBody::Sequence(SequenceType {
                collection_flag,
                bound,
                detail,
                element,
            })
        }
        TK_ARRAY => TypeObjectBody::Array(read_array(r)?),
        TK_MAP => {
            let collection_flag = r.u16()?;
            let (bound, detail) = read_collection_header::<F>(r)?;
            let key = read_element::<F>(r)?;
            let element = read_element::<F>(r)?;
            TypeObjectBody::Map(MapType {
                collection_flag,
                bound,
                detail,
                key,
                element,
            })
        }
        TK_ENUM => TypeObjectBody::Enum(read_enum(r)?),
        TK_BITMASK => TypeObjectBody::Bitmask(read_bitmask(r)?),
        TK_ANNOTATION | TK_BITSET => {
            return Err(XTypesError::Unsupported("annotation and bitset types"))
        }
        value => {
            return Err(XTypesError::UnknownDiscriminator {
                what: "TypeObject body",
                value,
            })
        }
    })
}

/// Reads the TypeObject union.
pub(crate) fn read_type_object(r: &mut Reader<'_>) -> Res<TypeObject> {
    r.delimited(|r| match r.u8()? {
        EK_MINIMAL => read_body::<Minimal>(r).map(TypeObject::Minimal),
        EK_COMPLETE => read_body::<Complete>(r).map(TypeObject::Complete),
        value => Err(XTypesError::UnknownDiscriminator {
            what: "TypeObject",
            value,
        }),
    })
}

fn read_ti_with_size(r: &mut Reader<'_>) -> Res<TypeIdentifierWithSize> {
    r.delimited(|r| {
        Ok(TypeIdentifierWithSize {
            type_id: read_ti(r)?,
            typeobject_serialized_size: r.u32()?,
        })
    })
}

fn read_ti_with_deps(r: &mut Reader<'_>) -> Res<TypeIdentifierWithDependencies> {
    r.delimited(|r| {
        Ok(TypeIdentifierWithDependencies {
            typeid_with_size: read_ti_with_size(r)?,
            dependent_typeid_count: r.i32()?,
            dependent_typeids: r.seq("TypeIdentfierWithSizeSeq", 8, read_ti_with_size)?,
        })
    })
}

/// Reads one EMHEADER (+ NEXTINT); returns (id, must_understand, member length).
fn emheader(r: &mut Reader<'_>) -> Res<(u32, bool, usize)> {
    let h = r.u32()?;
    let (id, mu, lc) = (h & 0x0fff_ffff, h & 0x8000_0000 != 0, (h >> 28) & 7);
    let len = match lc {
        0..=3 => 1usize << lc,
        4 => r.u32()? as usize,
        _ => {
            let next = r.u32()? as usize;
            r.pos -= 4; // NEXTINT doubles as the member's own leading length
            let unit = [1usize, 4, 8][lc as usize - 5];
            next.checked_mul(unit)
                .and_then(|n| n.checked_add(4))
                .ok_or(XTypesError::Invalid("EMHEADER length overflow"))?
        }
    };
    Ok((id, mu, len))
}

/// Reads TypeInformation (mutable; unknown members skipped unless must-understand).
pub(crate) fn read_type_information(r: &mut Reader<'_>) -> Res<TypeInformation> {
    r.delimited(|r| {
        let (mut minimal, mut complete) = (None, None);
        while r.remaining() > 0 {
            let (id, must_understand, len) = emheader(r)?;
            match id {
                TYPE_INFORMATION_MINIMAL_ID => minimal = Some(r.window(len, read_ti_with_deps)?),
                TYPE_INFORMATION_COMPLETE_ID => complete = Some(r.window(len, read_ti_with_deps)?),
                _ if must_understand => {
                    return Err(XTypesError::BadMember {
                        id,
                        why: "unknown and must-understand",
                    })
                }
                _ => r.window(len, |_| Ok(()))?,
            }
        }
        let missing = |id| XTypesError::BadMember { id, why: "missing" };
        Ok(TypeInformation {
            minimal: minimal.ok_or(missing(TYPE_INFORMATION_MINIMAL_ID))?,
            complete: complete.ok_or(missing(TYPE_INFORMATION_COMPLETE_ID))?,
        })
    })
}

/// Reads a TypeMapping.
pub(crate) fn read_type_mapping(r: &mut Reader<'_>) -> Res<TypeMapping> {
    let pair = |r: &mut Reader<'_>| Ok((read_ti(r)?, read_type_object(r)?));
    Ok(TypeMapping {
        minimal: r.seq("TypeIdentifierTypeObjectPairSeq", 8, pair)?,
        complete: r.seq("TypeIdentifierTypeObjectPairSeq", 8, pair)?,
        complete_to_minimal: r.seq("TypeIdentifierPairSeq", 2, |r| {
            Ok((read_ti(r)?, read_ti(r)?))
        })?,
    })
}
