//! TypeInformation (XTypes 1.3 §7.6.3.2.2), the value of PID_TYPE_INFORMATION in SEDP.

use crate::identifier::TypeIdentifier;

/// TypeIdentifierWithSize: a (hashed) TypeIdentifier and its TypeObject's serialized size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeIdentifierWithSize {
    /// The identifier.
    pub type_id: TypeIdentifier,
    /// Length of the XCDR2 serialization of the TypeObject it names.
    pub typeobject_serialized_size: u32,
}

/// TypeIdentifierWithDependencies: a type and (some of) the types it depends on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeIdentifierWithDependencies {
    /// The type itself.
    pub typeid_with_size: TypeIdentifierWithSize,
    /// Number of dependencies in total (-1 if unknown); may exceed `dependent_typeids.len()`.
    pub dependent_typeid_count: i32,
    /// The dependencies listed.
    pub dependent_typeids: Vec<TypeIdentifierWithSize>,
}

/// TypeInformation: the minimal and complete identifiers of a topic type (a mutable
/// struct with member ids 0x1001 and 0x1002).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeInformation {
    /// Member 0x1001.
    pub minimal: TypeIdentifierWithDependencies,
    /// Member 0x1002.
    pub complete: TypeIdentifierWithDependencies,
}

/// Member id of [`TypeInformation::minimal`].
pub const TYPE_INFORMATION_MINIMAL_ID: u32 = 0x1001;
/// Member id of [`TypeInformation::complete`].
pub const TYPE_INFORMATION_COMPLETE_ID: u32 = 0x1002;

/// TypeMapping (Cyclone DDS's `DDS::XTypes::TypeMapping`, a `@final` struct): the TypeObjects
/// behind a TypeInformation, as Cyclone's `idlc` embeds them in topic descriptors and as
/// TypeLookup replies carry them (pairs of identifier and object).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeMapping {
    /// Minimal (identifier, object) pairs.
    pub minimal: Vec<(TypeIdentifier, crate::TypeObject)>,
    /// Complete (identifier, object) pairs.
    pub complete: Vec<(TypeIdentifier, crate::TypeObject)>,
    /// (complete identifier, minimal identifier) pairs.
    pub complete_to_minimal: Vec<(TypeIdentifier, TypeIdentifier)>,
}
