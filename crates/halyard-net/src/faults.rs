//! A seeded fault injector for tests against real peers (smoltcp's fault-injector idea):
//! drops, duplicates and reorders datagrams on send and on receive, deterministically for a
//! given seed and sequence of datagrams. Production participants have none.

use halyard_wire::Locator;

/// Fault rates (probabilities in 0.0..=1.0) and the seed (default: no faults).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct FaultConfig {
    /// PRNG seed (xorshift64*; zero is replaced by a fixed non-zero value).
    pub seed: u64,
    /// Probability of dropping an outgoing datagram.
    pub drop_send: f64,
    /// Probability of dropping an incoming datagram.
    pub drop_receive: f64,
    /// Probability of sending or delivering a datagram twice.
    pub duplicate: f64,
    /// Probability of holding a datagram back until after the next one.
    pub reorder: f64,
}

impl FaultConfig {
    /// Checks the rates.
    pub fn validate(&self) -> Result<(), &'static str> {
        let rates = [
            self.drop_send,
            self.drop_receive,
            self.duplicate,
            self.reorder,
        ];
        if rates.iter().all(|r| (0.0..=1.0).contains(r)) {
            Ok(())
        } else {
            Err("fault rates must be probabilities in 0.0..=1.0")
        }
    }
}

/// Counts of what the injector did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultStats {
    /// Datagrams dropped.
    pub dropped: u64,
    /// Datagrams duplicated.
    pub duplicated: u64,
    /// Datagrams reordered.
    pub reordered: u64,
}

/// Applies [`FaultConfig`] to a stream of datagrams.
pub struct FaultInjector {
    cfg: FaultConfig,
    state: u64,
    held_send: Option<(Vec<Locator>, Vec<u8>)>,
    held_receive: Option<Vec<u8>>,
    /// What was done so far.
    pub stats: FaultStats,
}

impl FaultInjector {
    /// A new injector.
    pub fn new(cfg: FaultConfig) -> Self {
        let state = if cfg.seed == 0 {
            0x9E37_79B9_7F4A_7C15
        } else {
            cfg.seed
        };
        FaultInjector {
            cfg,
            state,
            held_send: None,
            held_receive: None,
            stats: FaultStats::default(),
        }
    }

    fn chance(&mut self, p: f64) -> bool {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        let x = self.state.wrapping_mul(0x2545_F491_4F6C_DD1D);
        ((x >> 11) as f64 / (1u64 << 53) as f64) < p
    }

    /// The datagrams to really send for one outgoing datagram (zero, one, two, or a held one).
    pub fn on_send(
        &mut self,
        destinations: &[Locator],
        payload: &[u8],
    ) -> Vec<(Vec<Locator>, Vec<u8>)> {
        let mut out = Vec::new();
        if self.chance(self.cfg.drop_send) {
            self.stats.dropped += 1;
        } else {
            let item = (destinations.to_vec(), payload.to_vec());
            if self.chance(self.cfg.duplicate) {
                self.stats.duplicated += 1;
                out.push(item.clone());
            }
            if self.held_send.is_none() && self.chance(self.cfg.reorder) {
                self.stats.reordered += 1;
                self.held_send = Some(item);
                return out;
            }
            out.push(item);
        }
        out.extend(self.held_send.take());
        out
    }

    /// The datagrams to really deliver for one incoming datagram.
    pub fn on_receive(&mut self, payload: &[u8]) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        if self.chance(self.cfg.drop_receive) {
            self.stats.dropped += 1;
        } else {
            if self.chance(self.cfg.duplicate) {
                self.stats.duplicated += 1;
                out.push(payload.to_vec());
            }
            if self.held_receive.is_none() && self.chance(self.cfg.reorder) {
                self.stats.reordered += 1;
                self.held_receive = Some(payload.to_vec());
                return out;
            }
            out.push(payload.to_vec());
        }
        out.extend(self.held_receive.take());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_applied_and_replay_from_the_seed() {
        let cfg = FaultConfig {
            seed: 42,
            drop_send: 0.2,
            drop_receive: 0.0,
            duplicate: 0.1,
            reorder: 0.1,
        };
        let run = || {
            let mut f = FaultInjector::new(cfg);
            let mut sent = Vec::new();
            for i in 0..10_000u32 {
                for (_, p) in f.on_send(&[], &i.to_le_bytes()) {
                    sent.push(u32::from_le_bytes([p[0], p[1], p[2], p[3]]));
                }
            }
            (sent, f.stats)
        };
        let (a, stats) = run();
        assert_eq!(a, run().0, "same seed, same faults");
        assert!((1_700..2_300).contains(&stats.dropped), "{stats:?}");
        assert!((600..1_000).contains(&stats.duplicated), "{stats:?}");
        assert!(stats.reordered > 500, "{stats:?}");
        assert!(
            a.windows(2).any(|w| w[1] < w[0]),
            "some datagrams overtake others"
        );
        assert!(FaultConfig {
            drop_send: 1.5,
            ..cfg
        }
        .validate()
        .is_err());
    }
}
