//! [`DynamicType`]: a resolved, immutable, cheap-to-clone (Arc) tree describing a type learnt
//! at run time. Hashed identifiers are replaced by the types they name, inheritance is
//! flattened (a struct lists its base's members first, as the wire does), aliases stay visible
//! for printing but are transparent to the codec ([`DynamicType::resolved`]).

use std::sync::Arc;

pub use halyard_cdr_core::Extensibility;

use crate::PrimitiveKind;

/// A type learnt at run time; clones share the tree.
#[derive(Debug, Clone, PartialEq)]
pub struct DynamicType(pub(crate) Arc<TypeNode>);

/// The shape of a [`DynamicType`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TypeNode {
    /// A primitive (never `Float128`: refused when building).
    Primitive(PrimitiveKind),
    /// `string<bound>` (0 = unbounded).
    String8 {
        /// The bound in bytes (0 = unbounded).
        bound: u32,
    },
    /// `wstring<bound>` (0 = unbounded).
    String16 {
        /// The bound in characters (0 = unbounded).
        bound: u32,
    },
    /// `sequence<element, bound>`.
    Sequence {
        /// The element type.
        element: DynamicType,
        /// The bound (0 = unbounded).
        bound: u32,
    },
    /// `element name[d0][d1]…` (values hold the flattened row-major elements).
    Array {
        /// The element type.
        element: DynamicType,
        /// The dimensions.
        dims: Vec<u32>,
    },
    /// `map<key, value, bound>`.
    Map {
        /// The key type.
        key: DynamicType,
        /// The value type.
        value: DynamicType,
        /// The bound (0 = unbounded).
        bound: u32,
    },
    /// `typedef target name;`.
    Alias {
        /// Qualified name.
        name: String,
        /// The aliased type.
        target: DynamicType,
    },
    /// An enumeration.
    Enum(EnumDesc),
    /// A bitmask.
    Bitmask(BitmaskDesc),
    /// A structure.
    Struct(StructDesc),
    /// A union.
    Union(UnionDesc),
}

/// An enum (XTypes 1.3 §7.2.2.4.1).
#[derive(Debug, Clone, PartialEq)]
pub struct EnumDesc {
    /// Qualified name (`Minimal#<hash>` when only the minimal form is known).
    pub name: String,
    /// `@bit_bound` (1..=32): 1..=8 → 1 byte, ..=16 → 2, else 4 on the wire.
    pub bit_bound: u16,
    /// The enumerators in declaration order.
    pub literals: Vec<EnumLiteralDesc>,
}

/// One enumerator.
#[derive(Debug, Clone, PartialEq)]
pub struct EnumLiteralDesc {
    /// Its name (`LITERAL_<n>` when unknown).
    pub name: String,
    /// Its value.
    pub value: i32,
    /// `@default_literal`.
    pub default: bool,
}

/// A bitmask (XTypes 1.3 §7.2.2.4.2).
#[derive(Debug, Clone, PartialEq)]
pub struct BitmaskDesc {
    /// Qualified name.
    pub name: String,
    /// `@bit_bound` (1..=64): wire size 1, 2, 4 or 8 bytes.
    pub bit_bound: u16,
    /// (name, bit position) of each flag.
    pub flags: Vec<(String, u16)>,
}

/// A struct (XTypes 1.3 §7.2.2.4.4).
#[derive(Debug, Clone, PartialEq)]
pub struct StructDesc {
    /// Qualified name.
    pub name: String,
    /// Final, appendable or mutable.
    pub extensibility: Extensibility,
    /// The base struct, if any (its members are also the first ones of `members`).
    pub base: Option<DynamicType>,
    /// All members, base members first.
    pub members: Vec<MemberDesc>,
    /// Index in `members` of the first member declared by this struct itself.
    pub own_start: usize,
    /// False when built from a minimal TypeObject: member names are then `m<id>`.
    pub names_known: bool,
    /// `@nested`.
    pub nested: bool,
}

/// A struct member.
#[derive(Debug, Clone, PartialEq)]
pub struct MemberDesc {
    /// Its name.
    pub name: String,
    /// Its member id.
    pub id: u32,
    /// Its type.
    pub ty: DynamicType,
    /// `@key`.
    pub key: bool,
    /// `@optional`.
    pub optional: bool,
    /// `@must_understand`.
    pub must_understand: bool,
    /// `@external`.
    pub external: bool,
}

/// A union (XTypes 1.3 §7.2.2.4.4.4).
#[derive(Debug, Clone, PartialEq)]
pub struct UnionDesc {
    /// Qualified name.
    pub name: String,
    /// Final, appendable or mutable.
    pub extensibility: Extensibility,
    /// The discriminator type (integer, boolean, char, octet or enum, possibly via aliases).
    pub discriminator: DynamicType,
    /// `@key` on the discriminator.
    pub discriminator_key: bool,
    /// The cases.
    pub cases: Vec<UnionCaseDesc>,
    /// False when built from a minimal TypeObject.
    pub names_known: bool,
}

/// A union case.
#[derive(Debug, Clone, PartialEq)]
pub struct UnionCaseDesc {
    /// Its name.
    pub name: String,
    /// Its member id.
    pub id: u32,
    /// Its type.
    pub ty: DynamicType,
    /// Its labels.
    pub labels: Vec<i32>,
    /// The `default:` case.
    pub default: bool,
}

impl DynamicType {
    /// Wraps a node.
    pub fn new(node: TypeNode) -> Self {
        DynamicType(Arc::new(node))
    }

    /// The node.
    pub fn node(&self) -> &TypeNode {
        &self.0
    }

    /// The type with aliases stripped (bounded: alias chains cannot be cyclic once built).
    pub fn resolved(&self) -> &DynamicType {
        let mut t = self;
        while let TypeNode::Alias { target, .. } = t.node() {
            t = target;
        }
        t
    }

    /// The qualified name of a named type (struct, union, enum, bitmask, alias).
    pub fn name(&self) -> Option<&str> {
        match self.node() {
            TypeNode::Alias { name, .. } => Some(name),
            TypeNode::Enum(e) => Some(&e.name),
            TypeNode::Bitmask(b) => Some(&b.name),
            TypeNode::Struct(s) => Some(&s.name),
            TypeNode::Union(u) => Some(&u.name),
            _ => None,
        }
    }

    /// True for the types XCDR2 puts in sequences and arrays without a DHEADER: boolean,
    /// octet, the integers, the floats and the chars (not enums or bitmasks, as in Cyclone
    /// DDS 11's `is_primitive_type`).
    pub fn is_primitive(&self) -> bool {
        matches!(self.resolved().node(), TypeNode::Primitive(_))
    }

    /// The struct description, when this (alias-resolved) type is a struct.
    pub fn as_struct(&self) -> Option<&StructDesc> {
        match self.resolved().node() {
            TypeNode::Struct(s) => Some(s),
            _ => None,
        }
    }

    /// The serialized size of a fixed-size primitive, enum or bitmask (1, 2, 4 or 8).
    pub fn fixed_size(&self) -> Option<usize> {
        match self.resolved().node() {
            TypeNode::Primitive(p) => primitive_size(*p),
            TypeNode::Enum(e) => Some(enum_size(e.bit_bound)),
            TypeNode::Bitmask(b) => Some(bitmask_size(b.bit_bound)),
            _ => None,
        }
    }
}

/// The wire size of a primitive (`None` for `Float128`).
pub fn primitive_size(p: PrimitiveKind) -> Option<usize> {
    use PrimitiveKind::*;
    match p {
        Boolean | Byte | Int8 | UInt8 | Char8 => Some(1),
        Int16 | UInt16 | Char16 => Some(2),
        Int32 | UInt32 | Float32 => Some(4),
        Int64 | UInt64 | Float64 => Some(8),
        Float128 => None,
    }
}

/// The wire size of an enum of this bit bound.
pub fn enum_size(bit_bound: u16) -> usize {
    match bit_bound {
        0..=8 => 1,
        9..=16 => 2,
        _ => 4,
    }
}

/// The wire size of a bitmask of this bit bound.
pub fn bitmask_size(bit_bound: u16) -> usize {
    match bit_bound {
        0..=8 => 1,
        9..=16 => 2,
        17..=32 => 4,
        _ => 8,
    }
}

impl EnumDesc {
    /// The enumerator with this value.
    pub fn by_value(&self, value: i32) -> Option<&EnumLiteralDesc> {
        self.literals.iter().find(|l| l.value == value)
    }

    /// The enumerator with this name.
    pub fn by_name(&self, name: &str) -> Option<&EnumLiteralDesc> {
        self.literals.iter().find(|l| l.name == name)
    }

    /// The default enumerator: the one marked default, else the first.
    pub fn default_literal(&self) -> Option<&EnumLiteralDesc> {
        self.literals
            .iter()
            .find(|l| l.default)
            .or(self.literals.first())
    }
}

impl UnionDesc {
    /// Index of the case selected by discriminator value `label`: the case listing it, else
    /// the default case, else none.
    pub fn case_for(&self, label: i64) -> Option<usize> {
        self.cases
            .iter()
            .position(|c| c.labels.iter().any(|l| i64::from(*l) == label))
            .or_else(|| self.cases.iter().position(|c| c.default))
    }
}

impl StructDesc {
    /// The member with this name.
    pub fn member(&self, name: &str) -> Option<(usize, &MemberDesc)> {
        self.members
            .iter()
            .enumerate()
            .find(|(_, m)| m.name == name)
    }

    /// True when a member is `@key`.
    pub fn has_key(&self) -> bool {
        self.members.iter().any(|m| m.key)
    }
}
