//! The order in which a TypeInformation lists a topic type's dependencies.
//!
//! XTypes 1.3 §7.6.3.2.2 fixes no order; we follow the Python `cyclonedds` 11 package
//! (`XTBuilder.gather_types` / `process_type` in `cyclonedds/idl/_xt_builder.py`) so that our
//! TypeInformation is byte-identical to the one it announces:
//!
//! 1. Discover the types reachable from the topic type with a LIFO stack: popping a type visits
//!    its direct dependencies (a union's enum discriminator, a struct's base, then the member
//!    types in order, inherited members first, looking through sequences, arrays and optional
//!    members, but not through typedefs), recording each the first time it is seen.
//! 2. The leaves (types that depend on no named type), in discovery order, come first.
//! 3. Then the other types in depth-first post-order from the topic type, children in
//!    discovery order, the topic type itself left out.
//!
//! Two deliberate differences: a typedef of a named type and a map's key/value types are
//! followed here (cyclonedds lists neither, although its objects refer to them), and a type
//! reachable along two paths is listed once (cyclonedds would list it twice in the complete
//! list).
//!
//! The algorithm is `halyard_xtypes::describe::dependency_order`, which the derive macros
//! use too; this module gives it the edges of IDL types.

use halyard_idl::ast::{Member, TypeSpec};

use crate::index::{resolved, Index, Named};
use crate::Error;

/// The dependencies of `top` (a `::`-scoped name) in cyclonedds' order, without `top`.
pub(crate) fn dependency_order(ix: &Index<'_>, top: &str) -> Result<Vec<String>, Error> {
    let mut failure = None;
    let order = halyard_xtypes::describe::dependency_order(&top.to_string(), |t| {
        direct_deps(ix, t).unwrap_or_else(|e| {
            failure.get_or_insert(e);
            Vec::new()
        })
    });
    match failure {
        Some(e) => Err(e),
        None => Ok(order),
    }
}

/// The named types `full` refers to directly, in cyclonedds' scan order, without repeats.
fn direct_deps(ix: &Index<'_>, full: &str) -> Result<Vec<String>, Error> {
    let mut out = Vec::new();
    let Some(named) = ix.types.get(full).copied() else {
        return Ok(out);
    };
    match named {
        Named::Union(u) => {
            if let TypeSpec::Named(n) = &u.discriminator {
                push(&mut out, resolved(n)?);
            }
            for c in &u.cases {
                member_deps(&c.member.type_spec, &mut out)?;
            }
        }
        Named::Struct(s) => {
            if let Some(b) = &s.base {
                push(&mut out, resolved(b)?);
            }
            for m in flattened(ix, s)? {
                member_deps(&m.type_spec, &mut out)?;
            }
        }
        Named::Alias(t, _) => member_deps(&t.type_spec, &mut out)?,
        Named::Enum(_) | Named::Bitmask(_) => {}
    }
    Ok(out)
}

fn push(out: &mut Vec<String>, name: &str) {
    if !out.iter().any(|o| o == name) {
        out.push(name.to_string());
    }
}

fn member_deps(ty: &TypeSpec, out: &mut Vec<String>) -> Result<(), Error> {
    match ty {
        TypeSpec::Named(n) => push(out, resolved(n)?),
        TypeSpec::Sequence { element, .. } => member_deps(element, out)?,
        TypeSpec::Map { key, value, .. } => {
            member_deps(key, out)?;
            member_deps(value, out)?;
        }
        TypeSpec::Basic(..) | TypeSpec::String { .. } | TypeSpec::Fixed { .. } => {}
    }
    Ok(())
}

/// The members of a struct, inherited ones first.
fn flattened<'a>(
    ix: &Index<'a>,
    s: &'a halyard_idl::ast::StructDef,
) -> Result<Vec<&'a Member>, Error> {
    let mut chain = vec![s];
    let mut cur = s;
    while let Some(b) = &cur.base {
        match ix.get(resolved(b)?, &b.location)? {
            Named::Struct(base) if chain.len() < 64 => {
                chain.push(base);
                cur = base;
            }
            _ => break,
        }
    }
    Ok(chain.iter().rev().flat_map(|s| s.members.iter()).collect())
}
