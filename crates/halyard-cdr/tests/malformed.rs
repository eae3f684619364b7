//! Proves that malformed input (truncation, absurd lengths, bad bool/enum/UTF-8/encapsulation,
//! and 50k random or mutated buffers) yields errors without panics or huge allocations.

mod types;

use halyard_cdr::{
    deserialize, deserialize_key, serialize, CdrError, DataRepresentation, Topic, TopicType,
};
use types::*;

fn all_reps<T: TopicType>(v: &T) -> Vec<Vec<u8>> {
    [DataRepresentation::Xcdr1, DataRepresentation::Xcdr2]
        .iter()
        .map(|&rep| {
            let mut out = Vec::new();
            serialize(v, rep, &mut out).unwrap();
            out
        })
        .collect()
}

fn truncations_fail<T: TopicType>(v: &T) {
    for bytes in all_reps(v) {
        let pad = usize::from(bytes[3] & 3);
        for len in 0..bytes.len() - pad {
            assert!(deserialize::<T>(&bytes[..len]).is_err(), "len {len}");
        }
    }
}

#[test]
fn truncated_at_every_length() {
    truncations_fail(&RichFinal::sample());
    truncations_fail(&RichAppendable::sample());
    truncations_fail(&RichMutable::sample());
    truncations_fail(&KeyedSeq::default());
}

#[test]
fn absurd_sequence_length_is_rejected_before_allocating() {
    let bytes = [
        0, 1, 0, 0, // CDR_LE
        1, 0, 0, 0, 2, 0, 0, 0, // seq, keyval
        0xff, 0xff, 0xff, 0xff, // baggage length 4 Gi
        1, 2, 3,
    ];
    assert!(matches!(
        deserialize::<KeyedSeq>(&bytes),
        Err(CdrError::LengthTooLarge {
            length: 0xffff_ffff,
            limit: 3
        })
    ));
}

/// Sequences of structs check the count against their minimum element size.
#[derive(Topic, Debug, Clone, PartialEq, Default)]
struct Points {
    pts: Vec<Point>,
}

#[test]
fn absurd_struct_sequence_length_is_rejected() {
    let bytes = [0, 1, 0, 0, 0x00, 0x00, 0x00, 0x10, 0, 0, 0, 0];
    assert!(matches!(
        deserialize::<Points>(&bytes),
        Err(CdrError::LengthTooLarge { .. })
    ));
}

/// Small type with each checked primitive.
#[derive(Topic, Debug, Clone, PartialEq, Default)]
struct Checked {
    b: bool,
    c: Color,
    s: String,
}

fn checked(body: &[u8]) -> Result<Checked, CdrError> {
    let mut bytes = vec![0, 1, 0, 0];
    bytes.extend_from_slice(body);
    deserialize(&bytes)
}

#[test]
fn bad_values() {
    let ok = [1, 0, 0, 0, 5, 0, 0, 0, 2, 0, 0, 0, b'x', 0];
    assert_eq!(checked(&ok).unwrap().c, Color::Green);
    let mut bad_bool = ok;
    bad_bool[0] = 2;
    assert_eq!(checked(&bad_bool), Err(CdrError::InvalidBool(2)));
    let mut bad_enum = ok;
    bad_enum[4] = 6;
    assert_eq!(checked(&bad_enum), Err(CdrError::InvalidEnum(6)));
    let mut bad_utf8 = ok;
    bad_utf8[12] = 0xff;
    assert_eq!(checked(&bad_utf8), Err(CdrError::InvalidUtf8));
    let mut no_nul = ok;
    no_nul[13] = b'y';
    assert_eq!(checked(&no_nul), Err(CdrError::MissingNul));
    let mut empty = ok;
    empty[8] = 0;
    assert_eq!(checked(&empty[..12]), Err(CdrError::MissingNul));
}

#[test]
fn bad_encapsulation() {
    let mut bytes = all_reps(&KeyedSeq::default()).remove(0);
    bytes[1] = 0x05;
    assert_eq!(
        deserialize::<KeyedSeq>(&bytes),
        Err(CdrError::BadEncapsulation(5))
    );
    assert_eq!(deserialize::<KeyedSeq>(&[0, 1]), Err(CdrError::Truncated));
}

/// Deterministic xorshift64 generator.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn mutate(rng: &mut XorShift, seed: &[u8]) -> Vec<u8> {
    let mut b = seed.to_vec();
    match rng.below(4) {
        0 => (0..rng.below(64) + 4).map(|_| rng.next() as u8).collect(),
        1 => {
            b.truncate(rng.below(seed.len() + 1));
            b
        }
        _ => {
            for _ in 0..rng.below(6) + 1 {
                let i = 4 + rng.below(b.len() - 4);
                b[i] = if rng.below(3) == 0 {
                    0xff
                } else {
                    rng.next() as u8
                };
            }
            b
        }
    }
}

fn decode_all(b: &[u8]) {
    let _ = deserialize::<RichFinal>(b);
    let _ = deserialize::<RichAppendable>(b);
    let _ = deserialize::<RichMutable>(b);
    let _ = deserialize_key::<RichMutable>(b);
}

#[test]
fn fuzz_50k_never_panics() {
    let mut seeds = all_reps(&RichFinal::sample());
    seeds.extend(all_reps(&RichAppendable::sample()));
    seeds.extend(all_reps(&RichMutable::sample()));
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    for i in 0..50_000 {
        let seed = &seeds[i % seeds.len()];
        decode_all(&mutate(&mut rng, seed));
    }
}
