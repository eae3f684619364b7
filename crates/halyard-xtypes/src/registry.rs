//! [`TypeRegistry`]: the TypeObjects a participant knows, keyed by their hashed
//! TypeIdentifiers, each validated when inserted.
//!
//! Insertion recomputes the equivalence hash and refuses an object offered under another
//! identifier, then checks the object for self-consistency (one extensibility kind, no
//! duplicate member ids or names, sane bit bounds, non-empty array dimensions, union
//! discriminators of an integral kind and unique labels). References to other types need not
//! be present yet: [`TypeRegistry::missing`] lists what a type still lacks, so type discovery
//! can ask TypeLookup for exactly those. [`TypeRegistry::build`] turns an identifier into a
//! [`DynamicType`] once everything it needs is present; cycles (only possible through
//! strongly-connected-component identifiers, which are refused) and nesting are bounded.

use std::collections::{BTreeMap, BTreeSet};

use crate::dynamic::build::Builder;
use crate::dynamic::{DynamicError, DynamicType};
use crate::object::*;
use crate::{type_flag, PrimitiveKind, TypeIdentifier, TypeInformation, TypeMapping, TypeObject};

/// Default bound on the number of objects a registry holds.
pub const DEFAULT_MAX_OBJECTS: usize = 4096;
/// Deepest nesting of types accepted when resolving or building.
pub const MAX_TYPE_DEPTH: usize = 64;

/// Validated TypeObjects by hashed TypeIdentifier (minimal and complete).
#[derive(Debug, Clone)]
pub struct TypeRegistry {
    objects: BTreeMap<HashKey, TypeObject>,
    max_objects: usize,
}

impl Default for TypeRegistry {
    fn default() -> Self {
        Self::new()
    }
}

impl TypeRegistry {
    /// An empty registry holding at most [`DEFAULT_MAX_OBJECTS`].
    pub fn new() -> Self {
        Self::with_limit(DEFAULT_MAX_OBJECTS)
    }

    /// An empty registry holding at most `max_objects`.
    pub fn with_limit(max_objects: usize) -> Self {
        TypeRegistry {
            objects: BTreeMap::new(),
            max_objects,
        }
    }

    /// Number of objects held.
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    /// True when no object is held.
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    /// The object registered under `id`.
    pub fn get(&self, id: &TypeIdentifier) -> Option<&TypeObject> {
        self.objects.get(&hash_key(id)?)
    }

    /// Validates and registers `object`, which was announced as `claimed`; returns its
    /// identifier. Fails on a hash mismatch, an inconsistent object or a full registry.
    pub fn insert(
        &mut self,
        claimed: &TypeIdentifier,
        object: TypeObject,
    ) -> Result<TypeIdentifier, DynamicError> {
        let computed = object.type_identifier()?;
        if &computed != claimed {
            return Err(DynamicError::HashMismatch {
                computed,
                claimed: claimed.clone(),
            });
        }
        self.insert_object(object)
    }

    /// Validates and registers `object` under the identifier computed from it.
    pub fn insert_object(&mut self, object: TypeObject) -> Result<TypeIdentifier, DynamicError> {
        let id = object.type_identifier()?;
        let key =
            hash_key(&id).ok_or(DynamicError::Unsupported("unhashed TypeObject identifier"))?;
        if self.objects.contains_key(&key) {
            return Ok(id);
        }
        if self.objects.len() >= self.max_objects {
            return Err(DynamicError::Limit {
                what: "number of registered TypeObjects",
                limit: self.max_objects,
            });
        }
        match &object {
            TypeObject::Minimal(b) => check_body(b, &minimal_name(&id))?,
            TypeObject::Complete(b) => check_body(b, &complete_name(b))?,
        }
        self.objects.insert(key, object);
        Ok(id)
    }

    /// Decodes (XCDR2 little-endian) and registers an object announced as `claimed`.
    pub fn insert_bytes(
        &mut self,
        claimed: &TypeIdentifier,
        bytes: &[u8],
    ) -> Result<TypeIdentifier, DynamicError> {
        self.insert(claimed, TypeObject::from_xcdr2(bytes)?)
    }

    /// Registers every object of a TypeMapping (a TypeLookup reply or Cyclone's type map).
    pub fn insert_mapping(&mut self, map: &TypeMapping) -> Result<(), DynamicError> {
        for (id, object) in map.minimal.iter().chain(&map.complete) {
            self.insert(id, object.clone())?;
        }
        Ok(())
    }

    /// The hashed identifiers reachable from `id` that the registry does not hold (empty when
    /// `id` can be built). Bounded by the registry size and [`MAX_TYPE_DEPTH`].
    pub fn missing(&self, id: &TypeIdentifier) -> Vec<TypeIdentifier> {
        let mut seen = BTreeSet::new();
        let mut missing = Vec::new();
        let mut stack = vec![(id.clone(), 0usize)];
        while let Some((id, depth)) = stack.pop() {
            if depth > MAX_TYPE_DEPTH || hash_key(&id).is_some_and(|k| !seen.insert(k)) {
                continue;
            }
            let mut refs = Vec::new();
            direct_refs(&id, &mut refs);
            if matches!(id, TypeIdentifier::Hash { .. }) {
                match self.get(&id) {
                    Some(o) => object_refs(o, &mut refs),
                    None => missing.push(id.clone()),
                }
            }
            stack.extend(refs.into_iter().map(|r| (r, depth + 1)));
        }
        missing
    }

    /// What TypeLookup must still fetch to build the type a TypeInformation announces: the
    /// complete type and the dependencies it lists, then whatever those objects refer to.
    pub fn missing_for(&self, info: &TypeInformation) -> Vec<TypeIdentifier> {
        let complete = &info.complete;
        let mut wanted = vec![complete.typeid_with_size.type_id.clone()];
        wanted.extend(complete.dependent_typeids.iter().map(|d| d.type_id.clone()));
        let mut out: Vec<TypeIdentifier> = Vec::new();
        for id in wanted {
            for m in self.missing(&id) {
                if !out.contains(&m) {
                    out.push(m);
                }
            }
        }
        out
    }

    /// Builds the [`DynamicType`] of `id` (complete identifiers give member names; minimal
    /// ones name members `m<id>`). Fails with [`DynamicError::Missing`] listing what lacks.
    pub fn build(&self, id: &TypeIdentifier) -> Result<DynamicType, DynamicError> {
        let missing = self.missing(id);
        if !missing.is_empty() {
            return Err(DynamicError::Missing(missing));
        }
        Builder::new(self).build(id)
    }
}

/// A hashed identifier as an ordered map key: (equivalence kind octet, hash).
pub(crate) type HashKey = (u8, crate::EquivalenceHash);

/// The key of a hashed identifier; `None` for any other identifier.
pub(crate) fn hash_key(id: &TypeIdentifier) -> Option<HashKey> {
    match id {
        TypeIdentifier::Hash { kind, hash } => Some((kind.octet(), *hash)),
        _ => None,
    }
}

/// The name given to a minimal type: `Minimal_` and the first 4 hash bytes in hex.
pub(crate) fn minimal_name(id: &TypeIdentifier) -> String {
    match id {
        TypeIdentifier::Hash { hash, .. } => {
            let hex: String = hash.iter().take(4).map(|b| format!("{b:02x}")).collect();
            format!("Minimal_{hex}")
        }
        _ => "Minimal".to_owned(),
    }
}

fn complete_name(b: &CompleteTypeObject) -> String {
    match b {
        TypeObjectBody::Alias(t) => t.detail.type_name.clone(),
        TypeObjectBody::Struct(t) => t.detail.type_name.clone(),
        TypeObjectBody::Union(t) => t.detail.type_name.clone(),
        TypeObjectBody::Array(t) => t.detail.type_name.clone(),
        TypeObjectBody::Enum(t) => t.detail.type_name.clone(),
        TypeObjectBody::Bitmask(t) => t.detail.type_name.clone(),
        TypeObjectBody::Sequence(_) => "sequence".to_owned(),
        TypeObjectBody::Map(_) => "map".to_owned(),
    }
}

/// Identifiers nested inside a plain identifier (collection elements and keys).
fn direct_refs(id: &TypeIdentifier, out: &mut Vec<TypeIdentifier>) {
    match id {
        TypeIdentifier::PlainSequenceSmall { element, .. }
        | TypeIdentifier::PlainSequenceLarge { element, .. }
        | TypeIdentifier::PlainArraySmall { element, .. }
        | TypeIdentifier::PlainArrayLarge { element, .. } => out.push((**element).clone()),
        TypeIdentifier::PlainMapSmall { element, key, .. }
        | TypeIdentifier::PlainMapLarge { element, key, .. } => {
            out.push((**element).clone());
            out.push((**key).clone());
        }
        _ => {}
    }
}

/// Identifiers a TypeObject refers to.
fn object_refs(o: &TypeObject, out: &mut Vec<TypeIdentifier>) {
    match o {
        TypeObject::Minimal(b) => body_refs(b, out),
        TypeObject::Complete(b) => body_refs(b, out),
    }
}

fn body_refs<F: Form>(b: &TypeObjectBody<F>, out: &mut Vec<TypeIdentifier>) {
    match b {
        TypeObjectBody::Alias(t) => out.push(t.related_type.clone()),
        TypeObjectBody::Struct(t) => {
            if t.base_type != TypeIdentifier::None {
                out.push(t.base_type.clone());
            }
            out.extend(t.members.iter().map(|m| m.member_type_id.clone()));
        }
        TypeObjectBody::Union(t) => {
            out.push(t.discriminator_type.clone());
            out.extend(t.members.iter().map(|m| m.type_id.clone()));
        }
        TypeObjectBody::Sequence(t) => out.push(t.element.type_id.clone()),
        TypeObjectBody::Array(t) => out.push(t.element.type_id.clone()),
        TypeObjectBody::Map(t) => {
            out.push(t.key.type_id.clone());
            out.push(t.element.type_id.clone());
        }
        TypeObjectBody::Enum(_) | TypeObjectBody::Bitmask(_) => {}
    }
}

fn inconsistent(type_name: &str, why: impl Into<String>) -> DynamicError {
    DynamicError::Inconsistent {
        type_name: type_name.to_owned(),
        why: why.into(),
    }
}

/// Self-consistency checks of one object (references are checked when building).
fn check_body<F: Form>(b: &TypeObjectBody<F>, name: &str) -> Result<(), DynamicError> {
    match b {
        TypeObjectBody::Struct(t) => {
            check_extensibility(t.struct_flags, name)?;
            let ids = t.members.iter().map(|m| m.member_id);
            let names = t.members.iter().map(|m| &m.detail);
            check_unique(ids, names, name, "member")?;
            match t
                .members
                .iter()
                .find(|m| m.member_type_id == TypeIdentifier::None)
            {
                Some(m) => Err(inconsistent(
                    name,
                    format!("member {} has no type", m.member_id),
                )),
                None => Ok(()),
            }
        }
        TypeObjectBody::Union(t) => check_union(t, name),
        TypeObjectBody::Enum(t) => check_enum(t, name),
        TypeObjectBody::Bitmask(t) => {
            if !(1..=64).contains(&t.bit_bound) {
                let why = format!("bitmask bit_bound {} not in 1..=64", t.bit_bound);
                return Err(inconsistent(name, why));
            }
            if let Some(f) = t.flags.iter().find(|f| f.position >= t.bit_bound) {
                let why = format!(
                    "flag position {} not below bit_bound {}",
                    f.position, t.bit_bound
                );
                return Err(inconsistent(name, why));
            }
            let positions = t.flags.iter().map(|f| u32::from(f.position));
            let names = t.flags.iter().map(|f| &f.detail);
            check_unique(positions, names, name, "flag")
        }
        TypeObjectBody::Array(t) => {
            if t.bounds.is_empty() || t.bounds.contains(&0) {
                return Err(inconsistent(name, "array with no or a zero dimension"));
            }
            Ok(())
        }
        TypeObjectBody::Alias(_) | TypeObjectBody::Sequence(_) | TypeObjectBody::Map(_) => Ok(()),
    }
}

fn check_union<F: Form>(t: &UnionType<F>, name: &str) -> Result<(), DynamicError> {
    check_extensibility(t.union_flags, name)?;
    check_discriminator(&t.discriminator_type, name)?;
    let ids = t.members.iter().map(|m| m.member_id);
    let names = t.members.iter().map(|m| &m.detail);
    check_unique(ids, names, name, "case")?;
    let mut labels = BTreeSet::new();
    for l in t.members.iter().flat_map(|m| &m.labels) {
        if !labels.insert(*l) {
            return Err(inconsistent(name, format!("case label {l} appears twice")));
        }
    }
    let defaults = t
        .members
        .iter()
        .filter(|m| m.member_flags & crate::member_flag::IS_DEFAULT != 0)
        .count();
    if defaults > 1 {
        return Err(inconsistent(name, "more than one default case"));
    }
    Ok(())
}

fn check_enum<F: Form>(t: &EnumType<F>, name: &str) -> Result<(), DynamicError> {
    if !(1..=32).contains(&t.bit_bound) {
        let why = format!("enum bit_bound {} not in 1..=32", t.bit_bound);
        return Err(inconsistent(name, why));
    }
    let limit = 1i64 << (t.bit_bound - 1);
    for l in &t.literals {
        if t.bit_bound < 32 && !(-limit..limit).contains(&i64::from(l.value)) {
            let why = format!(
                "enumerator value {} exceeds bit_bound {}",
                l.value, t.bit_bound
            );
            return Err(inconsistent(name, why));
        }
    }
    let values = t.literals.iter().map(|l| l.value as u32);
    let names = t.literals.iter().map(|l| &l.detail);
    check_unique(values, names, name, "enumerator")
}

fn check_extensibility(flags: u16, name: &str) -> Result<(), DynamicError> {
    let kinds = flags & (type_flag::IS_FINAL | type_flag::IS_APPENDABLE | type_flag::IS_MUTABLE);
    if kinds.count_ones() > 1 {
        return Err(inconsistent(
            name,
            format!("several extensibility kinds in flags {flags:#06x}"),
        ));
    }
    Ok(())
}

/// A union discriminator must be boolean, octet, an integer, a char or (a hash of) an enum or
/// alias; the hashed case is checked when building.
fn check_discriminator(id: &TypeIdentifier, name: &str) -> Result<(), DynamicError> {
    match id {
        TypeIdentifier::Primitive(p) if is_discriminator_primitive(*p) => Ok(()),
        TypeIdentifier::Hash { .. } => Ok(()),
        other => Err(inconsistent(
            name,
            format!("discriminator of kind {:#04x}", other.discriminator()),
        )),
    }
}

/// Primitive kinds allowed as union discriminators.
pub(crate) fn is_discriminator_primitive(p: PrimitiveKind) -> bool {
    !matches!(
        p,
        PrimitiveKind::Float32 | PrimitiveKind::Float64 | PrimitiveKind::Float128
    )
}

fn check_unique<'a, D: std::fmt::Debug + 'a>(
    ids: impl Iterator<Item = u32>,
    names: impl Iterator<Item = &'a D>,
    type_name: &str,
    what: &str,
) -> Result<(), DynamicError> {
    let mut seen = BTreeSet::new();
    for id in ids {
        if !seen.insert(id) {
            return Err(inconsistent(
                type_name,
                format!("{what} id/value {id} appears twice"),
            ));
        }
    }
    let mut seen = BTreeSet::new();
    for n in names {
        if !seen.insert(format!("{n:?}")) {
            return Err(inconsistent(
                type_name,
                format!("two {what}s have the same name"),
            ));
        }
    }
    Ok(())
}
