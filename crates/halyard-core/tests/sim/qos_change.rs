//! Proves QoS changed at run time on a lossy network: a writer whose DEADLINE grows past what
//! its remote reader requests is unmatched on both sides with the policy named, and matched
//! again (data flowing) when it comes back; a reader that moves to another partition is
//! unmatched silently and matched again when it returns; a change to an immutable policy is
//! refused and changes nothing.

use crate::net::*;
use halyard_core::wire::qos::{EndpointQos, ReliabilityKind};
use halyard_core::wire::{Duration as WireDuration, EntityId};
use halyard_core::{
    ChangeKind, Event, NewChange, QosChangeError, QosPolicyId, ReaderSpec, WriterSpec,
};
use std::sync::Arc;

fn wire_ms(ms: i64) -> WireDuration {
    WireDuration::from_nanos(ms * 1_000_000)
}

fn count(n: &Node, f: impl Fn(&Event) -> bool) -> usize {
    n.events.iter().filter(|(_, e)| f(e)).count()
}

fn matched(n: &Node, up: bool) -> usize {
    count(
        n,
        |e| matches!(e, Event::SubscriptionMatched { matched, .. } if *matched == up),
    )
}

fn writer_matched(n: &Node, up: bool) -> usize {
    count(
        n,
        |e| matches!(e, Event::PublicationMatched { matched, .. } if *matched == up),
    )
}

/// Waits until `cond` holds, or fails naming the seed and what was awaited.
fn await_or_fail(net: &mut SimNet, what: &str, cond: impl FnMut(&SimNet) -> bool) {
    let seed = net.seed;
    assert!(
        net.run_until(60 * SEC, cond),
        "seed {seed:#x}: {what} within 60 s"
    );
}

/// Writes one sample and checks that the reader receives it.
fn write_and_receive(net: &mut SimNet, w: EntityId, tag: u8) {
    let change = NewChange {
        kind: ChangeKind::Alive,
        key_hash: [0; 16],
        payload: Arc::new(vec![0, 1, 0, 0, tag, 0, 0, 0]),
        timestamp: None,
        original: None,
    };
    let now = net.instant();
    net.p(0)
        .write(now, w, change)
        .unwrap_or_else(|e| panic!("seed {:#x}: write failed: {e:?}", net.seed));
    net.flush();
    await_or_fail(net, &format!("sample {tag} received"), |n| {
        n.node(1)
            .samples
            .iter()
            .any(|(_, s)| s.payload.get(4) == Some(&tag))
    });
}

#[test]
fn writer_deadline_change_unmatches_and_rematches_its_reader() {
    for_each_seed(
        "writer_deadline_change_unmatches_and_rematches_its_reader",
        30,
        |seed| {
            let mut net = SimNet::new(seed, Faults::lossy(0.2));
            net.add_node(node_config(1));
            net.add_node(node_config(2));
            let mut wq = EndpointQos::writer_default();
            wq.deadline = wire_ms(100);
            let mut rq = EndpointQos::reader_default();
            rq.reliability.kind = ReliabilityKind::Reliable;
            rq.deadline = wire_ms(200);
            let now = net.instant();
            let spec = WriterSpec {
                topic_name: "Changing".into(),
                type_name: "Blob".into(),
                qos: wq.clone(),
                has_key: false,
            };
            let w = net.p(0).create_writer(now, spec);
            let spec = ReaderSpec {
                topic_name: "Changing".into(),
                type_name: "Blob".into(),
                qos: rq,
                has_key: false,
            };
            net.p(1).create_reader(now, spec);
            net.flush();
            await_or_fail(&mut net, "first match", |n| {
                matched(n.node(1), true) == 1 && writer_matched(n.node(0), true) == 1
            });
            write_and_receive(&mut net, w, 1);

            // An immutable policy: refused, nothing announced, still matched.
            let mut bad = wq.clone();
            bad.reliability.kind = ReliabilityKind::BestEffort;
            let now = net.instant();
            assert_eq!(
                net.p(0).set_writer_qos(now, w, bad),
                Err(QosChangeError::Immutable(QosPolicyId::Reliability)),
                "seed {seed:#x}"
            );

            // Offering 300 ms where 200 ms is requested: unmatched on both sides.
            let mut slower = wq.clone();
            slower.deadline = wire_ms(300);
            let now = net.instant();
            net.p(0)
                .set_writer_qos(now, w, slower)
                .unwrap_or_else(|e| panic!("seed {seed:#x}: {e:?}"));
            net.flush();
            assert_eq!(writer_matched(net.node(0), false), 1, "seed {seed:#x}");
            assert!(net.node(0).saw(|e| matches!(
                e,
                Event::OfferedIncompatibleQos {
                    policy: QosPolicyId::Deadline,
                    ..
                }
            )));
            await_or_fail(&mut net, "reader unmatched by the new deadline", |n| {
                matched(n.node(1), false) == 1
                    && n.node(1).saw(|e| {
                        matches!(
                            e,
                            Event::RequestedIncompatibleQos {
                                policy: QosPolicyId::Deadline,
                                ..
                            }
                        )
                    })
            });

            // Back to 100 ms: matched again on both sides, and data flows.
            let now = net.instant();
            net.p(0)
                .set_writer_qos(now, w, wq.clone())
                .unwrap_or_else(|e| panic!("seed {seed:#x}: {e:?}"));
            net.flush();
            await_or_fail(&mut net, "rematch after the deadline came back", |n| {
                matched(n.node(1), true) == 2 && writer_matched(n.node(0), true) == 2
            });
            write_and_receive(&mut net, w, 2);
        },
    );
}

#[test]
fn reader_partition_change_unmatches_silently_and_rematches() {
    for_each_seed(
        "reader_partition_change_unmatches_silently_and_rematches",
        30,
        |seed| {
            let mut net = SimNet::new(seed, Faults::lossy(0.2));
            net.add_node(node_config(1));
            net.add_node(node_config(2));
            let mut wq = EndpointQos::writer_default();
            wq.partition = vec!["A".into()];
            let mut rq = EndpointQos::reader_default();
            rq.reliability.kind = ReliabilityKind::Reliable;
            rq.partition = vec!["A".into()];
            let now = net.instant();
            let spec = WriterSpec {
                topic_name: "Moving".into(),
                type_name: "Blob".into(),
                qos: wq,
                has_key: false,
            };
            let w = net.p(0).create_writer(now, spec);
            let spec = ReaderSpec {
                topic_name: "Moving".into(),
                type_name: "Blob".into(),
                qos: rq.clone(),
                has_key: false,
            };
            let r = net.p(1).create_reader(now, spec);
            net.flush();
            await_or_fail(&mut net, "first match", |n| {
                matched(n.node(1), true) == 1 && writer_matched(n.node(0), true) == 1
            });
            write_and_receive(&mut net, w, 1);

            let mut elsewhere = rq.clone();
            elsewhere.partition = vec!["B*".into()];
            let now = net.instant();
            net.p(1)
                .set_reader_qos(now, r, elsewhere)
                .unwrap_or_else(|e| panic!("seed {seed:#x}: {e:?}"));
            net.flush();
            assert_eq!(matched(net.node(1), false), 1, "seed {seed:#x}");
            await_or_fail(&mut net, "writer unmatched by the partition change", |n| {
                writer_matched(n.node(0), false) == 1
            });
            let incompatible = |e: &Event| {
                matches!(
                    e,
                    Event::OfferedIncompatibleQos { .. } | Event::RequestedIncompatibleQos { .. }
                )
            };
            assert!(
                !net.node(0).saw(incompatible) && !net.node(1).saw(incompatible),
                "seed {seed:#x}: a partition change is not an incompatibility"
            );

            let now = net.instant();
            net.p(1)
                .set_reader_qos(now, r, rq)
                .unwrap_or_else(|e| panic!("seed {seed:#x}: {e:?}"));
            net.flush();
            await_or_fail(&mut net, "rematch in partition A", |n| {
                matched(n.node(1), true) == 2 && writer_matched(n.node(0), true) == 2
            });
            write_and_receive(&mut net, w, 2);
        },
    );
}
