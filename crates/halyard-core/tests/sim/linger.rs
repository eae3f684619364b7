//! Proves that a deleted writer lingers until its reliable readers have everything: a writer
//! deleted right after its last write, on a lossy network, still delivers every sample exactly
//! once and in order, and is withdrawn afterwards (its reader sees it unmatched). Without
//! lingering (`writer_linger` zero) the same run loses the unacknowledged tail.

use crate::net::*;
use halyard_core::{Event, ParticipantConfig};
use std::time::Duration;

/// Samples written before the writer is deleted.
const SAMPLES: u64 = 200;

/// Writes `SAMPLES` samples from node 0 to node 1 at `loss`, deletes the writer at once, and
/// returns the indices the reader received and whether the writer was withdrawn (node 1 saw
/// it unmatched) by the end.
fn write_then_delete(seed: u64, loss: f64, linger: Duration) -> (Vec<Option<u64>>, bool) {
    let mut net = SimNet::new(
        seed,
        Faults {
            jitter_ns: 300_000,
            ..Faults::lossy(loss)
        },
    );
    for host in 1..=2 {
        let mut cfg: ParticipantConfig = node_config(host);
        cfg.writer_linger = linger;
        net.add_node(cfg);
    }
    let (w, r) = matched_pair(
        &mut net,
        "Linger",
        reliable_keep_all_writer(),
        reliable_keep_all_reader(),
    );
    // The reader must know of the writer before the writes (it acknowledged us).
    let synced = net.run_until(30 * SEC, |n| n.nodes[0].p.writer_synced_readers(w) == 1);
    assert!(
        synced,
        "seed {seed:#x}: the reader never acknowledged the writer"
    );
    for i in 0..SAMPLES {
        write_retrying(&mut net, 0, w, [0; 16], indexed_payload(i, 100));
    }
    let now = net.instant();
    net.p(0).delete_writer(now, w);
    net.flush();
    net.run_for((linger + Duration::from_secs(3)).as_nanos() as u64);
    let delivered = net
        .node(1)
        .samples
        .iter()
        .filter(|(_, s)| s.reader == r)
        .map(|(_, s)| parse_indexed(&s.payload))
        .collect();
    let withdrawn = net.node(1).saw(
        |e| matches!(e, Event::SubscriptionMatched { reader, matched: false, .. } if *reader == r),
    );
    assert!(
        !net.nodes[0].p.writer_lingering(w),
        "seed {seed:#x}: still lingering after the linger time"
    );
    (delivered, withdrawn)
}

#[test]
fn a_deleted_writer_delivers_its_tail_under_loss() {
    for_each_seed(
        "a_deleted_writer_delivers_its_tail_under_loss",
        50,
        |seed| {
            let (delivered, withdrawn) = write_then_delete(seed, 0.2, Duration::from_secs(1));
            assert_exactly_once_in_order(seed, &delivered, SAMPLES);
            assert!(withdrawn, "seed {seed:#x}: the writer was never withdrawn");
        },
    );
}

/// The same runs without lingering lose samples on some seeds: what the test above proves is
/// not a property of the scenario alone.
#[test]
fn without_linger_the_tail_is_lost() {
    let lost_somewhere = seeds(20).into_iter().take(20).any(|seed| {
        let (delivered, _) = write_then_delete(seed, 0.2, Duration::ZERO);
        (delivered.len() as u64) < SAMPLES
    });
    assert!(lost_somewhere, "no seed lost its tail without lingering");
}
