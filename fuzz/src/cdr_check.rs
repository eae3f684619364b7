//! The `cdr_decode` check: a rich `#[derive(Topic)]` type in final, appendable and mutable
//! variants (strings, sequences, arrays, optionals, nested final/appendable/mutable structs,
//! enums, boxes, keys) decoded from arbitrary bytes under every encapsulation id; whatever
//! decodes must re-serialize, re-decode to the same value and re-serialize to the same bytes.
//!
//! The types are a copy of crates/halyard-cdr/tests/types/mod.rs.
#![allow(dead_code)]

use halyard_cdr::{
    deserialize, deserialize_key, key_hash, serialize, serialize_key, CdrType,
    DataRepresentation, Topic, TopicType, CDR2_BE, CDR2_LE, CDR_BE, CDR_LE, D_CDR2_BE,
    D_CDR2_LE, PL_CDR2_BE, PL_CDR2_LE, PL_CDR_BE, PL_CDR_LE,
};
use std::fmt::Debug;

/// Every encapsulation id the decoder accepts.
pub const ENCAPSULATIONS: [u16; 10] = [
    CDR_BE, CDR_LE, PL_CDR_BE, PL_CDR_LE, CDR2_BE, CDR2_LE, D_CDR2_BE, D_CDR2_LE, PL_CDR2_BE,
    PL_CDR2_LE,
];


/// A C-like enumeration with explicit, non-contiguous values.
#[derive(CdrType, Debug, Clone, Copy, PartialEq, Default)]
#[repr(u32)]
pub enum Color {
    #[default]
    Red = 0,
    Green = 5,
    Blue = 9,
}

/// A final nested struct.
#[derive(CdrType, Debug, Clone, PartialEq, Default)]
pub struct Point {
    pub x: i32,
    pub y: f64,
}

/// An appendable nested struct.
#[derive(CdrType, Debug, Clone, PartialEq, Default)]
#[topic(extensibility = "appendable")]
pub struct AppInner {
    pub a: u16,
    pub label: String,
}

/// A mutable nested struct with explicit ids.
#[derive(CdrType, Debug, Clone, PartialEq, Default)]
#[topic(extensibility = "mutable")]
pub struct MutInner {
    #[id(10)]
    pub a: u8,
    #[id(20)]
    pub b: Option<u64>,
    #[id(3)]
    pub s: String,
}

macro_rules! rich {
    ($name:ident, $ext:literal) => {
        /// Every supported member kind.
        #[derive(Topic, Debug, Clone, PartialEq, Default)]
        #[topic(extensibility = $ext)]
        pub struct $name {
            pub b: bool,
            pub o: u8,
            pub i8v: i8,
            pub u16v: u16,
            pub i16v: i16,
            pub u32v: u32,
            pub i32v: i32,
            pub u64v: u64,
            pub i64v: i64,
            pub f32v: f32,
            pub f64v: f64,
            pub c: char,
            pub s: String,
            pub bytes: Vec<u8>,
            pub arr: [u16; 3],
            pub barr: [u8; 5],
            pub pts: Vec<Point>,
            pub parr: [Point; 2],
            pub strs: Vec<String>,
            pub color: Color,
            pub colors: Vec<Color>,
            pub opt_some: Option<u32>,
            pub opt_none: Option<String>,
            pub opt_pt: Option<Point>,
            pub app: AppInner,
            pub muts: Vec<MutInner>,
            pub boxed: Box<Point>,
            pub nested: Vec<Vec<i16>>,
            #[key]
            #[id(100)]
            pub id: u32,
            #[key]
            pub name: String,
        }

        impl $name {
            /// A value with every member set to something non-default.
            pub fn sample() -> Self {
                $name {
                    b: true,
                    o: 0xab,
                    i8v: -5,
                    u16v: 0x1234,
                    i16v: -300,
                    u32v: 0xdead_beef,
                    i32v: -70000,
                    u64v: 0x0102_0304_0506_0708,
                    i64v: -1 << 40,
                    f32v: 1.25,
                    f64v: -2.5e10,
                    c: 'Z',
                    s: "héllo".into(),
                    bytes: vec![1, 2, 3, 4, 5, 6, 7],
                    arr: [1, 2, 3],
                    barr: [9, 8, 7, 6, 5],
                    pts: vec![Point { x: 1, y: 2.0 }, Point { x: -3, y: 4.5 }],
                    parr: [Point { x: 5, y: 6.0 }, Point { x: 7, y: 8.0 }],
                    strs: vec!["a".into(), String::new(), "ccc".into()],
                    color: Color::Green,
                    colors: vec![Color::Blue, Color::Red],
                    opt_some: Some(42),
                    opt_none: None,
                    opt_pt: Some(Point { x: 11, y: 0.5 }),
                    app: AppInner {
                        a: 77,
                        label: "app".into(),
                    },
                    muts: vec![
                        MutInner {
                            a: 1,
                            b: Some(2),
                            s: "m1".into(),
                        },
                        MutInner {
                            a: 3,
                            b: None,
                            s: String::new(),
                        },
                    ],
                    boxed: Box::new(Point { x: 12, y: 13.0 }),
                    nested: vec![vec![1, -2], vec![], vec![3]],
                    id: 0x0a0b_0c0d,
                    name: "key".into(),
                }
            }
        }
    };
}

rich!(RichFinal, "final");
rich!(RichAppendable, "appendable");
rich!(RichMutable, "mutable");

/// The ddsperf `KeyedSeq` type.
#[derive(Topic, Debug, Clone, PartialEq, Default)]
#[topic(type_name = "KeyedSeq")]
pub struct KeyedSeq {
    pub seq: u32,
    #[key]
    pub keyval: u32,
    pub baggage: Vec<u8>,
}

const REPS: [DataRepresentation; 2] = [DataRepresentation::Xcdr1, DataRepresentation::Xcdr2];

/// Decoded → serialize → decode → serialize: same value (by Debug, so NaN compares) and
/// same bytes; the key round trip preserves the key hash.
fn round_trip<T: TopicType + Debug>(v: &T) {
    let kh = key_hash(v).expect("key_hash of a decoded sample");
    for rep in REPS {
        let mut b1 = Vec::new();
        serialize(v, rep, &mut b1)
            .unwrap_or_else(|e| panic!("{rep:?}: decoded sample does not serialize: {e:?}\n{v:?}"));
        let v2: T = deserialize(&b1).unwrap_or_else(|e| {
            panic!("{rep:?}: re-serialized sample does not decode: {e:?}\n{v:?}\n{b1:02x?}")
        });
        assert_eq!(format!("{v:?}"), format!("{v2:?}"), "{rep:?}: value changed");
        let mut b2 = Vec::new();
        serialize(&v2, rep, &mut b2).expect("second serialize");
        assert_eq!(b1, b2, "{rep:?}: bytes changed");

        let mut k = Vec::new();
        serialize_key(v, rep, &mut k).expect("serialize_key of a decoded sample");
        let kv: T = deserialize_key(&k)
            .unwrap_or_else(|e| panic!("{rep:?}: serialized key does not decode: {e:?}\n{v:?}"));
        assert_eq!(key_hash(&kv).expect("key_hash"), kh, "{rep:?}: key hash after key round trip");
    }
}

fn decode_as<T: TopicType + Debug>(bytes: &[u8]) {
    if let Ok(v) = deserialize::<T>(bytes) {
        round_trip(&v);
    }
    if let Ok(v) = deserialize_key::<T>(bytes) {
        let _ = key_hash(&v);
        for rep in REPS {
            let mut b = Vec::new();
            serialize(&v, rep, &mut b).expect("key-only sample serializes");
        }
    }
}

fn decode_all(bytes: &[u8]) {
    decode_as::<RichFinal>(bytes);
    decode_as::<RichAppendable>(bytes);
    decode_as::<RichMutable>(bytes);
    decode_as::<KeyedSeq>(bytes);
}

/// The fuzz entry: the input as it is (its own encapsulation header), then its body behind
/// each of the encapsulation ids.
pub fn check_cdr(data: &[u8]) {
    decode_all(data);
    let Some(body) = data.get(4..) else {
        return;
    };
    let mut buf = Vec::with_capacity(data.len());
    for enc in ENCAPSULATIONS {
        buf.clear();
        buf.extend_from_slice(&enc.to_be_bytes());
        buf.extend_from_slice(&data[2..4]);
        buf.extend_from_slice(body);
        decode_all(&buf);
    }
}
