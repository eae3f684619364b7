//! Building a type's XTypes description from its parts (XTypes 1.3 §7.3.4, §7.6.3.2.2).
//!
//! Design. `halyard-idlc` (types written in IDL) and `halyard-derive` (types written in Rust)
//! both build through here, so the same type written either way gets the same bytes: struct
//! and enum TypeObjects from their members ([`struct_objects`], [`enum_objects`]) with the
//! member flags of the Python `cyclonedds` 11 package ([`member_flags`]), a map's identifier
//! as that package writes it ([`map_identifier`]), a named type's identifiers and
//! serializations ([`DescribedType`]), and a topic type's TypeInformation with the objects it
//! names ([`topic_description`]), its dependencies in that package's order
//! ([`dependency_order`]).

use std::collections::BTreeMap;

use crate::{
    member_flag, name_hash, AliasType, Complete, CompleteTypeObject, EnumLiteral, EnumType,
    EquivalenceKind, MemberDetail, Minimal, MinimalTypeObject, PlainCollectionHeader, StructMember,
    StructType, TypeDetail, TypeIdentifier, TypeIdentifierWithDependencies, TypeIdentifierWithSize,
    TypeInformation, TypeObject, TypeObjectBody, XTypesError,
};

/// The member flags of a struct member: TRY_CONSTRUCT1 (TRY_CONSTRUCT2 with a `@default`)
/// and the annotations'. Keys carry no IS_MUST_UNDERSTAND, as in the Python `cyclonedds` 11
/// package (Cyclone's C `idlc` 0.10 adds it).
pub fn member_flags(
    key: bool,
    optional: bool,
    external: bool,
    must_understand: bool,
    has_default: bool,
) -> u16 {
    let mut f = if has_default {
        member_flag::TRY_CONSTRUCT2
    } else {
        member_flag::TRY_CONSTRUCT1
    };
    for (on, bit) in [
        (external, member_flag::IS_EXTERNAL),
        (optional, member_flag::IS_OPTIONAL),
        (must_understand, member_flag::IS_MUST_UNDERSTAND),
        (key, member_flag::IS_KEY),
    ] {
        if on {
            f |= bit;
        }
    }
    f
}

/// One struct member: its name, id, [`member_flags`] and type in both forms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberSpec {
    /// The member name.
    pub name: String,
    /// The member id.
    pub id: u32,
    /// [`crate::member_flag`] bits.
    pub flags: u16,
    /// The member's type as the minimal object names it.
    pub minimal: TypeIdentifier,
    /// The member's type as the complete object names it.
    pub complete: TypeIdentifier,
}

/// The minimal and complete TypeObjects of struct `name` (qualified, `M::S`) with
/// [`crate::type_flag`] bits `flags`, base type `base` (minimal, complete; `None` for none)
/// and `members` in declaration order.
pub fn struct_objects(
    name: &str,
    flags: u16,
    base: Option<(TypeIdentifier, TypeIdentifier)>,
    members: &[MemberSpec],
) -> (MinimalTypeObject, CompleteTypeObject) {
    let (base_minimal, base_complete) =
        base.unwrap_or((TypeIdentifier::None, TypeIdentifier::None));
    let minimal = members
        .iter()
        .map(|m| StructMember::<Minimal> {
            member_id: m.id,
            member_flags: m.flags,
            member_type_id: m.minimal.clone(),
            detail: name_hash(&m.name),
        })
        .collect();
    let complete = members
        .iter()
        .map(|m| StructMember::<Complete> {
            member_id: m.id,
            member_flags: m.flags,
            member_type_id: m.complete.clone(),
            detail: MemberDetail {
                name: m.name.clone(),
            },
        })
        .collect();
    (
        TypeObjectBody::Struct(StructType {
            struct_flags: flags,
            base_type: base_minimal,
            detail: (),
            members: minimal,
        }),
        TypeObjectBody::Struct(StructType {
            struct_flags: flags,
            base_type: base_complete,
            detail: TypeDetail {
                type_name: name.to_string(),
            },
            members: complete,
        }),
    )
}

/// One enumerator: its name, value and whether it is the default literal (the first one
/// unless another is marked `@default_literal`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiteralSpec {
    /// The enumerator's name.
    pub name: String,
    /// Its value.
    pub value: i32,
    /// True for the default literal (IS_DEFAULT).
    pub default: bool,
}

/// The minimal and complete TypeObjects of enum `name` with [`crate::type_flag`] bits
/// `flags` (its extensibility, as cyclonedds writes them) and `@bit_bound` `bit_bound`.
pub fn enum_objects(
    name: &str,
    flags: u16,
    bit_bound: u16,
    literals: &[LiteralSpec],
) -> (MinimalTypeObject, CompleteTypeObject) {
    let lflags = |l: &LiteralSpec| {
        if l.default {
            member_flag::IS_DEFAULT
        } else {
            0
        }
    };
    let minimal = literals
        .iter()
        .map(|l| EnumLiteral::<Minimal> {
            value: l.value,
            flags: lflags(l),
            detail: name_hash(&l.name),
        })
        .collect();
    let complete = literals
        .iter()
        .map(|l| EnumLiteral::<Complete> {
            value: l.value,
            flags: lflags(l),
            detail: MemberDetail {
                name: l.name.clone(),
            },
        })
        .collect();
    (
        TypeObjectBody::Enum(EnumType {
            enum_flags: flags,
            bit_bound,
            detail: (),
            literals: minimal,
        }),
        TypeObjectBody::Enum(EnumType {
            enum_flags: flags,
            bit_bound,
            detail: TypeDetail {
                type_name: name.to_string(),
            },
            literals: complete,
        }),
    )
}

/// The minimal and complete TypeObjects of typedef `name` of `related` (minimal, complete).
pub fn alias_objects(
    name: &str,
    related: (TypeIdentifier, TypeIdentifier),
) -> (MinimalTypeObject, CompleteTypeObject) {
    (
        TypeObjectBody::Alias(AliasType {
            alias_flags: 0,
            detail: (),
            related_flags: 0,
            related_type: related.0,
        }),
        TypeObjectBody::Alias(AliasType {
            alias_flags: 0,
            detail: TypeDetail {
                type_name: name.to_string(),
            },
            related_flags: 0,
            related_type: related.1,
        }),
    )
}

/// The identifier of an unbounded `map<key, value>` as the Python `cyclonedds` 11 package
/// writes it: the large form with bound `u32::MAX`, flags 0, and the header's equivalence
/// kind the key's when the key is hashed.
pub fn map_identifier(key: TypeIdentifier, value: TypeIdentifier) -> TypeIdentifier {
    let equiv_kind = match key.equivalence_kind() {
        EquivalenceKind::Both => value.equivalence_kind(),
        k => k,
    };
    TypeIdentifier::PlainMapLarge {
        header: PlainCollectionHeader {
            equiv_kind,
            element_flags: 0,
        },
        bound: u32::MAX,
        element: Box::new(value),
        key_flags: 0,
        key: Box::new(key),
    }
}

/// A named type's two TypeObjects as the wire carries them, with their identifiers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DescribedType {
    /// The minimal object's XCDR2 little-endian serialization.
    pub minimal_bytes: Vec<u8>,
    /// The complete object's XCDR2 little-endian serialization.
    pub complete_bytes: Vec<u8>,
    /// `EK_MINIMAL` identifier and size.
    pub minimal_id: TypeIdentifierWithSize,
    /// `EK_COMPLETE` identifier and size.
    pub complete_id: TypeIdentifierWithSize,
}

impl DescribedType {
    /// Encodes and hashes a type's two objects.
    pub fn new(
        minimal: MinimalTypeObject,
        complete: CompleteTypeObject,
    ) -> Result<Self, XTypesError> {
        let minimal = TypeObject::Minimal(minimal);
        let complete = TypeObject::Complete(complete);
        Ok(DescribedType {
            minimal_bytes: minimal.to_xcdr2_le()?,
            complete_bytes: complete.to_xcdr2_le()?,
            minimal_id: minimal.identifier_with_size()?,
            complete_id: complete.identifier_with_size()?,
        })
    }

    /// Checks serialized objects (each must decode, as minimal and complete respectively)
    /// and computes their identifiers.
    pub fn from_bytes(minimal: &[u8], complete: &[u8]) -> Result<Self, XTypesError> {
        match (
            TypeObject::from_xcdr2(minimal)?,
            TypeObject::from_xcdr2(complete)?,
        ) {
            (TypeObject::Minimal(m), TypeObject::Complete(c)) => Self::new(m, c),
            _ => Err(XTypesError::Invalid(
                "expected a minimal and a complete TypeObject",
            )),
        }
    }
}

/// What a topic type announces: its TypeInformation and every TypeObject it names, as
/// XCDR2 little-endian bytes (the contents of `halyard_cdr::TypeDescription`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopicDescription {
    /// The TypeInformation.
    pub type_information: TypeInformation,
    /// Its serialization.
    pub type_information_bytes: Vec<u8>,
    /// Minimal then complete object of the type itself, then of each dependency in the
    /// order the TypeInformation lists them (an object equal to an earlier one is left out).
    pub type_objects: Vec<Vec<u8>>,
}

/// The TypeInformation of topic type `top` whose dependencies are `deps` (in the order of
/// [`dependency_order`], without `top`), and the objects it names. As cyclonedds does, the
/// minimal list names each identifier once (distinct types can have equal minimal objects);
/// the complete list names every type.
pub fn topic_description(
    top: &DescribedType,
    deps: &[&DescribedType],
) -> Result<TopicDescription, XTypesError> {
    let mut minimal: Vec<TypeIdentifierWithSize> = Vec::new();
    for d in deps {
        if !minimal.iter().any(|m| m.type_id == d.minimal_id.type_id) {
            minimal.push(d.minimal_id.clone());
        }
    }
    let complete: Vec<TypeIdentifierWithSize> =
        deps.iter().map(|d| d.complete_id.clone()).collect();
    let count = |v: &Vec<TypeIdentifierWithSize>| {
        i32::try_from(v.len()).map_err(|_| XTypesError::Invalid("too many dependencies"))
    };
    let info = TypeInformation {
        minimal: TypeIdentifierWithDependencies {
            typeid_with_size: top.minimal_id.clone(),
            dependent_typeid_count: count(&minimal)?,
            dependent_typeids: minimal,
        },
        complete: TypeIdentifierWithDependencies {
            typeid_with_size: top.complete_id.clone(),
            dependent_typeid_count: count(&complete)?,
            dependent_typeids: complete,
        },
    };
    let mut objects: Vec<Vec<u8>> = Vec::new();
    for e in std::iter::once(top).chain(deps.iter().copied()) {
        for o in [&e.minimal_bytes, &e.complete_bytes] {
            if !objects.contains(o) {
                objects.push(o.clone());
            }
        }
    }
    Ok(TopicDescription {
        type_information_bytes: info.to_xcdr2_le()?,
        type_information: info,
        type_objects: objects,
    })
}

/// Most types [`dependency_order`] visits.
const MAX_ORDERED_TYPES: usize = 100_000;

/// Deepest nesting [`dependency_order`] follows.
const MAX_ORDER_DEPTH: usize = 256;

/// The dependencies of `top` in the order of the Python `cyclonedds` 11 package
/// (`XTBuilder.gather_types` / `process_type` in `cyclonedds/idl/_xt_builder.py`), without
/// `top`. `direct(t)` gives the named types `t` refers to directly in its scan order (a
/// union's discriminator, a struct's base, then the member types, inherited members first,
/// looking through sequences, arrays, maps and optional members).
///
/// 1. Discover the types reachable from `top` with a LIFO stack: popping a type visits its
///    direct dependencies, recording each the first time it is seen.
/// 2. The leaves (types that depend on no named type), in discovery order, come first.
/// 3. Then the other types in depth-first post-order from `top`, children in discovery
///    order.
///
/// XTypes 1.3 §7.6.3.2.2 fixes no order; following cyclonedds makes our TypeInformation
/// byte-identical to the one it announces. A type reachable along two paths is listed once.
pub fn dependency_order<K: Ord + Clone>(top: &K, mut direct: impl FnMut(&K) -> Vec<K>) -> Vec<K> {
    // 1. discovery
    let mut order: Vec<K> = vec![top.clone()];
    let mut rank: BTreeMap<K, usize> = BTreeMap::from([(top.clone(), 0)]);
    let mut edges: BTreeMap<K, Vec<K>> = BTreeMap::new();
    let mut stack = vec![top.clone()];
    while let Some(t) = stack.pop() {
        if order.len() > MAX_ORDERED_TYPES {
            break;
        }
        let d = direct(&t);
        for c in &d {
            if !rank.contains_key(c) {
                rank.insert(c.clone(), order.len());
                order.push(c.clone());
                stack.push(c.clone());
            }
        }
        edges.insert(t, d);
    }
    // 2. leaves first
    let is_leaf = |t: &K| !matches!(edges.get(t), Some(e) if !e.is_empty());
    let mut out: Vec<K> = order.iter().filter(|t| is_leaf(t)).cloned().collect();
    // 3. post-order over the rest, children in discovery order
    let mut post = Vec::new();
    let walk = PostOrder {
        edges: &edges,
        rank: &rank,
        is_leaf: &is_leaf,
    };
    walk.visit(top, &mut post, 0);
    for t in post {
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out.retain(|t| t != top);
    out
}

struct PostOrder<'a, K> {
    edges: &'a BTreeMap<K, Vec<K>>,
    rank: &'a BTreeMap<K, usize>,
    is_leaf: &'a dyn Fn(&K) -> bool,
}

impl<K: Ord + Clone> PostOrder<'_, K> {
    fn visit(&self, t: &K, out: &mut Vec<K>, depth: usize) {
        if depth > MAX_ORDER_DEPTH || out.contains(t) {
            return;
        }
        let mut children: Vec<&K> = self
            .edges
            .get(t)
            .into_iter()
            .flatten()
            .filter(|c| !(self.is_leaf)(c))
            .collect();
        children.sort_by_key(|c| self.rank.get(*c).copied().unwrap_or(usize::MAX));
        children.dedup();
        for c in children {
            self.visit(c, out, depth + 1);
        }
        out.push(t.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PrimitiveKind;

    #[test]
    fn leaves_come_first_then_post_order() {
        // top -> a, b; a -> c (leaf); b -> a, d (leaf)
        let edges: BTreeMap<&str, Vec<&str>> = BTreeMap::from([
            ("top", vec!["a", "b"]),
            ("a", vec!["c"]),
            ("b", vec!["a", "d"]),
        ]);
        let order = dependency_order(&"top", |t| edges.get(t).cloned().unwrap_or_default());
        // discovery: top, a, b, then (b popped first) d, then c
        assert_eq!(order, vec!["d", "c", "a", "b"]);
    }

    #[test]
    fn equal_minimal_objects_are_named_once_in_the_minimal_list() {
        let e = |name: &str| {
            let (m, c) = enum_objects(
                name,
                crate::type_flag::IS_FINAL,
                32,
                &[LiteralSpec {
                    name: "A".into(),
                    value: 0,
                    default: true,
                }],
            );
            DescribedType::new(m, c).unwrap()
        };
        let (a, b) = (e("M::A"), e("M::B"));
        let member = |n: &str, t: &DescribedType| MemberSpec {
            name: n.into(),
            id: 0,
            flags: member_flags(false, false, false, false, false),
            minimal: t.minimal_id.type_id.clone(),
            complete: t.complete_id.type_id.clone(),
        };
        let (m, c) = struct_objects("S", 1, None, &[member("a", &a), member("b", &b)]);
        let top = DescribedType::new(m, c).unwrap();
        let d = topic_description(&top, &[&a, &b]).unwrap();
        assert_eq!(d.type_information.minimal.dependent_typeids.len(), 1);
        assert_eq!(d.type_information.complete.dependent_typeids.len(), 2);
        // top's two objects, the shared minimal one, the two complete ones
        assert_eq!(d.type_objects.len(), 5);
        let ti = TypeIdentifier::Primitive(PrimitiveKind::Int32);
        assert_eq!(
            map_identifier(ti.clone(), ti).equivalence_kind(),
            EquivalenceKind::Both
        );
    }
}
