//! The back ends of Halyard's IDL compiler: from a resolved [`halyard_idl::Spec`]
//! to XTypes TypeObjects ([`type_objects`]), Rust source ([`rust::generate`]), Python modules
//! ([`python::generate`]), plus a `build.rs` helper ([`Builder`]). The IDL → Rust mapping,
//! the constructs refused (with a `file:line:col` error) and where the output differs from
//! Cyclone DDS's, and why, are in the crate's `README.md`; the Python runtime contract in
//! `PYTHON_CONTRACT.md`.
//!
//! ```no_run
//! // build.rs, in `fn main()`:
//! halyard_idlc::Builder::new()
//!     .file("idl/HelloWorld.idl")
//!     .include("idl")
//!     .compile()
//!     .unwrap_or_else(|e| panic!("{e}"));
//! ```
//! and in the crate:
//! ```ignore
//! include!(concat!(env!("OUT_DIR"), "/HelloWorld.rs"));
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod builder;
mod deporder;
mod ids;
mod index;
pub mod python;
pub mod rust;
mod rust_union;
mod typeobj;

use std::fmt;

pub use builder::{compile_rust, Builder};
pub use typeobj::{type_objects, TopicDescription, TypeEntry, TypeSet};

use halyard_idl::Location;

/// Why compiling failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The IDL does not parse or resolve (each error carries file, line and column).
    Parse(halyard_idl::Errors),
    /// A construct this compiler does not support, where it is written.
    Unsupported {
        /// Where it is.
        location: Location,
        /// What is not supported, and why.
        what: String,
    },
    /// Writing an output file failed.
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A `build.rs` helper misuse (no file given, `OUT_DIR` unset ...).
    Config(&'static str),
}

impl Error {
    pub(crate) fn unsupported(location: &Location, what: impl Into<String>) -> Self {
        Error::Unsupported {
            location: location.clone(),
            what: what.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Parse(errors) => {
                for (i, e) in errors.iter().enumerate() {
                    if i > 0 {
                        writeln!(f)?;
                    }
                    write!(f, "{}: error: {}", e.location, e.kind)?;
                }
                Ok(())
            }
            Error::Unsupported { location, what } => write!(f, "{location}: error: {what}"),
            Error::Io { path, source } => write!(f, "{}: error: {source}", path.display()),
            Error::Config(what) => write!(f, "error: {what}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<halyard_idl::Errors> for Error {
    fn from(e: halyard_idl::Errors) -> Self {
        Error::Parse(e)
    }
}
