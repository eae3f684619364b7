//! What a filter needs of a type and of its samples: [`FilterSchema`] (what a member path
//! names, checked once when an expression is parsed) and [`Fields`] (a member's value in one
//! sample, read when a sample is evaluated).
//!
//! Design. The grammar, the checks and the evaluation are written once, against these two
//! traits; a type system plugs in by implementing them. Rust types with [`Reflect`] (what
//! `#[derive(Topic)]` and `#[derive(CdrType)]` generate) do through [`ReflectSchema`] and the
//! blanket [`Fields`] impl; types learnt at run time (XTypes dynamic types) do in
//! `filter/dynamic.rs`. Values are borrowed from the sample, so evaluating copies nothing but
//! the scalars compared.

use halyard_cdr::{FieldKind, FieldValue, PathSegment, Reflect};
use std::marker::PhantomData;

/// What a member path names in a type (the answer of [`FilterSchema::member`]).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum FieldRef {
    /// A member a filter can compare: a primitive, a string or an enumeration.
    Comparable(MemberKind),
    /// A member that exists but cannot be compared: a struct, a collection, a union.
    Composite,
    /// No such member: the first `found` segments of the path name members (0: not even its
    /// first, so the name may be an enumerator).
    Missing {
        /// How many leading segments exist.
        found: usize,
    },
}

/// The kind of a comparable member.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum MemberKind {
    /// A boolean.
    Bool,
    /// A signed integer.
    Int,
    /// An unsigned integer.
    UInt,
    /// A floating-point number.
    Float,
    /// A character.
    Char,
    /// A string.
    Str,
    /// An enumeration.
    Enum(Enumeration),
}

/// An enumeration's enumerators, as a filter compares them.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Enumeration {
    /// Its qualified name, when the schema knows it (error messages name it).
    pub name: String,
    /// Its enumerators, in declaration order.
    pub enumerators: Vec<Enumerator>,
}

/// One enumerator.
#[derive(Clone, Debug, PartialEq)]
pub struct Enumerator {
    /// Its name.
    pub name: String,
    /// Its value, when the schema knows it (a Rust enum's [`Reflect`] gives names only).
    pub value: Option<i64>,
}

impl Enumeration {
    /// Where the enumerator `name` (possibly scoped: `Color::RED` is `RED`) sorts: its value
    /// when every enumerator's value is known, else its position in the declaration.
    pub fn rank(&self, name: &str) -> Option<i64> {
        let short = enumerator(name);
        let at = self.enumerators.iter().position(|e| e.name == short)?;
        self.rank_at(at)
    }

    /// Where a sample's enumerator sorts, from its value and (when known) its name.
    pub(super) fn rank_of(&self, value: i64, name: Option<&str>) -> Option<i64> {
        if self.by_value() {
            return Some(value);
        }
        self.rank(name?)
    }

    fn by_value(&self) -> bool {
        self.enumerators.iter().all(|e| e.value.is_some())
    }

    fn rank_at(&self, at: usize) -> Option<i64> {
        if self.by_value() {
            self.enumerators.get(at)?.value
        } else {
            i64::try_from(at).ok()
        }
    }
}

/// The enumerator of a possibly scoped name (`Color::RED` is `RED`).
pub(super) fn enumerator(n: &str) -> &str {
    n.rsplit("::").next().unwrap_or(n)
}

/// A type as a filter sees it: what each member path names. A filter is checked against it
/// once, when its expression is parsed (so a bad member fails then, naming the token).
pub trait FilterSchema {
    /// What `path` (`a.b[2].c` as member and index segments) names in every value of the
    /// type.
    fn member(&self, path: &[PathSegment]) -> FieldRef;
}

/// A value a filter compares, read from a sample.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Value<'a> {
    /// A boolean.
    Bool(bool),
    /// A signed integer.
    Int(i64),
    /// An unsigned integer.
    UInt(u64),
    /// A floating-point number.
    Float(f64),
    /// A character.
    Char(char),
    /// A string.
    Str(&'a str),
    /// An enumerator: its value and, when known, its name.
    Enum {
        /// Its numeric value.
        value: i64,
        /// Its name.
        name: Option<&'a str>,
    },
}

/// A sample as a filter reads it: the value at a member path.
pub trait Fields {
    /// The value at `path`; `None` when the sample lacks it (an index past a sequence's end,
    /// an absent optional member) or it is not comparable.
    fn value(&self, path: &[PathSegment]) -> Option<Value<'_>>;
}

impl<T: Reflect> Fields for T {
    fn value(&self, path: &[PathSegment]) -> Option<Value<'_>> {
        Some(match self.field(path)? {
            FieldValue::Bool(b) => Value::Bool(b),
            FieldValue::Int(i) => Value::Int(i),
            FieldValue::UInt(u) => Value::UInt(u),
            FieldValue::Float(f) => Value::Float(f),
            FieldValue::Char(c) => Value::Char(c),
            FieldValue::Str(s) => Value::Str(s),
            FieldValue::Enum { value, name } => Value::Enum {
                value: i64::from(value),
                name: Some(name),
            },
        })
    }
}

/// The schema of a Rust type with [`Reflect`] (`#[derive(Topic)]`, `#[derive(CdrType)]`).
pub struct ReflectSchema<T>(PhantomData<fn() -> T>);

impl<T> ReflectSchema<T> {
    /// The schema of `T`.
    pub fn new() -> Self {
        ReflectSchema(PhantomData)
    }
}

impl<T> Default for ReflectSchema<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Reflect> FilterSchema for ReflectSchema<T> {
    fn member(&self, path: &[PathSegment]) -> FieldRef {
        if let Some(kind) = T::field_kind(path) {
            return FieldRef::Comparable(match kind {
                FieldKind::Bool => MemberKind::Bool,
                FieldKind::Int => MemberKind::Int,
                FieldKind::UInt => MemberKind::UInt,
                FieldKind::Float => MemberKind::Float,
                FieldKind::Char => MemberKind::Char,
                FieldKind::Str => MemberKind::Str,
                FieldKind::Enum(names) => MemberKind::Enum(Enumeration {
                    name: String::new(),
                    enumerators: names
                        .iter()
                        .map(|n| Enumerator {
                            name: (*n).to_string(),
                            value: None,
                        })
                        .collect(),
                }),
            });
        }
        if T::has_member(path) {
            return FieldRef::Composite;
        }
        let found = (0..path.len())
            .rev()
            .find(|&k| k > 0 && T::has_member(&path[..k]))
            .unwrap_or(0);
        FieldRef::Missing { found }
    }
}
