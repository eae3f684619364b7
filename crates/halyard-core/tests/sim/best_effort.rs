//! Proves that a best-effort reader never delivers an older sample after a newer one from the
//! same writer, however the network reorders, duplicates or drops datagrams.

use crate::net::*;
use halyard_core::wire::qos::{EndpointQos, ReliabilityKind};

#[test]
fn best_effort_never_goes_backwards() {
    for_each_seed("best_effort_never_goes_backwards", 50, |seed| {
        let faults = Faults {
            loss: 0.1,
            duplicate: 0.05,
            reorder: 0.5,
            reorder_delay_ns: 10 * MS,
            latency_ns: 100_000,
            jitter_ns: 2 * MS,
            corrupt: 0.0,
        };
        let mut net = SimNet::new(seed, faults);
        net.add_node(node_config(1));
        net.add_node(node_config(2));
        let mut wq = EndpointQos::writer_default();
        wq.reliability.kind = ReliabilityKind::BestEffort;
        let rq = EndpointQos::reader_default();
        let (w, _r) = matched_pair(&mut net, "BE", wq, rq);
        // 500 samples, one every 100 µs: far closer together than the reordering window.
        for i in 0..500u64 {
            write_retrying(&mut net, 0, w, [0; 16], indexed_payload(i, 64));
            net.run_for(100_000);
        }
        net.run_for(SEC);
        let idx: Vec<u64> = net
            .node(1)
            .samples
            .iter()
            .map(|(_, s)| parse_indexed(&s.payload).expect("intact"))
            .collect();
        assert!(
            idx.len() > 50,
            "seed {seed:#x}: only {} samples delivered",
            idx.len()
        );
        for pair in idx.windows(2) {
            assert!(
                pair[1] > pair[0],
                "seed {seed:#x}: sample {} delivered after {}",
                pair[1],
                pair[0]
            );
        }
    });
}
