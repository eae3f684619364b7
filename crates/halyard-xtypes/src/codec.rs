//! XCDR2 encoding and decoding of TypeIdentifier, TypeObject and TypeInformation.
//!
//! Design. The TypeObject IDL (XTypes 1.3 Annex B, as Cyclone DDS ships it in
//! `ddsi_xt_type_object.idl`) fixes each structure's extensibility, and that decides the
//! bytes: a `@final` struct is its members back to back; an `@appendable` struct is a
//! DHEADER (u32 byte length) followed by its members; the `@mutable` TypeInformation is a
//! DHEADER then one EMHEADER (+ NEXTINT) per member. Unions are the discriminator octet then
//! the selected member; the only appendable union, TypeObject itself, also has a DHEADER.
//! Sequences of non-primitive elements carry a DHEADER before their count; sequences of
//! primitives (bounds, case labels) do not. `@optional` members of final/appendable structs
//! are a boolean presence octet. Alignment is relative to the start of the serialization
//! (XCDR2: at most 4). The hash of a TypeObject is the MD5 of exactly these bytes in
//! little-endian order (the TypeObject union including its DHEADER, no encapsulation
//! header), truncated to 14 bytes.
//!
//! Encoding goes through `halyard_cdr_core::CdrWriter`. Decoding uses a small reader of its
//! own ([`Reader`]) so that every length is checked against the bytes that remain in the
//! enclosing DHEADER window before anything is allocated, TypeIdentifier nesting is bounded
//! by [`MAX_DEPTH`], and each failure names what was being read. Appendable structs accept
//! trailing bytes inside their DHEADER (members appended by a later version) and skip them.

use halyard_cdr_core::{CdrWriter, DataRepresentation};

use crate::decode::Reader;
use crate::identifier::{EquivalenceKind, PlainCollectionHeader, TypeIdentifier};
use crate::info::*;
use crate::kinds::*;
use crate::object::*;
use crate::XTypesError;

/// Deepest nesting of TypeIdentifiers (plain collections of plain collections …) and
/// appendable structs accepted by the decoder.
pub const MAX_DEPTH: usize = 64;

/// Longest MemberName / QualifiedTypeName (XTypes 1.3: `string<256>`).
pub const NAME_MAX_LEN: usize = 256;

type Res<T> = Result<T, XTypesError>;

// ---------------------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------------------

/// Runs `body` inside a DHEADER.
fn delimited(w: &mut CdrWriter<'_>, body: impl FnOnce(&mut CdrWriter<'_>) -> Res<()>) -> Res<()> {
    let h = w.begin_dheader();
    body(w)?;
    w.end_dheader(h)?;
    Ok(())
}

/// A sequence of non-primitive elements: DHEADER, count, elements.
fn write_seq<T>(
    w: &mut CdrWriter<'_>,
    items: &[T],
    mut each: impl FnMut(&mut CdrWriter<'_>, &T) -> Res<()>,
) -> Res<()> {
    delimited(w, |w| {
        w.write_seq_len(items.len())?;
        items.iter().try_for_each(|i| each(w, i))
    })
}

fn write_name(w: &mut CdrWriter<'_>, s: &str) -> Res<()> {
    if s.len() > NAME_MAX_LEN || s.contains('\0') {
        return Err(XTypesError::Invalid(
            "name longer than 256 bytes or with a NUL",
        ));
    }
    w.write_string(s)?;
    Ok(())
}

fn write_plain_header(w: &mut CdrWriter<'_>, h: &PlainCollectionHeader) {
    w.write_u8(h.equiv_kind.octet());
    w.write_u16(h.element_flags);
}

/// Writes a TypeIdentifier.
pub(crate) fn write_ti(w: &mut CdrWriter<'_>, t: &TypeIdentifier) -> Res<()> {
    use TypeIdentifier as T;
    if let T::Hash { kind, .. } | T::StronglyConnectedComponent { kind, .. } = t {
        if *kind == EquivalenceKind::Both {
            return Err(XTypesError::Invalid(
                "a type hash is minimal or complete, not both",
            ));
        }
    }
    w.write_u8(t.discriminator());
    match t {
        T::None | T::Primitive(_) => {}
        T::String8Small { bound } | T::String16Small { bound } => w.write_u8(*bound),
        T::String8Large { bound } | T::String16Large { bound } => w.write_u32(*bound),
        T::PlainSequenceSmall {
            header,
            bound,
            element,
        } => {
            write_plain_header(w, header);
            w.write_u8(*bound);
            write_ti(w, element)?;
        }
        T::PlainSequenceLarge {
            header,
            bound,
            element,
        } => {
            write_plain_header(w, header);
            w.write_u32(*bound);
            write_ti(w, element)?;
        }
        T::PlainArraySmall {
            header,
            bounds,
            element,
        } => {
            write_plain_header(w, header);
            w.write_octets(bounds)?;
            write_ti(w, element)?;
        }
        T::PlainArrayLarge {
            header,
            bounds,
            element,
        } => {
            write_plain_header(w, header);
            w.write_seq_len(bounds.len())?;
            bounds.iter().for_each(|b| w.write_u32(*b));
            write_ti(w, element)?;
        }
        T::PlainMapSmall {
            header,
            bound,
            element,
            key_flags,
            key,
        } => {
            write_plain_header(w, header);
            w.write_u8(*bound);
            write_ti(w, element)?;
            w.write_u16(*key_flags);
            write_ti(w, key)?;
        }
        T::PlainMapLarge {
            header,
            bound,
            element,
            key_flags,
            key,
        } => {
            write_plain_header(w, header);
            w.write_u32(*bound);
            write_ti(w, element)?;
            w.write_u16(*key_flags);
            write_ti(w, key)?;
        }
        T::StronglyConnectedComponent {
            kind,
            hash,
            scc_length,
            scc_index,
        } => {
            delimited(w, |w| {
                w.write_u8(kind.octet());
                w.write_bytes(hash);
                w.write_i32(*scc_length);
                w.write_i32(*scc_index);
                Ok(())
            })?;
        }
        T::Hash { hash, .. } => w.write_bytes(hash),
    }
    Ok(())
}

/// Form-specific encoding and decoding hooks.
pub(crate) trait FormCodec: Form {
    /// CompleteArrayType is `@appendable`, MinimalArrayType `@final` (Cyclone's IDL).
    const ARRAY_APPENDABLE: bool;
    fn write_member_detail(w: &mut CdrWriter<'_>, d: &Self::MemberDetail) -> Res<()>;
    fn write_type_detail(w: &mut CdrWriter<'_>, d: &Self::TypeDetail) -> Res<()>;
    fn write_opt_type_detail(w: &mut CdrWriter<'_>, d: &Option<Self::TypeDetail>) -> Res<()>;
    /// The absent `ann_builtin` / `ann_custom` pair (complete form only).
    fn write_annotations(w: &mut CdrWriter<'_>);
    fn read_member_detail(r: &mut Reader<'_>) -> Res<Self::MemberDetail>;
    fn read_type_detail(r: &mut Reader<'_>) -> Res<Self::TypeDetail>;
    fn read_opt_type_detail(r: &mut Reader<'_>) -> Res<Option<Self::TypeDetail>>;
    fn read_annotations(r: &mut Reader<'_>) -> Res<()>;
}

impl FormCodec for Minimal {
    const ARRAY_APPENDABLE: bool = false;
    fn write_member_detail(w: &mut CdrWriter<'_>, d: &Self::MemberDetail) -> Res<()> {
        w.write_bytes(d);
        Ok(())
    }
    fn write_type_detail(_: &mut CdrWriter<'_>, _: &()) -> Res<()> {
        Ok(())
    }
    fn write_opt_type_detail(_: &mut CdrWriter<'_>, d: &Option<()>) -> Res<()> {
        match d {
            Some(()) => Err(XTypesError::Invalid(
                "minimal collection headers have no detail",
            )),
            None => Ok(()),
        }
    }
    fn write_annotations(_: &mut CdrWriter<'_>) {}
    fn read_member_detail(r: &mut Reader<'_>) -> Res<Self::MemberDetail> {
        r.array::<4>()
    }
    fn read_type_detail(_: &mut Reader<'_>) -> Res<()> {
        Ok(())
    }
    fn read_opt_type_detail(_: &mut Reader<'_>) -> Res<Option<()>> {
        Ok(None)
    }
    fn read_annotations(_: &mut Reader<'_>) -> Res<()> {
        Ok(())
    }
}

impl FormCodec for Complete {
    const ARRAY_APPENDABLE: bool = true;
    fn write_member_detail(w: &mut CdrWriter<'_>, d: &MemberDetail) -> Res<()> {
        write_name(w, &d.name)?;
        Self::write_annotations(w);
        Ok(())
    }
    fn write_type_detail(w: &mut CdrWriter<'_>, d: &TypeDetail) -> Res<()> {
        Self::write_annotations(w);
        write_name(w, &d.type_name)
    }
    fn write_opt_type_detail(w: &mut CdrWriter<'_>, d: &Option<TypeDetail>) -> Res<()> {
        w.write_bool(d.is_some());
        d.as_ref().map_or(Ok(()), |d| Self::write_type_detail(w, d))
    }
    fn write_annotations(w: &mut CdrWriter<'_>) {
        w.write_bool(false);
        w.write_bool(false);
    }
    fn read_member_detail(r: &mut Reader<'_>) -> Res<MemberDetail> {
        let name = r.name("MemberName")?;
        Self::read_annotations(r)?;
        Ok(MemberDetail { name })
    }
    fn read_type_detail(r: &mut Reader<'_>) -> Res<TypeDetail> {
        Self::read_annotations(r)?;
        let type_name = r.name("QualifiedTypeName")?;
        Ok(TypeDetail { type_name })
    }
    fn read_opt_type_detail(r: &mut Reader<'_>) -> Res<Option<TypeDetail>> {
        match r.bool()? {
            true => Self::read_type_detail(r).map(Some),
            false => Ok(None),
        }
    }
    fn read_annotations(r: &mut Reader<'_>) -> Res<()> {
        if r.bool()? || r.bool()? {
            return Err(XTypesError::Unsupported("applied annotations"));
        }
        Ok(())
    }
}

fn write_element<F: FormCodec>(w: &mut CdrWriter<'_>, e: &CollectionElement) -> Res<()> {
    delimited(w, |w| {
        w.write_u16(e.element_flags);
        write_ti(w, &e.type_id)?;
        F::write_annotations(w);
        Ok(())
    })
}

fn write_struct<F: FormCodec>(w: &mut CdrWriter<'_>, s: &StructType<F>) -> Res<()> {
    w.write_u16(s.struct_flags);
    delimited(w, |w| {
        write_ti(w, &s.base_type)?;
        F::write_type_detail(w, &s.detail)
    })?;
    write_seq(w, &s.members, |w, m| {
        delimited(w, |w| {
            w.write_u32(m.member_id);
            w.write_u16(m.member_flags);
            write_ti(w, &m.member_type_id)?;
            F::write_member_detail(w, &m.detail)
        })
    })
}

fn write_union<F: FormCodec>(w: &mut CdrWriter<'_>, u: &UnionType<F>) -> Res<()> {
    w.write_u16(u.union_flags);
    delimited(w, |w| F::write_type_detail(w, &u.detail))?;
    delimited(w, |w| {
        w.write_u16(u.discriminator_flags);
        write_ti(w, &u.discriminator_type)?;
        F::write_annotations(w);
        Ok(())
    })?;
    write_seq(w, &u.members, |w, m| {
        delimited(w, |w| {
            w.write_u32(m.member_id);
            w.write_u16(m.member_flags);
            write_ti(w, &m.type_id)?;
            w.write_seq_len(m.labels.len())?;
            m.labels.iter().for_each(|l| w.write_i32(*l));
            F::write_member_detail(w, &m.detail)
        })
    })
}

fn write_alias<F: FormCodec>(w: &mut CdrWriter<'_>, a: &AliasType<F>) -> Res<()> {
    w.write_u16(a.alias_flags);
    delimited(w, |w| F::write_type_detail(w, &a.detail))?;
    delimited(w, |w| {
        w.write_u16(a.related_flags);
        write_ti(w, &a.related_type)?;
        F::write_annotations(w);
        Ok(())
    })
}

fn write_collection_header<F: FormCodec>(
    w: &mut CdrWriter<'_>,
    bound: u32,
    detail: &Option<F::TypeDetail>,
) -> Res<()> {
    delimited(w, |w| {
        w.write_u32(bound);
        F::write_opt_type_detail(w, detail)
    })
}

fn write_array<F: FormCodec>(w: &mut CdrWriter<'_>, a: &ArrayType<F>) -> Res<()> {
    let body = |w: &mut CdrWriter<'_>| -> Res<()> {
        w.write_u16(a.collection_flag);
        delimited(w, |w| {
            w.write_seq_len(a.bounds.len())?;
            a.bounds.iter().for_each(|b| w.write_u32(*b));
            F::write_type_detail(w, &a.detail)
        })?;
        write_element::<F>(w, &a.element)
    };
    if F::ARRAY_APPENDABLE {
        delimited(w, body)
    } else {
        body(w)
    }
}

fn write_enum_header<F: FormCodec>(
    w: &mut CdrWriter<'_>,
    bit_bound: u16,
    detail: &F::TypeDetail,
) -> Res<()> {
    delimited(w, |w| {
        w.write_u16(bit_bound);
        F::write_type_detail(w, detail)
    })
}

fn write_enum<F: FormCodec>(w: &mut CdrWriter<'_>, e: &EnumType<F>) -> Res<()> {
    w.write_u16(e.enum_flags);
    write_enum_header::<F>(w, e.bit_bound, &e.detail)?;
    write_seq(w, &e.literals, |w, l| {
        delimited(w, |w| {
            delimited(w, |w| {
                w.write_i32(l.value);
                w.write_u16(l.flags);
                Ok(())
            })?;
            F::write_member_detail(w, &l.detail)
        })
    })
}

fn write_bitmask<F: FormCodec>(w: &mut CdrWriter<'_>, b: &BitmaskType<F>) -> Res<()> {
    delimited(w, |w| {
        w.write_u16(b.bitmask_flags);
        write_enum_header::<F>(w, b.bit_bound, &b.detail)?;
        write_seq(w, &b.flags, |w, f| {
            delimited(w, |w| {
                w.write_u16(f.position);
                w.write_u16(f.flags);
                F::write_member_detail(w, &f.detail)
            })
        })
    })
}

fn write_body<F: FormCodec>(w: &mut CdrWriter<'_>, b: &TypeObjectBody<F>) -> Res<()> {
    match b {
        TypeObjectBody::Alias(a) => {
            w.write_u8(TK_ALIAS);
            write_alias(w, a)
        }
        TypeObjectBody::Struct(s) => {
            w.write_u8(TK_STRUCTURE);
            write_struct(w, s)
        }
        TypeObjectBody::Union(u) => {
            w.write_u8(TK_UNION);
            write_union(w, u)
        }
        TypeObjectBody::Sequence(s) => {
            w.write_u8(TK_SEQUENCE);
            w.write_u16(s.collection_flag);
            write_collection_header::<F>(w, s.bound, &s.detail)?;
            write_element::<F>(w, &s.element)
        }
        TypeObjectBody::Array(a) => {
            w.write_u8(TK_ARRAY);
            write_array(w, a)
        }
        TypeObjectBody::Map(m) => {
            w.write_u8(TK_MAP);
            w.write_u16(m.collection_flag);
            write_collection_header::<F>(w, m.bound, &m.detail)?;
            write_element::<F>(w, &m.key)?;
            write_element::<F>(w, &m.element)
        }
        TypeObjectBody::Enum(e) => {
            w.write_u8(TK_ENUM);
            write_enum(w, e)
        }
        TypeObjectBody::Bitmask(b) => {
            w.write_u8(TK_BITMASK);
            write_bitmask(w, b)
        }
    }
}

/// Writes the TypeObject union (DHEADER, EK octet, body) for one form's body.
pub(crate) fn write_type_object<F: FormCodec>(
    w: &mut CdrWriter<'_>,
    body: &TypeObjectBody<F>,
) -> Res<()> {
    delimited(w, |w| {
        w.write_u8(F::KIND.octet());
        write_body(w, body)
    })
}

fn write_ti_with_size(w: &mut CdrWriter<'_>, t: &TypeIdentifierWithSize) -> Res<()> {
    delimited(w, |w| {
        write_ti(w, &t.type_id)?;
        w.write_u32(t.typeobject_serialized_size);
        Ok(())
    })
}

fn write_ti_with_deps(w: &mut CdrWriter<'_>, t: &TypeIdentifierWithDependencies) -> Res<()> {
    delimited(w, |w| {
        write_ti_with_size(w, &t.typeid_with_size)?;
        w.write_i32(t.dependent_typeid_count);
        write_seq(w, &t.dependent_typeids, write_ti_with_size)
    })
}

/// Writes TypeInformation (mutable: DHEADER, then EMHEADER + NEXTINT per member).
pub(crate) fn write_type_information(w: &mut CdrWriter<'_>, t: &TypeInformation) -> Res<()> {
    delimited(w, |w| {
        let members = [
            (TYPE_INFORMATION_MINIMAL_ID, &t.minimal),
            (TYPE_INFORMATION_COMPLETE_ID, &t.complete),
        ];
        for (id, v) in members {
            let m = w.begin_member(id, false, None)?;
            write_ti_with_deps(w, v)?;
            w.end_member(m)?;
        }
        Ok(())
    })
}

/// Serializes with `f` into a fresh little-endian XCDR2 buffer.
pub(crate) fn to_le(f: impl FnOnce(&mut CdrWriter<'_>) -> Res<()>) -> Res<Vec<u8>> {
    let mut out = Vec::new();
    f(&mut CdrWriter::new(&mut out, DataRepresentation::Xcdr2))?;
    Ok(out)
}

/// Writes a TypeMapping (final: three sequences of final pairs).
pub(crate) fn write_type_mapping(w: &mut CdrWriter<'_>, m: &TypeMapping) -> Res<()> {
    let pair = |w: &mut CdrWriter<'_>, (t, o): &(TypeIdentifier, TypeObject)| -> Res<()> {
        write_ti(w, t)?;
        match o {
            TypeObject::Minimal(b) => write_type_object(w, b),
            TypeObject::Complete(b) => write_type_object(w, b),
        }
    };
    write_seq(w, &m.minimal, pair)?;
    write_seq(w, &m.complete, pair)?;
    write_seq(w, &m.complete_to_minimal, |w, (a, b)| {
        write_ti(w, a)?;
        write_ti(w, b)
    })
}
