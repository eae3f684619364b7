//! The one error type of the wire crate.

/// Why a message, submessage or parameter could not be parsed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub enum WireError {
    /// Fewer bytes than the structure needs.
    Truncated,
    /// Not an RTPS message (bad magic "RTPS").
    BadMagic,
    /// Protocol major version other than 2.
    UnsupportedVersion,
    /// A submessage length points past the end of the message.
    BadSubmessageLength,
    /// A field holds a value the spec forbids (e.g. a sequence number set with numBits > 256).
    InvalidField(&'static str),
    /// A parameter list had no sentinel or a parameter overran it.
    BadParameterList,
    /// A parameter flagged must-understand (0x4000) that we do not understand.
    MustUnderstand(u16),
    /// An unknown or unsupported encapsulation kind.
    BadEncapsulation(u16),
    /// A required discovery parameter is missing.
    MissingParameter(u16),
}

impl core::fmt::Display for WireError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{self:?}")
    }
}

impl std::error::Error for WireError {}
