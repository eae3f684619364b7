//! Shared test types: a rich struct with every supported member kind in three extensibilities.
#![allow(dead_code)]

use halyard_cdr::{CdrType, Topic};

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
