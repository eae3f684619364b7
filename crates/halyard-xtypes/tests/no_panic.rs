//! Proves that no decoder panics on random bytes or on mutated valid encodings (Cyclone's
//! golden type maps and our own); a failure prints the seed and case that reproduce it.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

use halyard_cdr::Endianness;
use halyard_xtypes::*;

/// xorshift64*: deterministic, seedable, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn corpus() -> Vec<Vec<u8>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut out = Vec::new();
    for flavour in ["idlc-0.10.2", "python-11.0.1"] {
        for entry in std::fs::read_dir(dir.join(flavour)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "hex") {
                let text = std::fs::read_to_string(&path).unwrap();
                let t = text.trim();
                let bytes = (0..t.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&t[i..i + 2], 16).unwrap())
                    .collect::<Vec<u8>>();
                // The whole mapping, and each TypeObject in it on its own.
                if let Ok(map) = TypeMapping::from_xcdr2(&bytes) {
                    for (id, o) in map.minimal.iter().chain(&map.complete) {
                        out.push(o.to_xcdr2_le().unwrap());
                        out.push(id.to_xcdr2_le().unwrap());
                    }
                }
                out.push(bytes);
            }
        }
    }
    assert!(out.len() > 20, "golden corpus present");
    out
}

/// Runs every decoder on `bytes`; returns whether any accepted them.
fn decode_all(bytes: &[u8]) -> bool {
    let mut accepted = TypeMapping::from_xcdr2(bytes).is_ok();
    for e in [Endianness::Little, Endianness::Big] {
        accepted |= TypeIdentifier::from_xcdr2_endian(bytes, e).is_ok();
        accepted |= TypeObject::from_xcdr2_endian(bytes, e).is_ok();
        accepted |= TypeInformation::from_xcdr2_endian(bytes, e).is_ok();
    }
    // Whatever decodes must re-encode and decode to the same value.
    if let Ok(o) = TypeObject::from_xcdr2(bytes) {
        let again = o.to_xcdr2_le().expect("decoded objects re-encode");
        assert_eq!(TypeObject::from_xcdr2(&again).expect("re-decodes"), o);
    }
    accepted
}

fn mutate(rng: &mut Rng, base: &[u8]) -> Vec<u8> {
    let mut b = base.to_vec();
    for _ in 0..=rng.below(4) {
        match rng.below(5) {
            0 if !b.is_empty() => {
                let i = rng.below(b.len());
                b[i] = rng.next() as u8;
            }
            1 => b.truncate(rng.below(b.len() + 1)),
            2 if b.len() >= 4 => {
                let i = rng.below(b.len() - 3);
                let v = [0xffff_ffffu32, 0x7fff_ffff, 0x1_0000, 0][rng.below(4)];
                b[i..i + 4].copy_from_slice(&v.to_le_bytes());
            }
            3 => {
                let i = rng.below(b.len() + 1);
                b.insert(i, rng.next() as u8);
            }
            _ if !b.is_empty() => {
                let i = rng.below(b.len());
                b[i] ^= 1 << rng.below(8);
            }
            _ => {}
        }
    }
    b
}

/// Runs `cases` inputs from `make`; returns how many some decoder accepted.
fn run(seed: u64, cases: usize, make: impl Fn(&mut Rng) -> Vec<u8>) -> usize {
    let mut rng = Rng(seed);
    let mut accepted = 0;
    for case in 0..cases {
        let input = make(&mut rng);
        match catch_unwind(AssertUnwindSafe(|| decode_all(&input))) {
            Ok(ok) => accepted += usize::from(ok),
            Err(_) => panic!("decoder panicked: seed {seed:#x} case {case} input {input:02x?}"),
        }
    }
    accepted
}

#[test]
fn random_bytes_never_panic() {
    for seed in [0x5eed_0001u64, 0xdead_beef, 0x1234_5678_9abc] {
        run(seed, 4000, |rng| {
            let len = rng.below(200);
            (0..len).map(|_| rng.next() as u8).collect()
        });
    }
}

#[test]
fn mutated_encodings_never_panic() {
    let corpus = corpus();
    for seed in [0x5eed_0002u64, 0xfeed_face, 0x0bad_cafe] {
        let accepted = run(seed, 6000, |rng| {
            let base = &corpus[rng.below(corpus.len())];
            mutate(rng, base)
        });
        // Mutations must reach past the first header often enough to test the deep paths.
        assert!(
            accepted > 300,
            "seed {seed:#x}: only {accepted} mutated inputs decoded"
        );
    }
}
