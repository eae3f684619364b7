//! TypeObjects, hashed TypeIdentifiers and TypeInformation of IDL types (XTypes 1.3 §7.3.4).
//!
//! Every named type (struct, union, enum, bitmask, typedef) gets a minimal and a complete
//! TypeObject; a member's type is a fully descriptive TypeIdentifier (primitives, strings,
//! plain sequences/arrays/maps) or the hash of a named type's TypeObject. Named types are built
//! on demand, depth first and memoised, so a type's dependencies are done before it; a type
//! that reaches itself (recursive types, which need strongly connected component ids) is
//! reported as unsupported.
//!
//! Flags follow the Python `cyclonedds` 11 package (`cyclonedds/idl/_xt_builder.py`), whose
//! output we check byte for byte: members carry TRY_CONSTRUCT1 (TRY_CONSTRUCT2 with
//! `@default`), `@key` is IS_KEY without IS_MUST_UNDERSTAND (Cyclone's C `idlc` 0.10.2 adds
//! must-understand to keys), plain sequence/array elements TRY_CONSTRUCT1, union
//! discriminators TRY_CONSTRUCT1 | IS_MUST_UNDERSTAND, maps the large form with element and
//! key flags 0, enums and bitmasks the type flags of their extensibility (IS_FINAL by default;
//! the spec says these flags are unused there).

use std::collections::{BTreeMap, BTreeSet};

use halyard_idl::ast::{
    AutoId, BasicType, CaseLabel, ConstExpr, Extensibility, StructDef, TypeSpec, UnionDef,
};
use halyard_idl::{Location, Spec};
pub use halyard_xtypes::describe::TopicDescription;
use halyard_xtypes::describe::{self, DescribedType, LiteralSpec, MemberSpec};
use halyard_xtypes::{
    member_flag, name_hash, type_flag, Bitflag, BitmaskType, Complete, CompleteTypeObject,
    MemberDetail, Minimal, MinimalTypeObject, PrimitiveKind, TypeDetail, TypeIdentifier,
    TypeIdentifierWithSize, TypeObject, TypeObjectBody, UnionMember, UnionType,
};

use crate::index::{const_u32, label_i32, resolved, Index, Named};
use crate::Error;

/// The XTypes description of one named type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeEntry {
    /// The qualified name (`Module::Type`).
    pub name: String,
    /// The minimal TypeObject.
    pub minimal: TypeObject,
    /// The complete TypeObject.
    pub complete: TypeObject,
    /// The `EK_MINIMAL` identifier and the minimal object's serialized size.
    pub minimal_id: TypeIdentifierWithSize,
    /// The `EK_COMPLETE` identifier and the complete object's serialized size.
    pub complete_id: TypeIdentifierWithSize,
    /// The named types this one refers to directly (qualified names).
    pub direct_dependencies: Vec<String>,
}

/// The XTypes descriptions of every type of a specification.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TypeSet {
    /// Every named type by qualified name (`Module::Type`).
    pub types: BTreeMap<String, TypeEntry>,
    /// Every topic type (a struct that is not `@nested`) by qualified name.
    pub topics: BTreeMap<String, TopicDescription>,
    /// The description of every struct, union and enum by qualified name, as if it were a
    /// topic type: what the generated Rust type announces as a member of a derived type
    /// (`XTypesType`), and what a topic type announces.
    pub descriptions: BTreeMap<String, TopicDescription>,
}

/// Builds the TypeObjects of every struct, union, enum, bitmask and typedef of `spec`, and the
/// TypeInformation of every topic type (XTypes 1.3 §7.3.4, §7.6.3.2.2).
pub fn type_objects(spec: &Spec) -> Result<TypeSet, Error> {
    let ix = Index::new(spec);
    let mut b = Builder {
        ix: &ix,
        done: BTreeMap::new(),
        busy: BTreeSet::new(),
    };
    for full in &ix.order {
        let at = ix
            .get(full, &Location::default_for(full))?
            .location()
            .clone();
        b.named(full, &at)?;
    }
    let mut set = TypeSet::default();
    for full in &ix.order {
        let topic = match ix.types.get(full) {
            Some(Named::Struct(s)) => !s.typed.nested || s.typed.topic,
            Some(Named::Union(_) | Named::Enum(_)) => false,
            _ => continue,
        };
        let description = b.topic(full)?;
        if topic {
            set.topics.insert(plain(full), description.clone());
        }
        set.descriptions.insert(plain(full), description);
    }
    set.types = b.done.into_iter().map(|(k, v)| (plain(&k), v)).collect();
    Ok(set)
}

/// `A::B` from `::A::B`.
pub(crate) fn plain(full: &str) -> String {
    full.trim_start_matches("::").to_string()
}

trait LocationExt {
    fn default_for(name: &str) -> Location;
}

impl LocationExt for Location {
    fn default_for(name: &str) -> Location {
        Location {
            file: name.into(),
            line: 0,
            column: 0,
        }
    }
}

struct Builder<'i, 'a> {
    ix: &'i Index<'a>,
    done: BTreeMap<String, TypeEntry>,
    busy: BTreeSet<String>,
}

fn xt(at: &Location) -> impl Fn(halyard_xtypes::XTypesError) -> Error + '_ {
    move |e| Error::unsupported(at, format!("cannot encode TypeObject: {e}"))
}

impl Builder<'_, '_> {
    /// The entry of a named type, building it first if needed.
    fn named(&mut self, full: &str, at: &Location) -> Result<&TypeEntry, Error> {
        if !self.done.contains_key(full) {
            if !self.busy.insert(full.to_string()) {
                return Err(Error::unsupported(
                    at,
                    format!("recursive type `{}` is not supported", plain(full)),
                ));
            }
            let entry = self.build(full, at)?;
            self.busy.remove(full);
            self.done.insert(full.to_string(), entry);
        }
        self.done
            .get(full)
            .ok_or_else(|| Error::unsupported(at, "internal: type not built"))
    }

    fn build(&mut self, full: &str, at: &Location) -> Result<TypeEntry, Error> {
        let named = self.ix.get(full, at)?;
        let mut deps = BTreeSet::new();
        let name = plain(full);
        let (min, com) = match named {
            Named::Struct(s) => self.structure(s, &name, &mut deps)?,
            Named::Union(u) => self.union(u, &name, &mut deps)?,
            Named::Enum(e) => enumeration(e, &name)?,
            Named::Bitmask(m) => bitmask(m, &name)?,
            Named::Alias(t, d) => {
                let m = self.ti(&t.type_spec, &d.array, false, &mut deps)?;
                let c = self.ti(&t.type_spec, &d.array, true, &mut deps)?;
                describe::alias_objects(&name, (m, c))
            }
        };
        let (minimal, complete) = (TypeObject::Minimal(min), TypeObject::Complete(com));
        let loc = named.location().clone();
        Ok(TypeEntry {
            minimal_id: minimal.identifier_with_size().map_err(xt(&loc))?,
            complete_id: complete.identifier_with_size().map_err(xt(&loc))?,
            minimal,
            complete,
            direct_dependencies: deps.iter().map(|d| plain(d)).collect(),
            name,
        })
    }

    /// The TypeIdentifier of `ty` with array dimensions `dims` (outermost first).
    fn ti(
        &mut self,
        ty: &TypeSpec,
        dims: &[ConstExpr],
        complete: bool,
        deps: &mut BTreeSet<String>,
    ) -> Result<TypeIdentifier, Error> {
        if !dims.is_empty() {
            let bounds = dims
                .iter()
                .map(|d| const_u32(d, "array dimension"))
                .collect::<Result<Vec<_>, _>>()?;
            let element = self.ti(ty, &[], complete, deps)?;
            return Ok(TypeIdentifier::array(
                element,
                &bounds,
                member_flag::TRY_CONSTRUCT1,
            ));
        }
        Ok(match ty {
            TypeSpec::Basic(b, at) => TypeIdentifier::Primitive(primitive(*b, at)?),
            TypeSpec::String { wide, bound, .. } => {
                let n = bound
                    .as_deref()
                    .map(|b| const_u32(b, "string bound"))
                    .transpose()?
                    .unwrap_or(0);
                if *wide {
                    TypeIdentifier::string16(n)
                } else {
                    TypeIdentifier::string8(n)
                }
            }
            TypeSpec::Sequence { element, bound, .. } => {
                let n = bound
                    .as_deref()
                    .map(|b| const_u32(b, "sequence bound"))
                    .transpose()?
                    .unwrap_or(0);
                let e = self.ti(element, &[], complete, deps)?;
                TypeIdentifier::sequence(e, n, member_flag::TRY_CONSTRUCT1)
            }
            TypeSpec::Map {
                key, value, bound, ..
            } => self.map_ti(key, value, bound.as_deref(), complete, deps)?,
            TypeSpec::Fixed { location, .. } => {
                return Err(Error::unsupported(
                    location,
                    "fixed-point types are not supported",
                ))
            }
            TypeSpec::Named(n) => {
                let full = resolved(n)?.to_string();
                deps.insert(full.clone());
                let e = self.named(&full, &n.location)?;
                if complete {
                    e.complete_id.type_id.clone()
                } else {
                    e.minimal_id.type_id.clone()
                }
            }
        })
    }

    /// A map's identifier: the large form with bound `u32::MAX` and flags 0, as cyclonedds 11.
    fn map_ti(
        &mut self,
        key: &TypeSpec,
        value: &TypeSpec,
        bound: Option<&ConstExpr>,
        complete: bool,
        deps: &mut BTreeSet<String>,
    ) -> Result<TypeIdentifier, Error> {
        if let Some(b) = bound {
            return Err(Error::unsupported(
                &b.location,
                "bounded maps are not supported (the XTypes of Cyclone's Python binding \
                     has no bound for maps)",
            ));
        }
        let k = self.ti(key, &[], complete, deps)?;
        let v = self.ti(value, &[], complete, deps)?;
        Ok(describe::map_identifier(k, v))
    }

    fn base_ti(
        &mut self,
        s: &StructDef,
        complete: bool,
        deps: &mut BTreeSet<String>,
    ) -> Result<TypeIdentifier, Error> {
        match &s.base {
            None => Ok(TypeIdentifier::None),
            Some(b) => self.ti(&TypeSpec::Named(b.clone()), &[], complete, deps),
        }
    }

    fn structure(
        &mut self,
        s: &StructDef,
        name: &str,
        deps: &mut BTreeSet<String>,
    ) -> Result<(MinimalTypeObject, CompleteTypeObject), Error> {
        let flags = type_flags(s.typed.extensibility, s.typed.nested, s.typed.autoid);
        let ids = crate::ids::struct_member_ids(self.ix, s)?;
        let mut members = Vec::with_capacity(s.members.len());
        for (m, id) in s.members.iter().zip(ids.own) {
            let t = &m.typed;
            members.push(MemberSpec {
                name: m.name.name.clone(),
                id,
                flags: describe::member_flags(
                    t.key,
                    t.optional,
                    t.external,
                    t.must_understand,
                    t.default.is_some(),
                ),
                minimal: self.ti(&m.type_spec, &m.array, false, deps)?,
                complete: self.ti(&m.type_spec, &m.array, true, deps)?,
            });
        }
        let base = match &s.base {
            None => None,
            Some(_) => Some((self.base_ti(s, false, deps)?, self.base_ti(s, true, deps)?)),
        };
        Ok(describe::struct_objects(name, flags, base, &members))
    }

    fn union(
        &mut self,
        u: &UnionDef,
        name: &str,
        deps: &mut BTreeSet<String>,
    ) -> Result<(MinimalTypeObject, CompleteTypeObject), Error> {
        let flags = type_flags(u.typed.extensibility, u.typed.nested, u.typed.autoid);
        let key = u.discriminator_annotations.iter().any(|a| a.name == "key");
        let mut dflags = member_flag::TRY_CONSTRUCT1 | member_flag::IS_MUST_UNDERSTAND;
        if key {
            dflags |= member_flag::IS_KEY;
        }
        let ids = crate::ids::union_member_ids(u)?;
        let mut mm = Vec::new();
        let mut cm = Vec::new();
        for (c, id) in u.cases.iter().zip(ids) {
            let mut labels = Vec::new();
            let mut f = member_flag::TRY_CONSTRUCT1;
            for l in &c.labels {
                match l {
                    CaseLabel::Value(e) => labels.push(label_i32(e)?),
                    CaseLabel::Default(_) => f |= member_flag::IS_DEFAULT,
                }
            }
            if c.member.typed.external {
                f |= member_flag::IS_EXTERNAL;
            }
            let m = &c.member;
            mm.push(UnionMember::<Minimal> {
                member_id: id,
                member_flags: f,
                type_id: self.ti(&m.type_spec, &m.array, false, deps)?,
                labels: labels.clone(),
                detail: name_hash(&m.name.name),
            });
            cm.push(UnionMember::<Complete> {
                member_id: id,
                member_flags: f,
                type_id: self.ti(&m.type_spec, &m.array, true, deps)?,
                labels,
                detail: MemberDetail {
                    name: m.name.name.clone(),
                },
            });
        }
        Ok((
            TypeObjectBody::Union(UnionType {
                union_flags: flags,
                detail: (),
                discriminator_flags: dflags,
                discriminator_type: self.ti(&u.discriminator, &[], false, deps)?,
                members: mm,
            }),
            TypeObjectBody::Union(UnionType {
                union_flags: flags,
                detail: TypeDetail {
                    type_name: name.to_string(),
                },
                discriminator_flags: dflags,
                discriminator_type: self.ti(&u.discriminator, &[], true, deps)?,
                members: cm,
            }),
        ))
    }

    /// The TypeInformation of a topic type and the objects it names, dependencies in the order
    /// of [`crate::deporder`]. As cyclonedds does, the minimal list names each identifier once
    /// (distinct types can have equal minimal objects); the complete list names every type.
    fn topic(&mut self, full: &str) -> Result<TopicDescription, Error> {
        let at = Location::default_for(full);
        let order = crate::deporder::dependency_order(self.ix, full)?;
        let described = |e: &TypeEntry| -> Result<DescribedType, Error> {
            match (&e.minimal, &e.complete) {
                (TypeObject::Minimal(m), TypeObject::Complete(c)) => {
                    DescribedType::new(m.clone(), c.clone()).map_err(xt(&at))
                }
                _ => Err(Error::unsupported(
                    &at,
                    "internal: objects of the wrong form",
                )),
            }
        };
        let top = self
            .done
            .get(full)
            .ok_or_else(|| Error::unsupported(&at, "type not built"))?;
        let top = described(top)?;
        let deps = order
            .iter()
            .filter_map(|d| self.done.get(d))
            .map(described)
            .collect::<Result<Vec<_>, Error>>()?;
        let deps: Vec<&DescribedType> = deps.iter().collect();
        describe::topic_description(&top, &deps).map_err(xt(&at))
    }
}

fn type_flags(ext: Option<Extensibility>, nested: bool, autoid: Option<AutoId>) -> u16 {
    let mut f = match ext.unwrap_or(Extensibility::Final) {
        Extensibility::Final => type_flag::IS_FINAL,
        Extensibility::Appendable => type_flag::IS_APPENDABLE,
        Extensibility::Mutable => type_flag::IS_MUTABLE,
    };
    if nested {
        f |= type_flag::IS_NESTED;
    }
    if autoid == Some(AutoId::Hash) {
        f |= type_flag::IS_AUTOID_HASH;
    }
    f
}

pub(crate) fn primitive(b: BasicType, at: &Location) -> Result<PrimitiveKind, Error> {
    Ok(match b {
        BasicType::Short => PrimitiveKind::Int16,
        BasicType::Long => PrimitiveKind::Int32,
        BasicType::LongLong => PrimitiveKind::Int64,
        BasicType::UShort => PrimitiveKind::UInt16,
        BasicType::ULong => PrimitiveKind::UInt32,
        BasicType::ULongLong => PrimitiveKind::UInt64,
        BasicType::Int8 => PrimitiveKind::Int8,
        BasicType::UInt8 => PrimitiveKind::UInt8,
        BasicType::Float => PrimitiveKind::Float32,
        BasicType::Double => PrimitiveKind::Float64,
        BasicType::Char => PrimitiveKind::Char8,
        BasicType::Boolean => PrimitiveKind::Boolean,
        BasicType::Octet => PrimitiveKind::Byte,
        BasicType::LongDouble | BasicType::WChar => {
            return Err(Error::unsupported(
                at,
                format!("`{}` is not supported", b.idl_name()),
            ))
        }
    })
}

fn enumeration(
    e: &halyard_idl::ast::EnumDef,
    name: &str,
) -> Result<(MinimalTypeObject, CompleteTypeObject), Error> {
    let bit_bound = bit_bound(e.typed.bit_bound, &e.location)?;
    if bit_bound != 32 {
        return Err(Error::unsupported(
            &e.location,
            "enums with a @bit_bound other than 32 are not supported",
        ));
    }
    let flags = type_flags(e.typed.extensibility, e.typed.nested, e.typed.autoid);
    let default = e
        .enumerators
        .iter()
        .position(|x| x.default_literal)
        .unwrap_or(0);
    let mut literals = Vec::with_capacity(e.enumerators.len());
    for (i, x) in e.enumerators.iter().enumerate() {
        let value = i32::try_from(x.value).map_err(|_| {
            Error::unsupported(
                &x.name.location,
                format!("enumerator value {} too large", x.value),
            )
        })?;
        literals.push(LiteralSpec {
            name: x.name.name.clone(),
            value,
            default: i == default,
        });
    }
    Ok(describe::enum_objects(name, flags, bit_bound, &literals))
}

fn bit_bound(b: Option<u32>, at: &Location) -> Result<u16, Error> {
    u16::try_from(b.unwrap_or(32)).map_err(|_| Error::unsupported(at, "@bit_bound above 64"))
}

fn bitmask(
    m: &halyard_idl::ast::BitmaskDef,
    name: &str,
) -> Result<(MinimalTypeObject, CompleteTypeObject), Error> {
    let bit_bound = bit_bound(m.typed.bit_bound, &m.location)?;
    let flags = type_flags(m.typed.extensibility, m.typed.nested, m.typed.autoid);
    let pos = |p: u32| {
        u16::try_from(p).map_err(|_| Error::unsupported(&m.location, "bit position too large"))
    };
    let mut mf = Vec::new();
    let mut cf = Vec::new();
    for f in &m.flags {
        mf.push(Bitflag::<Minimal> {
            position: pos(f.position)?,
            flags: 0,
            detail: name_hash(&f.name.name),
        });
        cf.push(Bitflag::<Complete> {
            position: pos(f.position)?,
            flags: 0,
            detail: MemberDetail {
                name: f.name.name.clone(),
            },
        });
    }
    Ok((
        TypeObjectBody::Bitmask(BitmaskType {
            bitmask_flags: flags,
            bit_bound,
            detail: (),
            flags: mf,
        }),
        TypeObjectBody::Bitmask(BitmaskType {
            bitmask_flags: flags,
            bit_bound,
            detail: TypeDetail {
                type_name: name.to_string(),
            },
            flags: cf,
        }),
    ))
}
