//! Writer batching: samples gathered into shared datagrams still arrive exactly once and in
//! order under seeded loss, duplication and reordering, and batching really does put several
//! samples in one datagram (fewer datagrams than samples on a loss-free network).

use crate::net::*;
use halyard_core::BatchPolicy;
use std::time::Duration;

const SAMPLES: u64 = 2000;

fn policy(max_bytes: usize, delay_ms: u64) -> Option<BatchPolicy> {
    Some(BatchPolicy {
        max_bytes,
        max_flush_delay: Duration::from_millis(delay_ms),
    })
}

#[test]
fn batched_reliable_stream_is_exactly_once_in_order_under_faults() {
    for_each_seed(
        "batched_reliable_stream_is_exactly_once_in_order_under_faults",
        50,
        |seed| {
            let mut r = Rng::new(seed ^ 0xBA7C);
            let faults = Faults::stream_mix(&mut r);
            let max_bytes = r.range(2_000, 64_000) as usize;
            let delay = r.range(1, 20);
            let out =
                reliable_stream_batched(seed, faults, SAMPLES, 120 * SEC, policy(max_bytes, delay));
            assert_exactly_once_in_order(seed, &out.delivered, SAMPLES);
            assert!(
                out.net.nodes[out.writer_node]
                    .p
                    .writer_all_acked(out.writer),
                "seed {seed:#x}: not all acked"
            );
        },
    );
}

#[test]
fn batching_puts_several_samples_in_one_datagram() {
    for_each_seed("batching_puts_several_samples_in_one_datagram", 5, |seed| {
        let plain = reliable_stream(seed, Faults::none(), SAMPLES, 60 * SEC);
        let batched =
            reliable_stream_batched(seed, Faults::none(), SAMPLES, 60 * SEC, policy(64_000, 20));
        assert_exactly_once_in_order(seed, &batched.delivered, SAMPLES);
        let (p, b) = (plain.net.stats.sent, batched.net.stats.sent);
        // Samples are written about 100 µs apart (virtual) and a batch waits up to 20 ms, so
        // without batching each sample is a datagram of its own.
        println!("seed {seed:#x}: {p} datagrams without batching, {b} with");
        assert!(
            p >= SAMPLES,
            "seed {seed:#x}: {p} datagrams without batching"
        );
        assert!(
            b * 4 < p,
            "seed {seed:#x}: batching sent {b} datagrams, plain {p}: not batched"
        );
    });
}

/// A batch that has no room left for another sample of the size just added goes at once: a
/// large sample does not wait for the next write or the flush delay (it did, and every write
/// set the driver's timer to the flush delay).
#[test]
fn a_batch_without_room_for_another_such_sample_goes_at_once() {
    for_each_seed(
        "a_batch_without_room_for_another_such_sample_goes_at_once",
        5,
        |seed| {
            let mut net = SimNet::new(seed, Faults::none());
            for idx in [1, 2] {
                net.add_node(node_config(idx));
            }
            let (w, r) = matched_pair(
                &mut net,
                "Large",
                reliable_keep_all_writer(),
                reliable_keep_all_reader(),
            );
            net.p(0)
                .set_writer_batching(w, policy(64_000, 500))
                .expect("batching on a known writer");
            let delivered = |n: &SimNet| {
                n.node(1)
                    .samples
                    .iter()
                    .filter(|(_, s)| s.reader == r)
                    .count()
            };
            // A first small sample settles where the reader's stream starts.
            write_retrying(&mut net, 0, w, [0; 16], indexed_payload(0, 100));
            assert!(
                net.run_until(5 * SEC, |n| delivered(n) == 1),
                "seed {seed:#x}: the first sample did not arrive"
            );
            // Quiet: discovery and the first sample's acknowledgments are over (traffic from
            // the reader would make the writer send its batch).
            net.run_for(2 * SEC);
            // 40 000 bytes leave no room for another 40 000 in a 64 000-byte batch.
            write_retrying(&mut net, 0, w, [0; 16], indexed_payload(1, 40_000));
            let arrived = net.run_until(5 * MS, |n| delivered(n) == 2);
            assert!(
                arrived,
                "seed {seed:#x}: a 40 000-byte sample waited (for the next HEARTBEAT, 10 ms, or the 500 ms flush delay)"
            );
        },
    );
}
