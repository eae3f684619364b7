//! Proves that `#[derive(Topic)]` / `#[derive(CdrType)]` announce the XTypes description
//! `halyard idl` (byte-identical to the Python `cyclonedds` package) gives the same type
//! written in IDL, byte for byte — TypeInformation and every TypeObject — whether the macro
//! computes it at expansion time or the type composes it at first use from its members'
//! types; and that a description given by hand, or turned off, is respected.

use std::collections::BTreeMap;

use halyard_cdr::{
    BoundedSeq, BoundedString, CdrType, Topic, TopicType, TypeDescription, XTypesType,
};
use halyard_idlc::TopicDescription;

/// The IDL of every derived type below.
const IDL: &str = r#"
module Eq {
  @final struct Prims {
    boolean b; char c; int8 i8v; octet o; uint8 u8v; short s; unsigned short us;
    long l; unsigned long ul; long long ll; unsigned long long ull; float f; double d;
  };
  @appendable struct Collections {
    @key string<16> name;
    string text;
    sequence<long> seq;
    sequence<octet, 8> bytes;
    sequence<uint8> small;
    sequence<string<4> > names;
    sequence<sequence<double> > matrix;
    long arr[3];
    double grid[2][3];
    string<5> labels[2];
    uint8 pixels[2][2];
    sequence<long, 300> long_bound;
    map<long, string> lookup;
  };
  @mutable struct Options {
    @id(10) long a;
    @id(5) @optional string note;
    @id(7) @optional sequence<long> more;
    @id(3) @key @must_understand unsigned long k;
  };
  enum Color { RED, GREEN, @default_literal BLUE };
  enum Level { @value(1) LOW, @value(5) MID, HIGH };
  struct Point { @key long x; @key long y; double weight; };
  @appendable struct Shape {
    @key Point where;
    Color color;
    sequence<Point> trail;
    Point corners[2];
    @optional Point target;
    @external Point outer;
    Level level;
  };
  @nested struct Leaf { Color c; };
  struct Middle { Leaf leaf; sequence<Color> colors; Level level; };
  struct Outer { Middle m; Leaf l2; Point p; map<string, Point> named; };
  struct Meters { double d; };
  struct Part { @key long id; };
  struct Whole { Part part; sequence<Part> parts; };
};
struct NoModule { long v; };
"#;

#[derive(Topic, Clone, Debug, Default, PartialEq)]
#[topic(type_name = "Eq::Prims")]
struct Prims {
    b: bool,
    c: char,
    i8v: i8,
    o: u8,
    #[uint8]
    u8v: u8,
    s: i16,
    us: u16,
    l: i32,
    ul: u32,
    ll: i64,
    ull: u64,
    f: f32,
    d: f64,
}

#[derive(Topic, Clone, Debug, Default, PartialEq)]
#[topic(type_name = "Eq::Collections", extensibility = "appendable")]
struct Collections {
    #[key]
    name: BoundedString<16>,
    text: String,
    seq: Vec<i32>,
    bytes: BoundedSeq<u8, 8>,
    #[uint8]
    small: Vec<u8>,
    names: Vec<BoundedString<4>>,
    matrix: Vec<Vec<f64>>,
    arr: [i32; 3],
    grid: [[f64; 3]; 2],
    labels: [BoundedString<5>; 2],
    #[uint8]
    pixels: [[u8; 2]; 2],
    long_bound: BoundedSeq<i32, 300>,
    lookup: BTreeMap<i32, String>,
}

#[derive(Topic, Clone, Debug, Default, PartialEq)]
#[topic(type_name = "Eq::Options", extensibility = "mutable")]
struct Options {
    #[id(10)]
    a: i32,
    #[id(5)]
    note: Option<String>,
    #[id(7)]
    more: Option<Vec<i32>>,
    #[id(3)]
    #[key]
    #[must_understand]
    k: u32,
}

#[derive(CdrType, Clone, Copy, Debug, Default, PartialEq)]
#[topic(type_name = "Eq::Color")]
#[allow(clippy::upper_case_acronyms)]
enum Color {
    RED,
    GREEN,
    #[default]
    BLUE,
}

#[derive(CdrType, Clone, Copy, Debug, Default, PartialEq)]
#[topic(type_name = "Eq::Level")]
#[allow(clippy::upper_case_acronyms)]
enum Level {
    #[default]
    LOW = 1,
    MID = 5,
    HIGH,
}

#[derive(CdrType, Clone, Debug, Default, PartialEq)]
#[topic(type_name = "Eq::Point")]
struct Point {
    #[key]
    x: i32,
    #[key]
    y: i32,
    weight: f64,
}

#[derive(Topic, Clone, Debug, Default, PartialEq)]
#[topic(type_name = "Eq::Shape", extensibility = "appendable")]
struct Shape {
    #[key]
    r#where: Point,
    color: Color,
    trail: Vec<Point>,
    corners: [Point; 2],
    target: Option<Point>,
    outer: Box<Point>,
    level: Level,
}

#[derive(CdrType, Clone, Debug, Default, PartialEq)]
#[topic(type_name = "Eq::Leaf", nested)]
struct Leaf {
    c: Color,
}

#[derive(CdrType, Clone, Debug, Default, PartialEq)]
#[topic(type_name = "Eq::Middle")]
struct Middle {
    leaf: Leaf,
    colors: Vec<Color>,
    level: Level,
}

#[derive(Topic, Clone, Debug, Default, PartialEq)]
#[topic(type_name = "Eq::Outer")]
struct Outer {
    m: Middle,
    l2: Leaf,
    p: Point,
    named: BTreeMap<String, Point>,
}

/// An alias hides `f64` from the macro: this type is described at first use.
type Metres = f64;

#[derive(Topic, Clone, Debug, Default, PartialEq)]
#[topic(type_name = "Eq::Meters")]
struct MetersLater {
    d: Metres,
}

#[derive(Topic, Clone, Debug, Default, PartialEq)]
#[topic(type_name = "Eq::Meters")]
struct MetersNow {
    d: f64,
}

/// A topic type as another's member (described at expansion time, composed at first use).
#[derive(Topic, Clone, Debug, Default, PartialEq)]
#[topic(type_name = "Eq::Part")]
struct Part {
    #[key]
    id: i32,
}

#[derive(Topic, Clone, Debug, Default, PartialEq)]
#[topic(type_name = "Eq::Whole")]
struct Whole {
    part: Part,
    parts: Vec<Part>,
}

#[derive(Topic, Clone, Debug, Default, PartialEq)]
struct NoModule {
    v: i32,
}

fn idl() -> halyard_idlc::TypeSet {
    let spec = halyard_idl::parse_str("eq.idl", IDL, &Default::default()).expect("the IDL parses");
    halyard_idlc::type_objects(&spec).expect("halyard idl describes it")
}

fn assert_same(ours: &TypeDescription, theirs: &TopicDescription, name: &str) {
    assert_eq!(
        ours.type_information,
        theirs.type_information_bytes.as_slice(),
        "{name}: TypeInformation\nours:   {:?}\ntheirs: {:?}",
        halyard_xtypes_info(ours.type_information),
        theirs.type_information
    );
    let ours: Vec<&[u8]> = ours.type_objects.to_vec();
    let theirs: Vec<&[u8]> = theirs.type_objects.iter().map(Vec::as_slice).collect();
    assert_eq!(ours, theirs, "{name}: TypeObjects");
}

fn halyard_xtypes_info(b: &[u8]) -> String {
    match halyard_xtypes::TypeInformation::from_xcdr2(b) {
        Ok(i) => format!("{i:?}"),
        Err(e) => format!("undecodable: {e}"),
    }
}

fn check<T: TopicType>(set: &halyard_idlc::TypeSet, name: &str) {
    let theirs = set
        .topics
        .get(name)
        .unwrap_or_else(|| panic!("{name} is a topic of the IDL"));
    let ours = T::type_description().unwrap_or_else(|| panic!("{name} has a description"));
    assert_same(ours, theirs, name);
}

#[test]
fn derived_topic_types_announce_what_halyard_idl_gives_the_same_idl() {
    let set = idl();
    check::<Prims>(&set, "Eq::Prims");
    check::<Collections>(&set, "Eq::Collections");
    check::<Options>(&set, "Eq::Options");
    check::<Shape>(&set, "Eq::Shape");
    check::<Outer>(&set, "Eq::Outer");
    check::<Whole>(&set, "Eq::Whole");
    check::<Part>(&set, "Eq::Part");
    check::<NoModule>(&set, "NoModule");
}

#[test]
fn nested_types_and_enums_describe_themselves_as_halyard_idl_does() {
    let set = idl();
    for (name, t) in [
        ("Eq::Point", Point::xtypes_ref()),
        ("Eq::Middle", Middle::xtypes_ref()),
        ("Eq::Color", Color::xtypes_ref()),
        ("Eq::Level", Level::xtypes_ref()),
    ] {
        let node = t.as_named().expect("a named type");
        let entry = &set.types[name];
        let d = node.described();
        assert_eq!(d.complete_id, entry.complete_id, "{name}");
        assert_eq!(d.minimal_id, entry.minimal_id, "{name}");
        assert_eq!(node.name(), name);
    }
}

#[test]
fn composed_at_first_use_equals_computed_at_expansion() {
    let now = MetersNow::type_description().expect("described");
    let later = MetersLater::type_description().expect("described");
    assert_eq!(now.type_information, later.type_information);
    assert_eq!(now.type_objects, later.type_objects);
    assert_same(later, &idl().topics["Eq::Meters"], "Eq::Meters");
    // Computed once: the same static each time.
    assert!(std::ptr::eq(
        later,
        MetersLater::type_description().expect("described")
    ));
}

static POINT_TYPE: TypeDescription = TypeDescription {
    type_information: &[1, 2, 3],
    type_objects: &[&[4, 5], &[6]],
};

#[derive(Topic, Clone, Debug, Default, PartialEq)]
#[topic(type_name = "M::Point", type_description = "POINT_TYPE")]
struct Given {
    #[key]
    id: i32,
    x: f64,
}

#[derive(Topic, Clone, Debug, Default, PartialEq)]
#[topic(type_description = false)]
struct Undescribed {
    v: Vec<Option<u32>>,
}

#[test]
fn a_description_given_by_hand_is_announced_as_it_is_and_one_turned_off_is_not() {
    let d = Given::type_description().expect("Given has a description");
    assert!(std::ptr::eq(d, &POINT_TYPE));
    assert_eq!(d.type_information, &[1, 2, 3]);
    assert_eq!(d.type_objects.len(), 2);
    // Turned off: not announced, and a member without an IDL equivalent (an optional
    // element here) is fine.
    assert!(Undescribed::type_description().is_none());
}
