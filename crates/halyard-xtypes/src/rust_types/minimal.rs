//! The minimal TypeObject of a complete one (XTypes 1.3 §7.3.4.6): member names become their
//! name hashes, type names go, and the identifiers of other types become their minimal ones.

use std::collections::BTreeMap;

use crate::{
    name_hash, AliasType, ArrayType, Bitflag, BitmaskType, CollectionElement, CompleteTypeObject,
    EnumLiteral, EnumType, EquivalenceKind, MapType, MinimalTypeObject, PlainCollectionHeader,
    SequenceType, StructMember, StructType, TypeIdentifier, TypeObjectBody, UnionMember, UnionType,
    XTypesError,
};

/// Minimal identifiers of the complete hashes an object refers to.
pub(super) type MinimalIds = BTreeMap<[u8; 14], TypeIdentifier>;

/// The minimal object of `c`, whose references to other types `ids` translates.
pub(super) fn of(
    c: &CompleteTypeObject,
    ids: &MinimalIds,
) -> Result<MinimalTypeObject, XTypesError> {
    let ti = |t: &TypeIdentifier| minimal_ti(t, ids);
    Ok(match c {
        TypeObjectBody::Alias(t) => TypeObjectBody::Alias(AliasType {
            alias_flags: t.alias_flags,
            detail: (),
            related_flags: t.related_flags,
            related_type: ti(&t.related_type)?,
        }),
        TypeObjectBody::Struct(t) => TypeObjectBody::Struct(StructType {
            struct_flags: t.struct_flags,
            base_type: ti(&t.base_type)?,
            detail: (),
            members: t
                .members
                .iter()
                .map(|m| {
                    Ok(StructMember {
                        member_id: m.member_id,
                        member_flags: m.member_flags,
                        member_type_id: ti(&m.member_type_id)?,
                        detail: name_hash(&m.detail.name),
                    })
                })
                .collect::<Result<_, XTypesError>>()?,
        }),
        TypeObjectBody::Union(t) => TypeObjectBody::Union(UnionType {
            union_flags: t.union_flags,
            detail: (),
            discriminator_flags: t.discriminator_flags,
            discriminator_type: ti(&t.discriminator_type)?,
            members: t
                .members
                .iter()
                .map(|m| {
                    Ok(UnionMember {
                        member_id: m.member_id,
                        member_flags: m.member_flags,
                        type_id: ti(&m.type_id)?,
                        labels: m.labels.clone(),
                        detail: name_hash(&m.detail.name),
                    })
                })
                .collect::<Result<_, XTypesError>>()?,
        }),
        TypeObjectBody::Sequence(t) => TypeObjectBody::Sequence(SequenceType {
            collection_flag: t.collection_flag,
            bound: t.bound,
            detail: None,
            element: element(&t.element, ids)?,
        }),
        TypeObjectBody::Array(t) => TypeObjectBody::Array(ArrayType {
            collection_flag: t.collection_flag,
            bounds: t.bounds.clone(),
            detail: (),
            element: element(&t.element, ids)?,
        }),
        TypeObjectBody::Map(t) => TypeObjectBody::Map(MapType {
            collection_flag: t.collection_flag,
            bound: t.bound,
            detail: None,
            key: element(&t.key, ids)?,
            element: element(&t.element, ids)?,
        }),
        TypeObjectBody::Enum(t) => TypeObjectBody::Enum(EnumType {
            enum_flags: t.enum_flags,
            bit_bound: t.bit_bound,
            detail: (),
            literals: t
                .literals
                .iter()
                .map(|l| EnumLiteral {
                    value: l.value,
                    flags: l.flags,
                    detail: name_hash(&l.detail.name),
                })
                .collect(),
        }),
        TypeObjectBody::Bitmask(t) => TypeObjectBody::Bitmask(BitmaskType {
            bitmask_flags: t.bitmask_flags,
            bit_bound: t.bit_bound,
            detail: (),
            flags: t
                .flags
                .iter()
                .map(|f| Bitflag {
                    position: f.position,
                    flags: f.flags,
                    detail: name_hash(&f.detail.name),
                })
                .collect(),
        }),
    })
}

fn element(e: &CollectionElement, ids: &MinimalIds) -> Result<CollectionElement, XTypesError> {
    Ok(CollectionElement {
        element_flags: e.element_flags,
        type_id: minimal_ti(&e.type_id, ids)?,
    })
}

/// `t` with every complete hash replaced by its minimal identifier, and the headers of plain
/// collections of them saying so.
fn minimal_ti(t: &TypeIdentifier, ids: &MinimalIds) -> Result<TypeIdentifier, XTypesError> {
    use TypeIdentifier as T;
    let header = |h: &PlainCollectionHeader| PlainCollectionHeader {
        equiv_kind: match h.equiv_kind {
            EquivalenceKind::Complete => EquivalenceKind::Minimal,
            k => k,
        },
        element_flags: h.element_flags,
    };
    let boxed = |e: &TypeIdentifier| minimal_ti(e, ids).map(Box::new);
    Ok(match t {
        T::Hash {
            kind: EquivalenceKind::Complete,
            hash,
        } => ids.get(hash).cloned().ok_or(XTypesError::Invalid(
            "a complete object refers to a type the description lacks",
        ))?,
        T::StronglyConnectedComponent { .. } => {
            return Err(XTypesError::Unsupported("strongly connected components"))
        }
        T::PlainSequenceSmall {
            header: h,
            bound,
            element,
        } => T::PlainSequenceSmall {
            header: header(h),
            bound: *bound,
            element: boxed(element)?,
        },
        T::PlainSequenceLarge {
            header: h,
            bound,
            element,
        } => T::PlainSequenceLarge {
            header: header(h),
            bound: *bound,
            element: boxed(element)?,
        },
        T::PlainArraySmall {
            header: h,
            bounds,
            element,
        } => T::PlainArraySmall {
            header: header(h),
            bounds: bounds.clone(),
            element: boxed(element)?,
        },
        T::PlainArrayLarge {
            header: h,
            bounds,
            element,
        } => T::PlainArrayLarge {
            header: header(h),
            bounds: bounds.clone(),
            element: boxed(element)?,
        },
        T::PlainMapSmall {
            header: h,
            bound,
            element,
            key_flags,
            key,
        } => T::PlainMapSmall {
            header: header(h),
            bound: *bound,
            element: boxed(element)?,
            key_flags: *key_flags,
            key: boxed(key)?,
        },
        T::PlainMapLarge {
            header: h,
            bound,
            element,
            key_flags,
            key,
        } => T::PlainMapLarge {
            header: header(h),
            bound: *bound,
            element: boxed(element)?,
            key_flags: *key_flags,
            key: boxed(key)?,
        },
        other => other.clone(),
    })
}
