//! Filters over types learnt at run time: [`FilterSchema`] for an XTypes [`DynamicType`] and
//! [`Fields`] for a [`DynamicSample`] (a [`DynamicValue`] with its type).
//!
//! Design. A path walks the type as the codec lays it out: struct members by name (base
//! members included, inheritance being flattened), sequence elements by index, and an array
//! of several dimensions by one index per dimension (`grid[1][2]`, row-major, each checked
//! against its bound), aliases seen through. Primitives, strings and enumerations compare;
//! structs, collections, maps, unions and bitmasks do not. Enumerators are known with their
//! values, so they compare by value. Values are read from the decoded sample without copying
//! its strings.

use super::schema::{Enumeration, Enumerator, FieldRef, Fields, FilterSchema, MemberKind, Value};
use crate::xtypes::dynamic::{EnumDesc, TypeNode};
use crate::xtypes::{DynamicType, DynamicValue, PrimitiveKind};
use halyard_cdr::PathSegment;

impl FilterSchema for DynamicType {
    fn member(&self, path: &[PathSegment]) -> FieldRef {
        let mut t = self.resolved();
        let mut i = 0;
        while let Some(seg) = path.get(i) {
            let next = match (t.node(), seg) {
                (TypeNode::Struct(s), PathSegment::Member(name)) => match s.member(name) {
                    Some((_, m)) => m.ty.resolved(),
                    None => return FieldRef::Missing { found: i },
                },
                (TypeNode::Sequence { element, .. }, PathSegment::Index(_)) => element.resolved(),
                (TypeNode::Array { element, dims }, PathSegment::Index(_)) => {
                    let indices = indices(&path[i..], dims.len());
                    match flat_index(&indices, dims) {
                        Some(_) if indices.len() < dims.len() => {
                            return if i + indices.len() == path.len() {
                                FieldRef::Composite
                            } else {
                                FieldRef::Missing {
                                    found: i + indices.len(),
                                }
                            };
                        }
                        Some(_) => {}
                        None => return FieldRef::Missing { found: i },
                    }
                    i += indices.len() - 1;
                    element.resolved()
                }
                _ => return FieldRef::Missing { found: i },
            };
            t = next;
            i += 1;
        }
        match kind(t) {
            Some(k) => FieldRef::Comparable(k),
            None => FieldRef::Composite,
        }
    }
}

/// The leading index segments of `path`, at most `dims` of them.
fn indices(path: &[PathSegment], dims: usize) -> Vec<usize> {
    path.iter()
        .take(dims)
        .map_while(|s| match s {
            PathSegment::Index(n) => Some(*n),
            PathSegment::Member(_) => None,
        })
        .collect()
}

/// The row-major position of the (sub-)array at `indices` in an array of `dims`; `None`
/// when an index is out of its bound.
fn flat_index(indices: &[usize], dims: &[u32]) -> Option<usize> {
    let mut at = 0usize;
    for (k, d) in dims.iter().enumerate() {
        let d = usize::try_from(*d).ok()?;
        let i = indices.get(k).copied().unwrap_or(0);
        if i >= d {
            return None;
        }
        at = at.checked_mul(d)?.checked_add(i)?;
    }
    Some(at)
}

/// The kind of a comparable type (aliases resolved); `None` for the others.
fn kind(t: &DynamicType) -> Option<MemberKind> {
    Some(match t.node() {
        TypeNode::Primitive(p) => match p {
            PrimitiveKind::Boolean => MemberKind::Bool,
            PrimitiveKind::Char8 | PrimitiveKind::Char16 => MemberKind::Char,
            PrimitiveKind::Int8
            | PrimitiveKind::Int16
            | PrimitiveKind::Int32
            | PrimitiveKind::Int64 => MemberKind::Int,
            PrimitiveKind::Float32 | PrimitiveKind::Float64 => MemberKind::Float,
            PrimitiveKind::Float128 => return None,
            _ => MemberKind::UInt,
        },
        TypeNode::String8 { .. } | TypeNode::String16 { .. } => MemberKind::Str,
        TypeNode::Enum(e) => MemberKind::Enum(enumeration(e)),
        _ => return None,
    })
}

fn enumeration(e: &EnumDesc) -> Enumeration {
    Enumeration {
        name: e.name.clone(),
        enumerators: e
            .literals
            .iter()
            .map(|l| Enumerator {
                name: l.name.clone(),
                value: Some(i64::from(l.value)),
            })
            .collect(),
    }
}

/// A decoded sample of a type learnt at run time, as a filter reads it.
#[derive(Clone, Copy, Debug)]
pub struct DynamicSample<'a> {
    ty: &'a DynamicType,
    value: &'a DynamicValue,
}

impl<'a> DynamicSample<'a> {
    /// `value`, a value of `ty` (as `halyard::xtypes::dynamic::decode` gives it).
    pub fn new(ty: &'a DynamicType, value: &'a DynamicValue) -> Self {
        DynamicSample { ty, value }
    }
}

impl Fields for DynamicSample<'_> {
    fn value(&self, path: &[PathSegment]) -> Option<Value<'_>> {
        let (mut t, mut v) = (self.ty.resolved(), self.value);
        let mut i = 0;
        while let Some(seg) = path.get(i) {
            (t, v) = match (t.node(), seg, v) {
                (TypeNode::Struct(s), PathSegment::Member(name), DynamicValue::Struct(slots)) => {
                    let (at, m) = s.member(name)?;
                    (m.ty.resolved(), slots.get(at)?.as_ref()?)
                }
                (
                    TypeNode::Sequence { element, .. },
                    PathSegment::Index(n),
                    DynamicValue::Sequence(items),
                ) => (element.resolved(), items.get(*n)?),
                (
                    TypeNode::Array { element, dims },
                    PathSegment::Index(_),
                    DynamicValue::Array(items),
                ) => {
                    let indices = indices(&path[i..], dims.len());
                    if indices.len() < dims.len() {
                        return None;
                    }
                    i += indices.len() - 1;
                    (element.resolved(), items.get(flat_index(&indices, dims)?)?)
                }
                _ => return None,
            };
            i += 1;
        }
        scalar(t, v)
    }
}

/// A comparable value of type `t`.
fn scalar<'a>(t: &'a DynamicType, v: &'a DynamicValue) -> Option<Value<'a>> {
    use DynamicValue as V;
    Some(match v {
        V::Bool(b) => Value::Bool(*b),
        V::Byte(u) | V::UInt8(u) => Value::UInt(u64::from(*u)),
        V::UInt16(u) => Value::UInt(u64::from(*u)),
        V::UInt32(u) => Value::UInt(u64::from(*u)),
        V::UInt64(u) => Value::UInt(*u),
        V::Int8(i) => Value::Int(i64::from(*i)),
        V::Int16(i) => Value::Int(i64::from(*i)),
        V::Int32(i) => Value::Int(i64::from(*i)),
        V::Int64(i) => Value::Int(*i),
        V::Float32(f) => Value::Float(f64::from(*f)),
        V::Float64(f) => Value::Float(*f),
        V::Char8(c) | V::Char16(c) => Value::Char(*c),
        V::String(s) => Value::Str(s),
        V::Enum(value) => Value::Enum {
            value: i64::from(*value),
            name: match t.node() {
                TypeNode::Enum(e) => e.by_value(*value).map(|l| l.name.as_str()),
                _ => None,
            },
        },
        _ => return None,
    })
}

/// The command line's evaluator's cases (`halyard sub --filter`), on the one implementation.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::Filter;
    use crate::xtypes::dynamic::{EnumLiteralDesc, MemberDesc, StructDesc};
    use halyard_cdr::Extensibility;

    fn member(name: &str, ty: TypeNode) -> MemberDesc {
        MemberDesc {
            name: name.into(),
            id: 0,
            ty: DynamicType::new(ty),
            key: false,
            optional: name == "note",
            must_understand: false,
            external: false,
        }
    }

    fn ty() -> DynamicType {
        let color = TypeNode::Enum(EnumDesc {
            name: "M::Color".into(),
            bit_bound: 32,
            literals: ["RED", "GREEN", "BLUE"]
                .iter()
                .enumerate()
                .map(|(i, n)| EnumLiteralDesc {
                    name: (*n).into(),
                    value: i as i32,
                    default: i == 0,
                })
                .collect(),
        });
        let inner = TypeNode::Struct(StructDesc {
            name: "M::P".into(),
            extensibility: Extensibility::Final,
            base: None,
            own_start: 0,
            names_known: true,
            members: vec![member("x", TypeNode::Primitive(PrimitiveKind::Int32))],
            nested: true,
        });
        let grid = TypeNode::Array {
            element: DynamicType::new(TypeNode::Primitive(PrimitiveKind::UInt16)),
            dims: vec![2, 3],
        };
        DynamicType::new(TypeNode::Struct(StructDesc {
            name: "M::T".into(),
            extensibility: Extensibility::Final,
            base: None,
            own_start: 0,
            names_known: true,
            members: vec![
                member("id", TypeNode::Primitive(PrimitiveKind::Int32)),
                member("name", TypeNode::String8 { bound: 0 }),
                member("color", color),
                member("pos", inner.clone()),
                member(
                    "pts",
                    TypeNode::Sequence {
                        element: DynamicType::new(inner),
                        bound: 0,
                    },
                ),
                member("grid", grid),
                member("note", TypeNode::String8 { bound: 0 }),
            ],
            nested: false,
        }))
    }

    /// `{"id": 5, "name": "alpha", "color": "BLUE", "pos": {"x": -2}, "pts": [{"x": 1},
    /// {"x": 9}], "grid": [[0, 1, 2], [10, 11, 12]]}`, `note` absent.
    fn sample() -> DynamicValue {
        use DynamicValue as V;
        let p = |x| V::Struct(vec![Some(V::Int32(x))]);
        V::Struct(vec![
            Some(V::Int32(5)),
            Some(V::String("alpha".into())),
            Some(V::Enum(2)),
            Some(p(-2)),
            Some(V::Sequence(vec![p(1), p(9)])),
            Some(V::Array([0, 1, 2, 10, 11, 12].map(V::UInt16).to_vec())),
            None,
        ])
    }

    fn parse(e: &str) -> Result<Filter, crate::filter::FilterError> {
        Filter::for_schema(e, &[], &ty())
    }

    #[test]
    fn evaluates_on_dynamic_samples() {
        let (t, v) = (ty(), sample());
        let s = DynamicSample::new(&t, &v);
        let yes = [
            "id = 5",
            "id > 4 AND name LIKE 'al%'",
            "color = BLUE",
            "color > GREEN",
            "pos.x < 0",
            "pts[1].x BETWEEN 5 AND 10",
            "NOT (id <> 5)",
            "name LIKE '_lph_'",
            "id = 1 OR name = 'alpha'",
            "id NOT BETWEEN 6 AND 9",
            "name NOT LIKE 'b%'",
            "grid[1][2] = 12 AND grid[0][1] = 1",
            "color = 2 AND color = M::Color::BLUE",
        ];
        for e in yes {
            assert!(parse(e).unwrap().matches(&s), "{e}");
        }
        let no = [
            "id < 5",
            "pts[2].x = 1",
            "name LIKE 'b%'",
            "color = RED",
            "note = 'x'",
            "note NOT LIKE 'x'",
        ];
        for e in no {
            assert!(!parse(e).unwrap().matches(&s), "{e}");
        }
    }

    #[test]
    fn bad_expressions_name_the_problem() {
        for (e, needle) in [
            ("nosuch = 1", "no such member"),
            ("pos.y = 1", "no member y"),
            ("pos = 1", "not a comparable member"),
            ("id = ", "unexpected end"),
            ("id 5", "comparison operator"),
            ("color = PURPLE", "no enumerator"),
            ("(id = 1", "expected `)`"),
            ("name = 'x", "unterminated"),
            ("id = 1 id", "unexpected token"),
            ("grid[2][0] = 1", "no element [2]"),
            ("grid[1] = 1", "not a comparable member"),
        ] {
            let err = parse(e).unwrap_err().to_string();
            assert!(err.contains(needle), "{e}: {err}");
        }
        let deep = format!("{}id = 1{}", "(".repeat(80), ")".repeat(80));
        assert!(parse(&deep)
            .unwrap_err()
            .message
            .contains("nested too deeply"));
    }
}
