//! Proves that two participants discover each other and match a writer with a reader on the
//! same topic and type over a network that loses 20% of datagrams.

use crate::net::*;
use halyard_core::Event;

#[test]
fn discovery_and_matching_with_20_percent_loss() {
    for_each_seed("discovery_and_matching_with_20_percent_loss", 50, |seed| {
        let mut net = SimNet::new(
            seed,
            Faults {
                jitter_ns: 200_000,
                ..Faults::lossy(0.2)
            },
        );
        let a = net.add_node(node_config(1));
        let b = net.add_node(node_config(2));
        let (pa, pb) = (net.p(a).guid_prefix(), net.p(b).guid_prefix());
        let (w, r) = square_pair(&mut net, a, b);
        let ok = net.run_until(60 * SEC, |n| {
            n.node(a).saw(|e| matches!(e, Event::ParticipantDiscovered(d) if d.guid.prefix == pb))
                && n.node(b).saw(|e| matches!(e, Event::ParticipantDiscovered(d) if d.guid.prefix == pa))
                && n.node(a).saw(|e| matches!(e, Event::PublicationMatched { writer, reader, matched: true } if *writer == w && reader.prefix == pb && reader.entity == r))
                && n.node(b).saw(|e| matches!(e, Event::SubscriptionMatched { reader, writer, matched: true } if *reader == r && writer.prefix == pa && writer.entity == w))
        });
        assert!(
            ok,
            "seed {seed:#x}: no discovery/match within 60 s virtual; stats {:?}",
            net.stats
        );
        assert_eq!(net.p(a).matched_readers(w).len(), 1, "seed {seed:#x}");
        assert_eq!(net.p(b).matched_writers(r).len(), 1, "seed {seed:#x}");
    });
}
