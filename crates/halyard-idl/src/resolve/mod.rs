//! The resolver: turns a parsed [`Spec`] into a checked one.
//!
//! # Design
//!
//! Four passes over the tree, collecting every error rather than stopping at the first:
//!
//! 1. **Declare** ([`Resolver::declare_all`]): every definition gets its fully scoped name
//!    (`::M::S`) in one symbol table, and an order number. Modules may be reopened and
//!    forward declarations completed (the name stays visible from the forward declaration
//!    on); anything else declared twice in a scope, or differing only in case, is an error.
//!    Enumerators are declared in the enum's enclosing scope (as IDL and the C/C++ mappings
//!    scope them) and also as `Enum::Name`.
//! 2. **Enumerators**: values from `@value(N)` or one more than the previous one.
//! 3. **Walk** ([`Resolver::walk`]): scoped names are looked up per IDL 4.2 §7.5 (an
//!    absolute `::A::B` from the root; a relative name in the current scope, then each
//!    enclosing scope outward), among the names declared before the use only, so a later
//!    declaration neither hides an earlier outer one nor can be used early. Constants are
//!    evaluated on demand, in their own declaration's view, and memoized (a cycle is an
//!    error); bounds and dimensions must be positive integers; known annotations become
//!    typed fields; union labels must be values of the discriminator type; member names and
//!    `@id`s must be unique including inherited ones; `#pragma keylist` marks key members.
//! 4. **Cycles**: a struct or union that contains itself by value (through members, arrays,
//!    typedefs or its base) is infinitely large; sequences, maps and `@external` break it.
//!
//! Type lookups go through the symbol table only, so a typedef's target is classified in
//! the scope, and with the declarations, seen where the typedef was written.

mod annotate;
mod cycles;
mod eval;
mod keylist;

use std::collections::{BTreeMap, BTreeSet};

use crate::ast::*;
use crate::error::{ConstEvalError, Error, ErrorKind, Errors};
use crate::parser::ModuleExtent;
use crate::preprocess::RawPragma;
use crate::source::Location;

/// How deep typedef chains and base chains are followed.
const CHAIN_MAX: usize = 64;

/// Resolves and checks `spec` in place, applying `#pragma keylist` lines.
pub(crate) fn resolve(
    spec: &mut Spec,
    pragmas: &[RawPragma],
    extents: &[ModuleExtent],
) -> Result<(), Errors> {
    let mut r = Resolver {
        visible: usize::MAX,
        ..Resolver::default()
    };
    let mut scope = Vec::new();
    r.declare_all(&spec.definitions, &mut scope);
    r.enumerators(&mut spec.definitions, &mut scope);
    r.walk(&mut spec.definitions, &mut scope);
    r.visible = usize::MAX;
    for pragma in pragmas {
        r.pragma(spec, pragma, extents);
        spec.pragmas.push(Pragma {
            text: pragma.text.clone(),
            location: pragma.location.clone(),
        });
    }
    r.cycles();
    if r.errors.is_empty() {
        Ok(())
    } else {
        Err(Errors(r.errors))
    }
}

/// What a fully scoped name denotes.
#[derive(Clone, Debug)]
enum SymKind {
    Module,
    Struct {
        defined: bool,
        members: Vec<String>,
        base: Option<(Vec<String>, ScopedName)>,
    },
    Union {
        defined: bool,
    },
    Enum,
    Enumerator {
        enum_name: String,
        name: String,
        value: i64,
    },
    Bitmask,
    Bitset,
    Typedef {
        scope: Vec<String>,
        type_spec: TypeSpec,
        array: bool,
    },
    Const {
        scope: Vec<String>,
        type_spec: TypeSpec,
        expr: ConstExpr,
    },
    Unsupported(UnsupportedKind),
}

impl SymKind {
    fn describe(&self) -> &'static str {
        match self {
            SymKind::Module => "module",
            SymKind::Struct { .. } => "struct",
            SymKind::Union { .. } => "union",
            SymKind::Enum => "enum",
            SymKind::Enumerator { .. } => "enumerator",
            SymKind::Bitmask => "bitmask",
            SymKind::Bitset => "bitset",
            SymKind::Typedef { .. } => "typedef",
            SymKind::Const { .. } => "constant",
            SymKind::Unsupported(k) => k.keyword(),
        }
    }
}

#[derive(Clone, Debug)]
struct Sym {
    kind: SymKind,
    location: Location,
    /// Declaration order: a use sees only names declared before it (IDL 4.2 §7.5).
    order: usize,
}

/// What a type is once names and typedefs are followed.
#[derive(Clone, Debug, PartialEq)]
enum Class {
    Basic(BasicType),
    String,
    Sequence,
    Map,
    Fixed,
    Struct(String),
    Union(String),
    Enum(String),
    Bitmask,
    Bitset,
    Array(Box<Class>),
    Unsupported(String, UnsupportedKind),
    Unknown,
}

#[derive(Default)]
struct Resolver {
    symbols: BTreeMap<String, Sym>,
    /// Evaluated constants by fully scoped name.
    values: BTreeMap<String, ConstValue>,
    /// The declaration order of each struct's and union's complete definition.
    defined_at: BTreeMap<String, usize>,
    /// Declared names in lower case, to find names that differ only in case.
    folded: BTreeMap<String, (String, Location)>,
    /// Declarations so far (pass 1), the order of the next one.
    counter: usize,
    /// For each definition in tree order, the declaration count once it was declared.
    def_orders: Vec<usize>,
    /// How many definitions the walk has entered.
    walk_index: usize,
    /// Names declared up to this order are visible to the lookups being made.
    visible: usize,
    /// `@default_nested` of the module being walked.
    default_nested: bool,
    /// Constants whose evaluation failed (reported once).
    failed: BTreeSet<String>,
    /// Constants being evaluated (to find cycles).
    evaluating: BTreeSet<String>,
    /// For each struct or union, the structs and unions it contains by value.
    by_value: BTreeMap<String, Vec<(String, Location)>>,
    errors: Vec<Error>,
}

fn fqn(scope: &[String], name: &str) -> String {
    let mut s = String::new();
    for part in scope {
        s.push_str("::");
        s.push_str(part);
    }
    s.push_str("::");
    s.push_str(name);
    s
}

impl Resolver {
    fn error(&mut self, location: &Location, kind: ErrorKind) {
        self.errors.push(Error::new(location.clone(), kind));
    }

    fn const_error(&mut self, location: &Location, reason: ConstEvalError) {
        self.error(location, ErrorKind::ConstEval { reason });
    }

    // ----- pass 1: declarations -----

    fn declare_all(&mut self, defs: &[Definition], scope: &mut Vec<String>) {
        for def in defs {
            self.declare_one(def, scope);
        }
    }

    fn declare_one(&mut self, def: &Definition, scope: &mut Vec<String>) {
        if !matches!(def, Definition::Module(_)) {
            self.declare_names(def, scope);
            self.def_orders.push(self.counter);
            return;
        }
        self.declare_names(def, scope);
    }

    fn declare_names(&mut self, def: &Definition, scope: &mut Vec<String>) {
        match def {
            Definition::Module(m) => {
                self.declare(scope, &m.name, SymKind::Module);
                self.def_orders.push(self.counter);
                scope.push(m.name.name.clone());
                self.declare_all(&m.definitions, scope);
                scope.pop();
            }
            Definition::Struct(s) => {
                let members = s.members.iter().map(|m| m.name.name.clone()).collect();
                let base = s.base.clone().map(|b| (scope.clone(), b));
                self.declare(
                    scope,
                    &s.name,
                    SymKind::Struct {
                        defined: true,
                        members,
                        base,
                    },
                );
            }
            Definition::Union(u) => self.declare(scope, &u.name, SymKind::Union { defined: true }),
            Definition::Forward(f) if f.union => {
                self.declare(scope, &f.name, SymKind::Union { defined: false })
            }
            Definition::Forward(f) => {
                let kind = SymKind::Struct {
                    defined: false,
                    members: Vec::new(),
                    base: None,
                };
                self.declare(scope, &f.name, kind)
            }
            Definition::Enum(e) => self.declare_enum(e, scope),
            Definition::Bitmask(b) => self.declare(scope, &b.name, SymKind::Bitmask),
            Definition::Bitset(b) => self.declare(scope, &b.name, SymKind::Bitset),
            Definition::Typedef(t) => {
                for d in &t.declarators {
                    let kind = SymKind::Typedef {
                        scope: scope.clone(),
                        type_spec: t.type_spec.clone(),
                        array: !d.array.is_empty(),
                    };
                    self.declare(scope, &d.name, kind);
                }
            }
            Definition::Const(c) => {
                let kind = SymKind::Const {
                    scope: scope.clone(),
                    type_spec: c.type_spec.clone(),
                    expr: c.value.clone(),
                };
                self.declare(scope, &c.name, kind);
            }
            Definition::Unsupported(u) => {
                self.declare(scope, &u.name, SymKind::Unsupported(u.kind))
            }
        }
    }

    /// Declares an enum and its enumerators, in the enclosing scope and as `Enum::Name`.
    fn declare_enum(&mut self, e: &EnumDef, scope: &[String]) {
        self.declare(scope, &e.name, SymKind::Enum);
        let enum_name = fqn(scope, &e.name.name);
        for en in &e.enumerators {
            let name = en.name.name.clone();
            let kind = SymKind::Enumerator {
                enum_name: enum_name.clone(),
                name,
                value: 0,
            };
            self.declare(scope, &en.name, kind.clone());
            let sym = Sym {
                kind,
                location: en.name.location.clone(),
                order: self.counter,
            };
            self.symbols
                .entry(format!("{enum_name}::{}", en.name.name))
                .or_insert(sym);
        }
    }

    /// IDL 4.2 §7.2.3: identifiers that differ only in case collide.
    fn check_case(&mut self, full: &str, name: &Ident) {
        match self.folded.get(&full.to_lowercase()) {
            Some((other, previous)) if other != full => {
                let kind = ErrorKind::CaseCollision {
                    name: full.to_string(),
                    other: other.clone(),
                    previous: previous.clone(),
                };
                // Reported, and declared anyway so that uses do not cascade into more errors.
                self.error(&name.location, kind);
            }
            Some(_) => {}
            None => {
                let entry = (full.to_string(), name.location.clone());
                self.folded.insert(full.to_lowercase(), entry);
            }
        }
    }

    fn declare(&mut self, scope: &[String], name: &Ident, kind: SymKind) {
        self.counter += 1;
        let order = self.counter;
        let full = fqn(scope, &name.name);
        self.check_case(&full, name);
        if matches!(
            kind,
            SymKind::Struct { defined: true, .. } | SymKind::Union { defined: true }
        ) {
            self.defined_at.entry(full.clone()).or_insert(order);
        }
        let Some(prev) = self.symbols.get_mut(&full) else {
            let location = name.location.clone();
            self.symbols.insert(
                full,
                Sym {
                    kind,
                    location,
                    order,
                },
            );
            return;
        };
        let compatible = match (&prev.kind, &kind) {
            (SymKind::Module, SymKind::Module) => true,
            (SymKind::Struct { defined: a, .. }, SymKind::Struct { defined: b, .. })
            | (SymKind::Union { defined: a }, SymKind::Union { defined: b }) => !(*a && *b),
            (SymKind::Unsupported(a), SymKind::Unsupported(b)) => a == b,
            _ => false,
        };
        if !compatible {
            let kind = ErrorKind::Duplicate {
                what: "name",
                name: full,
                previous: prev.location.clone(),
            };
            self.error(&name.location, kind);
            return;
        }
        let completes = matches!(
            kind,
            SymKind::Struct { defined: true, .. } | SymKind::Union { defined: true }
        );
        if completes {
            // The name stays visible from its forward declaration on.
            let order = prev.order;
            *prev = Sym {
                kind,
                location: name.location.clone(),
                order,
            };
        }
    }

    // ----- lookup -----

    /// Looks `name` up from `scope` (IDL 4.2 §7.5): absolute from the root, relative in
    /// `scope` and then each enclosing scope.
    fn lookup(&self, scope: &[String], name: &ScopedName) -> Option<String> {
        self.lookup_at(scope, name, self.visible)
    }

    /// [`Self::lookup`] among the names declared up to order `visible`.
    fn lookup_at(&self, scope: &[String], name: &ScopedName, visible: usize) -> Option<String> {
        let rel = name.parts.join("::");
        let declared = |full: &String| self.symbols.get(full).is_some_and(|s| s.order <= visible);
        if name.absolute {
            let full = format!("::{rel}");
            return declared(&full).then_some(full);
        }
        (0..=scope.len())
            .rev()
            .map(|k| fqn(&scope[..k], &rel))
            .find(declared)
    }

    /// The error for `name` not found: used before its declaration, or not declared.
    fn not_found(&self, scope: &[String], name: &ScopedName) -> Error {
        let kind = match self.lookup_at(scope, name, usize::MAX) {
            Some(full) => ErrorKind::UsedBeforeDeclaration {
                name: name.to_string(),
                declared: self.symbols[&full].location.clone(),
            },
            None => ErrorKind::UnknownName {
                name: name.to_string(),
            },
        };
        Error::new(name.location.clone(), kind)
    }

    /// Looks `name` up and records the result in it, or reports it unknown.
    fn lookup_fill(&mut self, scope: &[String], name: &mut ScopedName) -> Option<String> {
        let found = self.lookup(scope, name);
        match &found {
            Some(full) => name.resolved = Some(full.clone()),
            None => {
                let e = self.not_found(scope, name);
                self.errors.push(e);
            }
        }
        found
    }

    /// What `ts`, written in `scope`, is once names and typedefs are followed.
    fn classify(&self, scope: &[String], ts: &TypeSpec, depth: usize) -> Class {
        self.classify_at(scope, ts, depth, self.visible)
    }

    fn classify_at(&self, scope: &[String], ts: &TypeSpec, depth: usize, visible: usize) -> Class {
        match ts {
            TypeSpec::Basic(b, _) => Class::Basic(*b),
            TypeSpec::String { .. } => Class::String,
            TypeSpec::Sequence { .. } => Class::Sequence,
            TypeSpec::Map { .. } => Class::Map,
            TypeSpec::Fixed { .. } => Class::Fixed,
            TypeSpec::Named(name) => match self.lookup_at(scope, name, visible) {
                Some(full) => self.classify_name(&full, depth),
                None => Class::Unknown,
            },
        }
    }

    fn classify_name(&self, full: &str, depth: usize) -> Class {
        let Some(sym) = self.symbols.get(full) else {
            return Class::Unknown;
        };
        match &sym.kind {
            SymKind::Struct { .. } => Class::Struct(full.to_string()),
            SymKind::Union { .. } => Class::Union(full.to_string()),
            SymKind::Enum => Class::Enum(full.to_string()),
            SymKind::Bitmask => Class::Bitmask,
            SymKind::Bitset => Class::Bitset,
            SymKind::Unsupported(k) => Class::Unsupported(full.to_string(), *k),
            SymKind::Typedef {
                scope,
                type_spec,
                array,
            } if depth < CHAIN_MAX => {
                let inner = self.classify_at(scope, type_spec, depth + 1, sym.order);
                if *array {
                    Class::Array(Box::new(inner))
                } else {
                    inner
                }
            }
            _ => Class::Unknown,
        }
    }

    // ----- pass 2: enumerator values -----

    fn enumerators(&mut self, defs: &mut [Definition], scope: &mut Vec<String>) {
        for def in defs {
            match def {
                Definition::Module(m) => {
                    scope.push(m.name.name.clone());
                    self.enumerators(&mut m.definitions, scope);
                    scope.pop();
                }
                Definition::Enum(e) => self.enum_values(e, scope),
                _ => {}
            }
        }
    }

    fn enum_values(&mut self, e: &mut EnumDef, scope: &[String]) {
        let mut next = 0i64;
        let mut seen: BTreeMap<i64, Location> = BTreeMap::new();
        for en in &mut e.enumerators {
            if let Some(v) = self.annotation_int(scope, &mut en.annotations, "value") {
                next = v;
            }
            en.value = next;
            en.default_literal = en.annotations.iter().any(|a| a.name == "default_literal");
            if let Some(prev) = seen.insert(next, en.name.location.clone()) {
                let kind = ErrorKind::Duplicate {
                    what: "enumerator value",
                    name: next.to_string(),
                    previous: prev,
                };
                self.error(&en.name.location, kind);
            }
            for key in [
                fqn(scope, &en.name.name),
                format!("{}::{}", fqn(scope, &e.name.name), en.name.name),
            ] {
                if let Some(Sym {
                    kind: SymKind::Enumerator { value, .. },
                    ..
                }) = self.symbols.get_mut(&key)
                {
                    *value = next;
                }
            }
            next = next.wrapping_add(1);
        }
    }

    // ----- pass 3: walk -----

    fn walk(&mut self, defs: &mut [Definition], scope: &mut Vec<String>) {
        for def in defs {
            // Pass 1 recorded one order per definition in this same traversal order.
            self.visible = self
                .def_orders
                .get(self.walk_index)
                .copied()
                .unwrap_or(usize::MAX);
            self.walk_index += 1;
            match def {
                Definition::Module(m) => {
                    let outer = self.default_nested;
                    if let Some(a) = m
                        .annotations
                        .iter_mut()
                        .find(|a| a.name == "default_nested")
                    {
                        self.default_nested = self.bool_param(scope, a);
                    }
                    scope.push(m.name.name.clone());
                    self.walk(&mut m.definitions, scope);
                    scope.pop();
                    self.default_nested = outer;
                }
                Definition::Struct(s) => self.walk_struct(s, scope),
                Definition::Union(u) => self.walk_union(u, scope),
                Definition::Enum(e) => e.typed = self.type_annotations(scope, &mut e.annotations),
                Definition::Bitmask(b) => self.walk_bitmask(b, scope),
                Definition::Bitset(b) => self.walk_bitset(b, scope),
                Definition::Typedef(t) => {
                    self.resolve_type(scope, &mut t.type_spec);
                    for d in &mut t.declarators {
                        for dim in &mut d.array {
                            self.positive(scope, dim, "array dimension");
                        }
                    }
                }
                Definition::Const(c) => {
                    self.resolve_type(scope, &mut c.type_spec);
                    c.value.value = self.const_value(&fqn(scope, &c.name.name));
                }
                Definition::Forward(_) | Definition::Unsupported(_) => {}
            }
        }
    }

    fn walk_struct(&mut self, s: &mut StructDef, scope: &[String]) {
        s.typed = self.type_annotations(scope, &mut s.annotations);
        let me = fqn(scope, &s.name.name);
        let mut seen: BTreeMap<String, (String, Location)> = BTreeMap::new();
        if let Some(base) = &mut s.base {
            if let Some(full) = self.lookup_fill(scope, base) {
                match self.classify_name(&full, 0) {
                    Class::Struct(base_name) => {
                        self.by_value
                            .entry(me.clone())
                            .or_default()
                            .push((base_name.clone(), base.location.clone()));
                        for name in self.inherited_members(&base_name) {
                            seen.insert(name.to_lowercase(), (name, base.location.clone()));
                        }
                    }
                    _ => {
                        let found = self.symbols[&full].kind.describe();
                        self.error(
                            &base.location,
                            ErrorKind::WrongKind {
                                name: full,
                                expected: "struct",
                                found,
                            },
                        );
                    }
                }
            }
        }
        let mut ids: BTreeMap<u32, Location> = BTreeMap::new();
        for m in &mut s.members {
            if let Some(kind) = member_clash(&mut seen, &m.name) {
                self.error(&m.name.location, kind);
            }
            self.walk_member(m, scope, &me);
            let Some(id) = m.typed.id else { continue };
            if let Some(previous) = ids.insert(id, m.name.location.clone()) {
                let kind = ErrorKind::Duplicate {
                    what: "member @id",
                    name: id.to_string(),
                    previous,
                };
                self.error(&m.name.location, kind);
            }
        }
    }

    /// The member names of struct `full` and its bases.
    fn inherited_members(&self, full: &str) -> Vec<String> {
        let mut names = Vec::new();
        let mut current = full.to_string();
        for _ in 0..CHAIN_MAX {
            let Some(Sym {
                kind: SymKind::Struct { members, base, .. },
                ..
            }) = self.symbols.get(&current)
            else {
                break;
            };
            names.extend(members.iter().cloned());
            let Some(next) = base
                .as_ref()
                .and_then(|(scope, name)| self.lookup(scope, name))
            else {
                break;
            };
            current = next;
        }
        names
    }

    fn walk_member(&mut self, m: &mut Member, scope: &[String], owner: &str) {
        self.resolve_type(scope, &mut m.type_spec);
        for dim in &mut m.array {
            self.positive(scope, dim, "array dimension");
        }
        m.typed = self.member_annotations(scope, &mut m.annotations);
        self.check_usable(scope, &m.type_spec, 0);
        let class = self.classify(scope, &m.type_spec, 0);
        if !m.typed.external {
            let mut class = &class;
            while let Class::Array(inner) = class {
                class = inner;
            }
            if let Class::Struct(target) | Class::Union(target) = class {
                // By value, a type must be complete: defined, not only forward-declared.
                if self
                    .defined_at
                    .get(target)
                    .is_some_and(|&d| d > self.visible)
                {
                    let kind = ErrorKind::HeldBeforeDefinition {
                        name: target.clone(),
                        defined: self.symbols[target].location.clone(),
                    };
                    self.error(m.type_spec.location(), kind);
                }
                let edge = (target.clone(), m.type_spec.location().clone());
                self.by_value
                    .entry(owner.to_string())
                    .or_default()
                    .push(edge);
            }
        }
    }

    /// Reports types in `ts` that a data type cannot hold: unsupported declarations
    /// (interfaces ...) and forward declarations never completed, also inside sequences,
    /// maps and typedefs.
    fn check_usable(&mut self, scope: &[String], ts: &TypeSpec, depth: usize) {
        if depth > CHAIN_MAX {
            return;
        }
        match ts {
            TypeSpec::Sequence { element, .. } => self.check_usable(scope, element, depth + 1),
            TypeSpec::Map { key, value, .. } => {
                self.check_usable(scope, key, depth + 1);
                self.check_usable(scope, value, depth + 1);
            }
            TypeSpec::Named(name) => {
                let Some(full) = self.lookup(scope, name) else {
                    return;
                };
                let kind = match &self.symbols[&full].kind {
                    SymKind::Unsupported(k) => ErrorKind::Unsupported {
                        name: full,
                        what: k.keyword(),
                    },
                    SymKind::Struct { defined: false, .. } | SymKind::Union { defined: false } => {
                        ErrorKind::Incomplete { name: full }
                    }
                    SymKind::Typedef {
                        scope, type_spec, ..
                    } => {
                        let (scope, type_spec) = (scope.clone(), type_spec.clone());
                        let before = self.errors.len();
                        let visible =
                            std::mem::replace(&mut self.visible, self.symbols[&full].order);
                        self.check_usable(&scope, &type_spec, depth + 1);
                        self.visible = visible;
                        // Report at the use, not inside the typedef.
                        for e in &mut self.errors[before..] {
                            e.location = name.location.clone();
                        }
                        return;
                    }
                    _ => return,
                };
                self.error(&name.location, kind);
            }
            _ => {}
        }
    }

    fn walk_union(&mut self, u: &mut UnionDef, scope: &[String]) {
        u.typed = self.type_annotations(scope, &mut u.annotations);
        let me = fqn(scope, &u.name.name);
        self.resolve_type(scope, &mut u.discriminator);
        let disc = self.classify(scope, &u.discriminator, 0);
        let disc_ok = match &disc {
            Class::Basic(b) => {
                b.integer_range().is_some()
                    || matches!(b, BasicType::Char | BasicType::WChar | BasicType::Boolean)
            }
            Class::Enum(_) => true,
            _ => false,
        };
        if !disc_ok && disc != Class::Unknown {
            let kind = ErrorKind::BadDiscriminator {
                type_name: type_text(&u.discriminator),
            };
            self.error(u.discriminator.location(), kind);
        }
        let mut labels: BTreeMap<String, Location> = BTreeMap::new();
        let mut names: BTreeMap<String, Location> = BTreeMap::new();
        for case in &mut u.cases {
            for label in &mut case.labels {
                let (key, location) = match label {
                    CaseLabel::Default(location) => ("default".to_string(), location.clone()),
                    CaseLabel::Value(expr) => {
                        let Some(v) = self.eval_fill(scope, expr) else {
                            continue;
                        };
                        if disc_ok && !label_fits(&disc, &v) {
                            let kind = ErrorKind::LabelMismatch {
                                label: v.to_string(),
                                discriminator: type_text(&u.discriminator),
                            };
                            self.error(&expr.location, kind);
                        }
                        (label_key(&v), expr.location.clone())
                    }
                };
                if let Some(prev) = labels.insert(key.clone(), location.clone()) {
                    self.error(
                        &location,
                        ErrorKind::Duplicate {
                            what: "case label",
                            name: key,
                            previous: prev,
                        },
                    );
                }
            }
            let m = &mut case.member;
            if let Some(prev) = names.insert(m.name.name.clone(), m.name.location.clone()) {
                let kind = ErrorKind::Duplicate {
                    what: "member",
                    name: m.name.name.clone(),
                    previous: prev,
                };
                self.error(&m.name.location, kind);
            }
            self.walk_member(m, scope, &me);
            if m.typed.key {
                let reason = "applies to struct members and the union discriminator only";
                let kind = ErrorKind::BadAnnotation {
                    name: "key".into(),
                    reason,
                };
                self.error(&m.name.location, kind);
            }
        }
    }

    fn walk_bitmask(&mut self, b: &mut BitmaskDef, scope: &[String]) {
        b.typed = self.type_annotations(scope, &mut b.annotations);
        let bound = b.typed.bit_bound.unwrap_or(32);
        let mut next = 0u32;
        for flag in &mut b.flags {
            if let Some(p) = self.annotation_int(scope, &mut flag.annotations, "position") {
                next = u32::try_from(p).unwrap_or(u32::MAX);
            }
            if next >= bound {
                let value = next.to_string();
                let reason = ConstEvalError::OutOfRange {
                    value,
                    type_name: format!("bit position below {bound}"),
                };
                self.const_error(&flag.name.location, reason);
            }
            flag.position = next;
            next = next.saturating_add(1);
        }
    }

    fn walk_bitset(&mut self, b: &mut BitsetDef, scope: &[String]) {
        if let Some(base) = &mut b.base {
            self.lookup_fill(scope, base);
        }
        for field in &mut b.fields {
            self.positive(scope, &mut field.width, "bit field width");
            if let Some(ts) = &mut field.type_spec {
                self.resolve_type(scope, ts);
            }
        }
    }

    /// Resolves the names in `ts` and evaluates its bounds.
    fn resolve_type(&mut self, scope: &[String], ts: &mut TypeSpec) {
        match ts {
            TypeSpec::Basic(..) => {}
            TypeSpec::String { bound, .. } => {
                if let Some(b) = bound {
                    self.positive(scope, b, "string bound");
                }
            }
            TypeSpec::Sequence { element, bound, .. } => {
                self.resolve_type(scope, element);
                if let Some(b) = bound {
                    self.positive(scope, b, "sequence bound");
                }
            }
            TypeSpec::Map {
                key, value, bound, ..
            } => {
                self.resolve_type(scope, key);
                self.resolve_type(scope, value);
                if let Some(b) = bound {
                    self.positive(scope, b, "map bound");
                }
            }
            TypeSpec::Fixed { digits, scale, .. } => {
                self.eval_fill(scope, digits);
                self.eval_fill(scope, scale);
            }
            TypeSpec::Named(name) => {
                let Some(full) = self.lookup_fill(scope, name) else {
                    return;
                };
                let kind = &self.symbols[&full].kind;
                if matches!(
                    kind,
                    SymKind::Module | SymKind::Const { .. } | SymKind::Enumerator { .. }
                ) {
                    let found = kind.describe();
                    self.error(
                        &name.location,
                        ErrorKind::WrongKind {
                            name: full,
                            expected: "type",
                            found,
                        },
                    );
                }
            }
        }
    }
}

/// Records member `name` in `seen` (lower-cased name → name, location) and says whether it
/// repeats an earlier member, exactly or differing only in case.
fn member_clash(
    seen: &mut BTreeMap<String, (String, Location)>,
    name: &Ident,
) -> Option<ErrorKind> {
    let entry = (name.name.clone(), name.location.clone());
    let (other, previous) = seen.insert(name.name.to_lowercase(), entry)?;
    Some(if other == name.name {
        ErrorKind::Duplicate {
            what: "member",
            name: other,
            previous,
        }
    } else {
        ErrorKind::CaseCollision {
            name: name.name.clone(),
            other,
            previous,
        }
    })
}

/// Whether label value `v` is a value of discriminator class `disc`.
fn label_fits(disc: &Class, v: &ConstValue) -> bool {
    match (disc, v) {
        (Class::Basic(b), ConstValue::Int(i)) => b
            .integer_range()
            .is_some_and(|(lo, hi)| (lo..=hi).contains(i)),
        (Class::Basic(BasicType::Char | BasicType::WChar), ConstValue::Char(_)) => true,
        (Class::Basic(BasicType::Boolean), ConstValue::Bool(_)) => true,
        (Class::Enum(e), ConstValue::Enum { type_name, .. }) => e == type_name,
        _ => false,
    }
}

/// A label's identity for duplicate checks.
fn label_key(v: &ConstValue) -> String {
    match v {
        ConstValue::Enum {
            type_name, name, ..
        } => format!("{type_name}::{name}"),
        other => other.to_string(),
    }
}

/// A type as text for messages.
fn type_text(ts: &TypeSpec) -> String {
    match ts {
        TypeSpec::Basic(b, _) => b.idl_name().to_string(),
        TypeSpec::String { wide: false, .. } => "string".into(),
        TypeSpec::String { wide: true, .. } => "wstring".into(),
        TypeSpec::Sequence { .. } => "sequence".into(),
        TypeSpec::Map { .. } => "map".into(),
        TypeSpec::Fixed { .. } => "fixed".into(),
        TypeSpec::Named(n) => n.to_string(),
    }
}
