//! Proves writer liveliness on a lossy simulated network: a MANUAL_BY_TOPIC writer that stops
//! writing is reported not alive by its reader one lease later and lost by itself, revives
//! when it asserts, and hands its instances to a weaker writer under EXCLUSIVE ownership;
//! MANUAL_BY_PARTICIPANT writers stay alive while their participant asserts; an AUTOMATIC
//! writer that writes nothing stays alive through its participant's PMD messages.

use crate::net::*;
use halyard_core::wire::qos::{EndpointQos, LivelinessKind, OwnershipKind, ReliabilityKind};
use halyard_core::wire::{Duration as WireDuration, EntityId, Time};
use halyard_core::{ChangeKind, Event, NewChange, ReaderSpec, WriterSpec};
use std::sync::Arc;

fn lease(mut q: EndpointQos, kind: LivelinessKind, ms: i64) -> EndpointQos {
    q.liveliness.kind = kind;
    q.liveliness.lease_duration = WireDuration::from_nanos(ms * 1_000_000);
    q.reliability.kind = ReliabilityKind::Reliable;
    q
}

fn writer(net: &mut SimNet, node: usize, qos: EndpointQos) -> EntityId {
    let now = net.instant();
    let spec = WriterSpec {
        topic_name: "Alive".into(),
        type_name: "Keyed".into(),
        qos,
        has_key: true,
    };
    net.p(node).create_writer(now, spec)
}

fn reader(net: &mut SimNet, node: usize, qos: EndpointQos) -> EntityId {
    let now = net.instant();
    let spec = ReaderSpec {
        topic_name: "Alive".into(),
        type_name: "Keyed".into(),
        qos,
        has_key: true,
    };
    let r = net.p(node).create_reader(now, spec);
    net.p(node)
        .set_reader_key_fn(r, Some(std::sync::Arc::new(|_: &[u8], _| Some([1; 16]))));
    r
}

fn write(net: &mut SimNet, node: usize, w: EntityId, tag: u8) {
    let change = NewChange {
        kind: ChangeKind::Alive,
        key_hash: [1; 16],
        payload: Arc::new(vec![0, 1, 0, 0, tag, 0, 0, 0]),
        timestamp: Some(Time::from_nanos(net.now as i64)),
        original: None,
    };
    let now = net.instant();
    net.write(node, now, w, change).expect("write");
    net.flush();
}

/// (time, alive) of every LivelinessChanged event reader `r` on `node` reported.
fn liveliness_of(net: &SimNet, node: usize, r: EntityId) -> Vec<(u64, bool)> {
    net.node(node)
        .events
        .iter()
        .filter_map(|(t, e)| match e {
            Event::LivelinessChanged { reader, alive, .. } if *reader == r => Some((*t, *alive)),
            _ => None,
        })
        .collect()
}

/// LivelinessLost events of writer `w` on `node` at or after `since`.
fn lost_count(net: &SimNet, node: usize, w: EntityId, since: u64) -> usize {
    net.node(node)
        .events
        .iter()
        .filter(|(t, e)| {
            *t >= since && matches!(e, Event::LivelinessLost { writer } if *writer == w)
        })
        .count()
}

fn matched(net: &mut SimNet, node: usize, writers: usize) {
    let seed = net.seed;
    let ok = net.run_until(60 * SEC, |n| {
        n.node(node)
            .events
            .iter()
            .filter(|(_, e)| matches!(e, Event::SubscriptionMatched { matched: true, .. }))
            .count()
            >= writers
    });
    assert!(ok, "seed {seed:#x}: no match within 60 s");
    net.run_for(200 * MS);
}

#[test]
fn manual_by_topic_writer_is_lost_one_lease_after_it_stops_and_revives_on_assert() {
    for_each_seed(
        "manual_by_topic_writer_is_lost_one_lease_after_it_stops_and_revives_on_assert",
        30,
        |seed| {
            let mut net = SimNet::new(seed, Faults::lossy(0.1));
            net.add_node(node_config(1));
            net.add_node(node_config(2));
            net.add_node(node_config(3));
            let exclusive = |q: EndpointQos, strength| {
                let mut q = lease(q, LivelinessKind::ManualByTopic, 200);
                q.ownership = OwnershipKind::Exclusive;
                q.ownership_strength = strength;
                q
            };
            let strong = writer(&mut net, 0, exclusive(EndpointQos::writer_default(), 10));
            let weak = writer(&mut net, 1, exclusive(EndpointQos::writer_default(), 5));
            let r = reader(&mut net, 2, exclusive(EndpointQos::reader_default(), 0));
            matched(&mut net, 2, 2);
            // Both write for 1 s (the weak writer is filtered: the strong one owns).
            let mut stop = 0;
            for _ in 0..50 {
                write(&mut net, 0, strong, b'S');
                stop = net.now;
                write(&mut net, 1, weak, b'W');
                net.run_for(20 * MS);
            }
            // The strong writer stops; the weak one goes on for 1 s.
            for _ in 0..50 {
                write(&mut net, 1, weak, b'W');
                net.run_for(20 * MS);
            }
            let events = liveliness_of(&net, 2, r);
            let down: Vec<u64> = events
                .iter()
                .filter(|(t, alive)| !alive && *t >= stop)
                .map(|(t, _)| *t - stop)
                .collect();
            assert_eq!(
                down.len(),
                1,
                "seed {seed:#x}: expected one writer to go down, got {events:?}"
            );
            assert!(
                (200 * MS..300 * MS).contains(&down[0]),
                "seed {seed:#x}: the silent writer went down {} ms after its last write (lease 200 ms)",
                down[0] / MS
            );
            assert_eq!(
                lost_count(&net, 0, strong, stop),
                1,
                "seed {seed:#x}: LivelinessLost not reported once"
            );
            assert_eq!(
                lost_count(&net, 1, weak, stop),
                0,
                "seed {seed:#x}: the writing writer was lost"
            );
            // Ownership passed to the weak writer when the strong one went down, not before.
            let handover = stop + down[0];
            let tags: Vec<(u64, u8)> = net
                .node(2)
                .samples
                .iter()
                .filter(|(_, s)| s.reader == r)
                .map(|(t, s)| (*t, s.payload[4]))
                .collect();
            // (Before the strong writer's first sample it was not alive yet, having asserted
            // nothing: the weak one may own the instance then.)
            let first_strong = tags
                .iter()
                .find(|(_, g)| *g == b'S')
                .map_or(u64::MAX, |(t, _)| *t);
            assert!(
                tags.iter()
                    .filter(|(t, _)| (first_strong..handover).contains(t))
                    .all(|(_, g)| *g == b'S'),
                "seed {seed:#x}: a weak sample arrived while the strong writer was alive"
            );
            assert!(
                tags.iter()
                    .filter(|(t, _)| *t > handover + 100 * MS)
                    .count()
                    > 20
                    && tags
                        .iter()
                        .filter(|(t, _)| *t > handover)
                        .all(|(_, g)| *g == b'W'),
                "seed {seed:#x}: the weak writer did not take over"
            );
            // Asserting revives it (a HEARTBEAT with the liveliness flag may be lost: the
            // application asserts until the reader saw it, at most 10 times).
            for _ in 0..10 {
                let now = net.instant();
                net.p(0).assert_writer_liveliness(now, strong).unwrap();
                net.flush();
                net.run_for(30 * MS);
                if liveliness_of(&net, 2, r).last().is_some_and(|e| e.1) {
                    break;
                }
            }
            let events = liveliness_of(&net, 2, r);
            assert_eq!(
                events.last().map(|e| e.1),
                Some(true),
                "seed {seed:#x}: assert_liveliness did not revive the writer: {events:?}"
            );
        },
    );
}

#[test]
fn participant_assertions_and_automatic_pmd_keep_quiet_writers_alive() {
    for_each_seed(
        "participant_assertions_and_automatic_pmd_keep_quiet_writers_alive",
        30,
        |seed| {
            let mut net = SimNet::new(seed, Faults::lossy(0.1));
            net.add_node(node_config(1));
            net.add_node(node_config(2));
            let by_participant = lease(
                EndpointQos::writer_default(),
                LivelinessKind::ManualByParticipant,
                500,
            );
            let mbp = writer(&mut net, 0, by_participant);
            let auto = {
                let now = net.instant();
                let spec = WriterSpec {
                    topic_name: "AliveAuto".into(),
                    type_name: "Keyed".into(),
                    qos: lease(
                        EndpointQos::writer_default(),
                        LivelinessKind::Automatic,
                        500,
                    ),
                    has_key: true,
                };
                net.p(0).create_writer(now, spec)
            };
            let r_mbp = reader(
                &mut net,
                1,
                lease(
                    EndpointQos::reader_default(),
                    LivelinessKind::ManualByParticipant,
                    500,
                ),
            );
            let r_auto = {
                let now = net.instant();
                let spec = ReaderSpec {
                    topic_name: "AliveAuto".into(),
                    type_name: "Keyed".into(),
                    qos: lease(
                        EndpointQos::reader_default(),
                        LivelinessKind::Automatic,
                        500,
                    ),
                    has_key: true,
                };
                net.p(1).create_reader(now, spec)
            };
            matched(&mut net, 1, 2);
            // 3 s without a single write: the participant asserts every 200 ms.
            let start = net.now;
            let mut stop = 0;
            for _ in 0..15 {
                let now = net.instant();
                net.p(0).assert_liveliness(now);
                stop = net.now;
                net.flush();
                net.run_for(200 * MS);
            }
            for r in [r_mbp, r_auto] {
                assert!(
                    liveliness_of(&net, 1, r).iter().all(|e| e.1),
                    "seed {seed:#x}: a quiet writer went down: {:?}",
                    liveliness_of(&net, 1, r)
                );
            }
            assert_eq!(lost_count(&net, 0, mbp, start), 0, "seed {seed:#x}");
            // The participant stops asserting: the MANUAL_BY_PARTICIPANT writer goes down, the
            // AUTOMATIC one stays up.
            net.run_for(2 * SEC);
            let down: Vec<u64> = liveliness_of(&net, 1, r_mbp)
                .iter()
                .filter(|e| !e.1)
                .map(|e| e.0 - stop)
                .collect();
            // A lease runs from when an assertion arrives: one repaired after a loss arrives
            // late and lasts correspondingly longer.
            assert!(
                down.len() == 1 && (500 * MS..900 * MS).contains(&down[0]),
                "seed {seed:#x}: MANUAL_BY_PARTICIPANT writer down after {down:?} ns (lease 500 ms)"
            );
            assert_eq!(lost_count(&net, 0, mbp, stop), 1, "seed {seed:#x}");
            assert!(
                liveliness_of(&net, 1, r_auto).iter().all(|e| e.1),
                "seed {seed:#x}: the AUTOMATIC writer went down while its participant lived"
            );
            assert!(net.now - start > 4 * SEC);
            let _ = auto;
        },
    );
}

/// A reader in the same participant as a MANUAL_BY_TOPIC writer sees it not alive once its
/// lease passes without an assertion, and alive again after `assert_writer_liveliness` (local
/// matches have no wire to carry a lease: the writer's own liveliness state tells them).
#[test]
fn local_reader_follows_its_participant_s_manual_writer() {
    for_each_seed(
        "local_reader_follows_its_participant_s_manual_writer",
        10,
        |seed| {
            let mut net = SimNet::new(seed, Faults::none());
            net.add_node(node_config(1));
            let q = lease(
                EndpointQos::writer_default(),
                LivelinessKind::ManualByTopic,
                200,
            );
            let w = writer(&mut net, 0, q.clone());
            let r = reader(
                &mut net,
                0,
                lease(
                    EndpointQos::reader_default(),
                    LivelinessKind::ManualByTopic,
                    200,
                ),
            );
            matched(&mut net, 0, 1);
            // Quiet since its creation, it was lost once already (at 200 ms); the write
            // revives it.
            net.run_for(50 * MS);
            let wrote_at = net.now;
            write(&mut net, 0, w, 1);
            net.run_for(500 * MS);
            let lost_at = net.now;
            assert_eq!(lost_count(&net, 0, w, wrote_at), 1, "seed {seed:#x}");
            let seen: Vec<_> = liveliness_of(&net, 0, r)
                .into_iter()
                .filter(|&(t, _)| t >= wrote_at)
                .collect();
            assert_eq!(
                seen.iter().map(|s| s.1).collect::<Vec<_>>(),
                [true, false],
                "seed {seed:#x}: the local reader did not see its writer revived by the write, then lost: {seen:?}"
            );
            let now = net.instant();
            net.p(0).assert_writer_liveliness(now, w).expect("assert");
            net.flush();
            net.run_for(50 * MS);
            let revived: Vec<_> = liveliness_of(&net, 0, r)
                .into_iter()
                .filter(|&(t, alive)| alive && t >= lost_at)
                .collect();
            assert_eq!(
                revived.len(),
                1,
                "seed {seed:#x}: not revived for the local reader"
            );
        },
    );
}
