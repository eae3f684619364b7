//! Proves the TypeLookup request/reply codec: every call and return round-trips, the layout
//! is the XCDR2 one Cyclone DDS uses (CDR2 encapsulation, DHEADERs, hashed member ids), a
//! big-endian sample decodes, and no truncation or bit flip of a sample makes decoding panic.

use halyard_core::typelookup_msg::*;
use halyard_core::wire::{EntityId, Guid, GuidPrefix};
use halyard_core::xtypes::{EquivalenceKind, TypeIdentifier, TypeIdentifierWithSize};

fn hash(kind: EquivalenceKind, b: u8) -> TypeIdentifier {
    TypeIdentifier::Hash {
        kind,
        hash: [b; 14],
    }
}

fn identity() -> SampleIdentity {
    SampleIdentity {
        writer: Guid::new(GuidPrefix([1; 12]), EntityId::TL_SVC_REQUEST_WRITER),
        sn: (3 << 32) | 7,
    }
}

fn get_types() -> Request {
    Request {
        id: identity(),
        instance_name: instance_name(Guid::new(GuidPrefix([0xab; 12]), EntityId::PARTICIPANT)),
        call: Call::GetTypes(vec![
            hash(EquivalenceKind::Complete, 1),
            hash(EquivalenceKind::Minimal, 2),
        ]),
    }
}

fn reply() -> Reply {
    Reply {
        related: identity(),
        remote_ex: 0,
        ret: Return::GetTypes(Ok(TypesOut {
            // Object bytes: a DHEADER then that many bytes (the codec does not look inside).
            types: vec![
                (
                    hash(EquivalenceKind::Complete, 1),
                    vec![3, 0, 0, 0, 9, 9, 9],
                ),
                (
                    hash(EquivalenceKind::Minimal, 2),
                    vec![4, 0, 0, 0, 1, 2, 3, 4],
                ),
            ],
            complete_to_minimal: vec![(
                hash(EquivalenceKind::Complete, 1),
                hash(EquivalenceKind::Minimal, 2),
            )],
        })),
    }
}

#[test]
fn requests_and_replies_round_trip() {
    let r = get_types();
    assert_eq!(Request::decode(&r.encode()).unwrap(), r);
    let deps = Request {
        call: Call::GetTypeDependencies {
            type_ids: vec![hash(EquivalenceKind::Minimal, 5)],
            continuation_point: vec![1, 2, 3],
        },
        ..get_types()
    };
    assert_eq!(Request::decode(&deps.encode()).unwrap(), deps);
    let rp = reply();
    assert_eq!(Reply::decode(&rp.encode()).unwrap(), rp);
    let dr = Reply {
        ret: Return::GetTypeDependencies(Ok(DependenciesOut {
            dependent_typeids: vec![TypeIdentifierWithSize {
                type_id: hash(EquivalenceKind::Minimal, 6),
                typeobject_serialized_size: 40,
            }],
            continuation_point: vec![],
        })),
        ..reply()
    };
    assert_eq!(Reply::decode(&dr.encode()).unwrap(), dr);
    let err = Reply {
        ret: Return::GetTypes(Err(1)),
        ..reply()
    };
    assert_eq!(Reply::decode(&err.encode()).unwrap(), err);
}

#[test]
fn a_get_types_request_has_cyclones_layout() {
    let b = get_types().encode();
    // CDR2_LE, options = padding count.
    assert_eq!(&b[..2], &[0x00, 0x07]);
    let body = &b[4..];
    // SampleIdentity: GUID, then sequence number high 3, low 7.
    assert_eq!(&body[..12], &[1; 12]);
    assert_eq!(&body[12..16], &[0, 3, 0, 0xc3]);
    assert_eq!(&body[16..24], &[3, 0, 0, 0, 7, 0, 0, 0]);
    // instanceName: "dds.builtin.TOS." + 32 hex digits + NUL.
    assert_eq!(&body[24..28], &49u32.to_le_bytes());
    assert_eq!(
        &body[28..77],
        b"dds.builtin.TOS.abababababababababababab000001c1\0"
    );
    // TypeLookup_Call (appendable): DHEADER at 80, discriminator getTypes_HashId.
    assert_eq!(&body[84..88], &GET_TYPES_HASH_ID.to_le_bytes());
    // getTypes_In (mutable): DHEADER, EMHEADER LC=4 with member id 0x0c536065 (`type_ids`).
    assert_eq!(&body[92..96], &(0x4000_0000u32 | 0x0c53_6065).to_le_bytes());
    // The sequence (of a non-primitive): NEXTINT, DHEADER, length 2, then 2 x 15 bytes.
    assert_eq!(&body[104..108], &2u32.to_le_bytes());
    assert_eq!(body[108], 0xf2);
    assert_eq!(body[123], 0xf1);
    assert_eq!(b.len() % 4, 0);
}

#[test]
fn a_big_endian_request_decodes() {
    let le = get_types().encode();
    // Swap every 4-byte word that is a number (all words but the GUID, the name and the ids):
    // easier to build by hand.
    let mut be = vec![0x00, 0x06, 0x00, 0x00];
    be.extend_from_slice(&le[4..28]); // GUID (bytes) + sn words below fixed up
    be[4 + 16..4 + 24].copy_from_slice(&[0, 0, 0, 3, 0, 0, 0, 7]);
    be.extend_from_slice(&49u32.to_be_bytes());
    be.extend_from_slice(&le[32..81]);
    be.extend_from_slice(&[0, 0, 0]); // align to 4 (offset 77 -> 80)
    let words = |v: &[u8]| -> Vec<u32> {
        v.chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    };
    // Call DHEADER, discriminator, In DHEADER, EMHEADER, NEXTINT, seq DHEADER, length.
    for w in words(&le[84..112]) {
        be.extend_from_slice(&w.to_be_bytes());
    }
    be.extend_from_slice(&le[112..142]);
    let got = Request::decode(&be).unwrap();
    assert_eq!(got, get_types());
}

#[test]
fn damaged_samples_never_panic() {
    let samples = [get_types().encode(), reply().encode()];
    for s in &samples {
        for n in 0..s.len() {
            let _ = Request::decode(&s[..n]);
            let _ = Reply::decode(&s[..n]);
        }
        for i in 0..s.len() * 8 {
            let mut d = s.clone();
            d[i / 8] ^= 1 << (i % 8);
            let _ = Request::decode(&d);
            let _ = Reply::decode(&d);
        }
    }
    // A sequence length far beyond the sample is refused, not allocated.
    let mut big = get_types().encode();
    big[4 + 104..4 + 108].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(Request::decode(&big).is_err());
}
