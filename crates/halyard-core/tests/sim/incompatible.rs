//! Proves that a best-effort writer and a reliable reader report OfferedIncompatibleQos and
//! RequestedIncompatibleQos and never match, and that a partition mismatch prevents matching
//! silently (no incompatible-QoS event).

use crate::net::*;
use halyard_core::wire::qos::{EndpointQos, ReliabilityKind};
use halyard_core::{Event, QosPolicyId, ReaderSpec, WriterSpec};

fn setup(seed: u64, wq: EndpointQos, rq: EndpointQos) -> SimNet {
    let mut net = SimNet::new(
        seed,
        Faults {
            jitter_ns: 300_000,
            ..Faults::lossy(0.1)
        },
    );
    net.add_node(node_config(1));
    net.add_node(node_config(2));
    let now = net.instant();
    net.p(0).create_writer(
        now,
        WriterSpec {
            topic_name: "T".into(),
            type_name: "Blob".into(),
            qos: wq,
            has_key: false,
        },
    );
    net.p(1).create_reader(
        now,
        ReaderSpec {
            topic_name: "T".into(),
            type_name: "Blob".into(),
            qos: rq,
            has_key: false,
        },
    );
    net.flush();
    let ok = net.run_until(120 * SEC, |n| {
        n.node(0)
            .saw(|e| matches!(e, Event::SubscriptionDiscovered(_)))
            && n.node(1)
                .saw(|e| matches!(e, Event::PublicationDiscovered(_)))
    });
    assert!(
        ok,
        "seed {seed:#x}: endpoints not discovered; {:?}",
        net.stats
    );
    net.run_for(5 * SEC);
    net
}

fn no_match(seed: u64, net: &SimNet) {
    let matched = |e: &Event| {
        matches!(
            e,
            Event::PublicationMatched { .. } | Event::SubscriptionMatched { .. }
        )
    };
    assert!(
        !net.node(0).saw(matched) && !net.node(1).saw(matched),
        "seed {seed:#x}: endpoints matched"
    );
}

#[test]
fn best_effort_writer_vs_reliable_reader() {
    for_each_seed("best_effort_writer_vs_reliable_reader", 50, |seed| {
        let mut wq = EndpointQos::writer_default();
        wq.reliability.kind = ReliabilityKind::BestEffort;
        let mut rq = EndpointQos::reader_default();
        rq.reliability.kind = ReliabilityKind::Reliable;
        let net = setup(seed, wq, rq);
        no_match(seed, &net);
        let offered = net.node(0).saw(|e| {
            matches!(
                e,
                Event::OfferedIncompatibleQos {
                    policy: QosPolicyId::Reliability,
                    ..
                }
            )
        });
        let requested = net.node(1).saw(|e| {
            matches!(
                e,
                Event::RequestedIncompatibleQos {
                    policy: QosPolicyId::Reliability,
                    ..
                }
            )
        });
        assert!(
            offered,
            "seed {seed:#x}: no OfferedIncompatibleQos(Reliability) on the writer's node"
        );
        assert!(
            requested,
            "seed {seed:#x}: no RequestedIncompatibleQos(Reliability) on the reader's node"
        );
    });
}

#[test]
fn partition_mismatch_does_not_match_silently() {
    for_each_seed("partition_mismatch_does_not_match_silently", 50, |seed| {
        let mut wq = EndpointQos::writer_default();
        wq.partition = vec!["alpha".into()];
        let mut rq = EndpointQos::reader_default();
        rq.partition = vec!["beta".into()];
        let net = setup(seed, wq, rq);
        no_match(seed, &net);
        let incompatible = |e: &Event| {
            matches!(
                e,
                Event::OfferedIncompatibleQos { .. } | Event::RequestedIncompatibleQos { .. }
            )
        };
        assert!(
            !net.node(0).saw(incompatible) && !net.node(1).saw(incompatible),
            "seed {seed:#x}: incompatible-QoS event for a partition mismatch"
        );
    });
}
