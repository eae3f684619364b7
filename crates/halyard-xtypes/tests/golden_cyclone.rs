//! Proves byte-identical TypeObjects, TypeInformation and 14-byte hashes against real Cyclone
//! DDS output: `idlc` 0.10.2 (C, Debian package) and the `cyclonedds` 11.0.1 Python package,
//! captured into `tests/data/` (see `hw.idl`, `rich.idl` and `generate.py` there).

use std::path::PathBuf;

use halyard_xtypes::*;

fn data_dir(flavour: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(flavour)
}

fn hex(flavour: &str, file: &str) -> Vec<u8> {
    let path = data_dir(flavour).join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let text = text.trim();
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex digit"))
        .collect()
}

const FLAVOURS: [&str; 2] = ["idlc-0.10.2", "python-11.0.1"];
const TYPES: [&str; 4] = ["HelloWorldData_Msg", "Rich_Base", "Rich_U", "Rich_Derived"];

#[test]
fn cyclone_type_mappings_decode_and_reencode_byte_identically() {
    for flavour in FLAVOURS {
        for ty in TYPES {
            let bytes = hex(flavour, &format!("{ty}.typemap.hex"));
            let map =
                TypeMapping::from_xcdr2(&bytes).unwrap_or_else(|e| panic!("{flavour}/{ty}: {e}"));
            assert!(
                !map.minimal.is_empty() && !map.complete.is_empty(),
                "{flavour}/{ty}"
            );
            let again = map.to_xcdr2_le().unwrap();
            assert_eq!(
                again,
                bytes[..again.len()],
                "{flavour}/{ty}: re-encoding differs"
            );
            assert!(
                bytes.len() - again.len() < 4,
                "{flavour}/{ty}: only padding may remain"
            );
        }
    }
}

#[test]
fn cyclone_hashes_equal_our_equivalence_hashes() {
    for flavour in FLAVOURS {
        for ty in TYPES {
            let map = TypeMapping::from_xcdr2(&hex(flavour, &format!("{ty}.typemap.hex"))).unwrap();
            for (id, obj) in map.minimal.iter().chain(&map.complete) {
                assert_eq!(
                    &obj.type_identifier().unwrap(),
                    id,
                    "{flavour}/{ty}: {obj:?}"
                );
            }
        }
    }
}

#[test]
fn cyclone_type_information_round_trips_and_names_the_mapped_objects() {
    for flavour in FLAVOURS {
        for ty in TYPES {
            let bytes = hex(flavour, &format!("{ty}.typeinfo.hex"));
            let info = TypeInformation::from_xcdr2(&bytes)
                .unwrap_or_else(|e| panic!("{flavour}/{ty}: {e}"));
            assert_eq!(info.to_xcdr2_le().unwrap(), bytes, "{flavour}/{ty}");
            let map = TypeMapping::from_xcdr2(&hex(flavour, &format!("{ty}.typemap.hex"))).unwrap();
            let top = |pairs: &[(TypeIdentifier, TypeObject)], want: &TypeIdentifierWithSize| {
                let (_, obj) = pairs
                    .iter()
                    .find(|(id, _)| *id == want.type_id)
                    .expect("listed");
                assert_eq!(obj.identifier_with_size().unwrap(), *want, "{flavour}/{ty}");
            };
            top(&map.minimal, &info.minimal.typeid_with_size);
            top(&map.complete, &info.complete.typeid_with_size);
        }
    }
}

/// `HelloWorldData::Msg { @key long userID; string message; }`, built by hand.
fn hello_world(key_flags: u16) -> (TypeObject, TypeObject) {
    let t1 = member_flag::TRY_CONSTRUCT1;
    let members = [
        (
            "userID",
            0,
            key_flags,
            TypeIdentifier::Primitive(PrimitiveKind::Int32),
        ),
        ("message", 1, t1, TypeIdentifier::string8(0)),
    ];
    let minimal = TypeObject::Minimal(TypeObjectBody::Struct(StructType {
        struct_flags: type_flag::IS_FINAL,
        base_type: TypeIdentifier::None,
        detail: (),
        members: members
            .iter()
            .map(|(name, id, flags, t)| StructMember {
                member_id: *id,
                member_flags: *flags,
                member_type_id: t.clone(),
                detail: name_hash(name),
            })
            .collect(),
    }));
    let complete = TypeObject::Complete(TypeObjectBody::Struct(StructType {
        struct_flags: type_flag::IS_FINAL,
        base_type: TypeIdentifier::None,
        detail: TypeDetail {
            type_name: "HelloWorldData::Msg".into(),
        },
        members: members
            .iter()
            .map(|(name, id, flags, t)| StructMember {
                member_id: *id,
                member_flags: *flags,
                member_type_id: t.clone(),
                detail: MemberDetail {
                    name: (*name).into(),
                },
            })
            .collect(),
    }));
    (minimal, complete)
}

#[test]
fn hand_built_hello_world_matches_cyclone_bytes_and_hashes() {
    use member_flag::*;
    // idlc 0.10.2 marks keys must-understand; the Python package does not.
    let cases = [
        ("idlc-0.10.2", TRY_CONSTRUCT1 | IS_KEY | IS_MUST_UNDERSTAND),
        ("python-11.0.1", TRY_CONSTRUCT1 | IS_KEY),
    ];
    for (flavour, key_flags) in cases {
        let (minimal, complete) = hello_world(key_flags);
        let map = TypeMapping::from_xcdr2(&hex(flavour, "HelloWorldData_Msg.typemap.hex")).unwrap();
        assert_eq!(
            map.minimal[0].1.to_xcdr2_le().unwrap(),
            minimal.to_xcdr2_le().unwrap()
        );
        assert_eq!(
            map.complete[0].1.to_xcdr2_le().unwrap(),
            complete.to_xcdr2_le().unwrap()
        );
        assert_eq!(
            map.minimal[0].0,
            minimal.type_identifier().unwrap(),
            "{flavour}"
        );
        assert_eq!(
            map.complete[0].0,
            complete.type_identifier().unwrap(),
            "{flavour}"
        );
        let info = TypeInformation::for_objects(&minimal, &complete).unwrap();
        let golden = hex(flavour, "HelloWorldData_Msg.typeinfo.hex");
        assert_eq!(info.to_xcdr2_le().unwrap(), golden, "{flavour}");
    }
}

#[test]
fn idlc_hello_world_hashes_are_the_ones_idlc_printed() {
    let (minimal, complete) = hello_world(0x31);
    let m = minimal.equivalence_hash().unwrap();
    let c = complete.equivalence_hash().unwrap();
    // From the comment idlc wrote into hw.c: [MINIMAL 6e42149eb141a0d72594c650d73c],
    // [COMPLETE b1a3b1fb8b1a60516014297c3b8a].
    assert_eq!(
        m,
        *b"\x6e\x42\x14\x9e\xb1\x41\xa0\xd7\x25\x94\xc6\x50\xd7\x3c"
    );
    assert_eq!(
        c,
        *b"\xb1\xa3\xb1\xfb\x8b\x1a\x60\x51\x60\x14\x29\x7c\x3b\x8a"
    );
}

#[test]
fn name_hash_is_md5_prefix() {
    assert_eq!(name_hash("userID"), [0x58, 0x5c, 0x95, 0x70]);
    assert_eq!(name_hash("message"), [0x78, 0xe7, 0x31, 0x02]);
}

#[test]
fn golden_corpus_covers_struct_union_enum_alias_bitmask_and_inheritance() {
    let kinds = |flavour: &str| {
        let map = TypeMapping::from_xcdr2(&hex(flavour, "Rich_Derived.typemap.hex")).unwrap();
        let mut k: Vec<&str> = map
            .complete
            .iter()
            .map(|(_, o)| match o {
                TypeObject::Complete(TypeObjectBody::Struct(s))
                    if s.base_type != TypeIdentifier::None =>
                {
                    "derived-struct"
                }
                TypeObject::Complete(TypeObjectBody::Struct(_)) => "struct",
                TypeObject::Complete(TypeObjectBody::Union(_)) => "union",
                TypeObject::Complete(TypeObjectBody::Enum(_)) => "enum",
                TypeObject::Complete(TypeObjectBody::Alias(_)) => "alias",
                TypeObject::Complete(TypeObjectBody::Bitmask(_)) => "bitmask",
                _ => "other",
            })
            .collect();
        k.sort_unstable();
        k
    };
    let all = [
        "alias",
        "bitmask",
        "derived-struct",
        "enum",
        "struct",
        "union",
    ];
    assert_eq!(kinds("idlc-0.10.2"), all);
    assert_eq!(
        kinds("python-11.0.1"),
        ["alias", "derived-struct", "enum", "struct", "union"]
    );
}

#[test]
fn type_information_captured_from_a_cyclone_11_sedp_publication_matches() {
    let wire = hex("wire-11.0.1", "HelloWorldData_Msg.pid_type_information.hex");
    let info = TypeInformation::from_xcdr2(&wire).unwrap();
    assert_eq!(info.to_xcdr2_le().unwrap(), wire);
    let (minimal, complete) = hello_world(member_flag::TRY_CONSTRUCT1 | member_flag::IS_KEY);
    assert_eq!(
        info.minimal.typeid_with_size.type_id,
        minimal.type_identifier().unwrap()
    );
    assert_eq!(
        info.complete.typeid_with_size.type_id,
        complete.type_identifier().unwrap()
    );
    // Cyclone leaves the sizes at 0 on the wire; ours are the real ones.
    assert_eq!(info.minimal.typeid_with_size.typeobject_serialized_size, 0);
    let mut ours = TypeInformation::for_objects(&minimal, &complete).unwrap();
    ours.minimal.typeid_with_size.typeobject_serialized_size = 0;
    ours.complete.typeid_with_size.typeobject_serialized_size = 0;
    assert_eq!(ours.to_xcdr2_le().unwrap(), wire);
}
