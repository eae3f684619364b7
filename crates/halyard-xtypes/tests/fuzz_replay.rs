//! Replays the committed seeds and regressions of the `typeobject_decode` fuzz target
//! (fuzz/corpus/ and fuzz/regressions/) on stable, with the same steps as the target, so a
//! crash the fuzzer found stays fixed.

use std::path::PathBuf;

use halyard_cdr::{DataRepresentation, Endianness};
use halyard_xtypes::dynamic;
use halyard_xtypes::{to_idl, TypeInformation, TypeMapping, TypeObject, TypeRegistry};

/// The body of fuzz/fuzz_targets/typeobject_decode.rs.
fn check(data: &[u8]) {
    let _ = TypeInformation::from_xcdr2(data);
    if let Ok(obj) = TypeObject::from_xcdr2(data) {
        let mut reg = TypeRegistry::new();
        if let Ok(id) = reg.insert_object(obj) {
            let _ = reg.build(&id).map(|t| to_idl(&t));
        }
    }
    let Some((len, rest)) = data.split_first_chunk::<2>() else {
        return;
    };
    let Some((map, sample)) = rest.split_at_checked(usize::from(u16::from_le_bytes(*len))) else {
        return;
    };
    let Ok(map) = TypeMapping::from_xcdr2(map) else {
        return;
    };
    let mut reg = TypeRegistry::new();
    if reg.insert_mapping(&map).is_err() {
        return;
    }
    for (id, _) in &map.complete {
        let Ok(t) = reg.build(id) else { continue };
        let _ = to_idl(&t);
        let Ok(v) = dynamic::decode(&t, sample) else {
            continue;
        };
        let _ = dynamic::to_json(&t, &v);
        let _ = dynamic::key_hash(&t, &v);
        for rep in [DataRepresentation::Xcdr1, DataRepresentation::Xcdr2] {
            if let Ok(bytes) = dynamic::encode(&t, &v, rep, Endianness::Big) {
                let again = dynamic::decode(&t, &bytes).expect("re-decoding our own encoding");
                assert!(
                    again == v || format!("{again:?}").contains("NaN"),
                    "round trip differs"
                );
            }
        }
    }
}

#[test]
fn fuzz_seeds_and_regressions_do_not_panic() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let mut n = 0;
    for dir in ["corpus/typeobject_decode", "regressions/typeobject_decode"] {
        let entries = std::fs::read_dir(root.join(dir)).unwrap_or_else(|e| panic!("{dir}: {e}"));
        for entry in entries {
            let path = entry.unwrap().path();
            check(&std::fs::read(&path).unwrap());
            n += 1;
        }
    }
    assert!(n >= 30, "only {n} inputs replayed");
}
