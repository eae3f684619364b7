//! The `build.rs` helper: compiles IDL files to Rust in `$OUT_DIR` and tells Cargo which
//! files to watch.

use std::path::{Path, PathBuf};

use crate::rust::Options;
use crate::Error;

/// Compiles IDL files from a `build.rs` into `$OUT_DIR/<stem>.rs`.
///
/// ```no_run
/// // build.rs
/// halyard_idlc::Builder::new()
///     .file("idl/HelloWorld.idl")
///     .include("idl")
///     .compile()
///     .unwrap_or_else(|e| panic!("{e}"));
/// ```
/// and in the crate (which depends on `halyard`, or on `halyard-cdr` with
/// [`Builder::runtime`]`("::halyard_cdr")`):
/// ```ignore
/// include!(concat!(env!("OUT_DIR"), "/HelloWorld.rs"));
/// ```
/// Cargo is told `rerun-if-changed` for every IDL file given and its directory, every file
/// that contributed a definition (includes), and every include directory (Cargo re-runs the
/// build script when anything under a watched directory changes).
#[derive(Clone, Debug, Default)]
pub struct Builder {
    files: Vec<PathBuf>,
    includes: Vec<PathBuf>,
    defines: Vec<(String, String)>,
    out_dir: Option<PathBuf>,
    runtime: Option<String>,
}

impl Builder {
    /// A builder with no files.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an IDL file to compile.
    pub fn file(mut self, path: impl AsRef<Path>) -> Self {
        self.files.push(path.as_ref().to_path_buf());
        self
    }

    /// Adds a directory to the `#include` search path.
    pub fn include(mut self, dir: impl AsRef<Path>) -> Self {
        self.includes.push(dir.as_ref().to_path_buf());
        self
    }

    /// Defines a preprocessor macro.
    pub fn define(mut self, name: &str, value: &str) -> Self {
        self.defines.push((name.to_string(), value.to_string()));
        self
    }

    /// Writes into `dir` instead of `$OUT_DIR`.
    pub fn out_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// The path of the CDR runtime in the generated code (default `::halyard::cdr`).
    pub fn runtime(mut self, path: &str) -> Self {
        self.runtime = Some(path.to_string());
        self
    }

    /// Compiles every file; returns the paths written.
    pub fn compile(self) -> Result<Vec<PathBuf>, Error> {
        if self.files.is_empty() {
            return Err(Error::Config("Builder::compile: no IDL file given"));
        }
        let out_dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => std::env::var_os("OUT_DIR")
                .map(PathBuf::from)
                .ok_or(Error::Config("OUT_DIR is not set (not run from build.rs?)"))?,
        };
        let mut opts = halyard_idl::ParseOptions::default();
        opts.include_paths = self.includes.clone();
        opts.defines = self.defines.clone();
        let mut ropts = Options::default();
        if let Some(rt) = &self.runtime {
            ropts.runtime = rt.clone();
        }
        for dir in &self.includes {
            println!("cargo:rerun-if-changed={}", dir.display());
        }
        let mut written = Vec::new();
        for file in &self.files {
            println!("cargo:rerun-if-changed={}", file.display());
            // Includes found beside the file (even ones that define nothing) are watched
            // through its directory.
            if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
                println!("cargo:rerun-if-changed={}", dir.display());
            }
            let (code, read) = compile_rust(file, &opts, &ropts)?;
            for f in read {
                println!("cargo:rerun-if-changed={f}");
            }
            let stem = file
                .file_stem()
                .ok_or(Error::Config("an IDL path has no file name"))?;
            let out = out_dir.join(stem).with_extension("rs");
            std::fs::write(&out, code).map_err(|source| Error::Io {
                path: out.clone(),
                source,
            })?;
            written.push(out);
        }
        Ok(written)
    }
}

/// Parses `file` and generates its Rust source (formatted by [`crate::rust::rustfmt`] when
/// rustfmt can be run); also returns the files that contributed definitions.
pub fn compile_rust(
    file: &Path,
    opts: &halyard_idl::ParseOptions,
    ropts: &Options,
) -> Result<(String, Vec<String>), Error> {
    let spec = halyard_idl::parse_file(file, opts)?;
    let types = crate::type_objects(&spec)?;
    let code = crate::rust::generate_with(&spec, &types, ropts)?;
    let code = crate::rust::rustfmt(&code).unwrap_or(code);
    let mut read: Vec<String> = Vec::new();
    collect_files(&spec.definitions, &mut read);
    read.sort();
    read.dedup();
    Ok((code, read))
}

fn collect_files(defs: &[halyard_idl::ast::Definition], out: &mut Vec<String>) {
    use halyard_idl::ast::Definition as D;
    for d in defs {
        let loc = match d {
            D::Module(m) => {
                collect_files(&m.definitions, out);
                &m.location
            }
            D::Struct(s) => &s.location,
            D::Union(u) => &u.location,
            D::Enum(e) => &e.location,
            D::Bitmask(b) => &b.location,
            D::Bitset(b) => &b.location,
            D::Typedef(t) => &t.location,
            D::Const(c) => &c.location,
            D::Forward(f) => &f.location,
            D::Unsupported(u) => &u.location,
        };
        out.push(loc.file.to_string());
    }
}
