//! Where the security plugins' randomness comes from.
//!
//! Production uses the operating system's generator through OpenSSL ([`OsRandom`]). Tests and
//! simulations pass a [`SeededRandom`], so a run replays from its seed: challenges, nonces,
//! ephemeral key-agreement keys, session keys and initialisation vectors are all drawn here.

use openssl::sha::Sha256;

/// A source of cryptographically strong random bytes.
pub trait SecureRandom: Send {
    /// Fills `buf` with random bytes.
    fn fill(&mut self, buf: &mut [u8]);
}

/// The operating system's generator (OpenSSL's `RAND_bytes`).
#[derive(Debug, Default, Clone, Copy)]
pub struct OsRandom;

impl SecureRandom for OsRandom {
    fn fill(&mut self, buf: &mut [u8]) {
        // RAND_bytes fails only when OpenSSL's generator cannot be seeded at all, in which
        // case no secure operation is possible.
        openssl::rand::rand_bytes(buf).expect("OpenSSL's random generator is unavailable");
    }
}

/// A deterministic generator for tests and simulations: SHA-256 of (seed, counter) blocks.
/// Never use it for real keys.
#[derive(Debug, Clone)]
pub struct SeededRandom {
    seed: u64,
    counter: u64,
}

impl SeededRandom {
    /// A generator whose whole output is fixed by `seed`.
    pub fn new(seed: u64) -> Self {
        SeededRandom { seed, counter: 0 }
    }
}

impl SecureRandom for SeededRandom {
    fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(32) {
            let mut h = Sha256::new();
            h.update(&self.seed.to_le_bytes());
            h.update(&self.counter.to_le_bytes());
            self.counter += 1;
            let block = h.finish();
            chunk.copy_from_slice(&block[..chunk.len()]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_random_replays_and_differs_by_seed() {
        let (mut a, mut b, mut c) = (
            SeededRandom::new(7),
            SeededRandom::new(7),
            SeededRandom::new(8),
        );
        let (mut x, mut y, mut z) = ([0u8; 70], [0u8; 70], [0u8; 70]);
        a.fill(&mut x);
        b.fill(&mut y);
        c.fill(&mut z);
        assert_eq!(x, y);
        assert_ne!(x, z);
        assert_ne!(x[..32], x[32..64]);
    }

    #[test]
    fn os_random_fills() {
        let mut x = [0u8; 32];
        OsRandom.fill(&mut x);
        assert_ne!(x, [0u8; 32]);
    }
}
