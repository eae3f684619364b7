//! The error type of encoding and decoding.

use std::fmt;

/// Why encoding or decoding failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CdrError {
    /// The input ended before the value (or its alignment padding) was complete.
    Truncated,
    /// A string's bytes are not valid UTF-8.
    InvalidUtf8,
    /// A string does not end with its NUL terminator (or has length 0).
    MissingNul,
    /// A boolean octet other than 0 or 1.
    InvalidBool(u8),
    /// An enumeration value that names no enumerator.
    InvalidEnum(u32),
    /// An unknown encapsulation identifier.
    BadEncapsulation(u16),
    /// A length or element count exceeds what the remaining input (or the format) allows.
    LengthTooLarge {
        /// The length or count that was read or requested.
        length: u64,
        /// The largest acceptable value at that point.
        limit: u64,
    },
    /// A construct this implementation does not support.
    Unsupported(&'static str),
    /// A mutable type's non-optional member was absent.
    MissingMember(u32),
    /// An unknown member flagged must-understand was received.
    UnknownMustUnderstand(u32),
    /// A DHEADER, EMHEADER or parameter header is inconsistent.
    InvalidHeader(&'static str),
    /// Nested types deeper than the decoder accepts.
    TooDeep,
}

impl fmt::Display for CdrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CdrError::Truncated => write!(f, "CDR input truncated"),
            CdrError::InvalidUtf8 => write!(f, "CDR string is not valid UTF-8"),
            CdrError::MissingNul => write!(f, "CDR string lacks its NUL terminator"),
            CdrError::InvalidBool(b) => write!(f, "invalid CDR boolean octet {b:#04x}"),
            CdrError::InvalidEnum(v) => write!(f, "invalid CDR enumeration value {v}"),
            CdrError::BadEncapsulation(id) => write!(f, "unknown encapsulation id {id:#06x}"),
            CdrError::LengthTooLarge { length, limit } => {
                write!(f, "CDR length {length} exceeds limit {limit}")
            }
            CdrError::Unsupported(what) => write!(f, "unsupported CDR construct: {what}"),
            CdrError::MissingMember(id) => write!(f, "mutable member {id} missing"),
            CdrError::UnknownMustUnderstand(id) => {
                write!(f, "unknown must-understand member {id}")
            }
            CdrError::InvalidHeader(what) => write!(f, "invalid CDR header: {what}"),
            CdrError::TooDeep => write!(f, "CDR nesting too deep"),
        }
    }
}

impl std::error::Error for CdrError {}
