//! Proves that a writer with readers in several participants that share a multicast group
//! sends each new sample once, to the group, and that those readers still get every sample
//! intact and in order under loss, duplication and reordering (repairs go unicast to the
//! reader that asked). With `data_multicast` off the same set-up costs a datagram per reader.

use crate::net::*;
use halyard_core::wire::{EntityId, Locator};
use halyard_core::{Event, ReaderSpec, WriterSpec};

const READERS: u8 = 3;
const SAMPLES: u64 = 200;

/// Where the simulated participants' readers also listen (their default multicast locator).
fn data_group() -> Locator {
    Locator::udpv4([239, 255, 0, 1], 7401)
}

/// A writer on node 0 and a reader on each of nodes 1..=READERS, all matched.
fn fan_out(net: &mut SimNet, multicast: bool) -> EntityId {
    for i in 1..=READERS + 1 {
        let mut c = node_config(i);
        if multicast {
            c.default_multicast = vec![data_group()];
            c.data_multicast = true;
        }
        net.add_node(c);
    }
    let now = net.instant();
    let w = net.p(0).create_writer(
        now,
        WriterSpec {
            topic_name: "Fan".into(),
            type_name: "Blob".into(),
            qos: reliable_keep_all_writer(),
            has_key: false,
        },
    );
    for n in 1..=READERS as usize {
        net.p(n).create_reader(
            now,
            ReaderSpec {
                topic_name: "Fan".into(),
                type_name: "Blob".into(),
                qos: reliable_keep_all_reader(),
                has_key: false,
            },
        );
    }
    net.flush();
    let seed = net.seed;
    let matched = net.run_until(120 * SEC, |n| {
        let writer_side = n
            .node(0)
            .events
            .iter()
            .filter(|(_, e)| matches!(e, Event::PublicationMatched { matched: true, .. }))
            .count();
        writer_side == READERS as usize
            && (1..=READERS as usize).all(|r| {
                n.node(r)
                    .saw(|e| matches!(e, Event::SubscriptionMatched { matched: true, .. }))
            })
    });
    assert!(matched, "seed {seed:#x}: not all matched in 120 s virtual");
    w
}

/// Writes SAMPLES samples, waits until every reader has them all; returns the writer node's
/// datagrams meanwhile.
fn stream(net: &mut SimNet, w: EntityId) -> u64 {
    let before = net.node(0).datagrams_sent;
    for i in 0..SAMPLES {
        write_retrying(net, 0, w, [0; 16], indexed_payload(i, 256));
        net.run_for(MS);
    }
    let seed = net.seed;
    let done = net.run_until(60 * SEC, |n| {
        (1..=READERS as usize).all(|r| n.node(r).samples.len() as u64 >= SAMPLES)
            && n.nodes[0].p.writer_all_acked(w)
    });
    assert!(done, "seed {seed:#x}: not every reader got every sample");
    for r in 1..=READERS as usize {
        let got: Vec<u64> = net
            .node(r)
            .samples
            .iter()
            .map(|(_, s)| parse_indexed(&s.payload).expect("intact"))
            .collect();
        assert_eq!(
            got,
            (0..SAMPLES).collect::<Vec<_>>(),
            "seed {seed:#x}: reader {r}"
        );
    }
    net.node(0).datagrams_sent - before
}

#[test]
fn shared_group_gets_each_sample_once() {
    for_each_seed("shared_group_gets_each_sample_once", 20, |seed| {
        let mut net = SimNet::new(seed, Faults::none());
        let w = fan_out(&mut net, true);
        let sent = stream(&mut net, w);
        // One DATA datagram per sample plus a few HEARTBEATs; unicast would be 3 per sample.
        assert!(
            sent < SAMPLES + SAMPLES / 2,
            "seed {seed:#x}: {sent} datagrams for {SAMPLES} samples to {READERS} readers"
        );
    });
}

#[test]
fn without_data_multicast_each_reader_costs_a_datagram() {
    for_each_seed(
        "without_data_multicast_each_reader_costs_a_datagram",
        5,
        |seed| {
            let mut net = SimNet::new(seed, Faults::none());
            let w = fan_out(&mut net, false);
            let sent = stream(&mut net, w);
            assert!(
                sent >= READERS as u64 * SAMPLES,
                "seed {seed:#x}: {sent} datagrams for {SAMPLES} samples to {READERS} readers"
            );
        },
    );
}

#[test]
fn multicast_stream_survives_faults() {
    for_each_seed("multicast_stream_survives_faults", 100, |seed| {
        let mut rng = Rng::new(seed ^ 0x6d75_6c74_6963_6173);
        let faults = Faults {
            loss: rng.range(0, 30) as f64 / 100.0,
            duplicate: rng.range(0, 5) as f64 / 100.0,
            reorder: rng.range(0, 30) as f64 / 100.0,
            reorder_delay_ns: 5 * MS,
            latency_ns: 200_000,
            jitter_ns: MS,
            corrupt: 0.0,
        };
        let mut net = SimNet::new(seed, faults);
        let w = fan_out(&mut net, true);
        stream(&mut net, w);
    });
}
