//! Proves that a reliable KEEP_ALL writer delivers every sample exactly once and in order under
//! seeded loss (0-30%), duplication (0-5%), reordering and jitter, and that everything is
//! acknowledged once the network heals.

use crate::net::*;
use halyard_core::Event;

/// Samples per seed. 2000 as specified; each seed takes well under a second in debug builds.
const SAMPLES: u64 = 2000;

#[test]
fn reliable_keep_all_exactly_once_in_order() {
    for_each_seed("reliable_keep_all_exactly_once_in_order", 50, |seed| {
        let mut r = Rng::new(seed ^ 0xFA17);
        let faults = Faults::stream_mix(&mut r);
        let out = reliable_stream(seed, faults, SAMPLES, 120 * SEC);
        assert_exactly_once_in_order(seed, &out.delivered, SAMPLES);
        assert!(
            out.net.nodes[out.writer_node]
                .p
                .writer_all_acked(out.writer),
            "seed {seed:#x}: not all acked"
        );
        let lost = out
            .net
            .node(out.reader_node)
            .saw(|e| matches!(e, Event::SampleLost { .. }));
        assert!(
            !lost,
            "seed {seed:#x}: reader reported SampleLost on a reliable KEEP_ALL stream"
        );
    });
}
