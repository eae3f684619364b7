//! TypeObject (XTypes 1.3 §7.3.4.1): the minimal and complete descriptions of a type.
//!
//! The IDL repeats every structure twice (`Minimal*` and `Complete*`); here each is one
//! generic type over a [`Form`] — [`Minimal`] or [`Complete`] — that supplies the
//! form-specific details (a member's name hash or its name, a type's name or nothing).
//! Applied annotations (`ann_builtin`, `ann_custom`, verbatim) are not modelled: they are
//! encoded as absent and rejected with [`crate::XTypesError::Unsupported`] on decoding.

use crate::identifier::{EquivalenceKind, NameHash, TypeIdentifier};

/// The form of a TypeObject: [`Minimal`] or [`Complete`].
pub trait Form: std::fmt::Debug + Clone + PartialEq + Eq {
    /// The equivalence kind of hashes of this form.
    const KIND: EquivalenceKind;
    /// Per-member detail: a [`NameHash`] (minimal) or [`MemberDetail`] (complete).
    type MemberDetail: std::fmt::Debug + Clone + PartialEq + Eq;
    /// Per-type detail: `()` (minimal) or [`TypeDetail`] (complete).
    type TypeDetail: std::fmt::Debug + Clone + PartialEq + Eq;
}

/// The minimal form: member names reduced to [`NameHash`]es, no type names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Minimal;

/// The complete form: names of the type and its members.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Complete;

impl Form for Minimal {
    const KIND: EquivalenceKind = EquivalenceKind::Minimal;
    type MemberDetail = NameHash;
    type TypeDetail = ();
}

impl Form for Complete {
    const KIND: EquivalenceKind = EquivalenceKind::Complete;
    type MemberDetail = MemberDetail;
    type TypeDetail = TypeDetail;
}

/// CompleteTypeDetail: the fully qualified type name (`Module::Type`, at most 256 bytes).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TypeDetail {
    /// QualifiedTypeName.
    pub type_name: String,
}

/// CompleteMemberDetail: the member name (at most 256 bytes).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MemberDetail {
    /// MemberName.
    pub name: String,
}

/// A struct type (Minimal/CompleteStructType, §7.3.4.7.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StructType<F: Form> {
    /// [`crate::type_flag`] bits: exactly one of final/appendable/mutable, plus nested/autoid.
    pub struct_flags: u16,
    /// The base struct, or [`TypeIdentifier::None`].
    pub base_type: TypeIdentifier,
    /// The type's detail.
    pub detail: F::TypeDetail,
    /// The members in declaration order.
    pub members: Vec<StructMember<F>>,
}

/// A struct member (Common + Minimal/CompleteStructMember).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StructMember<F: Form> {
    /// The member id (`@id`, or sequential/hashed autoid).
    pub member_id: u32,
    /// [`crate::member_flag`] bits (`IS_KEY`, `IS_OPTIONAL`, `IS_EXTERNAL`, `IS_MUST_UNDERSTAND`, T1/T2).
    pub member_flags: u16,
    /// The member's type.
    pub member_type_id: TypeIdentifier,
    /// Name hash or name.
    pub detail: F::MemberDetail,
}

/// A union type (Minimal/CompleteUnionType, §7.3.4.7.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnionType<F: Form> {
    /// [`crate::type_flag`] bits.
    pub union_flags: u16,
    /// The type's detail.
    pub detail: F::TypeDetail,
    /// UnionDiscriminatorFlag bits (T1/T2, `IS_KEY`).
    pub discriminator_flags: u16,
    /// The discriminator type.
    pub discriminator_type: TypeIdentifier,
    /// The cases.
    pub members: Vec<UnionMember<F>>,
}

/// A union case (Common + Minimal/CompleteUnionMember).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnionMember<F: Form> {
    /// The member id.
    pub member_id: u32,
    /// UnionMemberFlag bits (`IS_DEFAULT`, `IS_EXTERNAL`, T1/T2).
    pub member_flags: u16,
    /// The case's type.
    pub type_id: TypeIdentifier,
    /// The case labels.
    pub labels: Vec<i32>,
    /// Name hash or name.
    pub detail: F::MemberDetail,
}

/// A typedef (Minimal/CompleteAliasType, §7.3.4.7.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AliasType<F: Form> {
    /// AliasTypeFlag (unused, 0).
    pub alias_flags: u16,
    /// The type's detail.
    pub detail: F::TypeDetail,
    /// AliasMemberFlag (unused, 0).
    pub related_flags: u16,
    /// The aliased type.
    pub related_type: TypeIdentifier,
}

/// A collection element (Common + Minimal/CompleteCollectionElement).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectionElement {
    /// CollectionElementFlag bits (T1/T2, `IS_EXTERNAL`).
    pub element_flags: u16,
    /// The element type.
    pub type_id: TypeIdentifier,
}

/// A sequence type (Minimal/CompleteSequenceType, §7.3.4.7.4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SequenceType<F: Form> {
    /// CollectionTypeFlag (unused, 0).
    pub collection_flag: u16,
    /// The bound (0 = unbounded).
    pub bound: u32,
    /// Optional detail (complete form only; always `None` in the minimal form).
    pub detail: Option<F::TypeDetail>,
    /// The element.
    pub element: CollectionElement,
}

/// An array type (Minimal/CompleteArrayType, §7.3.4.7.5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrayType<F: Form> {
    /// CollectionTypeFlag (unused, 0).
    pub collection_flag: u16,
    /// The dimensions.
    pub bounds: Vec<u32>,
    /// The type's detail.
    pub detail: F::TypeDetail,
    /// The element.
    pub element: CollectionElement,
}

/// A map type (Minimal/CompleteMapType, §7.3.4.7.6).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapType<F: Form> {
    /// CollectionTypeFlag (unused, 0).
    pub collection_flag: u16,
    /// The bound (0 = unbounded).
    pub bound: u32,
    /// Optional detail (complete form only; always `None` in the minimal form).
    pub detail: Option<F::TypeDetail>,
    /// The key.
    pub key: CollectionElement,
    /// The value.
    pub element: CollectionElement,
}

/// An enum (Minimal/CompleteEnumeratedType, §7.3.4.7.7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnumType<F: Form> {
    /// EnumTypeFlag (unused, 0).
    pub enum_flags: u16,
    /// `@bit_bound` (32 by default).
    pub bit_bound: u16,
    /// The type's detail.
    pub detail: F::TypeDetail,
    /// The enumerators.
    pub literals: Vec<EnumLiteral<F>>,
}

/// An enumerator (Common + Minimal/CompleteEnumeratedLiteral).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnumLiteral<F: Form> {
    /// The value.
    pub value: i32,
    /// EnumeratedLiteralFlag (`IS_DEFAULT`).
    pub flags: u16,
    /// Name hash or name.
    pub detail: F::MemberDetail,
}

/// A bitmask (Minimal/CompleteBitmaskType, §7.3.4.7.8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BitmaskType<F: Form> {
    /// BitmaskTypeFlag (unused, 0).
    pub bitmask_flags: u16,
    /// `@bit_bound` (32 by default).
    pub bit_bound: u16,
    /// The type's detail.
    pub detail: F::TypeDetail,
    /// The flags.
    pub flags: Vec<Bitflag<F>>,
}

/// A bit flag (Common + Minimal/CompleteBitflag).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bitflag<F: Form> {
    /// The bit position.
    pub position: u16,
    /// BitflagFlag (unused, 0).
    pub flags: u16,
    /// Name hash or name.
    pub detail: F::MemberDetail,
}

/// The body of a TypeObject of one form: the Minimal/CompleteTypeObject union.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypeObjectBody<F: Form> {
    /// `TK_ALIAS`.
    Alias(AliasType<F>),
    /// `TK_STRUCTURE`.
    Struct(StructType<F>),
    /// `TK_UNION`.
    Union(UnionType<F>),
    /// `TK_SEQUENCE`.
    Sequence(SequenceType<F>),
    /// `TK_ARRAY`.
    Array(ArrayType<F>),
    /// `TK_MAP`.
    Map(MapType<F>),
    /// `TK_ENUM`.
    Enum(EnumType<F>),
    /// `TK_BITMASK`.
    Bitmask(BitmaskType<F>),
}

/// MinimalTypeObject.
pub type MinimalTypeObject = TypeObjectBody<Minimal>;
/// CompleteTypeObject.
pub type CompleteTypeObject = TypeObjectBody<Complete>;

/// TypeObject (§7.3.4.1): an appendable union of the two forms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypeObject {
    /// `EK_MINIMAL`.
    Minimal(MinimalTypeObject),
    /// `EK_COMPLETE`.
    Complete(CompleteTypeObject),
}
