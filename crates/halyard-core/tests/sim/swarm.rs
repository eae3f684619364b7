//! Proves, over many seeds with fault rates drawn from the seed (loss up to 40%, corruption up
//! to 2%), that a reliable KEEP_ALL stream stays exactly-once and in order and converges (all
//! delivered, all acknowledged) within bounded virtual time once the network heals.
//!
//! Corruption: RTPS carries no checksum (it relies on UDP's), so a bit flip that escapes the
//! checksum can change a payload, a sequence number or an ACKNACK undetectably. Half the seeds
//! therefore run without corruption and assert the full property; the other half feed the core
//! corrupted datagrams and assert what must survive them: no panic, intact samples still
//! delivered at most once, in order, at their own sequence number, and convergence to "all
//! acknowledged" after healing.
//!
//! Long runs: `HALYARD_SIM_SEEDS=10000 cargo test -p halyard-core --release --test sim swarm`.

use crate::net::*;

/// Samples per seed (300 keeps 50 seeds at a few seconds in debug builds).
const SAMPLES: u64 = 300;

#[test]
fn swarm_reliable_safety_and_convergence() {
    for_each_seed("swarm_reliable_safety_and_convergence", 50, |seed| {
        let mut r = Rng::new(seed ^ 0x5EA5_0A11);
        let faults = Faults {
            loss: r.unit() * 0.40,
            duplicate: r.unit() * 0.10,
            reorder: r.unit() * 0.5,
            reorder_delay_ns: r.range(0, 20) * MS,
            latency_ns: r.range(10_000, 5 * MS),
            jitter_ns: r.range(0, 2 * MS),
            corrupt: if r.chance(0.5) { r.unit() * 0.02 } else { 0.0 },
        };
        let out = reliable_stream(seed, faults.clone(), SAMPLES, 300 * SEC);
        if out.net.stats.corrupted == 0 {
            assert_exactly_once_in_order(seed, &out.delivered, SAMPLES);
        } else {
            let bad = assert_intact_in_order(seed, &out);
            assert!(
                bad as u64 <= out.net.stats.corrupted,
                "seed {seed:#x}: {bad} corrupted deliveries from {} corrupted datagrams",
                out.net.stats.corrupted
            );
        }
        assert!(
            out.net.nodes[out.writer_node]
                .p
                .writer_all_acked(out.writer),
            "seed {seed:#x}: not all acked; faults {faults:?}"
        );
    });
}
