//! Proves the XTypes 1.3 §7.2.4 assignability rules, one table row per rule, including the
//! TypeConsistencyEnforcement flags (bounds, member names, widening, coercion).

use halyard_xtypes::dynamic::*;
use halyard_xtypes::*;

fn t(node: TypeNode) -> DynamicType {
    DynamicType::new(node)
}

fn long() -> DynamicType {
    t(TypeNode::Primitive(PrimitiveKind::Int32))
}

fn short() -> DynamicType {
    t(TypeNode::Primitive(PrimitiveKind::Int16))
}

fn string(bound: u32) -> DynamicType {
    t(TypeNode::String8 { bound })
}

fn seq(element: DynamicType, bound: u32) -> DynamicType {
    t(TypeNode::Sequence { element, bound })
}

/// A member: (id, name, type, "k" key / "o" optional / "m" must-understand).
type M<'a> = (u32, &'a str, DynamicType, &'a str);

fn st(ext: Extensibility, members: Vec<M<'_>>) -> DynamicType {
    t(TypeNode::Struct(StructDesc {
        name: "S".into(),
        extensibility: ext,
        base: None,
        members: members
            .into_iter()
            .map(|(id, name, ty, flags)| MemberDesc {
                name: name.into(),
                id,
                ty,
                key: flags.contains('k'),
                optional: flags.contains('o'),
                must_understand: flags.contains('m'),
                external: false,
            })
            .collect(),
        own_start: 0,
        names_known: true,
        nested: false,
    }))
}

fn en(lits: &[(&str, i32)]) -> DynamicType {
    t(TypeNode::Enum(EnumDesc {
        name: "E".into(),
        bit_bound: 32,
        literals: lits
            .iter()
            .map(|(n, v)| EnumLiteralDesc {
                name: (*n).into(),
                value: *v,
                default: false,
            })
            .collect(),
    }))
}

fn un(ext: Extensibility, cases: Vec<(&str, DynamicType, Vec<i32>)>) -> DynamicType {
    t(TypeNode::Union(UnionDesc {
        name: "U".into(),
        extensibility: ext,
        discriminator: long(),
        discriminator_key: false,
        cases: cases
            .into_iter()
            .enumerate()
            .map(|(i, (n, ty, labels))| UnionCaseDesc {
                name: n.into(),
                id: i as u32 + 1,
                ty,
                labels,
                default: false,
            })
            .collect(),
        names_known: true,
    }))
}

use Extensibility::{Appendable as A, Final as F, Mutable as Mu};

fn strict_bounds() -> TypeConsistency {
    TypeConsistency {
        ignore_sequence_bounds: false,
        ignore_string_bounds: false,
        ..Default::default()
    }
}

#[test]
fn assignability_rules() {
    let d = TypeConsistency::default();
    let names_ignored = TypeConsistency {
        ignore_member_names: true,
        ..d
    };
    let no_widening = TypeConsistency {
        prevent_type_widening: true,
        ..d
    };
    let disallow = TypeConsistency {
        kind: TypeConsistencyKind::DisallowTypeCoercion,
        ..d
    };
    let alias = t(TypeNode::Alias {
        name: "L".into(),
        target: long(),
    });
    // (rule, writer, reader, consistency, None = assignable / Some(part of the reason))
    let rows: Vec<(
        &str,
        DynamicType,
        DynamicType,
        TypeConsistency,
        Option<&str>,
    )> = vec![
        ("identical primitives", long(), long(), d, None),
        (
            "no primitive widening",
            short(),
            long(),
            d,
            Some("different kinds"),
        ),
        ("aliases are resolved", alias.clone(), long(), d, None),
        (
            "string bounds ignored by default",
            string(8),
            string(4),
            d,
            None,
        ),
        (
            "string bound too small",
            string(8),
            string(4),
            strict_bounds(),
            Some("string bound 4 is below the writer's 8"),
        ),
        (
            "larger reader string bound",
            string(4),
            string(0),
            strict_bounds(),
            None,
        ),
        (
            "widening prevented on bounds",
            string(4),
            string(8),
            TypeConsistency {
                prevent_type_widening: true,
                ..strict_bounds()
            },
            Some("bounds"),
        ),
        (
            "sequence bound too small",
            seq(long(), 10),
            seq(long(), 5),
            strict_bounds(),
            Some("sequence bound"),
        ),
        (
            "sequence elements must match",
            seq(long(), 0),
            seq(short(), 0),
            d,
            Some("not assignable: []: writer type Int32 and reader type Int16"),
        ),
        (
            "final structs identical",
            st(F, vec![(0, "x", long(), "")]),
            st(F, vec![(0, "x", long(), "")]),
            d,
            None,
        ),
        (
            "final structs need the same members",
            st(F, vec![(0, "x", long(), "")]),
            st(F, vec![(0, "x", long(), ""), (1, "y", long(), "")]),
            d,
            Some("final structs"),
        ),
        (
            "extensibility must match",
            st(F, vec![(0, "x", long(), "")]),
            st(A, vec![(0, "x", long(), "")]),
            d,
            Some("extensibility"),
        ),
        (
            "appendable: reader adds trailing",
            st(A, vec![(0, "x", long(), "")]),
            st(A, vec![(0, "x", long(), ""), (1, "y", long(), "")]),
            d,
            None,
        ),
        (
            "appendable: writer adds trailing",
            st(A, vec![(0, "x", long(), ""), (1, "y", long(), "")]),
            st(A, vec![(0, "x", long(), "")]),
            d,
            None,
        ),
        (
            "appendable: widening prevented",
            st(A, vec![(0, "x", long(), "")]),
            st(A, vec![(0, "x", long(), ""), (1, "y", long(), "")]),
            no_widening,
            Some("widening"),
        ),
        (
            "appendable: coercion disallowed",
            st(A, vec![(0, "x", long(), ""), (1, "y", long(), "")]),
            st(A, vec![(0, "x", long(), "")]),
            disallow,
            Some("coercion disallowed"),
        ),
        (
            "appendable: prefix member names",
            st(A, vec![(0, "x", long(), "")]),
            st(A, vec![(0, "z", long(), "")]),
            d,
            Some("named z"),
        ),
        (
            "appendable: names ignored",
            st(A, vec![(0, "x", long(), "")]),
            st(A, vec![(0, "z", long(), "")]),
            names_ignored,
            None,
        ),
        (
            "appendable: prefix member types",
            st(A, vec![(0, "x", long(), "")]),
            st(A, vec![(0, "x", short(), "")]),
            d,
            Some("not assignable: x: "),
        ),
        (
            "mutable: matched by id, reordered",
            st(Mu, vec![(1, "a", long(), ""), (2, "b", short(), "")]),
            st(Mu, vec![(2, "b", short(), ""), (1, "a", long(), "")]),
            d,
            None,
        ),
        (
            "mutable: extra members both ways",
            st(Mu, vec![(1, "a", long(), ""), (2, "b", long(), "")]),
            st(Mu, vec![(1, "a", long(), ""), (3, "c", long(), "")]),
            d,
            None,
        ),
        (
            "mutable: same name, other id",
            st(Mu, vec![(1, "a", long(), "")]),
            st(Mu, vec![(2, "a", long(), "")]),
            d,
            Some("has id 1 in the writer, 2 in the reader"),
        ),
        (
            "mutable: key missing in reader",
            st(Mu, vec![(1, "a", long(), ""), (2, "k", long(), "k")]),
            st(Mu, vec![(1, "a", long(), "")]),
            d,
            Some("not assignable: k: key member missing in the reader"),
        ),
        (
            "mutable: key missing in writer",
            st(Mu, vec![(1, "a", long(), "")]),
            st(Mu, vec![(1, "a", long(), ""), (2, "k", long(), "k")]),
            d,
            Some("key member missing in the writer"),
        ),
        (
            "mutable: key flag differs",
            st(Mu, vec![(1, "a", long(), "k")]),
            st(Mu, vec![(1, "a", long(), "")]),
            d,
            Some("key in one type only"),
        ),
        (
            "mutable: must_understand unknown to reader",
            st(Mu, vec![(1, "a", long(), ""), (9, "m", long(), "m")]),
            st(Mu, vec![(1, "a", long(), "")]),
            d,
            Some("must-understand"),
        ),
        (
            "mutable: nothing in common",
            st(Mu, vec![(1, "a", long(), "")]),
            st(Mu, vec![(2, "b", long(), "")]),
            d,
            Some("no member in common"),
        ),
        (
            "mutable: member types",
            st(Mu, vec![(1, "a", long(), "")]),
            st(Mu, vec![(1, "a", string(0), "")]),
            d,
            Some("not assignable: a: "),
        ),
        (
            "enum: same",
            en(&[("R", 0), ("G", 1)]),
            en(&[("R", 0), ("G", 1)]),
            d,
            None,
        ),
        (
            "enum: reader adds literals",
            en(&[("R", 0)]),
            en(&[("R", 0), ("G", 1)]),
            d,
            None,
        ),
        (
            "enum: value renamed",
            en(&[("R", 0)]),
            en(&[("X", 0)]),
            d,
            Some("enum value 0 is R in the writer, X in the reader"),
        ),
        (
            "enum: name renumbered",
            en(&[("R", 0), ("G", 1)]),
            en(&[("G", 0), ("R", 1)]),
            d,
            Some("enumerator"),
        ),
        (
            "enum: coercion disallowed",
            en(&[("R", 0)]),
            en(&[("R", 0), ("G", 1)]),
            disallow,
            Some("numbers of enumerators"),
        ),
        (
            "union: same",
            un(F, vec![("a", long(), vec![1])]),
            un(F, vec![("a", long(), vec![1])]),
            d,
            None,
        ),
        (
            "union: final labels differ",
            un(F, vec![("a", long(), vec![1]), ("b", long(), vec![2])]),
            un(F, vec![("a", long(), vec![1])]),
            d,
            Some("label 2 missing"),
        ),
        (
            "union: appendable reader lacks a label",
            un(A, vec![("a", long(), vec![1]), ("b", long(), vec![2])]),
            un(A, vec![("a", long(), vec![1])]),
            d,
            None,
        ),
        (
            "union: case types",
            un(A, vec![("a", long(), vec![1])]),
            un(A, vec![("a", short(), vec![1])]),
            d,
            Some("not assignable: a: "),
        ),
        (
            "union: no label in common",
            un(A, vec![("a", long(), vec![1])]),
            un(A, vec![("b", long(), vec![2])]),
            d,
            Some("no case label in common"),
        ),
        (
            "kinds differ",
            st(F, vec![(0, "x", long(), "")]),
            un(F, vec![("a", long(), vec![1])]),
            d,
            Some("different kinds"),
        ),
    ];
    for (rule, w, r, tc, expect) in rows {
        let got = assignable(&w, &r, &tc);
        match (expect, got) {
            (None, Ok(())) => {}
            (Some(part), Err(e)) => {
                let msg = e.to_string();
                assert!(msg.contains(part), "{rule}: expected {part:?} in {msg:?}");
                assert!(matches!(e, DynamicError::NotAssignable { .. }), "{rule}");
            }
            (None, Err(e)) => panic!("{rule}: expected assignable, got {e}"),
            (Some(part), Ok(())) => panic!("{rule}: expected not assignable ({part})"),
        }
    }
}

/// The evolution the codec tolerates is the one assignability allows: an appendable writer
/// with fewer members decodes with the reader's extra members defaulted, one with more has
/// them skipped, and a mutable writer's unknown members are skipped in XCDR1 and XCDR2.
#[test]
fn assignable_evolutions_decode() {
    use halyard_cdr::{DataRepresentation as R, Endianness::Little};
    use DynamicValue as V;
    let tc = TypeConsistency::default();
    let x = |v| Some(V::Int32(v));
    let empty = Some(V::Sequence(vec![]));

    let a_old = st(A, vec![(0, "x", long(), "")]);
    let a_new = st(A, vec![(0, "x", long(), ""), (1, "y", seq(short(), 0), "")]);
    assignable(&a_old, &a_new, &tc).unwrap();
    assignable(&a_new, &a_old, &tc).unwrap();
    let b = encode(&a_old, &V::Struct(vec![x(7)]), R::Xcdr2, Little).unwrap();
    assert_eq!(
        decode(&a_new, &b).unwrap(),
        V::Struct(vec![x(7), empty.clone()])
    );
    let long_sample = V::Struct(vec![x(8), Some(V::Sequence(vec![V::Int16(1)]))]);
    let b = encode(&a_new, &long_sample, R::Xcdr2, Little).unwrap();
    assert_eq!(decode(&a_old, &b).unwrap(), V::Struct(vec![x(8)]));

    let m_old = st(Mu, vec![(0, "x", long(), ""), (5, "gone", string(0), "")]);
    let m_new = st(
        Mu,
        vec![(7, "y", seq(short(), 0), ""), (0, "x", long(), "")],
    );
    assignable(&m_old, &m_new, &tc).unwrap();
    let v = V::Struct(vec![x(9), Some(V::String("old".into()))]);
    for rep in [R::Xcdr1, R::Xcdr2] {
        let b = encode(&m_old, &v, rep, Little).unwrap();
        assert_eq!(
            decode(&m_new, &b).unwrap(),
            V::Struct(vec![empty.clone(), x(9)]),
            "{rep:?}"
        );
    }
}
