//! The error of an expression that does not parse or does not fit its type.
//!
//! Design. Every failure names the byte offset and the text of the token it is about (empty
//! at the end of the expression), so a tool can point at it: the lexer, the parser and the
//! binding to a schema all report through [`FilterError`], and nothing else.

use std::fmt;

/// A filter expression that does not parse or does not fit the type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilterError {
    /// Byte offset of the offending token in the expression (its length for "unexpected end").
    pub position: usize,
    /// The offending token (empty at the end of the expression).
    pub token: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for FilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.token.is_empty() {
            write!(f, "at offset {}: {}", self.position, self.message)
        } else {
            write!(
                f,
                "at offset {}, `{}`: {}",
                self.position, self.token, self.message
            )
        }
    }
}

impl std::error::Error for FilterError {}

/// The error about `token` at byte offset `pos`.
pub(super) fn err(pos: usize, token: &str, message: impl Into<String>) -> FilterError {
    FilterError {
        position: pos,
        token: token.to_string(),
        message: message.into(),
    }
}
