//! Proves that every TypeIdentifier variant and every TypeObject kind, in minimal and complete
//! form, survives XCDR2 encoding and decoding unchanged, and that bad input gives typed errors.

use halyard_xtypes::*;

fn int32() -> TypeIdentifier {
    TypeIdentifier::Primitive(PrimitiveKind::Int32)
}

fn hash(kind: EquivalenceKind, seed: u8) -> TypeIdentifier {
    TypeIdentifier::Hash {
        kind,
        hash: [seed; 14],
    }
}

fn all_identifiers() -> Vec<TypeIdentifier> {
    let h = hash(EquivalenceKind::Minimal, 7);
    let mut v = vec![
        TypeIdentifier::None,
        TypeIdentifier::string8(0),
        TypeIdentifier::string8(300),
        TypeIdentifier::string16(12),
        TypeIdentifier::string16(70_000),
        TypeIdentifier::sequence(int32(), 0, member_flag::TRY_CONSTRUCT1),
        TypeIdentifier::sequence(h.clone(), 1000, 0),
        TypeIdentifier::array(TypeIdentifier::string8(5), &[2, 3], 0),
        TypeIdentifier::array(int32(), &[2, 300], member_flag::IS_EXTERNAL),
        TypeIdentifier::map(TypeIdentifier::string8(0), h.clone(), 0, 1),
        TypeIdentifier::map(int32(), int32(), 1 << 20, 1),
        TypeIdentifier::sequence(TypeIdentifier::sequence(int32(), 3, 0), 4, 0),
        TypeIdentifier::StronglyConnectedComponent {
            kind: EquivalenceKind::Complete,
            hash: [9; 14],
            scc_length: 3,
            scc_index: 1,
        },
        hash(EquivalenceKind::Complete, 0xab),
        h,
    ];
    for tk in 0..=0x11u8 {
        if let Some(p) = PrimitiveKind::from_type_kind(tk) {
            v.push(TypeIdentifier::Primitive(p));
        }
    }
    v
}

#[test]
fn every_type_identifier_round_trips() {
    let ids = all_identifiers();
    assert!(
        ids.len() >= 30,
        "all 15 primitives plus every constructed kind"
    );
    for id in ids {
        let bytes = id.to_xcdr2_le().unwrap();
        assert_eq!(bytes[0], id.discriminator());
        assert_eq!(
            TypeIdentifier::from_xcdr2(&bytes).unwrap(),
            id,
            "{bytes:02x?}"
        );
    }
}

#[test]
fn small_and_large_variants_are_chosen_by_bound() {
    assert_eq!(
        TypeIdentifier::string8(255).discriminator(),
        TI_STRING8_SMALL
    );
    assert_eq!(
        TypeIdentifier::string8(256).discriminator(),
        TI_STRING8_LARGE
    );
    let big = TypeIdentifier::array(int32(), &[1, 256], 0);
    assert_eq!(big.discriminator(), TI_PLAIN_ARRAY_LARGE);
    let s = TypeIdentifier::sequence(hash(EquivalenceKind::Complete, 1), 0, 0);
    assert_eq!(s.equivalence_kind(), EquivalenceKind::Complete);
    assert_eq!(
        TypeIdentifier::sequence(int32(), 0, 0).equivalence_kind(),
        EquivalenceKind::Both
    );
}

#[test]
fn big_endian_identifier_decodes() {
    let be = [TI_STRING8_LARGE, 0, 0, 0, 0, 0, 1, 0x2c];
    assert_eq!(
        TypeIdentifier::from_xcdr2_endian(&be, halyard_cdr::Endianness::Big).unwrap(),
        TypeIdentifier::String8Large { bound: 300 }
    );
}

/// One body of each kind, for a form whose details `md`/`td` produce.
fn bodies<F: Form>(
    md: impl Fn(&str) -> F::MemberDetail,
    td: impl Fn(&str) -> F::TypeDetail,
    opt_td: impl Fn(&str) -> Option<F::TypeDetail>,
) -> Vec<TypeObjectBody<F>> {
    use member_flag::*;
    let elem = |t: TypeIdentifier| CollectionElement {
        element_flags: TRY_CONSTRUCT1,
        type_id: t,
    };
    vec![
        TypeObjectBody::Struct(StructType {
            struct_flags: type_flag::IS_MUTABLE,
            base_type: hash(F::KIND, 3),
            detail: td("M::Derived"),
            members: vec![
                StructMember {
                    member_id: 7,
                    member_flags: TRY_CONSTRUCT1 | IS_KEY | IS_MUST_UNDERSTAND,
                    member_type_id: int32(),
                    detail: md("id"),
                },
                StructMember {
                    member_id: 0x0abc_def0,
                    member_flags: IS_OPTIONAL | IS_EXTERNAL,
                    member_type_id: TypeIdentifier::sequence(TypeIdentifier::string8(9), 0, 0),
                    detail: md("names"),
                },
            ],
        }),
        TypeObjectBody::Union(UnionType {
            union_flags: type_flag::IS_APPENDABLE,
            detail: td("M::U"),
            discriminator_flags: IS_KEY,
            discriminator_type: TypeIdentifier::Primitive(PrimitiveKind::Int16),
            members: vec![
                UnionMember {
                    member_id: 1,
                    member_flags: TRY_CONSTRUCT1,
                    type_id: int32(),
                    labels: vec![1, -2],
                    detail: md("a"),
                },
                UnionMember {
                    member_id: 2,
                    member_flags: IS_DEFAULT,
                    type_id: TypeIdentifier::Primitive(PrimitiveKind::Float64),
                    labels: vec![],
                    detail: md("c"),
                },
            ],
        }),
        TypeObjectBody::Alias(AliasType {
            alias_flags: 0,
            detail: td("M::LongSeq"),
            related_flags: 0,
            related_type: TypeIdentifier::sequence(int32(), 10, 0),
        }),
        TypeObjectBody::Sequence(SequenceType {
            collection_flag: 0,
            bound: 5,
            detail: opt_td("M::S"),
            element: elem(hash(F::KIND, 4)),
        }),
        TypeObjectBody::Array(ArrayType {
            collection_flag: 0,
            bounds: vec![2, 3, 4],
            detail: td("M::A"),
            element: elem(hash(F::KIND, 5)),
        }),
        TypeObjectBody::Map(MapType {
            collection_flag: 0,
            bound: 0,
            detail: opt_td("M::Map"),
            key: elem(TypeIdentifier::string8(0)),
            element: elem(hash(F::KIND, 6)),
        }),
        TypeObjectBody::Enum(EnumType {
            enum_flags: 0,
            bit_bound: 32,
            detail: td("M::Color"),
            literals: vec![
                EnumLiteral {
                    value: 0,
                    flags: IS_DEFAULT,
                    detail: md("RED"),
                },
                EnumLiteral {
                    value: -5,
                    flags: 0,
                    detail: md("BLUE"),
                },
            ],
        }),
        TypeObjectBody::Bitmask(BitmaskType {
            bitmask_flags: 0,
            bit_bound: 8,
            detail: td("M::Perm"),
            flags: vec![
                Bitflag {
                    position: 0,
                    flags: 0,
                    detail: md("READ"),
                },
                Bitflag {
                    position: 7,
                    flags: 0,
                    detail: md("WRITE"),
                },
            ],
        }),
    ]
}

fn all_objects() -> Vec<TypeObject> {
    let minimal = bodies::<Minimal>(name_hash, |_| (), |_| None);
    let complete = bodies::<Complete>(
        |n| MemberDetail { name: n.into() },
        |n| TypeDetail {
            type_name: n.into(),
        },
        |n| {
            Some(TypeDetail {
                type_name: n.into(),
            })
        },
    );
    let mut v: Vec<TypeObject> = minimal.into_iter().map(TypeObject::Minimal).collect();
    v.extend(complete.into_iter().map(TypeObject::Complete));
    v
}

#[test]
fn every_type_object_kind_round_trips_in_both_forms() {
    let objects = all_objects();
    assert_eq!(objects.len(), 16);
    for o in objects {
        let bytes = o.to_xcdr2_le().unwrap();
        assert_eq!(TypeObject::from_xcdr2(&bytes).unwrap(), o, "{bytes:02x?}");
    }
}

#[test]
fn hashes_depend_on_content_and_form() {
    let objects = all_objects();
    let mut hashes: Vec<_> = objects
        .iter()
        .map(|o| o.equivalence_hash().unwrap())
        .collect();
    hashes.sort();
    hashes.dedup();
    assert_eq!(
        hashes.len(),
        objects.len(),
        "distinct objects hash differently"
    );
    if let TypeObject::Minimal(m) = &objects[0] {
        let id = TypeIdentifier::hashed_minimal(m).unwrap();
        assert_eq!(id, objects[0].type_identifier().unwrap());
        assert_eq!(id.discriminator(), EK_MINIMAL);
    }
    if let TypeObject::Complete(c) = &objects[8] {
        let id = TypeIdentifier::hashed_complete(c).unwrap();
        assert_eq!(id, objects[8].type_identifier().unwrap());
        assert_eq!(id.discriminator(), EK_COMPLETE);
    }
}

#[test]
fn type_information_with_dependencies_round_trips() {
    let objects = all_objects();
    let mut info = TypeInformation::for_objects(&objects[0], &objects[8]).unwrap();
    info.minimal.dependent_typeid_count = 2;
    info.minimal.dependent_typeids = vec![objects[1].identifier_with_size().unwrap()];
    info.complete.dependent_typeid_count = -1;
    let bytes = info.to_xcdr2_le().unwrap();
    assert_eq!(TypeInformation::from_xcdr2(&bytes).unwrap(), info);
}

#[test]
fn unknown_discriminators_and_bad_values_are_typed_errors() {
    let e = TypeIdentifier::from_xcdr2(&[0x55]).unwrap_err();
    assert_eq!(
        e,
        XTypesError::UnknownDiscriminator {
            what: "TypeIdentifier",
            value: 0x55
        }
    );
    assert!(e.to_string().contains("0x55"), "{e}");
    assert_eq!(
        TypeIdentifier::from_xcdr2(&[TI_STRING8_LARGE, 0, 0]),
        Err(XTypesError::Truncated)
    );
    let obj = [4, 0, 0, 0, 0xf3, 0, 0, 0];
    assert!(matches!(
        TypeObject::from_xcdr2(&obj),
        Err(XTypesError::UnknownDiscriminator {
            what: "TypeObject",
            value: 0xf3
        })
    ));
    let huge_count = [TI_PLAIN_ARRAY_LARGE, 0xf3, 0, 0, 0xff, 0xff, 0xff, 0x7f];
    assert!(matches!(
        TypeIdentifier::from_xcdr2(&huge_count),
        Err(XTypesError::LengthTooLarge {
            what: "LBoundSeq",
            ..
        })
    ));
    assert!(matches!(
        TypeIdentifier::from_xcdr2(&[4, 1, 2, 3, 4]),
        Err(XTypesError::Invalid(_))
    ));
}

#[test]
fn long_names_are_refused_both_ways() {
    let long = "x".repeat(NAME_MAX_LEN + 1);
    let o = TypeObject::Complete(TypeObjectBody::Alias(AliasType {
        alias_flags: 0,
        detail: TypeDetail { type_name: long },
        related_flags: 0,
        related_type: int32(),
    }));
    assert!(matches!(o.to_xcdr2_le(), Err(XTypesError::Invalid(_))));
}

#[test]
fn deep_nesting_is_refused_not_overflowing_the_stack() {
    let mut bytes = Vec::new();
    for _ in 0..100_000 {
        bytes.extend_from_slice(&[TI_PLAIN_SEQUENCE_SMALL, EK_BOTH]);
        bytes.resize(bytes.len().next_multiple_of(2), 0); // align the u16 element flags
        bytes.extend_from_slice(&[0, 0, 0]); // flags, bound
    }
    assert_eq!(
        TypeIdentifier::from_xcdr2(&bytes),
        Err(XTypesError::TooDeep)
    );
    let mut id = int32();
    for _ in 0..MAX_DEPTH - 1 {
        id = TypeIdentifier::sequence(id, 0, 0);
    }
    let ok = id.to_xcdr2_le().unwrap();
    assert_eq!(TypeIdentifier::from_xcdr2(&ok).unwrap(), id);
}

#[test]
fn mutable_type_information_skips_unknown_members_and_needs_known_ones() {
    let objects = all_objects();
    let info = TypeInformation::for_objects(&objects[0], &objects[8]).unwrap();
    let mut bytes = info.to_xcdr2_le().unwrap();
    // Append an unknown member 0x1003 (LC 2: 4 bytes) and fix the DHEADER.
    bytes.extend_from_slice(&(0x2000_1003u32).to_le_bytes());
    bytes.extend_from_slice(&[1, 2, 3, 4]);
    let len = (bytes.len() - 4) as u32;
    bytes[..4].copy_from_slice(&len.to_le_bytes());
    assert_eq!(TypeInformation::from_xcdr2(&bytes).unwrap(), info);
    // The same member flagged must-understand is refused.
    let at = bytes.len() - 8;
    bytes[at + 3] |= 0x80;
    assert!(matches!(
        TypeInformation::from_xcdr2(&bytes),
        Err(XTypesError::BadMember { id: 0x1003, .. })
    ));
    // Only the complete member present: minimal is missing.
    let only_dheader = [0, 0, 0, 0];
    assert!(matches!(
        TypeInformation::from_xcdr2(&only_dheader),
        Err(XTypesError::BadMember {
            id: TYPE_INFORMATION_MINIMAL_ID,
            ..
        })
    ));
}

#[test]
fn values_the_wire_cannot_carry_are_refused_when_encoding() {
    let both = TypeIdentifier::Hash {
        kind: EquivalenceKind::Both,
        hash: [0; 14],
    };
    assert!(matches!(both.to_xcdr2_le(), Err(XTypesError::Invalid(_))));
    let seq = TypeObject::Minimal(TypeObjectBody::Sequence(SequenceType {
        collection_flag: 0,
        bound: 0,
        detail: Some(()),
        element: CollectionElement {
            element_flags: 0,
            type_id: int32(),
        },
    }));
    assert!(matches!(seq.to_xcdr2_le(), Err(XTypesError::Invalid(_))));
}
