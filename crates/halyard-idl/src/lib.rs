//! OMG IDL 4.2 for Halyard: a preprocessor, a parser into a typed syntax tree, and a resolver
//! that checks names, constants and types, the first stage of the IDL compiler.
//!
//! The parser is written with [`winnow`] because it composes plain Rust functions over a
//! stateful `&str` (no grammar file or macro DSL), gives precise committed-error positions
//! with `cut_err`, and adds nothing new to the build (the workspace already locks winnow 1.0).
//!
//! ```
//! let spec = halyard_idl::parse_str(
//!     "hello.idl",
//!     "module HelloWorldData { @topic struct Msg { @key long userID; string message; }; };",
//!     &halyard_idl::ParseOptions::default(),
//! )
//! .unwrap();
//! assert_eq!(spec.definitions.len(), 1);
//! ```
//!
//! Pipeline: `preprocess` (includes, macros, conditionals; keeps a source map) → `parser`
//! (grammar → [`ast`]) → `resolve` (scoped names, constant values, typed annotations,
//! semantic checks). Every node and every [`Error`] carries the file, line and column of the
//! original text. No input makes it panic: nesting is bounded by
//! [`ParseOptions::max_nesting_depth`] and includes by [`ParseOptions::max_include_depth`].

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod ast;
mod error;
mod parser;
mod ppexpr;
mod preprocess;
mod resolve;
mod source;

use std::path::{Path, PathBuf};

pub use ast::Spec;
pub use error::{ConstEvalError, Error, ErrorKind, Errors};
pub use source::Location;

use preprocess::Root;

/// The largest nesting depth a parse uses, whatever [`ParseOptions::max_nesting_depth`] says.
pub const NESTING_DEPTH_MAX: usize = 128;

/// The largest include depth a parse uses, whatever [`ParseOptions::max_include_depth`] says.
pub const INCLUDE_DEPTH_MAX: usize = 200;

/// Options of a parse.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ParseOptions {
    /// Directories searched for `#include` files after the including file's own directory.
    pub include_paths: Vec<PathBuf>,
    /// Macros defined before the first line, as `(name, value)` (`-DNAME=value`).
    pub defines: Vec<(String, String)>,
    /// How deep `#include` may nest (stops include cycles). Default 32; at most
    /// [`INCLUDE_DEPTH_MAX`] is used.
    pub max_include_depth: usize,
    /// How deep modules, types and expressions may nest. Default 64; at most
    /// [`NESTING_DEPTH_MAX`] is used, so that the parser's recursion always fits a thread's
    /// stack.
    pub max_nesting_depth: usize,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            include_paths: Vec::new(),
            defines: Vec::new(),
            max_include_depth: 32,
            max_nesting_depth: 64,
        }
    }
}

/// Parses and resolves the IDL file at `path` and everything it includes.
pub fn parse_file(path: &Path, opts: &ParseOptions) -> Result<Spec, Errors> {
    run(Root::File(path), opts)
}

/// Parses and resolves IDL `text`, reported as file `name`. Quoted includes are searched on
/// the include path only (the text has no directory).
pub fn parse_str(name: &str, text: &str, opts: &ParseOptions) -> Result<Spec, Errors> {
    run(Root::Text { name, text }, opts)
}

fn run(root: Root<'_>, opts: &ParseOptions) -> Result<Spec, Errors> {
    let pre = preprocess::preprocess(root, opts)?;
    let (definitions, extents) = parser::parse(
        &pre.text,
        &pre.map,
        opts.max_nesting_depth.clamp(1, NESTING_DEPTH_MAX),
    )?;
    let mut spec = Spec {
        definitions,
        pragmas: Vec::new(),
    };
    resolve::resolve(&mut spec, &pre.pragmas, &extents)?;
    Ok(spec)
}
