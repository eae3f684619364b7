//! Fuzz target `typeobject_decode`: TypeObject / TypeInformation decoding, registry insertion
//! (hash and consistency checks), DynamicType building and IDL printing, then dynamic decoding
//! of the same bytes as a sample of a fixed type. Nothing may panic.
#![no_main]

use halyard_xtypes::dynamic;
use halyard_xtypes::{to_idl, TypeIdentifier, TypeInformation, TypeObject, TypeRegistry};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = TypeInformation::from_xcdr2(data);
    let mut reg = TypeRegistry::new();
    if let Ok(obj) = TypeObject::from_xcdr2(data) {
        if let Ok(id) = reg.insert_object(obj) {
            if let Ok(t) = reg.build(&id) {
                let _ = to_idl(&t);
                if let Ok(v) = dynamic::decode(&t, data) {
                    let _ = dynamic::to_json(&t, &v);
                    let _ = dynamic::key_hash(&t, &v);
                }
            }
        }
    }
    let _ = reg.build(&TypeIdentifier::string8(0));
});
