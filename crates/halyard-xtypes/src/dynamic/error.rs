//! The error type of the type registry, dynamic types, the dynamic codec and JSON.

use std::fmt;

use crate::{TypeIdentifier, XTypesError};

/// Why a type could not be registered or resolved, or a value not encoded, decoded or converted.
///
/// Value errors carry the member path (`pos.x`, `points[2].y`) where they were found.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum DynamicError {
    /// The equivalence hash of a TypeObject differs from the identifier it was given under.
    HashMismatch {
        /// The identifier recomputed from the object.
        computed: TypeIdentifier,
        /// The identifier the object was offered as.
        claimed: TypeIdentifier,
    },
    /// Identifiers the registry does not hold (ask TypeLookup for them).
    Missing(Vec<TypeIdentifier>),
    /// A TypeObject contradicts itself (duplicate member, bad bound ...).
    Inconsistent {
        /// The type concerned (its name, or a description).
        type_name: String,
        /// What is wrong.
        why: String,
    },
    /// A registry or nesting limit was reached.
    Limit {
        /// Which limit.
        what: &'static str,
        /// Its value.
        limit: usize,
    },
    /// A well-formed type or value this implementation cannot handle yet.
    Unsupported(&'static str),
    /// The TypeObject bytes did not decode.
    XTypes(XTypesError),
    /// A value does not fit its type (encoding, JSON conversion).
    Value {
        /// Member path, e.g. `pos.x` (empty at the top level).
        path: String,
        /// What is wrong.
        why: String,
    },
    /// Serialized data does not decode as the type.
    Decode {
        /// Member path reached when decoding failed.
        path: String,
        /// What is wrong.
        why: String,
    },
    /// Two types are not assignable (XTypes 1.3 §7.2.4).
    NotAssignable {
        /// Member path where they differ.
        path: String,
        /// Which rule fails.
        why: String,
    },
}

impl fmt::Display for DynamicError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DynamicError::HashMismatch { computed, claimed } => write!(
                f,
                "hash of TypeObject is {}, identifier says {}",
                short_id(computed),
                short_id(claimed)
            ),
            DynamicError::Missing(ids) => {
                write!(f, "{} type(s) unknown:", ids.len())?;
                for id in ids {
                    write!(f, " {}", short_id(id))?;
                }
                Ok(())
            }
            DynamicError::Inconsistent { type_name, why } => {
                write!(f, "inconsistent type {type_name}: {why}")
            }
            DynamicError::Limit { what, limit } => write!(f, "{what} exceeds the limit {limit}"),
            DynamicError::Unsupported(what) => write!(f, "not supported: {what}"),
            DynamicError::XTypes(e) => write!(f, "{e}"),
            DynamicError::Value { path, why } => write!(f, "{}{why}", prefix(path)),
            DynamicError::Decode { path, why } => write!(f, "decoding {}{why}", prefix(path)),
            DynamicError::NotAssignable { path, why } => {
                write!(f, "not assignable: {}{why}", prefix(path))
            }
        }
    }
}

fn prefix(path: &str) -> String {
    if path.is_empty() {
        String::new()
    } else {
        format!("{path}: ")
    }
}

/// A short printable form of an identifier: the hash in hex, or the kind.
pub fn short_id(id: &TypeIdentifier) -> String {
    match id {
        TypeIdentifier::Hash { kind, hash } => {
            let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
            format!("{:#04x}:{hex}", kind.octet())
        }
        other => format!("{other:?}"),
    }
}

impl std::error::Error for DynamicError {}

impl From<XTypesError> for DynamicError {
    fn from(e: XTypesError) -> Self {
        DynamicError::XTypes(e)
    }
}

impl DynamicError {
    /// Prefixes the member path of a value/decode/assignability error with `segment` (a
    /// member name or `[index]`) while the error travels out of the value.
    pub(crate) fn at(self, segment: &str) -> Self {
        let join = |path: String| -> String {
            if path.is_empty() {
                segment.to_owned()
            } else if path.starts_with('[') {
                format!("{segment}{path}")
            } else {
                format!("{segment}.{path}")
            }
        };
        match self {
            DynamicError::Value { path, why } => DynamicError::Value {
                path: join(path),
                why,
            },
            DynamicError::Decode { path, why } => DynamicError::Decode {
                path: join(path),
                why,
            },
            DynamicError::NotAssignable { path, why } => DynamicError::NotAssignable {
                path: join(path),
                why,
            },
            other => other,
        }
    }

    pub(crate) fn value(why: impl Into<String>) -> Self {
        DynamicError::Value {
            path: String::new(),
            why: why.into(),
        }
    }

    pub(crate) fn decode(why: impl Into<String>) -> Self {
        DynamicError::Decode {
            path: String::new(),
            why: why.into(),
        }
    }
}
