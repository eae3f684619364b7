//! Proves PRESENTATION coherent access (TOPIC scope) on a lossy network: a reliable reader
//! that asked for coherent access gets every set, each in one piece (all its members become
//! available at the same instant, after the last was written); a best-effort one gets only
//! whole sets (those that lost a member are discarded and counted lost); a reader that did
//! not ask gets every member as it comes and never an empty sample for an end-of-set marker;
//! and the members of a set left open by a writer that died never reach anyone.

use crate::net::*;
use halyard_core::wire::qos::{EndpointQos, ReliabilityKind};
use halyard_core::wire::EntityId;
use halyard_core::{ChangeKind, Event, NewChange, ReaderSpec, WriterSpec};
use std::collections::BTreeMap;
use std::sync::Arc;

const SET: u8 = 5;

/// TOPIC-scope coherent access (or not), KEEP_ALL: a KEEP_LAST writer would drop members
/// before a lossy reader has them, and the reader then rightly discards the set.
fn coherent(mut q: EndpointQos, on: bool) -> EndpointQos {
    q.history = halyard_core::wire::qos::History::KeepAll;
    q.presentation.access_scope = halyard_core::wire::qos::PresentationAccessScope::Topic;
    q.presentation.coherent_access = on;
    q
}

fn reliability(mut q: EndpointQos, reliable: bool) -> EndpointQos {
    q.reliability.kind = if reliable {
        ReliabilityKind::Reliable
    } else {
        ReliabilityKind::BestEffort
    };
    q
}

fn reader(net: &mut SimNet, node: usize, qos: EndpointQos) -> EntityId {
    let now = net.instant();
    let spec = ReaderSpec {
        topic_name: "Sets".into(),
        type_name: "Blob".into(),
        qos,
        has_key: false,
    };
    net.p(node).create_reader(now, spec)
}

/// Writes member `i` of set `set` (payload: encapsulation, set, member), retrying while full.
fn write(net: &mut SimNet, w: EntityId, set: u8, i: u8) {
    let change = NewChange {
        kind: ChangeKind::Alive,
        key_hash: [0; 16],
        payload: Arc::new(vec![0, 1, 0, 0, set, i, 0, 0]),
        timestamp: None,
        original: None,
    };
    for _ in 0..100_000 {
        let now = net.instant();
        match net.write(0, now, w, change.clone()) {
            Ok(_) => {
                net.flush();
                return;
            }
            Err(halyard_core::WriteError::Full) => net.run_for(MS),
            Err(e) => panic!("seed {:#x}: write failed: {e:?}", net.seed),
        }
    }
    panic!("seed {:#x}: write blocked", net.seed);
}

/// Writes `sets` coherent sets of `SET` members, 2 ms apart, each closed by its marker.
fn write_sets(net: &mut SimNet, w: EntityId, sets: u8) {
    for set in 0..sets {
        net.p(0).begin_coherent_set(w);
        for i in 0..SET {
            write(net, w, set, i);
            net.run_for(2 * MS);
        }
        let now = net.instant();
        net.p(0).end_coherent_set(now, w);
        net.flush();
        net.run_for(5 * MS);
    }
}

/// For reader `r` on node 1: set -> (members received, the instants they were received at).
fn sets_of(net: &SimNet, r: EntityId) -> BTreeMap<u8, (Vec<u8>, Vec<u64>)> {
    let mut m: BTreeMap<u8, (Vec<u8>, Vec<u64>)> = BTreeMap::new();
    for (t, s) in net.node(1).samples.iter().filter(|(_, s)| s.reader == r) {
        assert!(
            s.payload.len() == 8,
            "seed {:#x}: a sample of {} bytes (an end marker taken for data?)",
            net.seed,
            s.payload.len()
        );
        let e = m.entry(s.payload[4]).or_default();
        e.0.push(s.payload[5]);
        e.1.push(*t);
    }
    m
}

#[test]
fn readers_take_coherent_sets_whole_or_not_at_all() {
    for_each_seed(
        "readers_take_coherent_sets_whole_or_not_at_all",
        30,
        |seed| {
            let mut net = SimNet::new(seed, Faults::lossy(0.2));
            net.add_node(node_config(1));
            net.add_node(node_config(2));
            let now = net.instant();
            let wq = coherent(reliability(EndpointQos::writer_default(), true), true);
            let spec = WriterSpec {
                topic_name: "Sets".into(),
                type_name: "Blob".into(),
                qos: wq,
                has_key: false,
            };
            let w = net.p(0).create_writer(now, spec);
            let reliable = reader(
                &mut net,
                1,
                coherent(reliability(EndpointQos::reader_default(), true), true),
            );
            let best_effort = reader(
                &mut net,
                1,
                coherent(reliability(EndpointQos::reader_default(), false), true),
            );
            let plain = reader(
                &mut net,
                1,
                coherent(reliability(EndpointQos::reader_default(), true), false),
            );
            let ok = net.run_until(60 * SEC, |n| {
                n.node(0)
                    .events
                    .iter()
                    .filter(|(_, e)| matches!(e, Event::PublicationMatched { matched: true, .. }))
                    .count()
                    == 3
            });
            assert!(ok, "seed {seed:#x}: not matched");
            net.run_for(200 * MS);
            write_sets(&mut net, w, 20);
            let done = net.run_until(60 * SEC, |n| {
                n.node(1)
                    .samples
                    .iter()
                    .filter(|(_, s)| s.reader == reliable)
                    .count()
                    == 20 * SET as usize
            });
            assert!(
                done,
                "seed {seed:#x}: the reliable coherent reader did not get every set"
            );
            net.run_for(SEC);

            // Reliable: every set, each member once, all released at one instant.
            for (set, (members, at)) in sets_of(&net, reliable) {
                assert_eq!(
                    members,
                    (0..SET).collect::<Vec<_>>(),
                    "seed {seed:#x}: set {set}"
                );
                assert!(
                    at.iter().all(|&t| t == at[0]),
                    "seed {seed:#x}: set {set} reached the reader piecemeal at {at:?}"
                );
            }
            // Best effort: whole sets only, and the incomplete ones counted lost.
            let be = sets_of(&net, best_effort);
            for (set, (members, at)) in &be {
                assert_eq!(
                    members,
                    &(0..SET).collect::<Vec<_>>(),
                    "seed {seed:#x}: best-effort set {set} is partial"
                );
                assert!(at.iter().all(|&t| t == at[0]), "seed {seed:#x}");
            }
            let lost: u64 = net
                .node(1)
                .events
                .iter()
                .filter_map(|(_, e)| match e {
                    Event::SampleLost { reader, count, .. } if *reader == best_effort => {
                        Some(*count)
                    }
                    _ => None,
                })
                .sum();
            assert!(
            be.len() < 20 && lost > 0,
            "seed {seed:#x}: at 20 % loss some best-effort sets must be incomplete ({} whole, {lost} lost)",
            be.len()
        );
            // Without coherent access: every member, no marker taken for a sample.
            let p = sets_of(&net, plain);
            assert_eq!(p.len(), 20, "seed {seed:#x}");
            assert!(
                p.values().all(|(m, _)| m.len() == SET as usize),
                "seed {seed:#x}"
            );
        },
    );
}

#[test]
fn a_set_left_open_by_a_dead_writer_never_arrives() {
    for_each_seed(
        "a_set_left_open_by_a_dead_writer_never_arrives",
        30,
        |seed| {
            let mut net = SimNet::new(seed, Faults::lossy(0.1));
            net.add_node(node_config(1));
            net.add_node(node_config(2));
            let now = net.instant();
            let spec = WriterSpec {
                topic_name: "Sets".into(),
                type_name: "Blob".into(),
                qos: coherent(reliability(EndpointQos::writer_default(), true), true),
                has_key: false,
            };
            let w = net.p(0).create_writer(now, spec);
            let r = reader(
                &mut net,
                1,
                coherent(reliability(EndpointQos::reader_default(), true), true),
            );
            let ok = net.run_until(60 * SEC, |n| {
                n.node(0)
                    .saw(|e| matches!(e, Event::PublicationMatched { matched: true, .. }))
            });
            assert!(ok, "seed {seed:#x}: not matched");
            net.run_for(200 * MS);
            write_sets(&mut net, w, 2);
            net.p(0).begin_coherent_set(w);
            for i in 0..3 {
                write(&mut net, w, 9, i);
            }
            // Everything written so far reaches the reader (repairs included), then the writer
            // dies without ending the set.
            net.run_for(2 * SEC);
            net.kill(0);
            net.run_for(30 * SEC);
            let got = sets_of(&net, r);
            assert_eq!(
                got.keys().copied().collect::<Vec<_>>(),
                [0, 1],
                "seed {seed:#x}"
            );
        },
    );
}
