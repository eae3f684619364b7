//! Proves the per-instance QoS policies on a lossy simulated network: requested and offered
//! DEADLINE counted once per missed period and never while data flows; EXCLUSIVE ownership
//! that stays with the strongest writer, hands the instance over when the owner is cut off
//! (it misses the deadline) and takes it back when it returns; LIFESPAN that keeps expired
//! samples from being repaired; BY_SOURCE_TIMESTAMP ordering under reordering; and the
//! TIME_BASED_FILTER's minimum separation.

use crate::net::*;
use halyard_core::wire::qos::{DestinationOrderKind, EndpointQos, OwnershipKind};
use halyard_core::wire::{Duration as WireDuration, EntityId, Time};
use halyard_core::{ChangeKind, Event, NewChange, ReaderSpec, WriterSpec};
use std::sync::Arc;

/// A keyed sample: encapsulation header, the instance's key byte, the writer's tag, index.
fn keyed_payload(key: u8, writer_tag: u8, index: u64) -> Vec<u8> {
    let mut v = vec![0, 1, 0, 0, key, writer_tag, 0, 0];
    v.extend_from_slice(&index.to_le_bytes());
    v
}

fn key_of(p: &[u8], _key_only: bool) -> Option<[u8; 16]> {
    p.get(4).map(|&k| [k; 16])
}

fn tag_of(p: &[u8]) -> u8 {
    p[5]
}

fn wire_ms(ms: i64) -> WireDuration {
    WireDuration::from_nanos(ms * 1_000_000)
}

fn keyed_writer(net: &mut SimNet, node: usize, topic: &str, qos: EndpointQos) -> EntityId {
    let now = net.instant();
    let spec = WriterSpec {
        topic_name: topic.into(),
        type_name: "Keyed".into(),
        qos,
        has_key: true,
    };
    net.p(node).create_writer(now, spec)
}

fn keyed_reader(net: &mut SimNet, node: usize, topic: &str, qos: EndpointQos) -> EntityId {
    let now = net.instant();
    let spec = ReaderSpec {
        topic_name: topic.into(),
        type_name: "Keyed".into(),
        qos,
        has_key: true,
    };
    let r = net.p(node).create_reader(now, spec);
    net.p(node)
        .set_reader_key_fn(r, Some(std::sync::Arc::new(key_of)));
    r
}

/// Writes one sample of instance `key` stamped with the virtual time, retrying while full.
fn write_keyed(net: &mut SimNet, node: usize, w: EntityId, key: u8, tag: u8, index: u64) {
    let change = NewChange {
        kind: ChangeKind::Alive,
        key_hash: [key; 16],
        payload: Arc::new(keyed_payload(key, tag, index)),
        timestamp: Some(Time::from_nanos(net.now as i64)),
        original: None,
    };
    for _ in 0..100_000 {
        let now = net.instant();
        match net.write(node, now, w, change.clone()) {
            Ok(_) => {
                net.flush();
                return;
            }
            Err(halyard_core::WriteError::Full) => net.run_for(MS),
            Err(e) => panic!("seed {:#x}: write failed: {e:?}", net.seed),
        }
    }
    panic!("seed {:#x}: write blocked for 100 s virtual", net.seed);
}

fn reliable(mut q: EndpointQos) -> EndpointQos {
    q.reliability.kind = halyard_core::wire::qos::ReliabilityKind::Reliable;
    q
}

fn count_events(n: &Node, f: impl Fn(&Event) -> bool) -> usize {
    n.events.iter().filter(|(_, e)| f(e)).count()
}

fn wait_matched(net: &mut SimNet, readers: &[(usize, usize)]) {
    let seed = net.seed;
    let ok = net.run_until(60 * SEC, |n| {
        readers.iter().all(|&(node, writers)| {
            count_events(n.node(node), |e| {
                matches!(e, Event::SubscriptionMatched { matched: true, .. })
            }) >= writers
        })
    });
    assert!(ok, "seed {seed:#x}: endpoints did not match within 60 s");
    // Let the reliable writers learn of the readers' acknowledgments.
    net.run_for(200 * MS);
}

#[test]
fn deadlines_are_missed_once_per_period_and_only_when_data_stops() {
    for_each_seed(
        "deadlines_are_missed_once_per_period_and_only_when_data_stops",
        30,
        |seed| {
            let mut net = SimNet::new(seed, Faults::lossy(0.2));
            net.add_node(node_config(1));
            net.add_node(node_config(2));
            let mut wq = reliable(EndpointQos::writer_default());
            wq.deadline = wire_ms(100);
            let mut rq = reliable(EndpointQos::reader_default());
            rq.deadline = wire_ms(200);
            let w = keyed_writer(&mut net, 0, "Deadline", wq);
            let r = keyed_reader(&mut net, 1, "Deadline", rq);
            wait_matched(&mut net, &[(1, 1)]);
            // Two instances, each written every 20 ms for 2 s: no deadline may be missed.
            for i in 0..100 {
                write_keyed(&mut net, 0, w, 1, 0, i);
                write_keyed(&mut net, 0, w, 2, 0, i);
                net.run_for(20 * MS);
            }
            let offered = |n: &Node| {
                count_events(
                    n,
                    |e| matches!(e, Event::OfferedDeadlineMissed { writer, .. } if *writer == w),
                )
            };
            let requested = |n: &Node, key: u8| {
                count_events(n, |e| {
                    matches!(e, Event::RequestedDeadlineMissed { reader, instance }
                        if *reader == r && *instance == [key; 16])
                })
            };
            assert_eq!(
                offered(net.node(0)),
                0,
                "seed {seed:#x}: offered deadline missed while writing"
            );
            assert_eq!(
                requested(net.node(1), 1),
                0,
                "seed {seed:#x}: requested deadline missed while data flowed"
            );
            // Instance 2 stops; instance 1 goes on for 1 s more.
            let stop = net.now;
            for i in 100..150 {
                write_keyed(&mut net, 0, w, 1, 0, i);
                net.run_for(20 * MS);
            }
            let elapsed = net.now - stop;
            // The writer's own clock decides its offered deadlines: exact count.
            let offered_missed = offered(net.node(0)) as u64;
            let expect = elapsed / (100 * MS);
            assert!(
                offered_missed == expect || offered_missed + 1 == expect,
                "seed {seed:#x}: {offered_missed} offered deadlines missed over {} ms, expected {expect}",
                elapsed / MS
            );
            // The reader's count depends on when the last sample arrived: within one period.
            let requested_missed = requested(net.node(1), 2) as u64;
            let expect = elapsed / (200 * MS);
            assert!(
                requested_missed.abs_diff(expect) <= 1,
                "seed {seed:#x}: {requested_missed} requested deadlines missed over {} ms, expected {expect}",
                elapsed / MS
            );
            assert_eq!(
                requested(net.node(1), 1),
                0,
                "seed {seed:#x}: the live instance missed its deadline"
            );
        },
    );
}

#[test]
fn exclusive_ownership_follows_strength_deadline_and_partitions() {
    for_each_seed(
        "exclusive_ownership_follows_strength_deadline_and_partitions",
        30,
        |seed| {
            let mut net = SimNet::new(seed, Faults::lossy(0.1));
            for host in 1..=3 {
                net.add_node(node_config(host));
            }
            let exclusive = |mut q: EndpointQos, strength: i32| {
                q.ownership = OwnershipKind::Exclusive;
                q.ownership_strength = strength;
                q.deadline = wire_ms(100);
                reliable(q)
            };
            let strong = keyed_writer(
                &mut net,
                0,
                "Owned",
                exclusive(EndpointQos::writer_default(), 10),
            );
            let weak = keyed_writer(
                &mut net,
                1,
                "Owned",
                exclusive(EndpointQos::writer_default(), 5),
            );
            let r = keyed_reader(
                &mut net,
                2,
                "Owned",
                exclusive(EndpointQos::reader_default(), 0),
            );
            wait_matched(&mut net, &[(2, 2)]);
            let t0 = net.now;
            // Both write the instance every 20 ms; node 0 (strong) is cut off from the reader
            // from 2 s to 4 s.
            net.partitions.push(Partition {
                a: vec![0],
                b: vec![2],
                from: t0 + 2 * SEC,
                until: t0 + 4 * SEC,
            });
            for i in 0..300 {
                write_keyed(&mut net, 0, strong, 1, b'S', i);
                write_keyed(&mut net, 1, weak, 1, b'W', i);
                net.run_for(20 * MS);
            }
            net.run_for(SEC);
            let got: Vec<(u64, u8)> = net
                .node(2)
                .samples
                .iter()
                .filter(|(_, s)| s.reader == r)
                .map(|(t, s)| (*t - t0, tag_of(&s.payload)))
                .collect();
            let in_window = |from: u64, to: u64| -> Vec<u8> {
                got.iter()
                    .filter(|(t, _)| (from..to).contains(t))
                    .map(|(_, g)| *g)
                    .collect()
            };
            let misses: Vec<u64> = net
                .node(2)
                .events
                .iter()
                .filter(|(_, e)| matches!(e, Event::RequestedDeadlineMissed { .. }))
                .map(|(t, _)| *t - t0)
                .collect();
            // While the strong writer is heard, a weak sample is admitted only after the
            // instance missed its deadline since the strong writer's last sample (a loss whose
            // repair took longer than the deadline hands the instance over, as DDS says).
            let handed_over_fairly = |from: u64, to: u64| {
                let mut last_strong = None;
                for &(t, g) in got.iter().filter(|(t, _)| (from..to).contains(t)) {
                    if g == b'S' {
                        last_strong = Some(t);
                    } else if let Some(ls) = last_strong {
                        if !misses.iter().any(|&m| m > ls && m <= t) {
                            return false;
                        }
                    }
                }
                true
            };
            let first_strong = got
                .iter()
                .find(|(_, g)| *g == b'S')
                .map(|(t, _)| *t)
                .expect("no strong sample");
            let share = |from: u64, to: u64, tag: u8| {
                let w: Vec<u8> = in_window(from, to);
                (w.iter().filter(|&&g| g == tag).count(), w.len())
            };
            assert!(
                handed_over_fairly(first_strong, 2 * SEC),
                "seed {seed:#x}: a weak sample reached the reader while the strong writer owned the instance"
            );
            let (strong_n, n) = share(first_strong, 2 * SEC, b'S');
            assert!(
                strong_n * 10 >= n * 9,
                "seed {seed:#x}: before the partition {strong_n} of {n} samples were the strong writer's"
            );
            // Behind the partition it misses the deadline: the weak writer takes over.
            let cut = in_window(2 * SEC + 300 * MS, 4 * SEC);
            assert!(
                cut.len() > 50 && cut.iter().all(|&g| g == b'W'),
                "seed {seed:#x}: during the partition the reader got {} samples, not all the weak writer's",
                cut.len()
            );
            // When the partition heals the strong writer takes its instance back.
            assert!(
                handed_over_fairly(4 * SEC + 500 * MS, 7 * SEC),
                "seed {seed:#x}: after the partition a weak sample arrived without a missed deadline"
            );
            let (strong_n, n) = share(4 * SEC + 500 * MS, 7 * SEC, b'S');
            assert!(
                n > 50 && strong_n * 10 >= n * 9,
                "seed {seed:#x}: after the partition {strong_n} of {n} samples were the strong writer's"
            );
            assert!(
                count_events(net.node(2), |e| matches!(
                    e,
                    Event::RequestedDeadlineMissed { .. }
                )) >= 1,
                "seed {seed:#x}: the owner's silence was not reported as a missed deadline"
            );
        },
    );
}

#[test]
fn lifespan_keeps_expired_samples_from_being_repaired() {
    for_each_seed(
        "lifespan_keeps_expired_samples_from_being_repaired",
        30,
        |seed| {
            let mut net = SimNet::new(seed, Faults::lossy(0.1));
            net.add_node(node_config(1));
            net.add_node(node_config(2));
            let mut wq = reliable(EndpointQos::writer_default());
            wq.history = halyard_core::wire::qos::History::KeepAll;
            wq.lifespan = wire_ms(50);
            let mut rq = reliable(EndpointQos::reader_default());
            rq.history = halyard_core::wire::qos::History::KeepAll;
            let w = keyed_writer(&mut net, 0, "Lifespan", wq);
            let r = keyed_reader(&mut net, 1, "Lifespan", rq);
            wait_matched(&mut net, &[(1, 1)]);
            // Warm-up (instance 9) until the reader has one: a volatile reader cannot tell a
            // sample that expired before it first heard of its writer from one written before
            // it matched, so the measured samples start once it is in step.
            let mut warm = 0;
            while !net.node(1).samples.iter().any(|(_, s)| s.reader == r) {
                write_keyed(&mut net, 0, w, 9, 0, warm);
                warm += 1;
                net.run_for(15 * MS);
                assert!(
                    warm < 1000,
                    "seed {seed:#x}: no warm-up sample ever arrived"
                );
            }
            let t0 = net.now;
            net.partitions.push(Partition {
                a: vec![0],
                b: vec![1],
                from: t0 + 500 * MS,
                until: t0 + SEC,
            });
            let mut written_at = Vec::new();
            for i in 0..100 {
                written_at.push(net.now);
                write_keyed(&mut net, 0, w, 1, 0, i);
                net.run_for(15 * MS);
            }
            net.run_for(SEC);
            let got: Vec<(u64, u64, Option<Time>, Option<Time>)> = net
                .node(1)
                .samples
                .iter()
                .filter(|(_, s)| s.reader == r && s.payload[4] == 1)
                .map(|(t, s)| {
                    let i = u64::from_le_bytes(s.payload[8..16].try_into().unwrap());
                    (*t, i, s.source_timestamp, s.lifespan_expiry)
                })
                .collect();
            let heal = t0 + SEC;
            for &(_, i, ts, expiry) in &got {
                let written = written_at[i as usize];
                // Sent during the partition, expired before it healed: it must not be repaired.
                assert!(
                    !(written >= t0 + 500 * MS && written + 50 * MS < heal),
                    "seed {seed:#x}: sample {i}, written during the partition and expired before \
                 it healed, was delivered"
                );
                let ts = ts.expect("timestamp");
                assert_eq!(
                    expiry.map(|e| e.to_nanos() - ts.to_nanos()),
                    Some(50_000_000),
                    "seed {seed:#x}: the reader was not told when sample {i} expires"
                );
            }
            // Nothing is lost silently: every sample that did not arrive (expired during the
            // partition, or lost on the way and expired before its repair) is reported lost.
            let reported: u64 = net
                .node(1)
                .events
                .iter()
                .filter_map(|(_, e)| match e {
                    Event::SampleLost { reader, count, .. } if *reader == r => Some(*count),
                    _ => None,
                })
                .sum();
            assert_eq!(
                reported,
                100 - got.len() as u64,
                "seed {seed:#x}: {} samples missing, {reported} reported lost",
                100 - got.len()
            );
            // Samples written during the partition expired before it healed: they never arrive,
            // and the reader is told they are lost.
            let missing = 100 - got.len();
            assert!(
                missing >= 25,
                "seed {seed:#x}: only {missing} samples missing after a 500 ms partition"
            );
            assert!(
                net.node(1).saw(|e| matches!(e, Event::SampleLost { .. })),
                "seed {seed:#x}: expired samples were not reported lost"
            );
        },
    );
}

#[test]
fn by_source_timestamp_converges_to_the_newest_value() {
    for_each_seed(
        "by_source_timestamp_converges_to_the_newest_value",
        30,
        |seed| {
            let mut net = SimNet::new(
                seed,
                Faults {
                    jitter_ns: 5_000_000,
                    ..Faults::lossy(0.1)
                },
            );
            for host in 1..=3 {
                net.add_node(node_config(host));
            }
            let mut rq = reliable(EndpointQos::reader_default());
            rq.destination_order = DestinationOrderKind::BySourceTimestamp;
            rq.history = halyard_core::wire::qos::History::KeepAll;
            let mut wq = reliable(EndpointQos::writer_default());
            wq.destination_order = DestinationOrderKind::BySourceTimestamp;
            let a = keyed_writer(&mut net, 0, "Order", wq.clone());
            let b = keyed_writer(&mut net, 1, "Order", wq);
            let r = keyed_reader(&mut net, 2, "Order", rq);
            wait_matched(&mut net, &[(2, 2)]);
            // Two writers update one instance alternately, 1 ms apart: with 5 ms of jitter their
            // samples arrive interleaved out of source order.
            for i in 0..200 {
                write_keyed(&mut net, 0, a, 1, b'A', i);
                net.run_for(MS);
                write_keyed(&mut net, 1, b, 1, b'B', i);
                net.run_for(MS);
            }
            net.run_for(2 * SEC);
            let stamps: Vec<(i64, u8)> = net
                .node(2)
                .samples
                .iter()
                .filter(|(_, s)| s.reader == r)
                .map(|(_, s)| {
                    (
                        s.source_timestamp.map_or(0, |t| t.to_nanos()),
                        tag_of(&s.payload),
                    )
                })
                .collect();
            assert!(
                stamps.windows(2).all(|p| p[0].0 <= p[1].0),
                "seed {seed:#x}: the reader saw a change older than one it already had"
            );
            assert_eq!(
                stamps.last().map(|s| s.1),
                Some(b'B'),
                "seed {seed:#x}: the final value is not the newest write"
            );
            assert!(
                net.node(2).p.stats().filtered_out_of_order > 0,
                "seed {seed:#x}: nothing arrived out of order: the test proves nothing"
            );
        },
    );
}

#[test]
fn time_based_filter_keeps_the_minimum_separation() {
    for_each_seed(
        "time_based_filter_keeps_the_minimum_separation",
        30,
        |seed| {
            let mut net = SimNet::new(seed, Faults::lossy(0.1));
            net.add_node(node_config(1));
            net.add_node(node_config(2));
            let mut rq = EndpointQos::reader_default();
            rq.time_based_filter = wire_ms(100);
            let w = keyed_writer(&mut net, 0, "Filtered", EndpointQos::writer_default());
            let r = keyed_reader(&mut net, 1, "Filtered", rq);
            wait_matched(&mut net, &[(1, 1)]);
            let t0 = net.now;
            for i in 0..1000 {
                write_keyed(&mut net, 0, w, 1, 0, i);
                write_keyed(&mut net, 0, w, 2, 0, i);
                net.run_for(2 * MS);
            }
            let elapsed = net.now - t0;
            for key in [1u8, 2] {
                let times: Vec<u64> = net
                    .node(1)
                    .samples
                    .iter()
                    .filter(|(_, s)| s.reader == r && s.payload[4] == key)
                    .map(|(t, _)| *t)
                    .collect();
                assert!(
                    times.windows(2).all(|p| p[1] - p[0] >= 100 * MS),
                    "seed {seed:#x}: two samples of instance {key} less than 100 ms apart"
                );
                // The Halyard writer sends this best-effort reader one sample per instance per
                // 100 ms (see the core's writer/time_filter.rs): when the network loses it
                // (10 %), that period has none, where the reader's filter alone would have
                // taken the next sample. So about 90 % of the periods have one.
                let most = elapsed / (100 * MS) + 1;
                assert!(
                    times.len() as u64 >= most / 2 && times.len() as u64 <= most,
                    "seed {seed:#x}: instance {key}: {} samples in {} ms with a 100 ms filter",
                    times.len(),
                    elapsed / MS
                );
            }
        },
    );
}
