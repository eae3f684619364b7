//! Proves that a reliable stream of 1 MiB samples keeps flowing under 30 % loss each way:
//! MTU-sized fragments (1344 B, ten to a datagram, as on a 1500-byte link), a 1 Gbit/s link,
//! the writer writing as fast as its flow-control window allows for 10 s of virtual time.
//! Every second must deliver a good share of the mean rate (no stall of a second or more), and
//! every sample arrives intact and in order.
//!
//! What stalled (seed 0xa49216850bf3b415 delivered 55, 52, 29, 22, 7, 0, 5, 4, 4, 7 samples in
//! its ten seconds): the reader timed its repair round trip from the first NACK not yet
//! answered, so a lost NACK put the wait for the next HEARTBEAT into the sample; the hold that
//! follows the estimate grew, the reader answered fewer HEARTBEATs, and lost repairs waited
//! longer (a spiral up to the 500 ms cap); meanwhile the writer, blocked on its full window,
//! backed its HEARTBEATs off to the full period. Now the reader times one probe per NACK
//! (`reader.rs`), and the writer keeps its HEARTBEATs fast while half its window is
//! unacknowledged (`writer/repair.rs`).

use crate::net::*;

const SIZE: usize = 1 << 20;
const SECS: u64 = 10;

/// Delivered samples per second of virtual time, for seed `seed`.
pub fn per_second(seed: u64, loss: f64) -> Vec<u64> {
    let mut net = SimNet::new(
        seed,
        Faults {
            latency_ns: 100_000,
            jitter_ns: 50_000,
            ..Faults::lossy(loss)
        },
    );
    for i in 1..=2 {
        let mut c = node_config(i);
        c.fragment_size = 1344;
        c.max_message_size = 14_720;
        let n = net.add_node(c);
        net.nodes[n].capacity = Some(125_000_000); // 1 Gbit/s
    }
    let (w, _r) = matched_pair(
        &mut net,
        "Large",
        reliable_keep_all_writer(),
        reliable_keep_all_reader(),
    );
    let start = net.now;
    let mut i = 0;
    while net.now < start + SECS * SEC {
        write_retrying(&mut net, 0, w, [0; 16], indexed_payload(i, SIZE));
        i += 1;
    }
    let samples = &net.node(1).samples;
    for (k, (_, s)) in samples.iter().enumerate() {
        assert_eq!(parse_indexed(&s.payload), Some(k as u64), "seed {seed:#x}");
    }
    let mut v = vec![0u64; SECS as usize];
    for (t, _) in samples {
        let sec = ((t - start) / SEC) as usize;
        if sec < v.len() {
            v[sec] += 1;
        }
    }
    v
}

#[test]
fn one_mib_samples_keep_flowing_at_30_percent_loss() {
    for_each_seed_scaled(
        "one_mib_samples_keep_flowing_at_30_percent_loss",
        100,
        2,
        |seed| {
            let v = per_second(seed, 0.3);
            println!("seed {seed:#x}: samples per second {v:?}");
            let mean = v.iter().sum::<u64>() as f64 / v.len() as f64;
            let worst = *v.iter().min().unwrap_or(&0) as f64;
            assert!(mean > 0.0, "seed {seed:#x}: nothing delivered");
            assert!(
            worst >= 0.4 * mean,
            "seed {seed:#x}: a second delivered {worst} samples against a mean of {mean:.1}: the stream stalls ({v:?})"
        );
        },
    );
}
