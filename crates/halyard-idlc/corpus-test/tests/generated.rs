//! Proves properties of the Rust the build.rs helper generated from the corpus that a user
//! relies on: bounds are enforced on encode and decode, every topic type's embedded XTypes
//! description is self-consistent, unions refuse inconsistent discriminators, `@default` and
//! constants carry their IDL values.

use halyard::cdr::{
    deserialize, serialize, BoundedSeq, BoundedString, CdrError, DataRepresentation, TopicType,
};
use halyard_idlc_corpus_test::corpus::{Common, Corpus as C};
use halyard_xtypes::{TypeInformation, TypeObject};

#[test]
fn bounded_strings_and_sequences_are_checked_both_ways() {
    let long = C::Strings {
        s: String::new(),
        bs: BoundedString("x".repeat(17)),
    };
    let mut out = Vec::new();
    for rep in [DataRepresentation::Xcdr1, DataRepresentation::Xcdr2] {
        let e = serialize(&long, rep, &mut out).unwrap_err();
        assert_eq!(
            e,
            CdrError::LengthTooLarge {
                length: 17,
                limit: 16
            }
        );
    }
    // A peer that ignores the bound: encode the same layout with an unbounded string.
    #[derive(Clone, Debug, PartialEq, halyard::cdr::Topic)]
    #[topic(type_name = "Corpus::Strings")]
    struct Unbounded {
        s: String,
        bs: String,
    }
    let mut bytes = Vec::new();
    serialize(
        &Unbounded {
            s: String::new(),
            bs: "x".repeat(17),
        },
        DataRepresentation::Xcdr2,
        &mut bytes,
    )
    .unwrap();
    assert!(matches!(
        deserialize::<C::Strings>(&bytes),
        Err(CdrError::LengthTooLarge { .. })
    ));
    let seq = C::Sequences {
        bls: BoundedSeq(vec![1, 2, 3, 4, 5, 6]),
        ..Default::default()
    };
    assert!(serialize(&seq, DataRepresentation::Xcdr2, &mut out).is_err());
}

fn check_description<T: TopicType>() {
    let d =
        T::type_description().unwrap_or_else(|| panic!("{} has no description", T::type_name()));
    let info = TypeInformation::from_xcdr2(d.type_information).unwrap();
    let objects: Vec<TypeObject> = d
        .type_objects
        .iter()
        .map(|b| TypeObject::from_xcdr2(b).unwrap())
        .collect();
    let mut named = vec![
        info.minimal.typeid_with_size.clone(),
        info.complete.typeid_with_size.clone(),
    ];
    named.extend(info.minimal.dependent_typeids.iter().cloned());
    named.extend(info.complete.dependent_typeids.iter().cloned());
    let ids: Vec<_> = objects
        .iter()
        .map(|o| o.identifier_with_size().unwrap())
        .collect();
    for id in &ids {
        assert!(named.contains(id), "{}: {id:?} not named", T::type_name());
    }
    for id in &named {
        assert!(ids.contains(id), "{}: no object for {id:?}", T::type_name());
    }
    assert_eq!(ids[0], info.minimal.typeid_with_size);
    match &objects[1] {
        TypeObject::Complete(halyard_xtypes::TypeObjectBody::Struct(s)) => {
            assert_eq!(s.detail.type_name, T::type_name())
        }
        other => panic!("{}: complete object {other:?}", T::type_name()),
    }
}

#[test]
fn embedded_type_descriptions_are_consistent() {
    check_description::<C::Primitives>();
    check_description::<C::MDerived>();
    check_description::<C::WithUnion>();
    check_description::<C::NestedT>();
    check_description::<C::Typedefs>();
    check_description::<halyard_idlc_corpus_test::hello_world_data::HelloWorldData::Msg>();
}

#[test]
fn unions_refuse_a_discriminator_that_does_not_select_their_member() {
    let mut out = Vec::new();
    let bad = C::WithUnion {
        u: C::Shape::label(1, BoundedString::new("x").unwrap()),
        ..Default::default()
    };
    assert!(serialize(&bad, DataRepresentation::Xcdr2, &mut out).is_err());
    let bad = C::WithUnion {
        u: C::Shape::radius(2, 1.0),
        ..Default::default()
    };
    assert!(serialize(&bad, DataRepresentation::Xcdr2, &mut out).is_err());
    let bad = C::WithEnumUnion {
        a: C::ByColor::Unselected(Common::Color::RED),
        ..Default::default()
    };
    assert!(serialize(&bad, DataRepresentation::Xcdr1, &mut out).is_err());
    assert_eq!(
        C::Shape::label(3, BoundedString::default()).discriminator(),
        3
    );
    assert_eq!(C::Shape::side(0).discriminator(), 1);
}

#[test]
fn defaults_keys_and_constants_follow_the_idl() {
    let d = C::Defaults::default();
    assert_eq!((d.a, d.b, d.c.as_str()), (5, 2.5, ""));
    assert_eq!(C::TWICE, 8);
    assert_eq!(C::GREETING, "hello");
    assert_eq!(Common::MAX_NAMES, 4);
    assert!(C::Keyed::has_key() && C::Derived::has_key() && !C::Primitives::has_key());
    assert_eq!(
        C::MutableT::extensibility(),
        halyard::cdr::Extensibility::Mutable
    );
    assert_eq!(C::Perm_EXEC, 4);
    assert_eq!(Common::Color::default(), Common::Color::RED);
}
