//! Proves the dynamic codec agrees with `halyard-cdr`'s derived types: identical bytes and key
//! hashes for final and appendable structs, identical key hashes for mutable ones, and
//! mutual decoding of XCDR2 mutable data (the bytes differ there: Cyclone DDS 11, which the
//! dynamic codec follows, uses EMHEADER length codes 5..=7 and no must-understand bit on
//! keys, where the derive writes length code 4 and sets it).

use halyard_cdr::{DataRepresentation, Endianness, Topic};
use halyard_xtypes::dynamic::*;
use halyard_xtypes::PrimitiveKind;

#[derive(Topic, Clone, Debug, PartialEq, Default)]
#[topic(extensibility = "final")]
struct Fin {
    #[key]
    id: u32,
    name: String,
    vals: Vec<i16>,
    arr: [f64; 3],
    flag: bool,
    big: u64,
}

#[derive(Topic, Clone, Debug, PartialEq, Default)]
#[topic(extensibility = "appendable")]
struct App {
    #[key]
    k: i64,
    #[key]
    tag: String,
    inner: Vec<Fin>,
}

#[derive(Topic, Clone, Debug, PartialEq, Default)]
#[topic(extensibility = "mutable")]
struct Mut {
    #[key]
    #[id(3)]
    k: u32,
    #[id(1)]
    s: String,
    #[id(7)]
    seq: Vec<i32>,
    #[id(2)]
    small: u8,
}

fn p(k: PrimitiveKind) -> DynamicType {
    DynamicType::new(TypeNode::Primitive(k))
}

fn st(name: &str, ext: Extensibility, members: Vec<(u32, &str, DynamicType, bool)>) -> DynamicType {
    DynamicType::new(TypeNode::Struct(StructDesc {
        name: name.into(),
        extensibility: ext,
        base: None,
        members: members
            .into_iter()
            .map(|(id, n, ty, key)| MemberDesc {
                name: n.into(),
                id,
                ty,
                key,
                optional: false,
                must_understand: false,
                external: false,
            })
            .collect(),
        own_start: 0,
        names_known: true,
        nested: false,
    }))
}

fn fin_type() -> DynamicType {
    st(
        "Fin",
        Extensibility::Final,
        vec![
            (0, "id", p(PrimitiveKind::UInt32), true),
            (
                1,
                "name",
                DynamicType::new(TypeNode::String8 { bound: 0 }),
                false,
            ),
            (
                2,
                "vals",
                DynamicType::new(TypeNode::Sequence {
                    element: p(PrimitiveKind::Int16),
                    bound: 0,
                }),
                false,
            ),
            (
                3,
                "arr",
                DynamicType::new(TypeNode::Array {
                    element: p(PrimitiveKind::Float64),
                    dims: vec![3],
                }),
                false,
            ),
            (4, "flag", p(PrimitiveKind::Boolean), false),
            (5, "big", p(PrimitiveKind::UInt64), false),
        ],
    )
}

fn fin_value(f: &Fin) -> DynamicValue {
    use DynamicValue as V;
    V::Struct(vec![
        Some(V::UInt32(f.id)),
        Some(V::String(f.name.clone())),
        Some(V::Sequence(f.vals.iter().map(|v| V::Int16(*v)).collect())),
        Some(V::Array(f.arr.iter().map(|v| V::Float64(*v)).collect())),
        Some(V::Bool(f.flag)),
        Some(V::UInt64(f.big)),
    ])
}

fn samples() -> Vec<Fin> {
    vec![
        Fin {
            id: 7,
            name: "x".into(),
            vals: vec![1, -2, 3],
            arr: [0.5, -1.0, 2.0],
            flag: true,
            big: u64::MAX - 3,
        },
        Fin {
            id: 0xdead_beef,
            ..Default::default()
        },
    ]
}

fn ours(t: &DynamicType, v: &DynamicValue, rep: DataRepresentation) -> Vec<u8> {
    encode(t, v, rep, Endianness::Little).unwrap()
}

fn theirs<T: halyard_cdr::TopicType>(s: &T, rep: DataRepresentation) -> Vec<u8> {
    let mut out = Vec::new();
    halyard_cdr::serialize(s, rep, &mut out).unwrap();
    out
}

#[test]
fn final_and_appendable_bytes_and_key_hashes_match_the_derive() {
    let ft = fin_type();
    for f in samples() {
        let v = fin_value(&f);
        for rep in [DataRepresentation::Xcdr1, DataRepresentation::Xcdr2] {
            assert_eq!(ours(&ft, &v, rep), theirs(&f, rep), "Fin {rep:?}");
        }
        assert_eq!(
            key_hash(&ft, &v).unwrap(),
            halyard_cdr::key_hash(&f).unwrap()
        );
    }
    let at = st(
        "App",
        Extensibility::Appendable,
        vec![
            (0, "k", p(PrimitiveKind::Int64), true),
            (
                1,
                "tag",
                DynamicType::new(TypeNode::String8 { bound: 0 }),
                true,
            ),
            (
                2,
                "inner",
                DynamicType::new(TypeNode::Sequence {
                    element: ft.clone(),
                    bound: 0,
                }),
                false,
            ),
        ],
    );
    let a = App {
        k: -5,
        tag: "tag".into(),
        inner: samples(),
    };
    let av = DynamicValue::Struct(vec![
        Some(DynamicValue::Int64(a.k)),
        Some(DynamicValue::String(a.tag.clone())),
        Some(DynamicValue::Sequence(
            a.inner.iter().map(fin_value).collect(),
        )),
    ]);
    for rep in [DataRepresentation::Xcdr1, DataRepresentation::Xcdr2] {
        assert_eq!(ours(&at, &av, rep), theirs(&a, rep), "App {rep:?}");
    }
    assert_eq!(
        key_hash(&at, &av).unwrap(),
        halyard_cdr::key_hash(&a).unwrap(),
        "MD5 key hash"
    );
}

#[test]
fn mutable_key_hash_matches_and_xcdr2_decodes_both_ways() {
    let mt = st(
        "Mut",
        Extensibility::Mutable,
        vec![
            (3, "k", p(PrimitiveKind::UInt32), true),
            (
                1,
                "s",
                DynamicType::new(TypeNode::String8 { bound: 0 }),
                false,
            ),
            (
                7,
                "seq",
                DynamicType::new(TypeNode::Sequence {
                    element: p(PrimitiveKind::Int32),
                    bound: 0,
                }),
                false,
            ),
            (2, "small", p(PrimitiveKind::Byte), false),
        ],
    );
    let m = Mut {
        k: 9,
        s: "hello".into(),
        seq: vec![4, 5],
        small: 200,
    };
    use DynamicValue as V;
    let mv = V::Struct(vec![
        Some(V::UInt32(9)),
        Some(V::String("hello".into())),
        Some(V::Sequence(vec![V::Int32(4), V::Int32(5)])),
        Some(V::Byte(200)),
    ]);
    assert_eq!(
        key_hash(&mt, &mv).unwrap(),
        halyard_cdr::key_hash(&m).unwrap()
    );
    let rep = DataRepresentation::Xcdr2;
    assert_eq!(decode(&mt, &theirs(&m, rep)).unwrap(), mv);
    assert_eq!(
        halyard_cdr::deserialize::<Mut>(&ours(&mt, &mv, rep)).unwrap(),
        m
    );
    assert_eq!(
        decode(&mt, &theirs(&m, DataRepresentation::Xcdr1)).unwrap(),
        mv,
        "short PL headers read"
    );
}
