//! IDL text of a [`DynamicType`] (what `halyard typeof` prints), in the manner of
//! `cyclonedds typeof`: every named type a type uses is printed before it, each inside its
//! modules, with `@final`/`@appendable`/`@mutable`, `@key`, `@optional`, `@must_understand`,
//! `@id` (when ids are not sequential), `@bit_bound`, `@position` and `@value` annotations.

use std::fmt::Write;

use crate::dynamic::{DynamicType, Extensibility, StructDesc, TypeNode, UnionDesc};
use crate::PrimitiveKind;

/// The IDL declarations of `t` and of every named type it depends on, dependencies first.
pub fn to_idl(t: &DynamicType) -> String {
    let mut done: Vec<String> = Vec::new();
    let mut out = String::new();
    declare(t, &mut done, &mut out, 0);
    out
}

fn declare(t: &DynamicType, done: &mut Vec<String>, out: &mut String, depth: usize) {
    if depth > crate::registry::MAX_TYPE_DEPTH {
        return;
    }
    for dep in direct_deps(t) {
        declare(&dep, done, out, depth + 1);
    }
    let Some(name) = t.name() else { return };
    if done.iter().any(|d| d == name) {
        return;
    }
    done.push(name.to_owned());
    let parts: Vec<&str> = name.split("::").collect();
    let (local, modules) = parts.split_last().unwrap_or((&name, &[]));
    let mut body = String::new();
    match t.node() {
        TypeNode::Alias { target, .. } => {
            let (ty, dims) = spec(target);
            let _ = writeln!(body, "typedef {ty} {local}{dims};");
        }
        TypeNode::Enum(e) => {
            if e.bit_bound != 32 {
                let _ = writeln!(body, "@bit_bound({})", e.bit_bound);
            }
            let _ = writeln!(body, "enum {local} {{");
            let mut next = 0i64;
            let lits: Vec<String> = e
                .literals
                .iter()
                .enumerate()
                .map(|(i, l)| {
                    let mut s = String::new();
                    if i64::from(l.value) != next {
                        let _ = write!(s, "@value({}) ", l.value);
                    }
                    if l.default && i != 0 {
                        s.push_str("@default_literal ");
                    }
                    next = i64::from(l.value) + 1;
                    format!("    {s}{}", l.name)
                })
                .collect();
            let _ = writeln!(body, "{}\n}};", lits.join(",\n"));
        }
        TypeNode::Bitmask(b) => {
            if b.bit_bound != 32 {
                let _ = writeln!(body, "@bit_bound({})", b.bit_bound);
            }
            let _ = writeln!(body, "bitmask {local} {{");
            let flags: Vec<String> = b
                .flags
                .iter()
                .map(|(n, p)| format!("    @position({p}) {n}"))
                .collect();
            let _ = writeln!(body, "{}\n}};", flags.join(",\n"));
        }
        TypeNode::Struct(s) => struct_idl(s, local, &mut body),
        TypeNode::Union(u) => union_idl(u, local, &mut body),
        _ => {}
    }
    let indent = "    ".repeat(modules.len());
    for (i, m) in modules.iter().enumerate() {
        let _ = writeln!(out, "{}module {m} {{", "    ".repeat(i));
    }
    for line in body.lines() {
        let _ = writeln!(out, "{indent}{line}");
    }
    for i in (0..modules.len()).rev() {
        let _ = writeln!(out, "{}}};", "    ".repeat(i));
    }
}

fn extensibility(e: Extensibility) -> &'static str {
    match e {
        Extensibility::Final => "@final",
        Extensibility::Appendable => "@appendable",
        Extensibility::Mutable => "@mutable",
    }
}

fn struct_idl(s: &StructDesc, local: &str, body: &mut String) {
    let _ = writeln!(body, "{}", extensibility(s.extensibility));
    if s.nested {
        let _ = writeln!(body, "@nested");
    }
    if !s.names_known {
        let _ = writeln!(
            body,
            "// built from a minimal TypeObject: member names are unknown"
        );
    }
    let base = s
        .base
        .as_ref()
        .and_then(|b| b.name())
        .map(|n| format!(" : {n}"))
        .unwrap_or_default();
    let _ = writeln!(body, "struct {local}{base} {{");
    let mut expected_id = s.members.get(s.own_start).map(|_| {
        s.own_start
            .checked_sub(1)
            .and_then(|i| s.members.get(i))
            .map_or(0, |m| m.id.wrapping_add(1))
    });
    for m in s.members.iter().skip(s.own_start) {
        let mut ann = String::new();
        if m.key {
            ann.push_str("@key ");
        }
        if m.optional {
            ann.push_str("@optional ");
        }
        if m.must_understand && !m.key {
            ann.push_str("@must_understand ");
        }
        if m.external {
            ann.push_str("@external ");
        }
        if expected_id != Some(m.id) {
            let _ = write!(ann, "@id({}) ", m.id);
        }
        expected_id = m.id.checked_add(1);
        let (ty, dims) = spec(&m.ty);
        let _ = writeln!(body, "    {ann}{ty} {}{dims};", m.name);
    }
    let _ = writeln!(body, "}};");
}

fn union_idl(u: &UnionDesc, local: &str, body: &mut String) {
    let _ = writeln!(body, "{}", extensibility(u.extensibility));
    let (disc, _) = spec(&u.discriminator);
    let key = if u.discriminator_key { "@key " } else { "" };
    let _ = writeln!(body, "union {local} switch ({key}{disc}) {{");
    let enum_names = match u.discriminator.resolved().node() {
        TypeNode::Enum(e) => Some(e),
        _ => None,
    };
    for c in &u.cases {
        for l in &c.labels {
            match enum_names.and_then(|e| e.by_value(*l).map(|lit| (e, lit))) {
                Some((e, lit)) => {
                    let _ = writeln!(body, "    case {}::{}:", scope_of(&e.name), lit.name);
                }
                None => {
                    let _ = writeln!(body, "    case {l}:");
                }
            }
        }
        if c.default {
            let _ = writeln!(body, "    default:");
        }
        let (ty, dims) = spec(&c.ty);
        let _ = writeln!(body, "        {ty} {}{dims};", c.name);
    }
    let _ = writeln!(body, "}};");
}

/// The scope of an enum's literals (its enclosing module), for `case Scope::LITERAL:`.
fn scope_of(name: &str) -> &str {
    name.rsplit_once("::").map_or("", |(s, _)| s)
}

/// The type specifier and the array dimensions to put after the declarator.
fn spec(t: &DynamicType) -> (String, String) {
    if let Some(n) = t.name() {
        return (n.to_owned(), String::new());
    }
    match t.node() {
        TypeNode::Primitive(p) => (primitive(*p).to_owned(), String::new()),
        TypeNode::String8 { bound: 0 } => ("string".into(), String::new()),
        TypeNode::String8 { bound } => (format!("string<{bound}>"), String::new()),
        TypeNode::String16 { bound: 0 } => ("wstring".into(), String::new()),
        TypeNode::String16 { bound } => (format!("wstring<{bound}>"), String::new()),
        TypeNode::Sequence { element, bound } => {
            let (e, dims) = spec(element);
            let e = if dims.is_empty() {
                e
            } else {
                format!("/* array */ {e}")
            };
            match bound {
                0 => (format!("sequence<{e}>"), String::new()),
                b => (format!("sequence<{e}, {b}>"), String::new()),
            }
        }
        TypeNode::Map { key, value, bound } => {
            let (k, _) = spec(key);
            let (v, _) = spec(value);
            match bound {
                0 => (format!("map<{k}, {v}>"), String::new()),
                b => (format!("map<{k}, {v}, {b}>"), String::new()),
            }
        }
        TypeNode::Array { element, dims } => {
            let (e, inner) = spec(element);
            let d: String = dims.iter().map(|d| format!("[{d}]")).collect();
            (e, format!("{d}{inner}"))
        }
        _ => ("?".into(), String::new()),
    }
}

fn primitive(p: PrimitiveKind) -> &'static str {
    use PrimitiveKind::*;
    match p {
        Boolean => "boolean",
        Byte => "octet",
        Int8 => "int8",
        UInt8 => "uint8",
        Int16 => "short",
        UInt16 => "unsigned short",
        Int32 => "long",
        UInt32 => "unsigned long",
        Int64 => "long long",
        UInt64 => "unsigned long long",
        Float32 => "float",
        Float64 => "double",
        Float128 => "long double",
        Char8 => "char",
        Char16 => "wchar",
    }
}

/// The named types `t` uses directly (through anonymous collections too).
fn direct_deps(t: &DynamicType) -> Vec<DynamicType> {
    let mut out = Vec::new();
    let push_anon = |ty: &DynamicType, out: &mut Vec<DynamicType>| collect(ty, out);
    match t.node() {
        TypeNode::Alias { target, .. } => push_anon(target, &mut out),
        TypeNode::Struct(s) => {
            if let Some(b) = &s.base {
                out.push(b.clone());
            }
            for m in s.members.iter().skip(s.own_start) {
                push_anon(&m.ty, &mut out);
            }
        }
        TypeNode::Union(u) => {
            push_anon(&u.discriminator, &mut out);
            for c in &u.cases {
                push_anon(&c.ty, &mut out);
            }
        }
        _ => collect(t, &mut out),
    }
    out
}

/// The named types reachable from `t` without passing through another named type.
fn collect(t: &DynamicType, out: &mut Vec<DynamicType>) {
    if t.name().is_some() {
        out.push(t.clone());
        return;
    }
    match t.node() {
        TypeNode::Sequence { element, .. } | TypeNode::Array { element, .. } => {
            collect(element, out)
        }
        TypeNode::Map { key, value, .. } => {
            collect(key, out);
            collect(value, out);
        }
        _ => {}
    }
}
