//! TypeIdentifier (XTypes 1.3 §7.3.4.2): primitives, strings, plain collections and the
//! 14-byte hashes of TypeObjects.

use crate::kinds::*;

/// The first 14 bytes of the MD5 of a TypeObject's XCDR2 little-endian serialization.
pub type EquivalenceHash = [u8; 14];

/// The first 4 bytes of the MD5 of a member name (XTypes 1.3 §7.3.4.9.3).
pub type NameHash = [u8; 4];

/// Which TypeObject form a hash (or plain collection element) refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EquivalenceKind {
    /// `EK_MINIMAL` (0xf1).
    Minimal,
    /// `EK_COMPLETE` (0xf2).
    Complete,
    /// `EK_BOTH` (0xf3): only in plain-collection headers whose elements need no hash.
    Both,
}

impl EquivalenceKind {
    /// The octet on the wire.
    pub fn octet(self) -> u8 {
        match self {
            EquivalenceKind::Minimal => EK_MINIMAL,
            EquivalenceKind::Complete => EK_COMPLETE,
            EquivalenceKind::Both => EK_BOTH,
        }
    }

    /// Parses the octet; `None` for anything but 0xf1, 0xf2, 0xf3.
    pub fn from_octet(v: u8) -> Option<Self> {
        match v {
            EK_MINIMAL => Some(EquivalenceKind::Minimal),
            EK_COMPLETE => Some(EquivalenceKind::Complete),
            EK_BOTH => Some(EquivalenceKind::Both),
            _ => None,
        }
    }
}

/// A primitive type, identified by its TypeKind alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PrimitiveKind {
    /// `boolean`.
    Boolean,
    /// `octet`.
    Byte,
    /// `int8`.
    Int8,
    /// `uint8`.
    UInt8,
    /// `short`.
    Int16,
    /// `unsigned short`.
    UInt16,
    /// `long`.
    Int32,
    /// `unsigned long`.
    UInt32,
    /// `long long`.
    Int64,
    /// `unsigned long long`.
    UInt64,
    /// `float`.
    Float32,
    /// `double`.
    Float64,
    /// `long double`.
    Float128,
    /// `char`.
    Char8,
    /// `wchar`.
    Char16,
}

const PRIMITIVES: [(PrimitiveKind, u8); 15] = [
    (PrimitiveKind::Boolean, TK_BOOLEAN),
    (PrimitiveKind::Byte, TK_BYTE),
    (PrimitiveKind::Int8, TK_INT8),
    (PrimitiveKind::UInt8, TK_UINT8),
    (PrimitiveKind::Int16, TK_INT16),
    (PrimitiveKind::UInt16, TK_UINT16),
    (PrimitiveKind::Int32, TK_INT32),
    (PrimitiveKind::UInt32, TK_UINT32),
    (PrimitiveKind::Int64, TK_INT64),
    (PrimitiveKind::UInt64, TK_UINT64),
    (PrimitiveKind::Float32, TK_FLOAT32),
    (PrimitiveKind::Float64, TK_FLOAT64),
    (PrimitiveKind::Float128, TK_FLOAT128),
    (PrimitiveKind::Char8, TK_CHAR8),
    (PrimitiveKind::Char16, TK_CHAR16),
];

impl PrimitiveKind {
    /// The TypeKind octet.
    pub fn type_kind(self) -> u8 {
        PRIMITIVES
            .iter()
            .find(|(k, _)| *k == self)
            .map_or(TK_NONE, |(_, tk)| *tk)
    }

    /// The primitive a TypeKind octet names, if any.
    pub fn from_type_kind(tk: u8) -> Option<Self> {
        PRIMITIVES.iter().find(|(_, t)| *t == tk).map(|(k, _)| *k)
    }
}

/// PlainCollectionHeader (§7.3.4.6): how the element identifier is to be read and the
/// element's [`member_flag`] bits (`TRY_CONSTRUCT*`, `IS_EXTERNAL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PlainCollectionHeader {
    /// `EK_BOTH` when the element identifier is fully descriptive (not a hash), else the
    /// kind of the element's hash.
    pub equiv_kind: EquivalenceKind,
    /// CollectionElementFlag bits.
    pub element_flags: u16,
}

/// A TypeIdentifier. Small/large variants differ only in the width of their bounds; the
/// constructors ([`TypeIdentifier::string8`], [`TypeIdentifier::sequence`] …) pick the
/// right one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TypeIdentifier {
    /// `TK_NONE`: no type.
    None,
    /// A primitive type.
    Primitive(PrimitiveKind),
    /// `TI_STRING8_SMALL`: `string<bound>`, bound 0 meaning unbounded.
    String8Small {
        /// The bound (0 = unbounded).
        bound: u8,
    },
    /// `TI_STRING8_LARGE`: `string<bound>`.
    String8Large {
        /// The bound.
        bound: u32,
    },
    /// `TI_STRING16_SMALL`: `wstring<bound>`.
    String16Small {
        /// The bound (0 = unbounded).
        bound: u8,
    },
    /// `TI_STRING16_LARGE`: `wstring<bound>`.
    String16Large {
        /// The bound.
        bound: u32,
    },
    /// `TI_PLAIN_SEQUENCE_SMALL` (PlainSequenceSElemDefn).
    PlainSequenceSmall {
        /// Element kind and flags.
        header: PlainCollectionHeader,
        /// The bound (0 = unbounded).
        bound: u8,
        /// The element type.
        element: Box<TypeIdentifier>,
    },
    /// `TI_PLAIN_SEQUENCE_LARGE` (PlainSequenceLElemDefn).
    PlainSequenceLarge {
        /// Element kind and flags.
        header: PlainCollectionHeader,
        /// The bound.
        bound: u32,
        /// The element type.
        element: Box<TypeIdentifier>,
    },
    /// `TI_PLAIN_ARRAY_SMALL` (PlainArraySElemDefn).
    PlainArraySmall {
        /// Element kind and flags.
        header: PlainCollectionHeader,
        /// The dimensions.
        bounds: Vec<u8>,
        /// The element type.
        element: Box<TypeIdentifier>,
    },
    /// `TI_PLAIN_ARRAY_LARGE` (PlainArrayLElemDefn).
    PlainArrayLarge {
        /// Element kind and flags.
        header: PlainCollectionHeader,
        /// The dimensions.
        bounds: Vec<u32>,
        /// The element type.
        element: Box<TypeIdentifier>,
    },
    /// `TI_PLAIN_MAP_SMALL` (PlainMapSTypeDefn).
    PlainMapSmall {
        /// Element kind and flags.
        header: PlainCollectionHeader,
        /// The bound (0 = unbounded).
        bound: u8,
        /// The value type.
        element: Box<TypeIdentifier>,
        /// CollectionElementFlag bits of the key.
        key_flags: u16,
        /// The key type.
        key: Box<TypeIdentifier>,
    },
    /// `TI_PLAIN_MAP_LARGE` (PlainMapLTypeDefn).
    PlainMapLarge {
        /// Element kind and flags.
        header: PlainCollectionHeader,
        /// The bound.
        bound: u32,
        /// The value type.
        element: Box<TypeIdentifier>,
        /// CollectionElementFlag bits of the key.
        key_flags: u16,
        /// The key type.
        key: Box<TypeIdentifier>,
    },
    /// `TI_STRONGLY_CONNECTED_COMPONENT` (StronglyConnectedComponentId).
    StronglyConnectedComponent {
        /// Minimal or complete (never `Both`).
        kind: EquivalenceKind,
        /// Hash of the component.
        hash: EquivalenceHash,
        /// Number of types in the component.
        scc_length: i32,
        /// This type's index in the component.
        scc_index: i32,
    },
    /// `EK_MINIMAL` / `EK_COMPLETE`: the hash of a TypeObject.
    Hash {
        /// Minimal or complete (never `Both`).
        kind: EquivalenceKind,
        /// The 14-byte hash.
        hash: EquivalenceHash,
    },
}

impl TypeIdentifier {
    /// `string<bound>` (0 = unbounded), small or large by the bound.
    pub fn string8(bound: u32) -> Self {
        match u8::try_from(bound) {
            Ok(bound) => TypeIdentifier::String8Small { bound },
            Err(_) => TypeIdentifier::String8Large { bound },
        }
    }

    /// `wstring<bound>` (0 = unbounded), small or large by the bound.
    pub fn string16(bound: u32) -> Self {
        match u8::try_from(bound) {
            Ok(bound) => TypeIdentifier::String16Small { bound },
            Err(_) => TypeIdentifier::String16Large { bound },
        }
    }

    /// A plain `sequence<element, bound>` (0 = unbounded), small or large by the bound;
    /// the header's kind is derived from `element` ([`TypeIdentifier::plain_header`]).
    pub fn sequence(element: TypeIdentifier, bound: u32, element_flags: u16) -> Self {
        let header = element.plain_header(element_flags);
        let element = Box::new(element);
        match u8::try_from(bound) {
            Ok(bound) => TypeIdentifier::PlainSequenceSmall {
                header,
                bound,
                element,
            },
            Err(_) => TypeIdentifier::PlainSequenceLarge {
                header,
                bound,
                element,
            },
        }
    }

    /// A plain array `element[d0][d1]…`, small when every dimension is below 256.
    pub fn array(element: TypeIdentifier, dims: &[u32], element_flags: u16) -> Self {
        let header = element.plain_header(element_flags);
        let element = Box::new(element);
        let small: Option<Vec<u8>> = dims.iter().map(|d| u8::try_from(*d).ok()).collect();
        match small {
            Some(bounds) => TypeIdentifier::PlainArraySmall {
                header,
                bounds,
                element,
            },
            None => TypeIdentifier::PlainArrayLarge {
                header,
                bounds: dims.to_vec(),
                element,
            },
        }
    }

    /// A plain `map<key, element, bound>`, small or large by the bound.
    pub fn map(key: TypeIdentifier, element: TypeIdentifier, bound: u32, flags: u16) -> Self {
        let header = element.plain_header(flags);
        let (element, key) = (Box::new(element), Box::new(key));
        match u8::try_from(bound) {
            Ok(bound) => TypeIdentifier::PlainMapSmall {
                header,
                bound,
                element,
                key_flags: flags,
                key,
            },
            Err(_) => TypeIdentifier::PlainMapLarge {
                header,
                bound,
                element,
                key_flags: flags,
                key,
            },
        }
    }

    /// The PlainCollectionHeader for a collection of `self`: the hash kind when `self` is a
    /// hash (or contains one), `EK_BOTH` when it is fully descriptive.
    pub fn plain_header(&self, element_flags: u16) -> PlainCollectionHeader {
        PlainCollectionHeader {
            equiv_kind: self.equivalence_kind(),
            element_flags,
        }
    }

    /// `Minimal`/`Complete` for hashed identifiers and collections of them, `Both` for
    /// fully descriptive ones.
    pub fn equivalence_kind(&self) -> EquivalenceKind {
        match self {
            TypeIdentifier::Hash { kind, .. }
            | TypeIdentifier::StronglyConnectedComponent { kind, .. } => *kind,
            TypeIdentifier::PlainSequenceSmall { header, .. }
            | TypeIdentifier::PlainSequenceLarge { header, .. }
            | TypeIdentifier::PlainArraySmall { header, .. }
            | TypeIdentifier::PlainArrayLarge { header, .. }
            | TypeIdentifier::PlainMapSmall { header, .. }
            | TypeIdentifier::PlainMapLarge { header, .. } => header.equiv_kind,
            _ => EquivalenceKind::Both,
        }
    }

    /// The discriminator octet on the wire.
    pub fn discriminator(&self) -> u8 {
        match self {
            TypeIdentifier::None => TK_NONE,
            TypeIdentifier::Primitive(p) => p.type_kind(),
            TypeIdentifier::String8Small { .. } => TI_STRING8_SMALL,
            TypeIdentifier::String8Large { .. } => TI_STRING8_LARGE,
            TypeIdentifier::String16Small { .. } => TI_STRING16_SMALL,
            TypeIdentifier::String16Large { .. } => TI_STRING16_LARGE,
            TypeIdentifier::PlainSequenceSmall { .. } => TI_PLAIN_SEQUENCE_SMALL,
            TypeIdentifier::PlainSequenceLarge { .. } => TI_PLAIN_SEQUENCE_LARGE,
            TypeIdentifier::PlainArraySmall { .. } => TI_PLAIN_ARRAY_SMALL,
            TypeIdentifier::PlainArrayLarge { .. } => TI_PLAIN_ARRAY_LARGE,
            TypeIdentifier::PlainMapSmall { .. } => TI_PLAIN_MAP_SMALL,
            TypeIdentifier::PlainMapLarge { .. } => TI_PLAIN_MAP_LARGE,
            TypeIdentifier::StronglyConnectedComponent { .. } => TI_STRONGLY_CONNECTED_COMPONENT,
            TypeIdentifier::Hash { kind, .. } => kind.octet(),
        }
    }
}
