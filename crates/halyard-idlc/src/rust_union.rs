//! Rust for IDL unions: a Rust enum with one variant per case, and hand-written `CdrEncode`,
//! `CdrDecode`, `Reflect`, `Default` and `XTypesType` impls (the last from the union's
//! `static` description).
//!
//! A case with one label holds only its value (the discriminator is that label); a case with
//! several labels, and the `default` case, hold `(discriminator, value)`; a union without a
//! `default` case also has `Unselected(discriminator)` for a discriminator that selects no
//! member. `discriminator()` returns the value that goes on the wire.
//!
//! Layout (XTypes 1.3 §7.4.3.5 / §7.4.1.2): the discriminator then the selected member; an
//! `@appendable` union gets a DHEADER in XCDR2 (none in XCDR1); `@mutable` unions are
//! refused (the Python `cyclonedds` peer has no mutable unions either). Encoding checks that
//! the discriminator held by a multi-label, default or unselected variant is one that selects
//! it, and fails with `CdrError::Unsupported` if not.

use std::fmt::Write as _;

use halyard_idl::ast::{BasicType, CaseLabel, ConstValue, Extensibility, TypeSpec, UnionDef};
use halyard_idl::Location;

use crate::rust::{description_static, ident, path, Gen, ALLOWS};
use crate::typeobj::plain;
use crate::Error;

struct Case {
    variant: String,
    ty: String,
    labels: Vec<String>,
    default: bool,
}

impl Case {
    /// The first label ("" for a `default`-only case, which never asks for it: callers only
    /// use it for variants that have a label).
    fn first_label(&self) -> &str {
        self.labels.first().map_or("", String::as_str)
    }

    /// Whether the variant holds the discriminator beside the value.
    fn holds_discriminator(&self) -> bool {
        self.default || self.labels.len() != 1
    }
}

impl Gen<'_, '_> {
    /// The Rust text (pattern and expression) of a case label.
    fn label(
        &self,
        scope: &[String],
        disc: &TypeSpec,
        v: &ConstValue,
        at: &Location,
    ) -> Result<String, Error> {
        let d = self.ix.unalias(disc)?;
        Ok(match (d, v) {
            (TypeSpec::Basic(BasicType::Boolean, _), ConstValue::Bool(b)) => b.to_string(),
            (TypeSpec::Basic(BasicType::Char, _), ConstValue::Char(c)) => format!("{c:?}"),
            (TypeSpec::Basic(b, _), ConstValue::Int(i)) => match b.integer_range() {
                Some((lo, hi)) if (lo..=hi).contains(i) => i.to_string(),
                _ => {
                    return Err(Error::unsupported(
                        at,
                        format!("case label {i} does not fit the discriminator"),
                    ))
                }
            },
            (
                TypeSpec::Named(_),
                ConstValue::Enum {
                    type_name, name, ..
                },
            ) => {
                format!("{}::{}", path(scope, type_name), ident(name))
            }
            _ => {
                return Err(Error::unsupported(
                    at,
                    format!("case label {v} does not suit the discriminator"),
                ))
            }
        })
    }

    pub(crate) fn union(
        &self,
        scope: &[String],
        full: &str,
        u: &UnionDef,
        out: &mut String,
    ) -> Result<(), Error> {
        let ext = match u.typed.extensibility.unwrap_or(Extensibility::Final) {
            Extensibility::Final => "Final",
            Extensibility::Appendable => "Appendable",
            Extensibility::Mutable => {
                return Err(Error::unsupported(
                    &u.location,
                    "@mutable unions are not supported",
                ))
            }
        };
        let d = self.rust_type(scope, &u.discriminator, &[])?;
        let mut cases = Vec::new();
        for c in &u.cases {
            let mut labels = Vec::new();
            let mut default = false;
            for l in &c.labels {
                match l {
                    CaseLabel::Value(e) => {
                        let v = e.value.as_ref().ok_or_else(|| {
                            Error::unsupported(&e.location, "case label without a value")
                        })?;
                        labels.push(self.label(scope, &u.discriminator, v, &e.location)?);
                    }
                    CaseLabel::Default(_) => default = true,
                }
            }
            let variant = ident(&c.member.name.name);
            if variant == "Unselected" {
                return Err(Error::unsupported(
                    &c.member.name.location,
                    "a union member named `Unselected` is not supported",
                ));
            }
            cases.push(Case {
                variant,
                ty: self.rust_type(scope, &c.member.type_spec, &c.member.array)?,
                labels,
                default,
            });
        }
        let model = Model {
            name: ident(&u.name.name),
            full: plain(full),
            d,
            rt: self.rt,
            ext,
            cases,
        };
        emit_enum(&model, out);
        emit_inherent(&model, out);
        emit_encode(&model, out);
        emit_decode(&model, out);
        emit_reflect_default(&model, out);
        emit_xtypes(&model, &u.name.name, out);
        self.description(&model.full, &u.name.name, out)
    }
}

/// What the emitters need to know of a union.
struct Model<'r> {
    name: String,
    full: String,
    d: String,
    rt: &'r str,
    ext: &'static str,
    cases: Vec<Case>,
}

/// The Rust enum of the union.
fn emit_enum(m: &Model<'_>, out: &mut String) {
    let (name, d) = (&m.name, &m.d);
    let has_default = m.cases.iter().any(|c| c.default);
    let cases = &m.cases;

    let _ = writeln!(
        out,
        "/// IDL union `{}`.\n{ALLOWS}\n#[derive(Clone, Debug, PartialEq)]\npub enum {name} {{",
        m.full
    );
    for c in cases {
        let what = if c.default {
            "default".to_string()
        } else {
            format!("case {}", c.labels.join(", "))
        };
        if c.holds_discriminator() {
            let _ = writeln!(
                out,
                "    /// `{what}`: (discriminator, value).\n    {}({d}, {}),",
                c.variant, c.ty
            );
        } else {
            let _ = writeln!(out, "    /// `{what}`.\n    {}({}),", c.variant, c.ty);
        }
    }
    if !has_default {
        let _ = writeln!(
            out,
            "    /// A discriminator that selects no member.\n    Unselected({d}),"
        );
    }
    out.push_str("}\n");
}

/// `discriminator()` and `is_consistent()`.
fn emit_inherent(m: &Model<'_>, out: &mut String) {
    let (name, d) = (&m.name, &m.d);
    let has_default = m.cases.iter().any(|c| c.default);
    let all_labels: Vec<&String> = m.cases.iter().flat_map(|c| &c.labels).collect();
    let cases = &m.cases;
    // discriminator() and the check of held discriminators.
    let mut disc_arms = String::new();
    let mut check_arms = String::new();
    for c in cases {
        if c.holds_discriminator() {
            let _ = writeln!(disc_arms, "            Self::{}(d, _) => *d,", c.variant);
            let ok = if c.default {
                if all_labels.is_empty() {
                    "true".to_string()
                } else {
                    format!("!matches!(*d, {})", join_pat(&all_labels))
                }
            } else {
                format!("matches!(*d, {})", c.labels.join(" | "))
            };
            let _ = writeln!(check_arms, "            Self::{}(d, _) => {ok},", c.variant);
        } else {
            let _ = writeln!(
                disc_arms,
                "            Self::{}(_) => {},",
                c.variant,
                c.first_label()
            );
            let _ = writeln!(check_arms, "            Self::{}(_) => true,", c.variant);
        }
    }
    if !has_default {
        let _ = writeln!(disc_arms, "            Self::Unselected(d) => *d,");
        let ok = if all_labels.is_empty() {
            "true".to_string()
        } else {
            format!("!matches!(*d, {})", join_pat(&all_labels))
        };
        let _ = writeln!(check_arms, "            Self::Unselected(d) => {ok},");
    }
    let _ = writeln!(out, "{ALLOWS}\nimpl {name} {{\n    /// The discriminator value (what goes on the wire).\n    pub fn discriminator(&self) -> {d} {{\n        match self {{\n{disc_arms}        }}\n    }}\n\n    /// Whether the discriminator held selects the variant that holds it.\n    pub fn is_consistent(&self) -> bool {{\n        match self {{\n{check_arms}        }}\n    }}\n}}");
}

/// `CdrEncode`: DHEADER (appendable, XCDR2), discriminator, member.
fn emit_encode(m: &Model<'_>, out: &mut String) {
    let (name, rt) = (&m.name, m.rt);
    let has_default = m.cases.iter().any(|c| c.default);
    let cases = &m.cases;
    let ext = m.ext;
    // CdrEncode
    let mut enc_arms = String::new();
    for c in cases {
        let pat = if c.holds_discriminator() {
            format!("Self::{}(_, v)", c.variant)
        } else {
            format!("Self::{}(v)", c.variant)
        };
        let _ = writeln!(
            enc_arms,
            "            {pat} => {rt}::CdrEncode::encode(v, __w)?,"
        );
    }
    if !has_default {
        enc_arms.push_str("            Self::Unselected(_) => {}\n");
    }
    let _ = writeln!(out, "{ALLOWS}\nimpl {rt}::CdrEncode for {name} {{\n    fn encode(&self, __w: &mut {rt}::CdrWriter<'_>) -> ::core::result::Result<(), {rt}::CdrError> {{\n        if !self.is_consistent() {{\n            return ::core::result::Result::Err({rt}::CdrError::Unsupported(\"union discriminator does not select the member held\"));\n        }}\n        let __scope = __w.begin_struct({rt}::Extensibility::{ext});\n        {rt}::CdrEncode::encode(&self.discriminator(), __w)?;\n        match self {{\n{enc_arms}        }}\n        __w.end_struct(__scope)\n    }}\n}}");
}

/// `CdrDecode`: the discriminator selects the member to read.
fn emit_decode(m: &Model<'_>, out: &mut String) {
    let (name, d, rt) = (&m.name, &m.d, m.rt);
    let cases = &m.cases;
    let ext = m.ext;
    // CdrDecode
    let mut dec_arms = String::new();
    for c in cases.iter().filter(|c| !c.default) {
        let body = if c.holds_discriminator() {
            format!("Self::{}(__d, {rt}::CdrDecode::decode(__r)?)", c.variant)
        } else {
            format!("Self::{}({rt}::CdrDecode::decode(__r)?)", c.variant)
        };
        let _ = writeln!(dec_arms, "            {} => {body},", c.labels.join(" | "));
    }
    match cases.iter().find(|c| c.default) {
        Some(c) => {
            let _ = writeln!(
                dec_arms,
                "            _ => Self::{}(__d, {rt}::CdrDecode::decode(__r)?),",
                c.variant
            );
        }
        None => dec_arms.push_str("            _ => Self::Unselected(__d),\n"),
    }
    let _ = writeln!(out, "{ALLOWS}\n#[allow(unreachable_patterns)]\nimpl {rt}::CdrDecode for {name} {{\n    fn decode(__r: &mut {rt}::CdrReader<'_>) -> ::core::result::Result<Self, {rt}::CdrError> {{\n        let __scope = __r.begin_struct({rt}::Extensibility::{ext})?;\n        let __d: {d} = {rt}::CdrDecode::decode(__r)?;\n        let __v = match __d {{\n{dec_arms}        }};\n        __r.end_struct(__scope)?;\n        ::core::result::Result::Ok(__v)\n    }}\n}}");
}

/// `Reflect` (nothing comparable) and `Default`.
fn emit_reflect_default(m: &Model<'_>, out: &mut String) {
    let (name, rt) = (&m.name, m.rt);
    let cases = &m.cases;
    // Reflect: a union has no comparable members.
    let _ = writeln!(out, "{ALLOWS}\nimpl {rt}::Reflect for {name} {{\n    fn field(&self, _path: &[{rt}::PathSegment]) -> ::core::option::Option<{rt}::FieldValue<'_>> {{\n        ::core::option::Option::None\n    }}\n    fn field_kind(_path: &[{rt}::PathSegment]) -> ::core::option::Option<{rt}::FieldKind> {{\n        ::core::option::Option::None\n    }}\n    fn has_member(path: &[{rt}::PathSegment]) -> bool {{\n        path.is_empty()\n    }}\n}}");

    // Default: the first case with a label, else the default case.
    let def = match cases.iter().find(|c| !c.labels.is_empty()) {
        Some(c) if c.holds_discriminator() => format!("Self::{}({}, ::core::default::Default::default())", c.variant, c.first_label()),
        Some(c) => format!("Self::{}(::core::default::Default::default())", c.variant),
        None => match cases.first() {
            Some(c) => format!("Self::{}(::core::default::Default::default(), ::core::default::Default::default())", c.variant),
            None => "Self::Unselected(::core::default::Default::default())".to_string(),
        },
    };
    let _ = writeln!(out, "{ALLOWS}\nimpl ::core::default::Default for {name} {{\n    fn default() -> Self {{\n        {def}\n    }}\n}}");
}

fn join_pat(labels: &[&String]) -> String {
    labels
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(" | ")
}

/// `XTypesType`: the union's description, from its `static` (a member of a derived type
/// composes it).
fn emit_xtypes(m: &Model<'_>, item: &str, out: &mut String) {
    let (name, rt, full) = (&m.name, m.rt, &m.full);
    let desc = description_static(item);
    let _ = writeln!(out, "{ALLOWS}\nimpl {rt}::XTypesType for {name} {{\n    fn xtypes_ref() -> {rt}::TypeRef {{\n        static __NODE: {rt}::__private::OnceLock<{rt}::__private::Arc<{rt}::NamedType>> = {rt}::__private::OnceLock::new();\n        {rt}::__private::cached(&__NODE, {full:?}, || {rt}::NamedType::from_description(&{desc}))\n    }}\n}}");
}
