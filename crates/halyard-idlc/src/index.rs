//! A flat index of the named types of a resolved [`Spec`], keyed by fully scoped name
//! (`::A::B`, as the resolver writes [`halyard_idl::ast::ScopedName::resolved`]), in
//! declaration order. Both back ends and the TypeObject builder look types up here.

use std::collections::BTreeMap;

use halyard_idl::ast::{
    BitmaskDef, ConstDef, ConstExpr, ConstValue, Declarator, Definition, EnumDef, StructDef,
    TypeSpec, Typedef, UnionDef,
};
use halyard_idl::{Location, Spec};

use crate::Error;

/// A named type.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Named<'a> {
    Struct(&'a StructDef),
    Union(&'a UnionDef),
    Enum(&'a EnumDef),
    Bitmask(&'a BitmaskDef),
    Alias(&'a Typedef, &'a Declarator),
}

impl Named<'_> {
    pub(crate) fn location(&self) -> &Location {
        match self {
            Named::Struct(d) => &d.location,
            Named::Union(d) => &d.location,
            Named::Enum(d) => &d.location,
            Named::Bitmask(d) => &d.location,
            Named::Alias(_, d) => &d.name.location,
        }
    }
}

/// One entry of a module's contents, in source order.
#[derive(Clone, Debug)]
pub(crate) enum Item<'a> {
    Type(String),
    Const(&'a ConstDef),
}

/// The index: every named type by scoped name, and every module's items in order.
#[derive(Debug, Default)]
pub(crate) struct Index<'a> {
    pub types: BTreeMap<String, Named<'a>>,
    /// Scoped names in declaration order.
    pub order: Vec<String>,
    /// Module path (`["A", "B"]`) → its items, in source order; the root is `[]`.
    pub modules: BTreeMap<Vec<String>, Vec<Item<'a>>>,
}

impl<'a> Index<'a> {
    pub(crate) fn new(spec: &'a Spec) -> Self {
        let mut ix = Index::default();
        ix.walk(&[], &spec.definitions);
        ix
    }

    fn walk(&mut self, scope: &[String], defs: &'a [Definition]) {
        self.modules.entry(scope.to_vec()).or_default();
        for d in defs {
            match d {
                Definition::Module(m) => {
                    let mut inner = scope.to_vec();
                    inner.push(m.name.name.clone());
                    self.walk(&inner, &m.definitions);
                }
                Definition::Struct(s) => self.add(scope, &s.name.name, Named::Struct(s)),
                Definition::Union(u) => self.add(scope, &u.name.name, Named::Union(u)),
                Definition::Enum(e) => self.add(scope, &e.name.name, Named::Enum(e)),
                Definition::Bitmask(b) => self.add(scope, &b.name.name, Named::Bitmask(b)),
                Definition::Typedef(t) => {
                    for decl in &t.declarators {
                        self.add(scope, &decl.name.name, Named::Alias(t, decl));
                    }
                }
                Definition::Const(c) => self.item(scope, Item::Const(c)),
                Definition::Bitset(_) | Definition::Forward(_) | Definition::Unsupported(_) => {}
            }
        }
    }

    fn item(&mut self, scope: &[String], item: Item<'a>) {
        self.modules.entry(scope.to_vec()).or_default().push(item);
    }

    fn add(&mut self, scope: &[String], name: &str, named: Named<'a>) {
        let full = scoped(scope, name);
        self.order.push(full.clone());
        self.types.insert(full.clone(), named);
        self.item(scope, Item::Type(full));
    }

    /// Looks a resolved name up.
    pub(crate) fn get(&self, full: &str, at: &Location) -> Result<Named<'a>, Error> {
        self.types
            .get(full)
            .copied()
            .ok_or_else(|| Error::unsupported(at, format!("`{full}` is not a data type")))
    }

    /// Follows aliases (without array dimensions) to the type they name.
    pub(crate) fn unalias<'s>(&self, mut ty: &'s TypeSpec) -> Result<&'s TypeSpec, Error>
    where
        'a: 's,
    {
        for _ in 0..64 {
            let TypeSpec::Named(n) = ty else {
                return Ok(ty);
            };
            match self.get(resolved(n)?, &n.location)? {
                Named::Alias(t, d) if d.array.is_empty() => ty = &t.type_spec,
                _ => return Ok(ty),
            }
        }
        Err(Error::unsupported(ty.location(), "aliases nest too deep"))
    }
}

/// `::A::B` from a scope and a name.
pub(crate) fn scoped(scope: &[String], name: &str) -> String {
    let mut s = String::new();
    for p in scope {
        s.push_str("::");
        s.push_str(p);
    }
    s.push_str("::");
    s.push_str(name);
    s
}

/// The resolver's fully scoped name of a reference.
pub(crate) fn resolved(n: &halyard_idl::ast::ScopedName) -> Result<&str, Error> {
    n.resolved
        .as_deref()
        .ok_or_else(|| Error::unsupported(&n.location, format!("unresolved name `{n}`")))
}

/// The value of an evaluated integer constant expression as a u32 (bounds, dimensions).
pub(crate) fn const_u32(e: &ConstExpr, what: &str) -> Result<u32, Error> {
    match &e.value {
        Some(ConstValue::Int(v)) => u32::try_from(*v)
            .ok()
            .filter(|v| *v > 0)
            .ok_or_else(|| Error::unsupported(&e.location, format!("{what} {v} out of range"))),
        _ => Err(Error::unsupported(
            &e.location,
            format!("{what} is not an integer constant"),
        )),
    }
}

/// The value of a constant label as an i32 (union case labels).
pub(crate) fn label_i32(e: &ConstExpr) -> Result<i32, Error> {
    let v: i128 = match &e.value {
        Some(ConstValue::Int(v)) => *v,
        Some(ConstValue::Enum { value, .. }) => i128::from(*value),
        Some(ConstValue::Bool(b)) => i128::from(*b),
        Some(ConstValue::Char(c)) => i128::from(u32::from(*c)),
        _ => {
            return Err(Error::unsupported(
                &e.location,
                "case label is not an integer, enumerator, boolean or character",
            ))
        }
    };
    i32::try_from(v)
        .or_else(|_| u32::try_from(v).map(|u| u as i32))
        .map_err(|_| Error::unsupported(&e.location, format!("case label {v} out of range")))
}
