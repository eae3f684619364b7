//! Errors: each one names the original file, line and column, and says what is wrong and why.

use std::fmt;

use crate::source::Location;

/// One problem found in IDL input, at a location of the original text.
#[derive(Clone, Debug, PartialEq)]
pub struct Error {
    /// Where the problem is.
    pub location: Location,
    /// What the problem is.
    pub kind: ErrorKind,
}

impl Error {
    /// An error of `kind` at `location`.
    pub fn new(location: Location, kind: ErrorKind) -> Self {
        Error { location, kind }
    }

    /// The file name of the location.
    pub fn file(&self) -> &str {
        &self.location.file
    }

    /// The 1-based line of the location.
    pub fn line(&self) -> u32 {
        self.location.line
    }

    /// The 1-based column of the location.
    pub fn column(&self) -> u32 {
        self.location.column
    }

    /// The message, without the location.
    pub fn message(&self) -> String {
        self.kind.to_string()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.kind)
    }
}

impl std::error::Error for Error {}

/// What went wrong. Messages are written for the person who wrote the IDL.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A file could not be read.
    Io {
        /// The path tried.
        path: String,
        /// The operating system's reason.
        reason: String,
    },
    /// `#include` named a file found neither beside the including file nor on the include path.
    IncludeNotFound {
        /// The name as written between quotes or angle brackets.
        name: String,
    },
    /// `#include` nesting went deeper than the limit (usually an include cycle).
    IncludeTooDeep {
        /// The limit in [`crate::ParseOptions::max_include_depth`].
        limit: usize,
        /// The chain of files, outermost first.
        chain: Vec<String>,
    },
    /// A preprocessor line that is not understood or not well formed.
    BadDirective {
        /// The directive name (`include`, `define`, `if` ...).
        directive: String,
        /// Why it is not accepted.
        reason: &'static str,
    },
    /// `#else`, `#elif` or `#endif` without a matching `#if`.
    UnmatchedConditional {
        /// The directive name.
        directive: String,
    },
    /// An `#if`/`#ifdef`/`#ifndef` that a file does not close with `#endif`.
    UnterminatedConditional,
    /// A `/*` comment that the file does not close.
    UnterminatedComment,
    /// `#error` was reached.
    UserError {
        /// The text after `#error`.
        text: String,
    },
    /// A token sequence the grammar does not allow.
    Syntax {
        /// What the grammar allows here.
        expected: String,
        /// What the text has instead.
        found: String,
    },
    /// A literal that is not well formed or out of range.
    BadLiteral {
        /// The literal as written.
        text: String,
    },
    /// Declarations, types or expressions nest deeper than the limit.
    NestingTooDeep {
        /// The limit in [`crate::ParseOptions::max_nesting_depth`].
        limit: usize,
    },
    /// A name declared twice in one scope.
    Duplicate {
        /// What was declared twice (`member`, `definition`, `enumerator`, `case label` ...).
        what: &'static str,
        /// The name or label.
        name: String,
        /// Where it was first declared.
        previous: Location,
    },
    /// Two names in one scope that differ only in case (IDL 4.2 §7.2.3: they collide).
    CaseCollision {
        /// The later name.
        name: String,
        /// The earlier name.
        other: String,
        /// Where the earlier one was declared.
        previous: Location,
    },
    /// A scoped name that names no declaration visible from where it is used.
    UnknownName {
        /// The name as written.
        name: String,
    },
    /// A name used before its declaration (IDL requires declaration first).
    UsedBeforeDeclaration {
        /// The name as written.
        name: String,
        /// Where it is declared.
        declared: Location,
    },
    /// A struct or union held by value where it is only forward-declared so far.
    HeldBeforeDefinition {
        /// The fully scoped name.
        name: String,
        /// Where it is defined.
        defined: Location,
    },
    /// A name that resolves to a declaration of the wrong kind.
    WrongKind {
        /// The fully scoped name.
        name: String,
        /// What kind of declaration was needed (`type`, `constant`, `struct` ...).
        expected: &'static str,
        /// What it is.
        found: &'static str,
    },
    /// A construct Halyard parses but does not support where it is used.
    Unsupported {
        /// The fully scoped name of the declaration.
        name: String,
        /// What it is (`interface`, `valuetype`, `exception`, `native`).
        what: &'static str,
    },
    /// A struct or union declared forward and never defined, used in a data type.
    Incomplete {
        /// The fully scoped name.
        name: String,
    },
    /// A key (from `#pragma keylist`) that is not a member of the type.
    KeyNotMember {
        /// The fully scoped type name.
        type_name: String,
        /// The key as written.
        key: String,
    },
    /// A union discriminator type that is not integral, char, boolean or an enum.
    BadDiscriminator {
        /// The type as written.
        type_name: String,
    },
    /// A union case label whose value does not fit the discriminator type.
    LabelMismatch {
        /// The label value.
        label: String,
        /// The discriminator type.
        discriminator: String,
    },
    /// A struct or union that contains itself by value, so it would be infinitely large.
    RecursiveType {
        /// The cycle of fully scoped names, starting and ending with the same one.
        cycle: Vec<String>,
    },
    /// A constant expression that cannot be evaluated.
    ConstEval {
        /// Why.
        reason: ConstEvalError,
    },
    /// An annotation with parameters it does not accept.
    BadAnnotation {
        /// The annotation name.
        name: String,
        /// What it accepts.
        reason: &'static str,
    },
}

/// Why a constant expression has no value.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ConstEvalError {
    /// Division or remainder by zero.
    DivisionByZero,
    /// The value does not fit the type.
    OutOfRange {
        /// The value.
        value: String,
        /// The type it must fit.
        type_name: String,
    },
    /// An operator applied to operands it does not take.
    BadOperands {
        /// The operator.
        op: &'static str,
        /// The operand kinds found.
        operands: String,
    },
    /// A constant defined in terms of itself.
    Cycle {
        /// The constant's fully scoped name.
        name: String,
    },
    /// A bound or array dimension that is not a positive integer.
    NotPositive {
        /// What the value is for (`array dimension`, `sequence bound` ...).
        what: &'static str,
        /// The value found.
        value: String,
    },
    /// The value's kind does not match the declared constant type.
    TypeMismatch {
        /// The declared type.
        type_name: String,
        /// The value found.
        value: String,
    },
}

impl fmt::Display for ConstEvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConstEvalError::DivisionByZero => write!(f, "division by zero"),
            ConstEvalError::OutOfRange { value, type_name } => {
                write!(f, "value {value} does not fit in type `{type_name}`")
            }
            ConstEvalError::BadOperands { op, operands } => {
                write!(f, "operator `{op}` cannot be applied to {operands}")
            }
            ConstEvalError::Cycle { name } => {
                write!(f, "constant `{name}` is defined in terms of itself")
            }
            ConstEvalError::NotPositive { what, value } => {
                write!(f, "{what} must be a positive integer, found {value}")
            }
            ConstEvalError::TypeMismatch { type_name, value } => {
                write!(f, "value {value} is not of type `{type_name}`")
            }
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::Io { path, reason } => write!(f, "cannot read `{path}`: {reason}"),
            ErrorKind::IncludeNotFound { name } => write!(
                f,
                "included file `{name}` not found beside the including file or on the include path"
            ),
            ErrorKind::IncludeTooDeep { limit, chain } => write!(
                f,
                "includes nest deeper than {limit} (an include cycle?): {}",
                chain.join(" -> ")
            ),
            ErrorKind::BadDirective { directive, reason } => {
                write!(f, "bad `#{directive}` directive: {reason}")
            }
            ErrorKind::UnmatchedConditional { directive } => {
                write!(f, "`#{directive}` without a matching `#if`")
            }
            ErrorKind::UnterminatedConditional => {
                write!(f, "`#if` without a matching `#endif` before the end of the file")
            }
            ErrorKind::UnterminatedComment => write!(f, "`/*` comment is never closed"),
            ErrorKind::UserError { text } => write!(f, "#error {text}"),
            ErrorKind::Syntax { expected, found } => write!(f, "expected {expected}, found {found}"),
            ErrorKind::BadLiteral { text } => write!(f, "malformed or out-of-range literal `{text}`"),
            ErrorKind::NestingTooDeep { limit } => {
                write!(f, "declarations or expressions nest deeper than {limit} levels")
            }
            ErrorKind::Duplicate { what, name, previous } => {
                write!(f, "{what} `{name}` declared twice; first declared at {previous}")
            }
            ErrorKind::CaseCollision { name, other, previous } => write!(
                f,
                "`{name}` differs only in case from `{other}` declared at {previous}; IDL names that differ only in case collide"
            ),
            ErrorKind::UnknownName { name } => {
                write!(f, "`{name}` is not declared in this scope or any enclosing one")
            }
            ErrorKind::UsedBeforeDeclaration { name, declared } => write!(
                f,
                "`{name}` is used before its declaration at {declared}; IDL requires declaration before use"
            ),
            ErrorKind::HeldBeforeDefinition { name, defined } => write!(
                f,
                "`{name}` is held by value before its definition at {defined}; until then only a sequence or map may hold it"
            ),
            ErrorKind::WrongKind { name, expected, found } => {
                let (a, b) = (article(found), article(expected));
                write!(f, "`{name}` is {a} {found}, but {b} {expected} is needed here")
            }
            ErrorKind::Unsupported { name, what } => {
                let a = article(what);
                write!(f, "`{name}` is {a} {what}, which Halyard does not support in data types")
            }
            ErrorKind::Incomplete { name } => write!(
                f,
                "`{name}` is declared forward but never defined, so no data type can hold it"
            ),
            ErrorKind::KeyNotMember { type_name, key } => {
                write!(f, "key `{key}` is not a member of `{type_name}`")
            }
            ErrorKind::BadDiscriminator { type_name } => write!(
                f,
                "union discriminator type `{type_name}` is not an integer, char, boolean, octet or enum type"
            ),
            ErrorKind::LabelMismatch { label, discriminator } => write!(
                f,
                "case label {label} is not a value of the discriminator type `{discriminator}`"
            ),
            ErrorKind::RecursiveType { cycle } => write!(
                f,
                "`{}` contains itself by value ({}), so it would be infinitely large; use a sequence or @external",
                cycle.first().map(String::as_str).unwrap_or(""),
                cycle.join(" -> ")
            ),
            ErrorKind::ConstEval { reason } => write!(f, "{reason}"),
            ErrorKind::BadAnnotation { name, reason } => write!(f, "annotation `@{name}`: {reason}"),
        }
    }
}

/// "a" or "an" before `word`.
fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

/// One or more errors, in the order found. Displays as `file:line:col: message` lines.
#[derive(Clone, Debug, PartialEq)]
pub struct Errors(pub Vec<Error>);

impl Errors {
    /// The errors.
    pub fn iter(&self) -> std::slice::Iter<'_, Error> {
        self.0.iter()
    }

    /// The first error (an `Errors` value is never empty when returned by this crate).
    pub fn first(&self) -> Option<&Error> {
        self.0.first()
    }

    /// How many errors.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<Error> for Errors {
    fn from(e: Error) -> Self {
        Errors(vec![e])
    }
}

impl fmt::Display for Errors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Errors {}
