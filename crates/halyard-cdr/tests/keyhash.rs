//! Proves the key hash (XTypes 1.3 §7.6.8): XCDR2 big-endian key members zero-padded to 16
//! bytes when bounded by 16, MD5 otherwise, zeros for keyless types; nested keys included.

mod types;

use halyard_cdr::{key_hash, CdrType, Topic, TopicType};
use types::KeyedSeq;

#[test]
fn keyed_seq_hash_is_big_endian_key_padded() {
    let v = KeyedSeq {
        seq: 99,
        keyval: 0x0102_0304,
        baggage: vec![1, 2, 3],
    };
    let mut expected = [0u8; 16];
    expected[..4].copy_from_slice(&[1, 2, 3, 4]);
    assert_eq!(key_hash(&v).unwrap(), expected);
}

/// A struct keyed by an (unbounded) string.
#[derive(Topic, Debug, Clone, PartialEq, Default)]
struct Named {
    #[key]
    name: String,
    value: u32,
}

#[test]
fn string_key_hash_is_md5_of_xcdr2_be() {
    let v = Named {
        name: "ab".into(),
        value: 7,
    };
    assert_eq!(Named::key_max_size(), None);
    // MD5 of 00 00 00 03 'a' 'b' 00 (length incl. NUL, chars, NUL), computed independently.
    let expected = [
        24, 101, 148, 183, 32, 93, 8, 172, 47, 248, 225, 172, 71, 251, 75, 42,
    ];
    assert_eq!(key_hash(&v).unwrap(), expected);
}

/// A keyless type.
#[derive(Topic, Debug, Clone, PartialEq, Default)]
struct Keyless {
    a: u32,
}

#[test]
fn keyless_hash_is_zero() {
    assert!(!Keyless::has_key());
    assert_eq!(key_hash(&Keyless { a: 5 }).unwrap(), [0; 16]);
}

/// A nested key type: its own key members form the key.
#[derive(CdrType, Debug, Clone, PartialEq, Default)]
struct Inner {
    #[key]
    k: u16,
    other: u8,
}

/// A struct whose keys include a nested struct and an 8-byte integer.
#[derive(Topic, Debug, Clone, PartialEq, Default)]
struct Outer {
    #[key]
    a: u8,
    #[key]
    inner: Inner,
    #[key]
    b: u64,
    payload: Vec<u8>,
}

#[test]
fn nested_key_hash_uses_xcdr2_alignment() {
    let v = Outer {
        a: 1,
        inner: Inner {
            k: 0x0203,
            other: 9,
        },
        b: 0x0405_0607_0809_0a0b,
        payload: vec![1],
    };
    // a, pad, k, then b aligned to 4 (XCDR2): 12 bytes ≤ 16.
    assert_eq!(Outer::key_max_size(), Some(12));
    let expected = [1, 0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0, 0, 0, 0];
    assert_eq!(key_hash(&v).unwrap(), expected);
}

/// A key whose maximum size exceeds 16 bytes is hashed even when short.
#[derive(Topic, Debug, Clone, PartialEq, Default)]
struct Wide {
    #[key]
    k: [u32; 5],
}

#[test]
fn wide_key_is_md5() {
    assert_eq!(Wide::key_max_size(), Some(20));
    let h = key_hash(&Wide { k: [1, 2, 3, 4, 5] }).unwrap();
    assert_ne!(&h[..4], &[0, 0, 0, 1]);
}
