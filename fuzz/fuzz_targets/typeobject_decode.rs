//! Fuzz target `typeobject_decode`. Input: a little-endian u16 `n`, then `n` bytes of an XCDR2
//! TypeMapping, then a serialized sample. The TypeMapping's objects are registered (hash and
//! consistency checks), every type is built, printed as IDL and used to decode the sample
//! (then JSON, key hash and re-encoding). The whole input is also decoded as a TypeObject and
//! a TypeInformation. Nothing may panic. Seeds: the cyclonedds 11 Python types and samples of
//! crates/halyard-xtypes/tests/data/dynamic/gen_dynamic.py.
#![no_main]

use halyard_cdr::{DataRepresentation, Endianness};
use halyard_xtypes::dynamic;
use halyard_xtypes::{to_idl, TypeInformation, TypeMapping, TypeObject, TypeRegistry};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = TypeInformation::from_xcdr2(data);
    if let Ok(obj) = TypeObject::from_xcdr2(data) {
        let mut reg = TypeRegistry::new();
        if let Ok(id) = reg.insert_object(obj) {
            let _ = reg.build(&id).map(|t| to_idl(&t));
        }
    }
    let Some((len, rest)) = data.split_first_chunk::<2>() else { return };
    let Some((map, sample)) = rest.split_at_checked(usize::from(u16::from_le_bytes(*len))) else {
        return;
    };
    let Ok(map) = TypeMapping::from_xcdr2(map) else { return };
    let mut reg = TypeRegistry::new();
    if reg.insert_mapping(&map).is_err() {
        return;
    }
    for (id, _) in &map.complete {
        let Ok(t) = reg.build(id) else { continue };
        let _ = to_idl(&t);
        let Ok(v) = dynamic::decode(&t, sample) else { continue };
        let _ = dynamic::to_json(&t, &v);
        let _ = dynamic::key_hash(&t, &v);
        for rep in [DataRepresentation::Xcdr1, DataRepresentation::Xcdr2] {
            if let Ok(bytes) = dynamic::encode(&t, &v, rep, Endianness::Big) {
                // What we wrote must read back as the same value.
                let again = dynamic::decode(&t, &bytes).expect("re-decoding our own encoding");
                assert!(again == v || format!("{again:?}").contains("NaN"), "round trip differs");
            }
        }
    }
});
