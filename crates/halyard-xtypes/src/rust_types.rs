//! XTypes descriptions of Rust types: what `#[derive(Topic)]` and `#[derive(CdrType)]`
//! announce, and what a hand-written type implements to be a member of one.
//!
//! Design. A type's description is a [`TypeRef`]: its TypeIdentifier in the minimal and the
//! complete form, and the named types (structs, enums, unions, typedefs: [`NamedType`]) those
//! identifiers refer to. Primitives, strings, sequences, arrays and maps are described by
//! their identifiers alone ([`XTypesType`] is implemented for them here, as the derive maps
//! them); a named type is a node with its two TypeObjects and the named types it refers to
//! directly, so a topic type's TypeInformation lists its dependencies in the order of the
//! Python `cyclonedds` package ([`crate::describe::dependency_order`]).
//!
//! The derive macros build a type's node with the same code at expansion time when they see
//! every member's type (primitives, strings, `Vec`, arrays, `BTreeMap` and the bounded
//! containers, spelled out), and emit its bytes as static data; otherwise (a member of a
//! type the macro cannot see, such as another derived struct or an alias) the generated code
//! builds the node at first use from the members' [`XTypesType::xtypes_ref`], once per type
//! ([`cached`], [`cached_generic`]). Both paths go through [`NamedType::structure`] and
//! [`NamedType::enumeration`], so they give the same bytes.

use std::any::TypeId;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

use halyard_cdr_core::{BoundedSeq, BoundedString, TypeDescription};

mod minimal;

use crate::describe::{self, DescribedType, LiteralSpec, MemberSpec, TopicDescription};
use crate::{
    member_flag, type_flag, CompleteTypeObject, EquivalenceKind, PrimitiveKind, TypeIdentifier,
    TypeInformation, TypeObject, TypeObjectBody, XTypesError,
};

/// A Rust type that has an XTypes description, so that a derived type with a member of it
/// announces one. `#[derive(Topic)]` and `#[derive(CdrType)]` implement it (unless the
/// description is turned off with `#[topic(type_description = false)]`); it is implemented
/// here for `bool`, the integers of 8 to 64 bits, `f32`, `f64`, `char`, `String`, `Vec<T>`,
/// `[T; N]`, `BTreeMap<K, V>` and the bounded containers. A hand-written `CdrEncode` type
/// implements it by describing what it encodes, e.g. `<[u8; N]>::xtypes_ref()` for a
/// wrapper of an octet array.
///
/// A member of a type without one is a compile error saying so (here an optional element,
/// hidden from the macro by an alias):
///
/// ```compile_fail,E0277
/// type Maybes = Vec<Option<u32>>;
/// #[derive(halyard_cdr::Topic, Clone, Debug, Default)]
/// struct T {
///     m: Maybes,
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no XTypes description, so a type with a member of it cannot announce one",
    label = "no IDL equivalent known for `{Self}`",
    note = "derive `Topic` or `CdrType` for it, or implement `XTypesType`; `Option` and `Box` \
            describe only a member (`@optional`, `@external`), not an element; or turn the \
            containing type's description off with `#[topic(type_description = false)]`"
)]
pub trait XTypesType {
    /// The type's identifiers and the named types they refer to.
    ///
    /// # Panics
    ///
    /// A derived type panics, at its first use, if it refers to itself through other types
    /// (XTypes describes recursive types with strongly connected components, which are not
    /// supported), or if a description given with `#[topic(type_description = "PATH")]`
    /// does not decode.
    fn xtypes_ref() -> TypeRef;
}

/// A type's identifiers in both forms and the named types they refer to.
#[derive(Clone, Debug)]
pub struct TypeRef {
    minimal: TypeIdentifier,
    complete: TypeIdentifier,
    /// The named types the identifiers refer to, in the order a scan meets them (key before
    /// value for maps), without repeats.
    named: Vec<Arc<NamedType>>,
}

impl TypeRef {
    /// A primitive type.
    pub fn primitive(kind: PrimitiveKind) -> Self {
        let t = TypeIdentifier::Primitive(kind);
        TypeRef {
            minimal: t.clone(),
            complete: t,
            named: Vec::new(),
        }
    }

    /// `string<bound>`; 0 is unbounded.
    pub fn string(bound: u32) -> Self {
        let t = TypeIdentifier::string8(bound);
        TypeRef {
            minimal: t.clone(),
            complete: t,
            named: Vec::new(),
        }
    }

    /// `sequence<element, bound>`; 0 is unbounded.
    pub fn sequence(element: TypeRef, bound: u32) -> Self {
        let f = member_flag::TRY_CONSTRUCT1;
        TypeRef {
            minimal: TypeIdentifier::sequence(element.minimal, bound, f),
            complete: TypeIdentifier::sequence(element.complete, bound, f),
            named: element.named,
        }
    }

    /// An array of `dimension` elements. An array of an (anonymous) array is one
    /// multi-dimensional array, as IDL's `T a[2][3]` (Rust `[[T; 3]; 2]`).
    pub fn array(element: TypeRef, dimension: u32) -> Self {
        let f = member_flag::TRY_CONSTRUCT1;
        let nest = |e: TypeIdentifier| match e {
            TypeIdentifier::PlainArraySmall {
                bounds, element, ..
            } => {
                let mut dims = vec![dimension];
                dims.extend(bounds.iter().map(|b| u32::from(*b)));
                TypeIdentifier::array(*element, &dims, f)
            }
            TypeIdentifier::PlainArrayLarge {
                bounds, element, ..
            } => {
                let mut dims = vec![dimension];
                dims.extend(bounds);
                TypeIdentifier::array(*element, &dims, f)
            }
            other => TypeIdentifier::array(other, &[dimension], f),
        };
        TypeRef {
            minimal: nest(element.minimal),
            complete: nest(element.complete),
            named: element.named,
        }
    }

    /// An unbounded `map<key, value>` ([`describe::map_identifier`]).
    pub fn map(key: TypeRef, value: TypeRef) -> Self {
        let mut named = key.named;
        for n in value.named {
            push_unique(&mut named, n);
        }
        TypeRef {
            minimal: describe::map_identifier(key.minimal, value.minimal),
            complete: describe::map_identifier(key.complete, value.complete),
            named,
        }
    }

    /// A named type, referred to by the hashes of its objects.
    pub fn named(t: Arc<NamedType>) -> Self {
        TypeRef {
            minimal: t.described.minimal_id.type_id.clone(),
            complete: t.described.complete_id.type_id.clone(),
            named: vec![t],
        }
    }

    /// The identifier a minimal TypeObject names this type by.
    pub fn minimal(&self) -> &TypeIdentifier {
        &self.minimal
    }

    /// The identifier a complete TypeObject names this type by.
    pub fn complete(&self) -> &TypeIdentifier {
        &self.complete
    }

    /// The named types the identifiers refer to.
    pub fn named_types(&self) -> &[Arc<NamedType>] {
        &self.named
    }

    /// The named type this is, if it is one (and not a collection of one).
    pub fn as_named(&self) -> Option<&Arc<NamedType>> {
        match (&self.complete, self.named.as_slice()) {
            (TypeIdentifier::Hash { .. }, [t]) => Some(t),
            _ => None,
        }
    }
}

fn push_unique(v: &mut Vec<Arc<NamedType>>, t: Arc<NamedType>) {
    if !v.iter().any(|o| o.key() == t.key()) {
        v.push(t);
    }
}

/// `t` with its `octet`s as IDL `uint8` (the derive's `#[uint8]` on a member whose type is
/// `u8`, a sequence or array of them ...): primitive `octet` identifiers alone or as the
/// elements of plain collections; named types are left as they are.
pub fn octets_as_uint8(t: TypeRef) -> TypeRef {
    fn swap(t: TypeIdentifier) -> TypeIdentifier {
        use TypeIdentifier as T;
        match t {
            T::Primitive(PrimitiveKind::Byte) => T::Primitive(PrimitiveKind::UInt8),
            T::PlainSequenceSmall {
                header,
                bound,
                element,
            } => T::PlainSequenceSmall {
                header,
                bound,
                element: Box::new(swap(*element)),
            },
            T::PlainSequenceLarge {
                header,
                bound,
                element,
            } => T::PlainSequenceLarge {
                header,
                bound,
                element: Box::new(swap(*element)),
            },
            T::PlainArraySmall {
                header,
                bounds,
                element,
            } => T::PlainArraySmall {
                header,
                bounds,
                element: Box::new(swap(*element)),
            },
            T::PlainArrayLarge {
                header,
                bounds,
                element,
            } => T::PlainArrayLarge {
                header,
                bounds,
                element: Box::new(swap(*element)),
            },
            T::PlainMapSmall {
                header,
                bound,
                element,
                key_flags,
                key,
            } => T::PlainMapSmall {
                header,
                bound,
                element: Box::new(swap(*element)),
                key_flags,
                key: Box::new(swap(*key)),
            },
            T::PlainMapLarge {
                header,
                bound,
                element,
                key_flags,
                key,
            } => T::PlainMapLarge {
                header,
                bound,
                element: Box::new(swap(*element)),
                key_flags,
                key: Box::new(swap(*key)),
            },
            other => other,
        }
    }
    TypeRef {
        minimal: swap(t.minimal),
        complete: swap(t.complete),
        named: t.named,
    }
}

/// One struct member as [`NamedType::structure`] takes it.
#[derive(Clone, Debug)]
pub struct Member {
    /// The member name.
    pub name: String,
    /// The member id.
    pub id: u32,
    /// [`crate::member_flag`] bits ([`describe::member_flags`]).
    pub flags: u16,
    /// The member's type (of the value inside an optional or external member).
    pub ty: TypeRef,
}

/// The extensibility of a struct or enum, as its [`crate::type_flag`] bit.
pub fn extensibility_flag(ext: halyard_cdr_core::Extensibility) -> u16 {
    match ext {
        halyard_cdr_core::Extensibility::Final => type_flag::IS_FINAL,
        halyard_cdr_core::Extensibility::Appendable => type_flag::IS_APPENDABLE,
        halyard_cdr_core::Extensibility::Mutable => type_flag::IS_MUTABLE,
    }
}

/// A named type: its qualified name, its two TypeObjects and the named types it refers to
/// directly (in the scan order of [`describe::dependency_order`]).
#[derive(Debug)]
pub struct NamedType {
    name: String,
    described: DescribedType,
    direct: Vec<Arc<NamedType>>,
}

/// How a node is known in a dependency graph: its complete hash.
type NodeKey = [u8; 14];

impl NamedType {
    /// Struct `name` (qualified, `M::S`, at most 256 bytes) with [`crate::type_flag`] bits
    /// `flags` and `members` in declaration order.
    pub fn structure(
        name: &str,
        flags: u16,
        members: Vec<Member>,
    ) -> Result<Arc<Self>, XTypesError> {
        let mut direct = Vec::new();
        let mut specs = Vec::with_capacity(members.len());
        for m in members {
            for n in m.ty.named {
                push_unique(&mut direct, n);
            }
            specs.push(MemberSpec {
                name: m.name,
                id: m.id,
                flags: m.flags,
                minimal: m.ty.minimal,
                complete: m.ty.complete,
            });
        }
        let (minimal, complete) = describe::struct_objects(name, flags, None, &specs);
        Ok(Arc::new(NamedType {
            name: name.to_string(),
            described: DescribedType::new(minimal, complete)?,
            direct,
        }))
    }

    /// Enum `name` with [`crate::type_flag`] bits `flags`, `@bit_bound(32)`, and its
    /// enumerators as (name, value), `default` being the index of the default literal.
    pub fn enumeration(
        name: &str,
        flags: u16,
        literals: &[(&str, i32)],
        default: usize,
    ) -> Result<Arc<Self>, XTypesError> {
        let specs: Vec<LiteralSpec> = literals
            .iter()
            .enumerate()
            .map(|(i, (n, v))| LiteralSpec {
                name: (*n).to_string(),
                value: *v,
                default: i == default,
            })
            .collect();
        let (minimal, complete) = describe::enum_objects(name, flags, 32, &specs);
        Ok(Arc::new(NamedType {
            name: name.to_string(),
            described: DescribedType::new(minimal, complete)?,
            direct: Vec::new(),
        }))
    }

    /// A type that refers to no named type, from its serialized objects (what the derive
    /// computed at expansion time). Both must decode, the second as a complete object.
    pub fn from_objects(minimal: &[u8], complete: &[u8]) -> Result<Arc<Self>, XTypesError> {
        let described = DescribedType::from_bytes(minimal, complete)?;
        let name = match TypeObject::from_xcdr2(complete)? {
            TypeObject::Complete(c) => complete_name(&c),
            TypeObject::Minimal(_) => String::new(),
        };
        let node = NamedType {
            name,
            described,
            direct: Vec::new(),
        };
        if !node.references()?.is_empty() {
            return Err(XTypesError::Invalid(
                "a type from its objects alone must refer to no named type",
            ));
        }
        Ok(Arc::new(node))
    }

    /// The node of a topic type whose description the derive computed at expansion time
    /// (its first two objects are the type's own; it refers to no named type).
    pub fn from_topic_description(d: Option<&TypeDescription>) -> Result<Arc<Self>, XTypesError> {
        match d.map(|d| d.type_objects) {
            Some([minimal, complete, ..]) => Self::from_objects(minimal, complete),
            _ => Err(XTypesError::Invalid(
                "a derived topic type has its two objects",
            )),
        }
    }

    /// The top-level type of a description (`halyard idl`'s, or one written by hand), with
    /// the types it refers to, each found among the description's objects.
    pub fn from_description(d: &TypeDescription) -> Result<Arc<Self>, XTypesError> {
        let info = TypeInformation::from_xcdr2(d.type_information)?;
        let mut objects: BTreeMap<(u8, NodeKey), &[u8]> = BTreeMap::new();
        for bytes in d.type_objects {
            let o = TypeObject::from_xcdr2(bytes)?;
            if let TypeIdentifier::Hash { kind, hash } = o.type_identifier()? {
                objects.insert((kind.octet(), hash), bytes);
            }
        }
        let mut built = BTreeMap::new();
        build_from_objects(
            &info.complete.typeid_with_size.type_id,
            &objects,
            &mut built,
            0,
        )
    }

    /// The qualified type name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The objects and identifiers.
    pub fn described(&self) -> &DescribedType {
        &self.described
    }

    /// The named types this one refers to directly.
    pub fn direct(&self) -> &[Arc<NamedType>] {
        &self.direct
    }

    fn key(&self) -> NodeKey {
        match &self.described.complete_id.type_id {
            TypeIdentifier::Hash { hash, .. } => *hash,
            _ => [0; 14],
        }
    }

    /// The hashed identifiers the complete object refers to, in scan order.
    fn references(&self) -> Result<Vec<TypeIdentifier>, XTypesError> {
        let mut out = Vec::new();
        if let TypeObject::Complete(c) = TypeObject::from_xcdr2(&self.described.complete_bytes)? {
            body_references(&c, &mut out);
        }
        Ok(out)
    }

    /// This type's TypeInformation, as a topic type, and the objects it names.
    pub fn topic_description(self: &Arc<Self>) -> Result<TopicDescription, XTypesError> {
        let mut nodes: BTreeMap<NodeKey, Arc<NamedType>> = BTreeMap::new();
        let mut stack = vec![Arc::clone(self)];
        while let Some(n) = stack.pop() {
            if nodes.len() > MAX_NODES {
                return Err(XTypesError::Invalid(
                    "more than 4096 types in one description",
                ));
            }
            if nodes.insert(n.key(), Arc::clone(&n)).is_none() {
                stack.extend(n.direct.iter().cloned());
            }
        }
        let order = describe::dependency_order(&self.key(), |k| {
            nodes
                .get(k)
                .map(|n| n.direct.iter().map(|d| d.key()).collect())
                .unwrap_or_default()
        });
        let deps: Vec<&DescribedType> = order
            .iter()
            .filter_map(|k| nodes.get(k))
            .map(|n| &n.described)
            .collect();
        describe::topic_description(&self.described, &deps)
    }
}

/// Most named types one description may hold.
const MAX_NODES: usize = 4096;

fn complete_name(c: &CompleteTypeObject) -> String {
    match c {
        TypeObjectBody::Alias(t) => t.detail.type_name.clone(),
        TypeObjectBody::Struct(t) => t.detail.type_name.clone(),
        TypeObjectBody::Union(t) => t.detail.type_name.clone(),
        TypeObjectBody::Array(t) => t.detail.type_name.clone(),
        TypeObjectBody::Enum(t) => t.detail.type_name.clone(),
        TypeObjectBody::Bitmask(t) => t.detail.type_name.clone(),
        TypeObjectBody::Sequence(t) => t
            .detail
            .as_ref()
            .map(|d| d.type_name.clone())
            .unwrap_or_default(),
        TypeObjectBody::Map(t) => t
            .detail
            .as_ref()
            .map(|d| d.type_name.clone())
            .unwrap_or_default(),
    }
}

/// Pushes the hashed identifiers inside `t` (key before value), without repeats.
fn ti_references(t: &TypeIdentifier, out: &mut Vec<TypeIdentifier>) {
    match t {
        TypeIdentifier::Hash { .. } if !out.contains(t) => out.push(t.clone()),
        TypeIdentifier::PlainSequenceSmall { element, .. }
        | TypeIdentifier::PlainSequenceLarge { element, .. }
        | TypeIdentifier::PlainArraySmall { element, .. }
        | TypeIdentifier::PlainArrayLarge { element, .. } => ti_references(element, out),
        TypeIdentifier::PlainMapSmall { element, key, .. }
        | TypeIdentifier::PlainMapLarge { element, key, .. } => {
            ti_references(key, out);
            ti_references(element, out);
        }
        _ => {}
    }
}

/// The hashed identifiers a complete object refers to, in the scan order of
/// [`describe::dependency_order`] (a base's own references are the base's node's).
fn body_references(c: &CompleteTypeObject, out: &mut Vec<TypeIdentifier>) {
    match c {
        TypeObjectBody::Alias(t) => ti_references(&t.related_type, out),
        TypeObjectBody::Struct(t) => {
            ti_references(&t.base_type, out);
            t.members
                .iter()
                .for_each(|m| ti_references(&m.member_type_id, out));
        }
        TypeObjectBody::Union(t) => {
            ti_references(&t.discriminator_type, out);
            t.members
                .iter()
                .for_each(|m| ti_references(&m.type_id, out));
        }
        TypeObjectBody::Sequence(t) => ti_references(&t.element.type_id, out),
        TypeObjectBody::Array(t) => ti_references(&t.element.type_id, out),
        TypeObjectBody::Map(t) => {
            ti_references(&t.key.type_id, out);
            ti_references(&t.element.type_id, out);
        }
        TypeObjectBody::Enum(_) | TypeObjectBody::Bitmask(_) => {}
    }
}

/// The node of complete type `id`, built from `objects` (a description's, by kind and
/// hash) after the types it refers to; its minimal object is derived from the complete one
/// ([`minimal_of`]), as the description's minimal list need not pair up with its complete
/// list (equal minimal objects are listed once).
fn build_from_objects(
    id: &TypeIdentifier,
    objects: &BTreeMap<(u8, NodeKey), &[u8]>,
    built: &mut BTreeMap<NodeKey, Arc<NamedType>>,
    depth: usize,
) -> Result<Arc<NamedType>, XTypesError> {
    let TypeIdentifier::Hash {
        kind: EquivalenceKind::Complete,
        hash,
    } = id
    else {
        return Err(XTypesError::Invalid(
            "a description names a complete type by hash",
        ));
    };
    if let Some(n) = built.get(hash) {
        return Ok(Arc::clone(n));
    }
    if depth > crate::MAX_DEPTH || built.len() > MAX_NODES {
        return Err(XTypesError::TooDeep);
    }
    let complete_bytes = *objects
        .get(&(EquivalenceKind::Complete.octet(), *hash))
        .ok_or(XTypesError::Invalid(
            "a description lacks an object it names",
        ))?;
    let TypeObject::Complete(complete) = TypeObject::from_xcdr2(complete_bytes)? else {
        return Err(XTypesError::Invalid("expected a complete TypeObject"));
    };
    let mut refs = Vec::new();
    body_references(&complete, &mut refs);
    let mut direct = Vec::new();
    let mut minimal_ids = BTreeMap::new();
    for r in &refs {
        let n = build_from_objects(r, objects, built, depth + 1)?;
        minimal_ids.insert(n.key(), n.described.minimal_id.type_id.clone());
        push_unique(&mut direct, n);
    }
    let minimal = minimal::of(&complete, &minimal_ids)?;
    let node = Arc::new(NamedType {
        name: complete_name(&complete),
        described: DescribedType::new(minimal, complete)?,
        direct,
    });
    if node.key() != *hash {
        return Err(XTypesError::Invalid(
            "a description's object does not have the hash it is named by",
        ));
    }
    built.insert(*hash, Arc::clone(&node));
    Ok(node)
}

/// A type being built: by the address of its `static` cell, or by its [`TypeId`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Building {
    Cell(usize),
    Type(TypeId),
}

thread_local! {
    /// The types this thread is building (a type that reaches itself).
    static BUILDING: RefCell<Vec<Building>> = const { RefCell::new(Vec::new()) };
}

/// Builds a type's node once: `cell` is the type's own `static` (the derive's generated
/// code for a type without generic parameters).
///
/// # Panics
///
/// If `build` fails (a description that does not decode), or if building reaches the same
/// type again (a recursive type), with a message naming `name`.
pub fn cached(
    cell: &'static OnceLock<Arc<NamedType>>,
    name: &str,
    build: impl FnOnce() -> Result<Arc<NamedType>, XTypesError>,
) -> TypeRef {
    if let Some(n) = cell.get() {
        return TypeRef::named(Arc::clone(n));
    }
    let id = Building::Cell(cell as *const _ as usize);
    let node = building(id, name, || {
        cell.get_or_init(|| expect_built(name, build())).clone()
    });
    TypeRef::named(node)
}

/// [`cached`] for a type with generic parameters (whose `static` would be shared by every
/// instantiation): the nodes are kept by [`TypeId`].
pub fn cached_generic<T: 'static>(
    name: &str,
    build: impl FnOnce() -> Result<Arc<NamedType>, XTypesError>,
) -> TypeRef {
    static NODES: OnceLock<Mutex<BTreeMap<TypeId, Arc<NamedType>>>> = OnceLock::new();
    let nodes = NODES.get_or_init(Default::default);
    let id = TypeId::of::<T>();
    let known = nodes
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&id)
        .cloned();
    if let Some(n) = known {
        return TypeRef::named(n);
    }
    let node = building(Building::Type(id), name, || expect_built(name, build()));
    let mut map = nodes.lock().unwrap_or_else(|p| p.into_inner());
    let node = map.entry(id).or_insert(node).clone();
    TypeRef::named(node)
}

fn building<R>(id: Building, name: &str, f: impl FnOnce() -> R) -> R {
    let recursive = BUILDING.with(|b| {
        let mut b = b.borrow_mut();
        let again = b.contains(&id);
        if !again {
            b.push(id);
        }
        again
    });
    if recursive {
        panic!(
            "type `{name}` contains itself through other types: XTypes describes recursive \
             types with strongly connected components, which Halyard does not support; turn \
             the description off with #[topic(type_description = false)]"
        );
    }
    let r = f();
    BUILDING.with(|b| b.borrow_mut().retain(|x| *x != id));
    r
}

fn expect_built(name: &str, r: Result<Arc<NamedType>, XTypesError>) -> Arc<NamedType> {
    match r {
        Ok(n) => n,
        Err(e) => panic!("the XTypes description of `{name}` cannot be built: {e}"),
    }
}

/// The description `TopicType::type_description` returns for a type described at first
/// use: built once by the caller's `static` and kept for the process's life.
///
/// # Panics
///
/// If `t` is not a named type, or its TypeInformation cannot be encoded (neither can happen
/// to a type the derive describes: names are checked when the type is expanded).
pub fn leak_topic_description(t: &TypeRef) -> &'static TypeDescription {
    let Some(node) = t.as_named() else {
        panic!("a topic type is a named type");
    };
    let d = match node.topic_description() {
        Ok(d) => d,
        Err(e) => panic!(
            "the TypeInformation of `{}` cannot be built: {e}",
            node.name()
        ),
    };
    let objects: Vec<&'static [u8]> = d.type_objects.into_iter().map(|o| &*o.leak()).collect();
    Box::leak(Box::new(TypeDescription {
        type_information: d.type_information_bytes.leak(),
        type_objects: objects.leak(),
    }))
}

/// [`leak_topic_description`] for a topic type with generic parameters (whose `static`
/// would be shared by every instantiation): kept by [`TypeId`].
pub fn leak_topic_description_generic<T: XTypesType + 'static>() -> &'static TypeDescription {
    static DESCRIPTIONS: OnceLock<Mutex<BTreeMap<TypeId, &'static TypeDescription>>> =
        OnceLock::new();
    let map = DESCRIPTIONS.get_or_init(Default::default);
    let id = TypeId::of::<T>();
    if let Some(d) = map.lock().unwrap_or_else(|p| p.into_inner()).get(&id) {
        return d;
    }
    let d = leak_topic_description(&T::xtypes_ref());
    map.lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry(id)
        .or_insert(d)
}

macro_rules! primitive {
    ($($t:ty => $k:ident),* $(,)?) => {
        $(impl XTypesType for $t {
            fn xtypes_ref() -> TypeRef {
                TypeRef::primitive(PrimitiveKind::$k)
            }
        })*
    };
}

primitive!(
    bool => Boolean,
    u8 => Byte,
    i8 => Int8,
    i16 => Int16,
    u16 => UInt16,
    i32 => Int32,
    u32 => UInt32,
    i64 => Int64,
    u64 => UInt64,
    f32 => Float32,
    f64 => Float64,
    char => Char8,
);

impl XTypesType for String {
    fn xtypes_ref() -> TypeRef {
        TypeRef::string(0)
    }
}

impl<const N: usize> XTypesType for BoundedString<N> {
    fn xtypes_ref() -> TypeRef {
        TypeRef::string(bound(N))
    }
}

impl<T: XTypesType> XTypesType for Vec<T> {
    fn xtypes_ref() -> TypeRef {
        TypeRef::sequence(T::xtypes_ref(), 0)
    }
}

impl<T: XTypesType, const N: usize> XTypesType for BoundedSeq<T, N> {
    fn xtypes_ref() -> TypeRef {
        TypeRef::sequence(T::xtypes_ref(), bound(N))
    }
}

impl<T: XTypesType, const N: usize> XTypesType for [T; N] {
    fn xtypes_ref() -> TypeRef {
        TypeRef::array(T::xtypes_ref(), bound(N))
    }
}

impl<K: XTypesType, V: XTypesType> XTypesType for BTreeMap<K, V> {
    fn xtypes_ref() -> TypeRef {
        TypeRef::map(K::xtypes_ref(), V::xtypes_ref())
    }
}

/// A const-generic bound as XTypes' u32 (a bound beyond it cannot be encoded anyway).
fn bound(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
