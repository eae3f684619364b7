//! Builds a [`DynamicType`] from a TypeIdentifier and a [`TypeRegistry`]: hashes are looked
//! up, shared sub-types are built once (memoised by identifier), inheritance is flattened,
//! and nesting is bounded by [`MAX_TYPE_DEPTH`]. `float128` and strongly connected
//! components (recursive types) are refused with a clear error.

use std::collections::BTreeMap;

use super::types::*;
use super::DynamicError;
use crate::object::*;
use crate::registry::{
    hash_key, is_discriminator_primitive, minimal_name, HashKey, TypeRegistry, MAX_TYPE_DEPTH,
};
use crate::{member_flag, type_flag, PrimitiveKind, TypeIdentifier, TypeObject};

/// Names of a TypeObject form: known (complete) or synthesised (minimal).
pub(crate) trait FormNames: Form {
    /// The member's name, or `m<id>`.
    fn member_name(d: &Self::MemberDetail, id: u32) -> String;
    /// The literal's / flag's name, or `LITERAL_<index>`.
    fn literal_name(d: &Self::MemberDetail, index: usize) -> String;
    /// The type's name, or the minimal placeholder.
    fn type_name(d: &Self::TypeDetail, id: &TypeIdentifier) -> String;
    /// Whether names are real.
    const NAMES_KNOWN: bool;
}

impl FormNames for Minimal {
    fn member_name(_: &NameHashAlias, id: u32) -> String {
        format!("m{id}")
    }
    fn literal_name(_: &NameHashAlias, index: usize) -> String {
        format!("LITERAL_{index}")
    }
    fn type_name(_: &(), id: &TypeIdentifier) -> String {
        minimal_name(id)
    }
    const NAMES_KNOWN: bool = false;
}

type NameHashAlias = crate::NameHash;

impl FormNames for Complete {
    fn member_name(d: &MemberDetail, _: u32) -> String {
        d.name.clone()
    }
    fn literal_name(d: &MemberDetail, _: usize) -> String {
        d.name.clone()
    }
    fn type_name(d: &TypeDetail, _: &TypeIdentifier) -> String {
        d.type_name.clone()
    }
    const NAMES_KNOWN: bool = true;
}

/// One build: a memo of the types already built and the chain being built.
pub(crate) struct Builder<'r> {
    reg: &'r TypeRegistry,
    memo: BTreeMap<HashKey, DynamicType>,
    chain: Vec<TypeIdentifier>,
}

fn unsupported(what: &'static str) -> DynamicError {
    DynamicError::Unsupported(what)
}

fn inconsistent(name: &str, why: impl Into<String>) -> DynamicError {
    DynamicError::Inconsistent {
        type_name: name.to_owned(),
        why: why.into(),
    }
}

impl<'r> Builder<'r> {
    pub(crate) fn new(reg: &'r TypeRegistry) -> Self {
        Builder {
            reg,
            memo: BTreeMap::new(),
            chain: Vec::new(),
        }
    }

    /// Builds the type of `id`.
    pub(crate) fn build(&mut self, id: &TypeIdentifier) -> Result<DynamicType, DynamicError> {
        if self.chain.len() >= MAX_TYPE_DEPTH {
            return Err(DynamicError::Limit {
                what: "type nesting depth",
                limit: MAX_TYPE_DEPTH,
            });
        }
        let node = match id {
            TypeIdentifier::None => return Err(unsupported("TK_NONE used as a type")),
            TypeIdentifier::Primitive(PrimitiveKind::Float128) => {
                return Err(unsupported("float128 (long double) values"))
            }
            TypeIdentifier::Primitive(p) => TypeNode::Primitive(*p),
            TypeIdentifier::String8Small { bound } => TypeNode::String8 {
                bound: u32::from(*bound),
            },
            TypeIdentifier::String8Large { bound } => TypeNode::String8 { bound: *bound },
            TypeIdentifier::String16Small { bound } => TypeNode::String16 {
                bound: u32::from(*bound),
            },
            TypeIdentifier::String16Large { bound } => TypeNode::String16 { bound: *bound },
            TypeIdentifier::PlainSequenceSmall { bound, element, .. } => TypeNode::Sequence {
                element: self.build(element)?,
                bound: u32::from(*bound),
            },
            TypeIdentifier::PlainSequenceLarge { bound, element, .. } => TypeNode::Sequence {
                element: self.build(element)?,
                bound: *bound,
            },
            TypeIdentifier::PlainArraySmall {
                bounds, element, ..
            } => self.array(element, bounds.iter().map(|b| u32::from(*b)).collect())?,
            TypeIdentifier::PlainArrayLarge {
                bounds, element, ..
            } => self.array(element, bounds.clone())?,
            TypeIdentifier::PlainMapSmall {
                bound,
                element,
                key,
                ..
            } => self.map(key, element, u32::from(*bound))?,
            TypeIdentifier::PlainMapLarge {
                bound,
                element,
                key,
                ..
            } => self.map(key, element, *bound)?,
            TypeIdentifier::StronglyConnectedComponent { .. } => {
                return Err(unsupported(
                    "recursive types (strongly connected components)",
                ))
            }
            TypeIdentifier::Hash { .. } => return self.hashed(id),
        };
        Ok(DynamicType::new(node))
    }

    fn array(
        &mut self,
        element: &TypeIdentifier,
        dims: Vec<u32>,
    ) -> Result<TypeNode, DynamicError> {
        if dims.is_empty() || dims.contains(&0) {
            return Err(inconsistent("array", "no or a zero dimension"));
        }
        Ok(TypeNode::Array {
            element: self.build(element)?,
            dims,
        })
    }

    fn map(
        &mut self,
        key: &TypeIdentifier,
        value: &TypeIdentifier,
        bound: u32,
    ) -> Result<TypeNode, DynamicError> {
        Ok(TypeNode::Map {
            key: self.build(key)?,
            value: self.build(value)?,
            bound,
        })
    }

    fn hashed(&mut self, id: &TypeIdentifier) -> Result<DynamicType, DynamicError> {
        let key = hash_key(id).ok_or(DynamicError::Unsupported("unhashed identifier"))?;
        if let Some(t) = self.memo.get(&key) {
            return Ok(t.clone());
        }
        if self.chain.contains(id) {
            return Err(inconsistent(&minimal_name(id), "type refers to itself"));
        }
        let object = self
            .reg
            .get(id)
            .ok_or_else(|| DynamicError::Missing(vec![id.clone()]))?;
        self.chain.push(id.clone());
        let built = match object {
            TypeObject::Minimal(b) => self.body(b, id),
            TypeObject::Complete(b) => self.body(b, id),
        };
        self.chain.pop();
        let t = DynamicType::new(built?);
        self.memo.insert(key, t.clone());
        Ok(t)
    }

    fn body<F: FormNames>(
        &mut self,
        b: &TypeObjectBody<F>,
        id: &TypeIdentifier,
    ) -> Result<TypeNode, DynamicError> {
        Ok(match b {
            TypeObjectBody::Alias(t) => TypeNode::Alias {
                name: F::type_name(&t.detail, id),
                target: self.build(&t.related_type)?,
            },
            TypeObjectBody::Struct(t) => TypeNode::Struct(self.structure(t, id)?),
            TypeObjectBody::Union(t) => TypeNode::Union(self.union(t, id)?),
            TypeObjectBody::Sequence(t) => TypeNode::Sequence {
                element: self.build(&t.element.type_id)?,
                bound: t.bound,
            },
            TypeObjectBody::Array(t) => self.array(&t.element.type_id, t.bounds.clone())?,
            TypeObjectBody::Map(t) => self.map(&t.key.type_id, &t.element.type_id, t.bound)?,
            TypeObjectBody::Enum(t) => TypeNode::Enum(EnumDesc {
                name: F::type_name(&t.detail, id),
                bit_bound: t.bit_bound,
                literals: t
                    .literals
                    .iter()
                    .enumerate()
                    .map(|(i, l)| EnumLiteralDesc {
                        name: F::literal_name(&l.detail, i),
                        value: l.value,
                        default: l.flags & member_flag::IS_DEFAULT != 0,
                    })
                    .collect(),
            }),
            TypeObjectBody::Bitmask(t) => TypeNode::Bitmask(BitmaskDesc {
                name: F::type_name(&t.detail, id),
                bit_bound: t.bit_bound,
                flags: t
                    .flags
                    .iter()
                    .enumerate()
                    .map(|(i, f)| (F::literal_name(&f.detail, i), f.position))
                    .collect(),
            }),
        })
    }

    fn structure<F: FormNames>(
        &mut self,
        t: &StructType<F>,
        id: &TypeIdentifier,
    ) -> Result<StructDesc, DynamicError> {
        let name = F::type_name(&t.detail, id);
        let (base, mut members) = match &t.base_type {
            TypeIdentifier::None => (None, Vec::new()),
            base_id => {
                let base = self.build(base_id)?;
                let members = match base.as_struct() {
                    Some(b) => b.members.clone(),
                    None => return Err(inconsistent(&name, "base type is not a struct")),
                };
                (Some(base), members)
            }
        };
        let own_start = members.len();
        for m in &t.members {
            let f = m.member_flags;
            members.push(MemberDesc {
                name: F::member_name(&m.detail, m.member_id),
                id: m.member_id,
                ty: self.build(&m.member_type_id)?,
                key: f & member_flag::IS_KEY != 0,
                optional: f & member_flag::IS_OPTIONAL != 0,
                must_understand: f & member_flag::IS_MUST_UNDERSTAND != 0,
                external: f & member_flag::IS_EXTERNAL != 0,
            });
        }
        let mut ids: Vec<u32> = members.iter().map(|m| m.id).collect();
        ids.sort_unstable();
        if ids.windows(2).any(|w| w[0] == w[1]) {
            return Err(inconsistent(
                &name,
                "a member id is used by the base and the derived struct",
            ));
        }
        Ok(StructDesc {
            name,
            extensibility: extensibility(t.struct_flags),
            base,
            members,
            own_start,
            names_known: F::NAMES_KNOWN,
            nested: t.struct_flags & type_flag::IS_NESTED != 0,
        })
    }

    fn union<F: FormNames>(
        &mut self,
        t: &UnionType<F>,
        id: &TypeIdentifier,
    ) -> Result<UnionDesc, DynamicError> {
        let name = F::type_name(&t.detail, id);
        let discriminator = self.build(&t.discriminator_type)?;
        let ok = match discriminator.resolved().node() {
            TypeNode::Primitive(p) => is_discriminator_primitive(*p),
            TypeNode::Enum(_) => true,
            _ => false,
        };
        if !ok {
            return Err(inconsistent(
                &name,
                "discriminator is not an integer, boolean, char, octet or enum",
            ));
        }
        let mut cases = Vec::with_capacity(t.members.len());
        for m in &t.members {
            cases.push(UnionCaseDesc {
                name: F::member_name(&m.detail, m.member_id),
                id: m.member_id,
                ty: self.build(&m.type_id)?,
                labels: m.labels.clone(),
                default: m.member_flags & member_flag::IS_DEFAULT != 0,
            });
        }
        Ok(UnionDesc {
            name,
            extensibility: extensibility(t.union_flags),
            discriminator,
            discriminator_key: t.discriminator_flags & member_flag::IS_KEY != 0,
            cases,
            names_known: F::NAMES_KNOWN,
        })
    }
}

/// The extensibility a TypeFlag word announces (final when none is set, as XTypes defaults).
fn extensibility(flags: u16) -> Extensibility {
    if flags & type_flag::IS_MUTABLE != 0 {
        Extensibility::Mutable
    } else if flags & type_flag::IS_APPENDABLE != 0 {
        Extensibility::Appendable
    } else {
        Extensibility::Final
    }
}
