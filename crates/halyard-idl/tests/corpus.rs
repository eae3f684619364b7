//! Proves that every construct of the IDL corpus under `tests/idl/` parses into the expected
//! tree: names, types, bounds, constant values and the typed annotations.

mod common;

use common::*;
use halyard_idl::ast::*;
use halyard_idl::ParseOptions;

const CORPUS: &[&str] = &[
    "hello_world.idl",
    "shape.idl",
    "roundtrip.idl",
    "basic_types.idl",
    "collections.idl",
    "constants.idl",
    "unions.idl",
    "enums_bits.idl",
    "annotations.idl",
    "inheritance.idl",
    "unsupported.idl",
];

#[test]
fn corpus_has_at_least_twenty_types_and_all_parse() {
    let total: usize = CORPUS
        .iter()
        .map(|f| count_types(&parse(f).definitions))
        .sum();
    assert!(total >= 20, "only {total} types");
}

#[test]
fn hello_world_has_a_keyed_message() {
    let spec = parse("hello_world.idl");
    let msg = strukt(&spec, "HelloWorldData::Msg");
    let id = member(msg, "userID");
    assert!(id.typed.key);
    assert!(matches!(id.type_spec, TypeSpec::Basic(BasicType::Long, _)));
    assert!(matches!(
        member(msg, "message").type_spec,
        TypeSpec::String {
            wide: false,
            bound: None,
            ..
        }
    ));
    assert!(strukt(&spec, "HelloWorld").typed.topic);
    assert_eq!(msg.location.line, 4);
    assert_eq!(msg.location.column, 3);
    assert!(msg.location.file.ends_with("hello_world.idl"));
    assert_eq!((id.name.location.line, id.name.location.column), (7, 10));
}

#[test]
fn shape_type_is_appendable_with_a_bounded_key_and_an_extension() {
    let spec = parse("shape.idl");
    let shape = strukt(&spec, "ShapeType");
    assert_eq!(shape.typed.extensibility, Some(Extensibility::Appendable));
    let color = member(shape, "color");
    assert!(color.typed.key);
    match &color.type_spec {
        TypeSpec::String { bound: Some(b), .. } => assert_eq!(int(b), 128),
        other => panic!("{other:?}"),
    }
    let ext = strukt(&spec, "ShapeTypeExtended");
    assert_eq!(ext.typed.extensibility, Some(Extensibility::Final));
    assert_eq!(
        ext.base.as_ref().unwrap().resolved.as_deref(),
        Some("::ShapeType")
    );
    match &member(ext, "fillKind").type_spec {
        TypeSpec::Named(n) => assert_eq!(n.resolved.as_deref(), Some("::ShapeFillKind")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn roundtrip_and_throughput_types() {
    let spec = parse("roundtrip.idl");
    let rt = strukt(&spec, "RoundTripModule::DataType");
    assert!(matches!(
        &member(rt, "payload").type_spec,
        TypeSpec::Sequence { bound: None, .. }
    ));
    assert!(
        !member(rt, "payload").typed.key,
        "an empty keylist makes no key"
    );
    assert_eq!(
        dims(member(
            strukt(&spec, "ThroughputModule::DataType_1024"),
            "payload"
        )),
        vec![1024]
    );
    assert!(
        member(
            strukt(&spec, "ThroughputModule::DataType_Unbounded"),
            "count"
        )
        .typed
        .key
    );
    assert_eq!(spec.pragmas.len(), 1);
    assert_eq!(spec.pragmas[0].text, "keylist DataType");
    assert_eq!(
        (
            spec.pragmas[0].location.line,
            spec.pragmas[0].location.column
        ),
        (8, 1)
    );
}

#[test]
fn every_basic_type_and_string_kind() {
    let spec = parse("basic_types.idl");
    let all = strukt(&spec, "Basics::AllBasic");
    let types: Vec<BasicType> = all
        .members
        .iter()
        .map(|m| match m.type_spec {
            TypeSpec::Basic(b, _) => b,
            ref other => panic!("{other:?}"),
        })
        .collect();
    use BasicType::*;
    assert_eq!(
        types,
        vec![
            Short, UShort, Long, ULong, LongLong, ULongLong, Int8, UInt8, Short, UShort, Long,
            ULong, LongLong, ULongLong, Float, Double, LongDouble, Char, WChar, Boolean, Octet
        ]
    );
    let strings = strukt(&spec, "Basics::Strings");
    assert!(matches!(
        member(strings, "wide").type_spec,
        TypeSpec::String {
            wide: true,
            bound: None,
            ..
        }
    ));
    match &member(strings, "wide_bounded").type_spec {
        TypeSpec::String {
            wide: true,
            bound: Some(b),
            ..
        } => assert_eq!(int(b), 8),
        other => panic!("{other:?}"),
    }
}

#[test]
fn sequences_maps_arrays_and_typedefs() {
    let spec = parse("collections.idl");
    let h = strukt(&spec, "Collections::Holder");
    match &member(h, "bounded").type_spec {
        TypeSpec::Sequence { bound: Some(b), .. } => assert_eq!(int(b), 5),
        other => panic!("{other:?}"),
    }
    match &member(h, "nested").type_spec {
        TypeSpec::Sequence {
            element,
            bound: None,
            ..
        } => match &**element {
            TypeSpec::Sequence {
                element,
                bound: Some(b),
                ..
            } => {
                assert_eq!(int(b), 3);
                assert!(matches!(
                    &**element,
                    TypeSpec::String { bound: Some(_), .. }
                ));
            }
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
    match &member(h, "bounded_map").type_spec {
        TypeSpec::Map {
            key,
            value,
            bound: Some(b),
            ..
        } => {
            assert!(matches!(**key, TypeSpec::Basic(BasicType::Long, _)));
            assert!(matches!(**value, TypeSpec::Sequence { .. }));
            assert_eq!(int(b), 32);
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        &member(h, "dictionary").type_spec,
        TypeSpec::Map { bound: None, .. }
    ));
    assert_eq!(dims(member(h, "cube")), vec![2, 3, 4]);
    let Definition::Typedef(matrix) = def(&spec, "Collections::Matrix") else {
        panic!()
    };
    assert_eq!(
        matrix.declarators[0]
            .array
            .iter()
            .map(int)
            .collect::<Vec<_>>(),
        vec![3, 4]
    );
    let Definition::Typedef(longs) = def(&spec, "Collections::BoundedLongs") else {
        panic!()
    };
    assert_eq!(longs.declarators.len(), 2);
    assert_eq!(longs.declarators[1].name.name, "LongsArray");
    match &longs.type_spec {
        TypeSpec::Sequence { bound: Some(b), .. } => assert_eq!(int(b), 10),
        other => panic!("{other:?}"),
    }
    let Definition::Typedef(name) = def(&spec, "Collections::Name") else {
        panic!()
    };
    match &name.type_spec {
        TypeSpec::String { bound: Some(b), .. } => assert_eq!(int(b), 20),
        other => panic!("{other:?}"),
    }
}

#[test]
fn constant_expressions_evaluate() {
    let spec = parse("constants.idl");
    let c = |p| constant(&spec, p);
    assert_eq!(c("Consts::A"), ConstValue::Int(3));
    assert_eq!(c("Consts::B"), ConstValue::Int(13));
    assert_eq!(c("Consts::C"), ConstValue::Int(19));
    assert_eq!(c("Consts::MASK"), ConstValue::Int(255));
    assert_eq!(c("Consts::SHIFTED"), ConstValue::Int(23));
    assert_eq!(c("Consts::NEG"), ConstValue::Int(-3));
    assert_eq!(c("Consts::RATIO"), ConstValue::Float(1.25));
    assert_eq!(c("Consts::HALF"), ConstValue::Float(0.5));
    assert_eq!(c("Consts::BIG"), ConstValue::Float(1500.0));
    assert_eq!(c("Consts::GREETING"), ConstValue::Str("hello world".into()));
    assert_eq!(c("Consts::LETTER"), ConstValue::Char('x'));
    assert_eq!(c("Consts::WIDE"), ConstValue::Char('y'));
    assert_eq!(c("Consts::FLAG"), ConstValue::Bool(true));
    assert_eq!(c("Consts::SMALL"), ConstValue::Int(200));
    assert_eq!(
        c("Consts::FAVOURITE"),
        ConstValue::Enum {
            type_name: "::Consts::Color".into(),
            name: "GREEN".into(),
            value: 1
        }
    );
    assert_eq!(c("Consts::Inner::D"), ConstValue::Int(30));
    assert_eq!(c("Consts::Inner::E"), ConstValue::Int(43));
    let Definition::Typedef(t) = def(&spec, "Consts::Fixed") else {
        panic!()
    };
    assert_eq!(int(&t.declarators[0].array[0]), 30);
}

#[test]
fn unions_with_every_discriminator_kind() {
    let spec = parse("unions.idl");
    let by_long = union(&spec, "Unions::ByLong");
    assert_eq!(by_long.cases.len(), 3);
    let labels: Vec<i128> = by_long.cases[0]
        .labels
        .iter()
        .map(|l| match l {
            CaseLabel::Value(e) => int(e),
            CaseLabel::Default(_) => -1,
        })
        .collect();
    assert_eq!(labels, vec![1, 2]);
    assert!(matches!(by_long.cases[2].labels[0], CaseLabel::Default(_)));
    assert_eq!(by_long.cases[2].member.name.name, "other");
    let by_enum = union(&spec, "Unions::ByEnum");
    match &by_enum.cases[1].labels[0] {
        CaseLabel::Value(e) => {
            assert!(matches!(&e.value, Some(ConstValue::Enum { name, .. }) if name == "K_TEXT"))
        }
        other => panic!("{other:?}"),
    }
    let by_char = union(&spec, "Unions::ByChar");
    assert!(
        matches!(&by_char.cases[0].labels[0], CaseLabel::Value(e) if e.value == Some(ConstValue::Char('a')))
    );
    let by_bool = union(&spec, "Unions::ByBool");
    assert!(
        matches!(&by_bool.cases[1].labels[0], CaseLabel::Value(e) if e.value == Some(ConstValue::Bool(false)))
    );
    let by_typedef = union(&spec, "Unions::ByTypedef");
    assert_eq!(by_typedef.discriminator_annotations[0].name, "key");
    let fwd = union(&spec, "Unions::Forward");
    assert!(matches!(&fwd.cases[0].labels[0], CaseLabel::Value(e) if int(e) == -1));
}

#[test]
fn enums_bitmasks_and_bitsets() {
    let spec = parse("enums_bits.idl");
    let Definition::Enum(level) = def(&spec, "Bits::Level") else {
        panic!()
    };
    let values: Vec<i64> = level.enumerators.iter().map(|e| e.value).collect();
    assert_eq!(values, vec![0, 10, 11, 100]);
    assert!(level.enumerators[3].default_literal);
    let Definition::Enum(small) = def(&spec, "Bits::Small") else {
        panic!()
    };
    assert_eq!(small.typed.bit_bound, Some(16));
    let Definition::Bitmask(perm) = def(&spec, "Bits::Permissions") else {
        panic!()
    };
    assert_eq!(perm.typed.bit_bound, Some(8));
    assert_eq!(
        perm.flags.iter().map(|f| f.position).collect::<Vec<_>>(),
        vec![0, 1, 5]
    );
    let Definition::Bitset(header) = def(&spec, "Bits::Header") else {
        panic!()
    };
    assert_eq!(header.fields.len(), 4);
    assert!(header.fields[2].names.is_empty(), "padding");
    assert_eq!(header.fields[3].names.len(), 2);
    assert_eq!(int(&header.fields[3].width), 8);
    let Definition::Bitset(ext) = def(&spec, "Bits::ExtHeader") else {
        panic!()
    };
    assert_eq!(
        ext.base.as_ref().unwrap().resolved.as_deref(),
        Some("::Bits::Header")
    );
}

#[test]
fn known_annotations_become_typed_and_unknown_ones_are_kept() {
    let spec = parse("annotations.idl");
    let m = strukt(&spec, "Annotated::Mutable");
    assert_eq!(m.typed.extensibility, Some(Extensibility::Mutable));
    assert_eq!(m.typed.autoid, Some(AutoId::Hash));
    let id = member(m, "id");
    assert_eq!((id.typed.id, id.typed.key), (Some(5), true));
    assert!(member(m, "note").typed.optional);
    assert_eq!(member(m, "answer").typed.default, Some(ConstValue::Int(42)));
    assert!(member(m, "big").typed.external);
    assert!(member(m, "flags").typed.must_understand);
    assert_eq!(member(m, "flags").typed.id, Some(10));
    let a = strukt(&spec, "Annotated::Appendable");
    assert_eq!(
        (a.typed.extensibility, a.typed.autoid),
        (Some(Extensibility::Appendable), Some(AutoId::Hash))
    );
    assert_eq!(
        strukt(&spec, "Annotated::Final").typed.extensibility,
        Some(Extensibility::Final)
    );
    let t = strukt(&spec, "Annotated::Topic");
    assert!(t.typed.topic && !t.typed.nested);
    assert!(
        matches!(&t.annotations[0].params, AnnotationParams::Named(p) if p.len() == 2 && p[0].0.name == "name")
    );
    assert!(member(t, "k").typed.key && !member(t, "not_key").typed.key);
    assert!(strukt(&spec, "Annotated::Nested").typed.nested);
    assert!(!strukt(&spec, "Annotated::OtherPlatform").typed.topic);
    assert_eq!(
        strukt(&spec, "Annotated::Sequential").typed.autoid,
        Some(AutoId::Sequential)
    );
    assert!(strukt(&spec, "AllNested::Implicit").typed.nested);
    assert!(!strukt(&spec, "AllNested::Explicit").typed.nested);
    assert!(!strukt(&spec, "AllNested::NotNested").typed.nested);
    assert!(
        strukt(&spec, "AllNested::Deeper::AlsoImplicit")
            .typed
            .nested
    );
    assert!(
        !strukt(&spec, "Annotated::Final").typed.nested,
        "not nested by default"
    );
    let u = strukt(&spec, "Annotated::Unknown");
    let names: Vec<&str> = u.annotations.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, vec!["verbatim", "MyAnnotation", "scoped"]);
    assert_eq!(u.annotations[2].raw, "weird stuff, (nested) \"x\"");
    assert_eq!(u.annotations[2].params, AnnotationParams::None);
    assert_eq!(member(u, "bounded").annotations[0].raw, "min = 0, max = 10");
}

#[test]
fn modules_reopen_and_names_resolve_relative_and_absolute() {
    let spec = parse("inheritance.idl");
    let derived = strukt(&spec, "Outer::Inner::Derived");
    assert_eq!(
        derived.base.as_ref().unwrap().resolved.as_deref(),
        Some("::Outer::Base")
    );
    let more = strukt(&spec, "Outer::Inner::MoreDerived");
    assert_eq!(
        more.base.as_ref().unwrap().resolved.as_deref(),
        Some("::Outer::Inner::Derived")
    );
    let node = strukt(&spec, "Outer::Inner::Node");
    match &member(node, "children").type_spec {
        TypeSpec::Sequence { element, .. } => {
            assert!(
                matches!(&**element, TypeSpec::Named(n) if n.resolved.as_deref() == Some("::Outer::Inner::Node"))
            )
        }
        other => panic!("{other:?}"),
    }
    let uses = strukt(&spec, "Outer::UsesAbsolute");
    assert!(matches!(&member(uses, "node").type_spec, TypeSpec::Named(n) if n.absolute));
    assert!(matches!(&member(uses, "more").type_spec,
        TypeSpec::Named(n) if n.resolved.as_deref() == Some("::Outer::Inner::MoreDerived")));
    let outers = spec
        .definitions
        .iter()
        .filter(|d| matches!(d, Definition::Module(m) if m.name.name == "Outer"));
    assert_eq!(outers.count(), 2);
}

#[test]
fn unsupported_declarations_are_skipped_when_unused() {
    let spec = parse("unsupported.idl");
    let Definition::Module(m) = &spec.definitions[0] else {
        panic!()
    };
    let kinds: Vec<UnsupportedKind> = m
        .definitions
        .iter()
        .filter_map(|d| match d {
            Definition::Unsupported(u) => Some(u.kind),
            _ => None,
        })
        .collect();
    use UnsupportedKind::*;
    assert_eq!(
        kinds,
        vec![Interface, Interface, ValueType, Exception, Native]
    );
    strukt(&spec, "Rpc::Plain");
}

#[test]
fn keylist_pragma_marks_keys_in_its_module_scope() {
    let spec = parse_text(
        "module M { struct S { long a; long b; long c; };\n#pragma keylist S a, c\n};\n\
         struct T { long x; };\n#pragma keylist T x\n",
    );
    let s = strukt(&spec, "M::S");
    let keys: Vec<bool> = s.members.iter().map(|m| m.typed.key).collect();
    assert_eq!(keys, vec![true, false, true]);
    assert!(member(strukt(&spec, "T"), "x").typed.key);
}

#[test]
fn typedef_of_an_inline_definition_declares_both() {
    let spec = parse_text(
        "typedef struct PointStruct { long x; } Point, Points[4];\n\
         typedef enum ColorE { RED, GREEN } Color;\n\
         struct Uses { Point p; Points ps; Color c; sequence<@external Point, 2> many; };",
    );
    strukt(&spec, "PointStruct");
    let Definition::Typedef(t) = &spec.definitions[1] else {
        panic!("{:?}", spec.definitions[1])
    };
    assert_eq!(t.declarators.len(), 2);
    assert!(
        matches!(&t.type_spec, TypeSpec::Named(n) if n.resolved.as_deref() == Some("::PointStruct"))
    );
    assert!(matches!(&spec.definitions[2], Definition::Enum(e) if e.name.name == "ColorE"));
    match &member(strukt(&spec, "Uses"), "many").type_spec {
        TypeSpec::Sequence {
            element_annotations,
            ..
        } => assert_eq!(element_annotations[0].name, "external"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn predefined_macros_from_options() {
    let mut opts = ParseOptions::default();
    opts.defines.push(("WIDTH".into(), "4 * 2".into()));
    let spec = halyard_idl::parse_str("t.idl", "struct S { long v[WIDTH]; };", &opts).unwrap();
    assert_eq!(dims(member(strukt(&spec, "S"), "v")), vec![8]);
}

#[test]
fn escapes_fixed_and_escaped_identifiers() {
    let spec = parse_text(
        "const string ESC = \"a\\tb\\x41\\101\\u00e9\\\"\";\n\
         const char NUL = '\\0';\n\
         struct Money { fixed<5, 2> price; long _struct; };",
    );
    assert_eq!(
        constant(&spec, "ESC"),
        ConstValue::Str("a\tbAA\u{e9}\"".into())
    );
    assert_eq!(constant(&spec, "NUL"), ConstValue::Char('\0'));
    let money = strukt(&spec, "Money");
    match &member(money, "price").type_spec {
        TypeSpec::Fixed { digits, scale, .. } => assert_eq!((int(digits), int(scale)), (5, 2)),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        money.members[1].name.name, "struct",
        "a leading underscore escapes a keyword"
    );
}
