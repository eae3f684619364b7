//! The error type of TypeObject / TypeIdentifier / TypeInformation decoding and encoding.

use std::fmt;

/// Why an XTypes value could not be decoded (or, rarely, encoded).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum XTypesError {
    /// The input ended inside a value, its padding or a header.
    Truncated,
    /// A union discriminator this implementation does not know (`what` names the union).
    UnknownDiscriminator {
        /// The union being decoded, e.g. `"TypeIdentifier"`.
        what: &'static str,
        /// The discriminator octet that was read.
        value: u8,
    },
    /// A length, count or DHEADER exceeds what the remaining input or the type allows.
    LengthTooLarge {
        /// What was being read, e.g. `"MemberName"`.
        what: &'static str,
        /// The length that was read.
        length: u64,
        /// The largest acceptable value at that point.
        limit: u64,
    },
    /// A string is not NUL-terminated, contains a NUL, or is not UTF-8.
    BadString(&'static str),
    /// A boolean octet other than 0 or 1.
    BadBool(u8),
    /// TypeIdentifiers nested deeper than [`crate::MAX_DEPTH`].
    TooDeep,
    /// A well-formed construct this crate does not model yet (e.g. applied annotations).
    Unsupported(&'static str),
    /// A mutable struct lacks a member, or an unknown member is flagged must-understand.
    BadMember {
        /// The member id concerned.
        id: u32,
        /// What is wrong with it.
        why: &'static str,
    },
    /// A value is inconsistent, e.g. an equivalence hash in a plain-collection header.
    Invalid(&'static str),
    /// The XCDR2 writer refused a value (e.g. a length above `u32::MAX`).
    Encode(halyard_cdr_core::CdrError),
}

impl fmt::Display for XTypesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            XTypesError::Truncated => write!(f, "XTypes input truncated"),
            XTypesError::UnknownDiscriminator { what, value } => {
                write!(f, "unknown {what} discriminator {value:#04x}")
            }
            XTypesError::LengthTooLarge {
                what,
                length,
                limit,
            } => write!(f, "{what} length {length} exceeds limit {limit}"),
            XTypesError::BadString(why) => write!(f, "invalid string: {why}"),
            XTypesError::BadBool(b) => write!(f, "invalid boolean octet {b:#04x}"),
            XTypesError::TooDeep => write!(f, "type identifiers nested too deeply"),
            XTypesError::Unsupported(what) => write!(f, "unsupported XTypes construct: {what}"),
            XTypesError::BadMember { id, why } => write!(f, "member {id:#x}: {why}"),
            XTypesError::Invalid(why) => write!(f, "invalid XTypes value: {why}"),
            XTypesError::Encode(e) => write!(f, "XCDR2 encoding failed: {e}"),
        }
    }
}

impl std::error::Error for XTypesError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            XTypesError::Encode(e) => Some(e),
            _ => None,
        }
    }
}

impl From<halyard_cdr_core::CdrError> for XTypesError {
    fn from(e: halyard_cdr_core::CdrError) -> Self {
        XTypesError::Encode(e)
    }
}
