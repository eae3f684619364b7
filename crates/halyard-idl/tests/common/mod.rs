//! Helpers shared by the integration tests: parse corpus files and find definitions.

#![allow(dead_code)]

use std::path::PathBuf;

use halyard_idl::ast::*;
use halyard_idl::{parse_file, parse_str, Errors, ParseOptions, Spec};

/// The directory of the IDL corpus.
pub fn idl_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/idl")
}

/// Parses corpus file `name`, panicking with the errors if it does not parse.
pub fn parse(name: &str) -> Spec {
    parse_with(name, &ParseOptions::default())
}

/// Parses corpus file `name` with `opts`.
pub fn parse_with(name: &str, opts: &ParseOptions) -> Spec {
    parse_file(&idl_dir().join(name), opts).unwrap_or_else(|e| panic!("{name}:\n{e}"))
}

/// Parses `text` as `t.idl` and returns the errors as `file:line:col: message` lines.
pub fn errors(text: &str) -> String {
    match parse_str("t.idl", text, &ParseOptions::default()) {
        Ok(_) => panic!("expected errors for:\n{text}"),
        Err(e) => e.to_string(),
    }
}

/// Parses corpus file `name` expecting errors.
pub fn file_errors(name: &str, opts: &ParseOptions) -> Errors {
    match parse_file(&idl_dir().join(name), opts) {
        Ok(_) => panic!("expected errors in {name}"),
        Err(e) => e,
    }
}

/// The definition at `path` (`A::B::C`); reopened modules are searched in order and a
/// complete definition is preferred over a forward declaration.
pub fn def<'a>(spec: &'a Spec, path: &str) -> &'a Definition {
    spec_index(&spec.definitions, path)
}

fn spec_index<'a>(defs: &'a [Definition], path: &str) -> &'a Definition {
    let (head, rest) = match path.split_once("::") {
        Some((h, r)) => (h, Some(r)),
        None => (path, None),
    };
    match rest {
        None => defs
            .iter()
            .rev()
            .find(|d| name_of(d) == Some(head) && !matches!(d, Definition::Forward(_)))
            .or_else(|| defs.iter().find(|d| name_of(d) == Some(head)))
            .unwrap_or_else(|| panic!("no {path}")),
        Some(rest) => {
            for d in defs {
                if let Definition::Module(m) = d {
                    if m.name.name == head && contains(&m.definitions, rest) {
                        return spec_index(&m.definitions, rest);
                    }
                }
            }
            panic!("no {path}")
        }
    }
}

fn contains(defs: &[Definition], path: &str) -> bool {
    match path.split_once("::") {
        None => defs.iter().any(|d| name_of(d) == Some(path)),
        Some((head, rest)) => defs.iter().any(|d| match d {
            Definition::Module(m) => m.name.name == head && contains(&m.definitions, rest),
            _ => false,
        }),
    }
}

/// The name a definition declares (the first declarator of a typedef).
pub fn name_of(d: &Definition) -> Option<&str> {
    Some(match d {
        Definition::Module(m) => &m.name.name,
        Definition::Struct(s) => &s.name.name,
        Definition::Union(u) => &u.name.name,
        Definition::Enum(e) => &e.name.name,
        Definition::Bitmask(b) => &b.name.name,
        Definition::Bitset(b) => &b.name.name,
        Definition::Typedef(t) => &t.declarators.first()?.name.name,
        Definition::Const(c) => &c.name.name,
        Definition::Forward(f) => &f.name.name,
        Definition::Unsupported(u) => &u.name.name,
    })
}

/// The struct at `path`.
pub fn strukt<'a>(spec: &'a Spec, path: &str) -> &'a StructDef {
    match def(spec, path) {
        Definition::Struct(s) => s,
        other => panic!("{path} is not a struct: {other:?}"),
    }
}

/// The union at `path`.
pub fn union<'a>(spec: &'a Spec, path: &str) -> &'a UnionDef {
    match def(spec, path) {
        Definition::Union(u) => u,
        other => panic!("{path} is not a union: {other:?}"),
    }
}

/// The constant at `path`.
pub fn constant(spec: &Spec, path: &str) -> ConstValue {
    match def(spec, path) {
        Definition::Const(c) => c
            .value
            .value
            .clone()
            .unwrap_or_else(|| panic!("{path} has no value")),
        other => panic!("{path} is not a const: {other:?}"),
    }
}

/// The member `name` of `s`.
pub fn member<'a>(s: &'a StructDef, name: &str) -> &'a Member {
    s.members
        .iter()
        .find(|m| m.name.name == name)
        .unwrap_or_else(|| panic!("no member {name}"))
}

/// The value of an evaluated integer expression.
pub fn int(e: &ConstExpr) -> i128 {
    match &e.value {
        Some(ConstValue::Int(i)) => *i,
        other => panic!("not an integer: {other:?}"),
    }
}

/// The array dimensions of `m` as numbers.
pub fn dims(m: &Member) -> Vec<i128> {
    m.array.iter().map(int).collect()
}

/// Counts the struct, union, enum, bitmask, bitset and typedef names in `defs`.
pub fn count_types(defs: &[Definition]) -> usize {
    defs.iter()
        .map(|d| match d {
            Definition::Module(m) => count_types(&m.definitions),
            Definition::Struct(_)
            | Definition::Union(_)
            | Definition::Enum(_)
            | Definition::Bitmask(_)
            | Definition::Bitset(_) => 1,
            Definition::Typedef(t) => t.declarators.len(),
            _ => 0,
        })
        .sum()
}

/// Parses a string, panicking on errors.
pub fn parse_text(text: &str) -> Spec {
    parse_str("t.idl", text, &ParseOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}
