//! Proves our TypeObjects, hashes and TypeInformation are byte-identical to those of the Python
//! `cyclonedds` 11.0.1 package for the same types (captured in `tests/data/*.hex` by
//! `crates/halyard-xtypes/tests/data/python-11.0.1/generate.py`; `rich_py.idl` is that
//! script's types written in IDL).

use std::path::PathBuf;

use halyard_xtypes::{TypeInformation, TypeMapping};

fn data(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(file)
}

fn hex(file: &str) -> Vec<u8> {
    let text = std::fs::read_to_string(data(file)).unwrap();
    let text = text.trim();
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

fn set() -> halyard_idlc::TypeSet {
    let spec = halyard_idl::parse_file(&data("rich_py.idl"), &halyard_idl::ParseOptions::default())
        .unwrap();
    halyard_idlc::type_objects(&spec).unwrap()
}

#[test]
fn every_python_type_object_is_one_of_ours_byte_for_byte() {
    let set = set();
    let mut missing = Vec::new();
    for ty in ["HelloWorldData_Msg", "Rich_Base", "Rich_U", "Rich_Derived"] {
        let map = TypeMapping::from_xcdr2(&hex(&format!("{ty}.typemap.hex"))).unwrap();
        for (id, obj) in map.minimal.iter().chain(&map.complete) {
            let ours = set
                .types
                .values()
                .find(|e| &e.minimal == obj || &e.complete == obj);
            let Some(e) = ours else {
                missing.push(format!("{ty}: {obj:?}"));
                continue;
            };
            let our_id = if &e.minimal == obj {
                &e.minimal_id
            } else {
                &e.complete_id
            };
            assert_eq!(&our_id.type_id, id, "{ty}: {}", e.name);
        }
    }
    assert!(
        missing.is_empty(),
        "python objects we do not build:\n{}\nours: {:?}",
        missing.join("\n"),
        set.types.values().map(|e| &e.complete).collect::<Vec<_>>()
    );
}

#[test]
fn topic_type_information_is_byte_identical_to_python() {
    let set = set();
    for (ty, name) in [
        ("HelloWorldData_Msg", "HelloWorldData::Msg"),
        ("Rich_Base", "Rich::Base"),
        ("Rich_Derived", "Rich::Derived"),
    ] {
        let bytes = hex(&format!("{ty}.typeinfo.hex"));
        let theirs = TypeInformation::from_xcdr2(&bytes).unwrap();
        let ours = &set.topics[name];
        let sorted = |mut i: TypeInformation| {
            for l in [&mut i.minimal, &mut i.complete] {
                l.dependent_typeids
                    .sort_by_key(|d| d.type_id.to_xcdr2_le().unwrap());
            }
            i
        };
        assert_eq!(
            sorted(ours.type_information.clone()),
            sorted(theirs.clone()),
            "{ty}"
        );
        assert_eq!(
            ours.type_information_bytes, bytes,
            "{ty}: bytes (dependency order)"
        );
    }
}

/// Clears IS_MUST_UNDERSTAND on key members (Cyclone's C `idlc` 0.10.2 sets it there).
fn without_key_must_understand(o: &halyard_xtypes::TypeObject) -> halyard_xtypes::TypeObject {
    use halyard_xtypes::{member_flag, TypeObject, TypeObjectBody};
    fn clear(f: &mut u16) {
        if *f & member_flag::IS_KEY != 0 {
            *f &= !member_flag::IS_MUST_UNDERSTAND;
        }
    }
    let mut o = o.clone();
    match &mut o {
        TypeObject::Minimal(TypeObjectBody::Struct(s)) => s
            .members
            .iter_mut()
            .for_each(|m| clear(&mut m.member_flags)),
        TypeObject::Complete(TypeObjectBody::Struct(s)) => s
            .members
            .iter_mut()
            .for_each(|m| clear(&mut m.member_flags)),
        _ => {}
    }
    o
}

/// Against Cyclone's C `idlc` 0.10.2 (the `TYPE_MAP_CDR` of the C it generated from the same
/// HelloWorldData.idl): the only difference is the must-understand flag it puts on `@key`
/// members, which the Python package 11 (and Halyard) leave off.
#[test]
fn idlc_0_10_2_differs_only_by_must_understand_on_keys() {
    let set = set();
    let ours = &set.types["HelloWorldData::Msg"];
    let map = TypeMapping::from_xcdr2(&hex("idlc-0.10.2_HelloWorldData_Msg.typemap.hex")).unwrap();
    let (min, com) = (&map.minimal[0].1, &map.complete[0].1);
    assert_ne!(
        min, &ours.minimal,
        "idlc 0.10.2 does set must-understand on the key"
    );
    assert_eq!(without_key_must_understand(min), ours.minimal);
    assert_eq!(without_key_must_understand(com), ours.complete);
}
