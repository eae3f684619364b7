//! XTypes 1.3 type representation for Halyard: the TypeObject model (minimal and complete),
//! TypeIdentifiers (including the hashed `EK_MINIMAL` / `EK_COMPLETE` ones), TypeInformation,
//! their XCDR2 encoding and decoding, and the hashes XTypes derives from them.
//!
//! * [`TypeObject::to_xcdr2_le`] / [`TypeObject::from_xcdr2`] (and the same on
//!   [`TypeIdentifier`] and [`TypeInformation`]): bytes without an encapsulation header, as
//!   they travel inside PID_TYPE_INFORMATION and TypeLookup replies.
//! * [`TypeObject::equivalence_hash`]: the first 14 bytes of the MD5 of the TypeObject's
//!   XCDR2 little-endian serialization (XTypes 1.3 §7.3.4.9.2);
//!   [`TypeIdentifier::hashed_minimal`] / [`TypeIdentifier::hashed_complete`] wrap it.
//! * [`name_hash`]: the first 4 bytes of the MD5 of a member name (§7.3.4.9.3).
//!
//!
//! Dynamic data (types learnt at run time):
//!
//! * [`TypeRegistry`]: TypeObjects by hashed identifier, each checked on insertion (hash,
//!   consistency); [`TypeRegistry::missing`] lists what TypeLookup should still fetch and
//!   [`TypeRegistry::build`] resolves an identifier into a [`DynamicType`].
//! * [`dynamic`]: [`DynamicValue`]s of those types, their XCDR1/XCDR2 codec laid out as
//!   Cyclone DDS 11 writes it ([`dynamic::encode`], [`dynamic::decode`]), keys
//!   ([`dynamic::key_hash`]) and JSON ([`dynamic::to_json`], [`dynamic::from_json`]).
//! * [`to_idl`]: IDL text of a type and its dependencies; [`assignable`]: XTypes 1.3 §7.2.4
//!   assignability under a [`TypeConsistency`] policy.
//!
//! Decoding never panics: lengths are checked against the input, nesting is bounded by
//! [`MAX_DEPTH`], unknown discriminators are [`XTypesError`]s.
//!
//! Descriptions built from their parts (shared by the IDL compiler and the derive macros, so a
//! type gets the same bytes either way):
//!
//! * [`describe`]: struct, enum and typedef TypeObjects from their members, a topic type's
//!   TypeInformation with its dependencies in the Python `cyclonedds` package's order.
//! * [`rust_types`]: the descriptions of Rust types ([`XTypesType`]), what
//!   `#[derive(Topic)]` and `#[derive(CdrType)]` announce.
//!
//! Not here yet: TypeLookup, applied annotations,
//! annotation and bitset types, recursive types (strongly connected components), `float128`
//! values, `wstring` in XCDR1.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod assignable;
mod codec;
mod decode;
pub mod describe;
pub mod dynamic;
mod error;
mod identifier;
mod idl_print;
mod info;
mod kinds;
mod object;
pub mod registry;
pub mod rust_types;

pub use assignable::{assignable, TypeConsistency, TypeConsistencyKind};
pub use codec::{MAX_DEPTH, NAME_MAX_LEN};
pub use dynamic::{DynamicError, DynamicType, DynamicValue};
pub use error::XTypesError;
pub use identifier::{
    EquivalenceHash, EquivalenceKind, NameHash, PlainCollectionHeader, PrimitiveKind,
    TypeIdentifier,
};
pub use idl_print::to_idl;
pub use info::{
    TypeIdentifierWithDependencies, TypeIdentifierWithSize, TypeInformation, TypeMapping,
    TYPE_INFORMATION_COMPLETE_ID, TYPE_INFORMATION_MINIMAL_ID,
};
pub use kinds::*;
pub use object::{
    AliasType, ArrayType, Bitflag, BitmaskType, CollectionElement, Complete, CompleteTypeObject,
    EnumLiteral, EnumType, Form, MapType, MemberDetail, Minimal, MinimalTypeObject, SequenceType,
    StructMember, StructType, TypeDetail, TypeObject, TypeObjectBody, UnionMember, UnionType,
};
pub use registry::TypeRegistry;
pub use rust_types::{NamedType, TypeRef, XTypesType};

use codec::FormCodec;
use decode::Reader;
use halyard_cdr_core::Endianness;
use md5::{Digest, Md5};

/// The [`NameHash`] of a member name: the first 4 bytes of its MD5.
pub fn name_hash(name: &str) -> NameHash {
    let d = Md5::digest(name.as_bytes());
    [d[0], d[1], d[2], d[3]]
}

fn hash14(bytes: &[u8]) -> EquivalenceHash {
    let d = Md5::digest(bytes);
    let mut h = [0u8; 14];
    h.copy_from_slice(&d[..14]);
    h
}

fn decode<T>(
    bytes: &[u8],
    endianness: Endianness,
    f: impl FnOnce(&mut Reader<'_>) -> Result<T, XTypesError>,
) -> Result<T, XTypesError> {
    let mut r = Reader::new(bytes, endianness == Endianness::Big);
    let v = f(&mut r)?;
    r.finish()?;
    Ok(v)
}

fn object_bytes<F: FormCodec>(body: &TypeObjectBody<F>) -> Result<Vec<u8>, XTypesError> {
    codec::to_le(|w| codec::write_type_object(w, body))
}

impl TypeObject {
    /// The XCDR2 little-endian serialization (the equivalence-hash input).
    pub fn to_xcdr2_le(&self) -> Result<Vec<u8>, XTypesError> {
        match self {
            TypeObject::Minimal(b) => object_bytes(b),
            TypeObject::Complete(b) => object_bytes(b),
        }
    }

    /// Decodes a little-endian XCDR2 TypeObject (trailing padding of < 4 zero bytes allowed).
    pub fn from_xcdr2(bytes: &[u8]) -> Result<Self, XTypesError> {
        Self::from_xcdr2_endian(bytes, Endianness::Little)
    }

    /// Decodes an XCDR2 TypeObject of the given byte order.
    pub fn from_xcdr2_endian(bytes: &[u8], endianness: Endianness) -> Result<Self, XTypesError> {
        decode(bytes, endianness, decode::read_type_object)
    }

    /// The 14-byte equivalence hash (XTypes 1.3 §7.3.4.9.2).
    pub fn equivalence_hash(&self) -> Result<EquivalenceHash, XTypesError> {
        self.to_xcdr2_le().map(|b| hash14(&b))
    }

    /// The hashed TypeIdentifier of this object (`EK_MINIMAL` or `EK_COMPLETE`).
    pub fn type_identifier(&self) -> Result<TypeIdentifier, XTypesError> {
        let kind = match self {
            TypeObject::Minimal(_) => EquivalenceKind::Minimal,
            TypeObject::Complete(_) => EquivalenceKind::Complete,
        };
        Ok(TypeIdentifier::Hash {
            kind,
            hash: self.equivalence_hash()?,
        })
    }

    /// The TypeIdentifierWithSize of this object, as TypeInformation lists it.
    pub fn identifier_with_size(&self) -> Result<TypeIdentifierWithSize, XTypesError> {
        let bytes = self.to_xcdr2_le()?;
        let size =
            u32::try_from(bytes.len()).map_err(|_| XTypesError::Invalid("huge TypeObject"))?;
        let kind = match self {
            TypeObject::Minimal(_) => EquivalenceKind::Minimal,
            TypeObject::Complete(_) => EquivalenceKind::Complete,
        };
        Ok(TypeIdentifierWithSize {
            type_id: TypeIdentifier::Hash {
                kind,
                hash: hash14(&bytes),
            },
            typeobject_serialized_size: size,
        })
    }
}

impl TypeIdentifier {
    /// The `EK_MINIMAL` identifier of a minimal TypeObject.
    pub fn hashed_minimal(object: &MinimalTypeObject) -> Result<Self, XTypesError> {
        let hash = hash14(&object_bytes(object)?);
        Ok(TypeIdentifier::Hash {
            kind: EquivalenceKind::Minimal,
            hash,
        })
    }

    /// The `EK_COMPLETE` identifier of a complete TypeObject.
    pub fn hashed_complete(object: &CompleteTypeObject) -> Result<Self, XTypesError> {
        let hash = hash14(&object_bytes(object)?);
        Ok(TypeIdentifier::Hash {
            kind: EquivalenceKind::Complete,
            hash,
        })
    }

    /// The XCDR2 little-endian serialization.
    pub fn to_xcdr2_le(&self) -> Result<Vec<u8>, XTypesError> {
        codec::to_le(|w| codec::write_ti(w, self))
    }

    /// Decodes a little-endian XCDR2 TypeIdentifier.
    pub fn from_xcdr2(bytes: &[u8]) -> Result<Self, XTypesError> {
        Self::from_xcdr2_endian(bytes, Endianness::Little)
    }

    /// Decodes an XCDR2 TypeIdentifier of the given byte order.
    pub fn from_xcdr2_endian(bytes: &[u8], endianness: Endianness) -> Result<Self, XTypesError> {
        decode(bytes, endianness, decode::read_ti)
    }
}

impl TypeInformation {
    /// TypeInformation naming `minimal` and `complete` with no dependencies listed.
    pub fn for_objects(minimal: &TypeObject, complete: &TypeObject) -> Result<Self, XTypesError> {
        let with = |o: &TypeObject| -> Result<TypeIdentifierWithDependencies, XTypesError> {
            Ok(TypeIdentifierWithDependencies {
                typeid_with_size: o.identifier_with_size()?,
                dependent_typeid_count: 0,
                dependent_typeids: Vec::new(),
            })
        };
        Ok(TypeInformation {
            minimal: with(minimal)?,
            complete: with(complete)?,
        })
    }

    /// The XCDR2 little-endian serialization (PID_TYPE_INFORMATION's value).
    pub fn to_xcdr2_le(&self) -> Result<Vec<u8>, XTypesError> {
        codec::to_le(|w| codec::write_type_information(w, self))
    }

    /// Decodes a little-endian XCDR2 TypeInformation.
    pub fn from_xcdr2(bytes: &[u8]) -> Result<Self, XTypesError> {
        Self::from_xcdr2_endian(bytes, Endianness::Little)
    }

    /// Decodes an XCDR2 TypeInformation of the given byte order.
    pub fn from_xcdr2_endian(bytes: &[u8], endianness: Endianness) -> Result<Self, XTypesError> {
        decode(bytes, endianness, decode::read_type_information)
    }
}

impl TypeMapping {
    /// The XCDR2 little-endian serialization.
    pub fn to_xcdr2_le(&self) -> Result<Vec<u8>, XTypesError> {
        codec::to_le(|w| codec::write_type_mapping(w, self))
    }

    /// Decodes a little-endian XCDR2 TypeMapping.
    pub fn from_xcdr2(bytes: &[u8]) -> Result<Self, XTypesError> {
        decode(bytes, Endianness::Little, decode::read_type_mapping)
    }
}
