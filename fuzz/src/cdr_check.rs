//! The `cdr_decode` check: a rich `#[derive(Topic)]` type in final, appendable and mutable
//! variants (strings, sequences, arrays, optionals, nested final/appendable/mutable structs,
//! enums, boxes, keys) decoded from arbitrary bytes under every encapsulation id; whatever
//! decodes must re-serialize, re-decode to the same value and re-serialize to the same bytes.
//!
//! The types are those of crates/halyard-cdr/tests/types/mod.rs, included by path.
#![allow(dead_code)]

use halyard_cdr::{
    deserialize, deserialize_key, key_hash, serialize, serialize_key, DataRepresentation,
    TopicType, CDR2_BE, CDR2_LE, CDR_BE, CDR_LE, D_CDR2_BE, D_CDR2_LE, PL_CDR2_BE, PL_CDR2_LE,
    PL_CDR_BE, PL_CDR_LE,
};
use std::fmt::Debug;

/// Every encapsulation id the decoder accepts.
pub const ENCAPSULATIONS: [u16; 10] = [
    CDR_BE, CDR_LE, PL_CDR_BE, PL_CDR_LE, CDR2_BE, CDR2_LE, D_CDR2_BE, D_CDR2_LE, PL_CDR2_BE,
    PL_CDR2_LE,
];

/// The rich test types, shared with halyard-cdr's own tests (one definition).
#[path = "../../crates/halyard-cdr/tests/types/mod.rs"]
mod types;
pub use types::*;

const REPS: [DataRepresentation; 2] = [DataRepresentation::Xcdr1, DataRepresentation::Xcdr2];

/// Decoded → serialize → decode → serialize: same value (by Debug, so NaN compares) and
/// same bytes; the key round trip preserves the key hash.
fn round_trip<T: TopicType + Debug>(v: &T) {
    let kh = key_hash(v).expect("key_hash of a decoded sample");
    for rep in REPS {
        let mut b1 = Vec::new();
        serialize(v, rep, &mut b1)
            .unwrap_or_else(|e| panic!("{rep:?}: decoded sample does not serialize: {e:?}\n{v:?}"));
        let v2: T = deserialize(&b1).unwrap_or_else(|e| {
            panic!("{rep:?}: re-serialized sample does not decode: {e:?}\n{v:?}\n{b1:02x?}")
        });
        assert_eq!(
            format!("{v:?}"),
            format!("{v2:?}"),
            "{rep:?}: value changed"
        );
        let mut b2 = Vec::new();
        serialize(&v2, rep, &mut b2).expect("second serialize");
        assert_eq!(b1, b2, "{rep:?}: bytes changed");

        let mut k = Vec::new();
        serialize_key(v, rep, &mut k).expect("serialize_key of a decoded sample");
        let kv: T = deserialize_key(&k)
            .unwrap_or_else(|e| panic!("{rep:?}: serialized key does not decode: {e:?}\n{v:?}"));
        assert_eq!(
            key_hash(&kv).expect("key_hash"),
            kh,
            "{rep:?}: key hash after key round trip"
        );
    }
}

fn decode_as<T: TopicType + Debug>(bytes: &[u8]) {
    if let Ok(v) = deserialize::<T>(bytes) {
        round_trip(&v);
    }
    if let Ok(v) = deserialize_key::<T>(bytes) {
        let _ = key_hash(&v);
        for rep in REPS {
            let mut b = Vec::new();
            serialize(&v, rep, &mut b).expect("key-only sample serializes");
        }
    }
}

fn decode_all(bytes: &[u8]) {
    decode_as::<RichFinal>(bytes);
    decode_as::<RichAppendable>(bytes);
    decode_as::<RichMutable>(bytes);
    decode_as::<KeyedSeq>(bytes);
}

/// The fuzz entry: the input as it is (its own encapsulation header), then its body behind
/// each of the encapsulation ids.
pub fn check_cdr(data: &[u8]) {
    decode_all(data);
    let Some(body) = data.get(4..) else {
        return;
    };
    let mut buf = Vec::with_capacity(data.len());
    for enc in ENCAPSULATIONS {
        buf.clear();
        buf.extend_from_slice(&enc.to_be_bytes());
        buf.extend_from_slice(&data[2..4]);
        buf.extend_from_slice(body);
        decode_all(&buf);
    }
}
