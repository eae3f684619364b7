//! Proves value → bytes → value round trips for seeded random types (every type kind,
//! extensibility and optional/key combination) in XCDR1 and XCDR2, both byte orders, and
//! through JSON; also key-only payloads. The seed of a failing case is printed.

use halyard_cdr::{DataRepresentation, Endianness};
use halyard_xtypes::dynamic::*;
use halyard_xtypes::PrimitiveKind;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

const PRIMS: [PrimitiveKind; 14] = [
    PrimitiveKind::Boolean,
    PrimitiveKind::Byte,
    PrimitiveKind::Int8,
    PrimitiveKind::UInt8,
    PrimitiveKind::Int16,
    PrimitiveKind::UInt16,
    PrimitiveKind::Int32,
    PrimitiveKind::UInt32,
    PrimitiveKind::Int64,
    PrimitiveKind::UInt64,
    PrimitiveKind::Float32,
    PrimitiveKind::Float64,
    PrimitiveKind::Char8,
    PrimitiveKind::Char16,
];

fn ext(rng: &mut Rng) -> Extensibility {
    [
        Extensibility::Final,
        Extensibility::Appendable,
        Extensibility::Mutable,
    ][rng.below(3) as usize]
}

fn gen_type(rng: &mut Rng, depth: u32, n: &mut u32) -> DynamicType {
    *n += 1;
    let leaf = depth >= 3 || rng.chance(35);
    let node = if leaf {
        match rng.below(4) {
            0 => TypeNode::String8 {
                bound: [0, 5, 300][rng.below(3) as usize],
            },
            1 => gen_enum(rng, *n),
            2 if rng.chance(50) => TypeNode::Bitmask(BitmaskDesc {
                name: format!("B{n}"),
                bit_bound: [8, 16, 32, 64][rng.below(4) as usize],
                flags: vec![("F0".into(), 0), ("F3".into(), 3), ("F7".into(), 7)],
            }),
            _ => TypeNode::Primitive(PRIMS[rng.below(PRIMS.len() as u64) as usize]),
        }
    } else {
        match rng.below(6) {
            0 => TypeNode::Sequence {
                element: gen_type(rng, depth + 1, n),
                bound: [0, 3][rng.below(2) as usize],
            },
            1 => TypeNode::Array {
                element: gen_type(rng, depth + 1, n),
                dims: if rng.chance(50) { vec![2] } else { vec![2, 3] },
            },
            2 => TypeNode::Map {
                key: DynamicType::new(if rng.chance(50) {
                    TypeNode::String8 { bound: 0 }
                } else {
                    TypeNode::Primitive(PrimitiveKind::Int32)
                }),
                value: gen_type(rng, depth + 1, n),
                bound: 0,
            },
            3 => gen_union(rng, depth, n),
            4 => TypeNode::Alias {
                name: format!("A{n}"),
                target: gen_type(rng, depth + 1, n),
            },
            _ => gen_struct(rng, depth, n),
        }
    };
    DynamicType::new(node)
}

fn gen_enum(rng: &mut Rng, n: u32) -> TypeNode {
    let bit_bound = [8, 16, 32][rng.below(3) as usize];
    TypeNode::Enum(EnumDesc {
        name: format!("E{n}"),
        bit_bound,
        literals: vec![
            EnumLiteralDesc {
                name: "A".into(),
                value: 0,
                default: false,
            },
            EnumLiteralDesc {
                name: "B".into(),
                value: 5,
                default: false,
            },
            EnumLiteralDesc {
                name: "C".into(),
                value: -3,
                default: false,
            },
        ],
    })
}

fn gen_struct(rng: &mut Rng, depth: u32, n: &mut u32) -> TypeNode {
    let e = ext(rng);
    let count = 1 + rng.below(4) as usize;
    let mut members = Vec::new();
    for i in 0..count {
        let id = if e == Extensibility::Mutable {
            (i as u32) * 7 + rng.below(3) as u32 + 1
        } else {
            i as u32
        };
        members.push(MemberDesc {
            name: format!("m{i}"),
            id,
            ty: gen_type(rng, depth + 1, n),
            key: i == 0 && rng.chance(50),
            optional: i > 0 && rng.chance(30),
            must_understand: rng.chance(10),
            external: false,
        });
    }
    TypeNode::Struct(StructDesc {
        name: format!("S{n}"),
        extensibility: e,
        base: None,
        members,
        own_start: 0,
        names_known: true,
        nested: false,
    })
}

fn gen_union(rng: &mut Rng, depth: u32, n: &mut u32) -> TypeNode {
    let disc = DynamicType::new(match rng.below(3) {
        0 => TypeNode::Primitive(PrimitiveKind::Int16),
        1 => TypeNode::Primitive(PrimitiveKind::Int32),
        _ => gen_enum(rng, *n),
    });
    let mut cases = vec![
        UnionCaseDesc {
            name: "a".into(),
            id: 1,
            ty: gen_type(rng, depth + 1, n),
            labels: vec![0],
            default: false,
        },
        UnionCaseDesc {
            name: "b".into(),
            id: 2,
            ty: gen_type(rng, depth + 1, n),
            labels: vec![5, -3],
            default: false,
        },
    ];
    // A default case needs a discriminator value no case lists: none is left in the enums.
    if rng.chance(50) && !matches!(disc.node(), TypeNode::Enum(_)) {
        cases.push(UnionCaseDesc {
            name: "c".into(),
            id: 3,
            ty: gen_type(rng, depth + 1, n),
            labels: vec![],
            default: true,
        });
    }
    TypeNode::Union(UnionDesc {
        name: format!("U{n}"),
        extensibility: ext(rng),
        discriminator: disc,
        discriminator_key: false,
        cases,
        names_known: true,
    })
}

fn gen_value(rng: &mut Rng, t: &DynamicType) -> DynamicValue {
    use DynamicValue as V;
    match t.resolved().node() {
        TypeNode::Primitive(p) => match p {
            PrimitiveKind::Boolean => V::Bool(rng.chance(50)),
            PrimitiveKind::Byte => V::Byte(rng.next() as u8),
            PrimitiveKind::Int8 => V::Int8(rng.next() as i8),
            PrimitiveKind::UInt8 => V::UInt8(rng.next() as u8),
            PrimitiveKind::Int16 => V::Int16(rng.next() as i16),
            PrimitiveKind::UInt16 => V::UInt16(rng.next() as u16),
            PrimitiveKind::Int32 => V::Int32(rng.next() as i32),
            PrimitiveKind::UInt32 => V::UInt32(rng.next() as u32),
            PrimitiveKind::Int64 => V::Int64(rng.next() as i64),
            PrimitiveKind::UInt64 => V::UInt64(rng.next()),
            PrimitiveKind::Float32 => V::Float32((rng.next() as i32) as f32 / 64.0),
            PrimitiveKind::Float64 => V::Float64((rng.next() as i64) as f64 / 1024.0),
            PrimitiveKind::Char8 => V::Char8(char::from(rng.next() as u8 | 1)),
            _ => V::Char16(char::from_u32(0x41 + rng.below(0x3000) as u32).unwrap_or('x')),
        },
        TypeNode::String8 { bound } => {
            let len = rng.below(u64::from(if *bound == 0 { 12 } else { *bound }) + 1) as usize;
            V::String(
                (0..len)
                    .map(|_| ['a', 'z', '7', ' '][rng.below(4) as usize])
                    .collect(),
            )
        }
        TypeNode::String16 { bound } => {
            let len = rng.below(u64::from(if *bound == 0 { 6 } else { *bound }) + 1) as usize;
            V::String(
                (0..len)
                    .map(|_| ['w', 'ß', '€', '😀'][rng.below(4) as usize])
                    .filter(|c| *bound == 0 || c.len_utf16() == 1)
                    .collect(),
            )
        }
        TypeNode::Enum(e) => V::Enum(e.literals[rng.below(e.literals.len() as u64) as usize].value),
        TypeNode::Bitmask(b) => V::Bitmask(
            b.flags
                .iter()
                .filter(|_| rng.chance(50))
                .fold(0, |acc, (_, p)| acc | (1 << p)),
        ),
        TypeNode::Sequence { element, bound } => {
            let n = rng.below(u64::from(if *bound == 0 { 4 } else { *bound }) + 1);
            V::Sequence((0..n).map(|_| gen_value(rng, element)).collect())
        }
        TypeNode::Array { element, dims } => {
            let n: u32 = dims.iter().product();
            V::Array((0..n).map(|_| gen_value(rng, element)).collect())
        }
        TypeNode::Map { key, value, .. } => {
            let n = rng.below(3);
            let mut pairs: Vec<(DynamicValue, DynamicValue)> = Vec::new();
            for i in 0..n {
                let k = match key.resolved().node() {
                    TypeNode::String8 { .. } => V::String(format!("k{i}")),
                    _ => V::Int32(i as i32 * 3 - 2),
                };
                pairs.push((k, gen_value(rng, value)));
            }
            V::Map(pairs)
        }
        TypeNode::Struct(s) => V::Struct(
            s.members
                .iter()
                .map(|m| {
                    if m.optional && rng.chance(40) {
                        None
                    } else {
                        Some(gen_value(rng, &m.ty))
                    }
                })
                .collect(),
        ),
        TypeNode::Union(u) => {
            let i = rng.below(u.cases.len() as u64) as usize;
            let c = &u.cases[i];
            let label = c.labels.first().map_or(1, |l| i64::from(*l));
            V::Union {
                discriminator: Box::new(label_value(&u.discriminator, label)),
                case: Some((i, Box::new(gen_value(rng, &c.ty)))),
            }
        }
        _ => V::Int32(0),
    }
}

/// wstrings are XCDR2-only here.
fn xcdr1_ok(t: &DynamicType) -> bool {
    match t.resolved().node() {
        TypeNode::String16 { .. } => false,
        TypeNode::Sequence { element, .. } | TypeNode::Array { element, .. } => xcdr1_ok(element),
        TypeNode::Map { key, value, .. } => xcdr1_ok(key) && xcdr1_ok(value),
        TypeNode::Struct(s) => s.members.iter().all(|m| xcdr1_ok(&m.ty)),
        TypeNode::Union(u) => u.cases.iter().all(|c| xcdr1_ok(&c.ty)),
        _ => true,
    }
}

#[test]
fn random_types_round_trip_in_every_representation_and_json() {
    for seed in 1..=400u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let mut n = 0;
        let t = DynamicType::new(gen_struct(&mut rng, 0, &mut n));
        for _ in 0..4 {
            let v = gen_value(&mut rng, &t);
            for rep in [DataRepresentation::Xcdr1, DataRepresentation::Xcdr2] {
                if rep == DataRepresentation::Xcdr1 && !xcdr1_ok(&t) {
                    continue;
                }
                for e in [Endianness::Little, Endianness::Big] {
                    let bytes = encode(&t, &v, rep, e)
                        .unwrap_or_else(|err| panic!("seed {seed}: encode {rep:?}: {err}\n{v:?}"));
                    let back = decode(&t, &bytes).unwrap_or_else(|err| {
                        panic!("seed {seed}: decode {rep:?} {e:?}: {err}\n{t:?}")
                    });
                    assert_eq!(back, v, "seed {seed}: {rep:?} {e:?}");
                    let key = encode_key(&t, &v, rep, e).unwrap();
                    let kv = decode_key(&t, &key)
                        .unwrap_or_else(|err| panic!("seed {seed}: key: {err}"));
                    assert_eq!(
                        key_hash(&t, &kv).unwrap(),
                        key_hash(&t, &v).unwrap(),
                        "seed {seed}: key hash"
                    );
                }
            }
            let j = to_json(&t, &v).unwrap();
            let back = from_json(&t, &j, JsonOptions::default())
                .unwrap_or_else(|err| panic!("seed {seed}: from_json: {err}\n{j}"));
            assert_eq!(back, v, "seed {seed}: JSON {j}");
        }
    }
}

/// The key scanner (`KeyScan`) gives the key hash of a full decode whenever it gives one,
/// and gives one for a good share of the random keyed types (so this cannot pass vacuously).
#[test]
fn key_scan_equals_full_decode_on_random_types() {
    let (mut scanned, mut covered_types) = (0, 0);
    for seed in 1..=3000u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let mut n = 0;
        let t = DynamicType::new(gen_struct(&mut rng, 0, &mut n));
        let Some(scan) = KeyScan::new(&t) else {
            continue;
        };
        covered_types += 1;
        for _ in 0..4 {
            let v = gen_value(&mut rng, &t);
            let want = key_hash(&t, &v).unwrap();
            for rep in [DataRepresentation::Xcdr1, DataRepresentation::Xcdr2] {
                if rep == DataRepresentation::Xcdr1 && !xcdr1_ok(&t) {
                    continue;
                }
                let bytes = encode(&t, &v, rep, Endianness::Little).unwrap();
                if let Some(h) = scan.key_hash(&bytes) {
                    assert_eq!(h, want, "seed {seed}: {rep:?}\n{t:?}\n{v:?}");
                    scanned += 1;
                }
                // Every truncation either falls back or still gives the right hash.
                for cut in 0..bytes.len() {
                    if let Some(h) = scan.key_hash(&bytes[..cut]) {
                        assert_eq!(h, want, "seed {seed}: {rep:?} cut at {cut}");
                    }
                }
                // Big-endian samples are left to the full decode.
                let be = encode(&t, &v, rep, Endianness::Big).unwrap();
                assert_eq!(scan.key_hash(&be), None, "seed {seed}: big-endian");
            }
        }
    }
    println!("{covered_types} covered types, {scanned} scanned samples");
    assert!(
        covered_types >= 50 && scanned >= 400,
        "{covered_types} types, {scanned} samples"
    );
}
