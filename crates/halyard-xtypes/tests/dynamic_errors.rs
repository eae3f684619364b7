//! Proves that bad type input gives clear errors and never panics: hash mismatches,
//! inconsistent objects, missing dependencies, float128, and arbitrary bytes fed to the
//! TypeObject decoder, the registry, the builder and the dynamic decoder (seeded).

use halyard_xtypes::dynamic::{self, DynamicError, JsonOptions};
use halyard_xtypes::*;

fn complete_struct(name: &str, members: Vec<(u32, &str, TypeIdentifier, u16)>) -> TypeObject {
    TypeObject::Complete(TypeObjectBody::Struct(StructType {
        struct_flags: type_flag::IS_APPENDABLE,
        base_type: TypeIdentifier::None,
        detail: TypeDetail {
            type_name: name.into(),
        },
        members: members
            .into_iter()
            .map(|(id, n, ty, flags)| StructMember {
                member_id: id,
                member_flags: flags,
                member_type_id: ty,
                detail: MemberDetail { name: n.into() },
            })
            .collect(),
    }))
}

fn long() -> TypeIdentifier {
    TypeIdentifier::Primitive(PrimitiveKind::Int32)
}

#[test]
fn a_hash_mismatch_is_refused_with_both_hashes() {
    let a = complete_struct("A", vec![(0, "x", long(), 0)]);
    let b = complete_struct("B", vec![(0, "x", long(), 0)]);
    let mut reg = TypeRegistry::new();
    let err = reg.insert(&b.type_identifier().unwrap(), a).unwrap_err();
    assert!(matches!(err, DynamicError::HashMismatch { .. }));
    assert!(
        err.to_string().starts_with("hash of TypeObject is 0xf2:"),
        "{err}"
    );
    assert!(reg.is_empty());
}

#[test]
fn duplicate_member_ids_and_names_are_inconsistent() {
    let mut reg = TypeRegistry::new();
    let dup_id = complete_struct("D", vec![(1, "x", long(), 0), (1, "y", long(), 0)]);
    let e = reg.insert_object(dup_id).unwrap_err();
    assert!(
        e.to_string().contains("member id/value 1 appears twice"),
        "{e}"
    );
    let dup_name = complete_struct("D", vec![(1, "x", long(), 0), (2, "x", long(), 0)]);
    let e = reg.insert_object(dup_name).unwrap_err();
    assert!(e.to_string().contains("same name"), "{e}");
}

#[test]
fn bad_bit_bounds_and_discriminators_are_inconsistent() {
    let mut reg = TypeRegistry::new();
    let e = TypeObject::Complete(TypeObjectBody::Enum(EnumType {
        enum_flags: 0,
        bit_bound: 40,
        detail: TypeDetail {
            type_name: "E".into(),
        },
        literals: vec![],
    }));
    assert!(reg
        .insert_object(e)
        .unwrap_err()
        .to_string()
        .contains("bit_bound 40"));
    let u = TypeObject::Complete(TypeObjectBody::Union(UnionType {
        union_flags: type_flag::IS_FINAL,
        detail: TypeDetail {
            type_name: "U".into(),
        },
        discriminator_flags: 0,
        discriminator_type: TypeIdentifier::Primitive(PrimitiveKind::Float64),
        members: vec![],
    }));
    assert!(reg
        .insert_object(u)
        .unwrap_err()
        .to_string()
        .contains("discriminator"));
}

#[test]
fn missing_dependencies_are_listed_and_float128_is_refused() {
    let inner = complete_struct("Inner", vec![(0, "v", long(), 0)]);
    let inner_id = inner.type_identifier().unwrap();
    let outer = complete_struct("Outer", vec![(0, "i", inner_id.clone(), 0)]);
    let mut reg = TypeRegistry::new();
    let outer_id = reg.insert_object(outer).unwrap();
    assert_eq!(reg.missing(&outer_id), vec![inner_id.clone()]);
    match reg.build(&outer_id) {
        Err(DynamicError::Missing(ids)) => assert_eq!(ids, vec![inner_id]),
        other => panic!("{other:?}"),
    }
    reg.insert_object(inner).unwrap();
    let t = reg.build(&outer_id).unwrap();
    let v = dynamic::from_json(
        &t,
        &serde_json::json!({"i": {"v": 3}}),
        JsonOptions::default(),
    )
    .unwrap();
    let e = dynamic::from_json(
        &t,
        &serde_json::json!({"i": {"v": "a"}}),
        JsonOptions::default(),
    )
    .unwrap_err();
    assert_eq!(e.to_string(), "i.v: expected a long, found \"a\"");
    let e =
        dynamic::from_json(&t, &serde_json::json!({"i": {}}), JsonOptions::default()).unwrap_err();
    assert_eq!(e.to_string(), "i: missing member(s): v");
    let d = dynamic::from_json(
        &t,
        &serde_json::json!({"i": {}}),
        JsonOptions {
            default_missing: true,
        },
    )
    .unwrap();
    assert_ne!(d, v);
    let f = complete_struct(
        "F",
        vec![(
            0,
            "q",
            TypeIdentifier::Primitive(PrimitiveKind::Float128),
            0,
        )],
    );
    let fid = reg.insert_object(f).unwrap();
    assert!(reg
        .build(&fid)
        .unwrap_err()
        .to_string()
        .contains("float128"));
}

/// xorshift64*, so the test is deterministic.
fn next(state: &mut u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

#[test]
fn arbitrary_and_mutated_bytes_never_panic() {
    let inner = complete_struct(
        "Inner",
        vec![
            (0, "v", long(), 0),
            (1, "s", TypeIdentifier::string8(0), member_flag::IS_OPTIONAL),
        ],
    );
    let inner_id = inner.type_identifier().unwrap();
    let seq = TypeIdentifier::sequence(inner_id.clone(), 0, 0);
    let outer = complete_struct("Outer", vec![(0, "i", seq, member_flag::IS_KEY)]);
    let mut reg = TypeRegistry::new();
    reg.insert_object(inner.clone()).unwrap();
    let outer_id = reg.insert_object(outer.clone()).unwrap();
    let t = reg.build(&outer_id).unwrap();
    let seeds = [outer.to_xcdr2_le().unwrap(), inner.to_xcdr2_le().unwrap()];
    let sample = dynamic::from_json(
        &t,
        &serde_json::json!({"i": [{"v": 1, "s": "x"}, {"v": 2, "s": null}]}),
        JsonOptions::default(),
    )
    .unwrap();
    let payload = dynamic::encode(
        &t,
        &sample,
        halyard_cdr::DataRepresentation::Xcdr2,
        halyard_cdr::Endianness::Little,
    )
    .unwrap();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for round in 0..20_000 {
        let base: &[u8] = match round % 3 {
            0 => &seeds[0],
            1 => &seeds[1],
            _ => &payload,
        };
        let mut bytes = base.to_vec();
        for _ in 0..1 + next(&mut state) % 4 {
            let i = (next(&mut state) as usize) % bytes.len();
            bytes[i] = next(&mut state) as u8;
        }
        if next(&mut state).is_multiple_of(8) {
            bytes.truncate((next(&mut state) as usize) % (bytes.len() + 1));
        }
        if let Ok(obj) = TypeObject::from_xcdr2(&bytes) {
            let mut r = reg.clone();
            if let Ok(id) = r.insert_object(obj) {
                let _ = r.build(&id).map(|t| to_idl(&t));
            }
        }
        if let Ok(v) = dynamic::decode(&t, &bytes) {
            let _ = dynamic::to_json(&t, &v);
            let _ = dynamic::key_hash(&t, &v);
        }
    }
}

/// A missing member whose default would be huge (here a 4096 x 4096 array) is refused with a
/// limit error instead of allocating it.
#[test]
fn huge_defaults_of_missing_members_are_bounded() {
    use halyard_xtypes::dynamic::{DynamicType, Extensibility, MemberDesc, StructDesc, TypeNode};
    let arr = DynamicType::new(TypeNode::Array {
        element: DynamicType::new(TypeNode::Primitive(PrimitiveKind::Int32)),
        dims: vec![4096, 4096],
    });
    let t = DynamicType::new(TypeNode::Struct(StructDesc {
        name: "Big".into(),
        extensibility: Extensibility::Mutable,
        base: None,
        members: vec![MemberDesc {
            name: "a".into(),
            id: 1,
            ty: arr,
            key: false,
            optional: false,
            must_understand: false,
            external: false,
        }],
        own_start: 0,
        names_known: true,
        nested: false,
    }));
    // PL_CDR2_LE, DHEADER 0: no member present.
    let err = dynamic::decode(&t, &[0, 0x0b, 0, 0, 0, 0, 0, 0]).unwrap_err();
    assert!(matches!(err, DynamicError::Limit { .. }), "{err}");
}
