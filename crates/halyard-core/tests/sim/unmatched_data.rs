//! Proves that a best-effort reader gets what a writer sent it before the reader's side had
//! discovered that writer (the writer matched first and wrote at once), exactly once and in
//! order, that a reader created after such samples arrived does not get them, and that
//! samples handled after their writer's goodbye (which came first, on another socket) are
//! still delivered.

use crate::net::*;
use halyard_core::wire::qos::{EndpointQos, ReliabilityKind};
use halyard_core::wire::EntityId;
use halyard_core::{Event, ReaderSpec, WriterSpec};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// Empties every datagram from node 0 to node 1 that carries the SEDP publications writer's
/// entity id while `held` is set: node 1 learns of node 0's writer only once it is cleared
/// (the SEDP writer repairs what was lost).
fn hold_publications(held: Rc<Cell<bool>>) -> Tamper {
    let id = EntityId::SEDP_PUBLICATIONS_WRITER.0;
    Box::new(move |from, to, bytes: &mut Vec<u8>| {
        if held.get() && from == 0 && to == 1 && bytes.windows(4).any(|x| x == id) {
            bytes.clear();
        }
    })
}

fn reader_spec() -> ReaderSpec {
    ReaderSpec {
        topic_name: "Early".into(),
        type_name: "Blob".into(),
        qos: EndpointQos::reader_default(),
        has_key: false,
    }
}

#[test]
fn a_best_effort_reader_gets_what_was_sent_before_it_discovered_the_writer() {
    for_each_seed("early_data", 40, |seed| {
        let mut rng = Rng::new(seed);
        let mut net = SimNet::new(seed, Faults::none());
        net.add_node(node_config(1));
        net.add_node(node_config(2));
        let held = Rc::new(Cell::new(true));
        net.tamper = Some(hold_publications(held.clone()));
        let now = net.instant();
        let r = net.p(1).create_reader(now, reader_spec());
        net.run_for(rng.range(0, 300) * MS);
        let mut wq = EndpointQos::writer_default();
        if rng.chance(0.5) {
            wq.reliability.kind = ReliabilityKind::BestEffort;
        }
        let now = net.instant();
        let w = net.p(0).create_writer(
            now,
            WriterSpec {
                topic_name: "Early".into(),
                type_name: "Blob".into(),
                qos: wq,
                has_key: false,
            },
        );
        net.flush();
        // The writer's side matches the reader; the reader's side cannot know the writer.
        let ok = net.run_until(30 * SEC, |n| n.node(0).p.writer_synced_readers(w) >= 1);
        assert!(ok, "seed {seed:#x}: the writer never matched the reader");
        assert!(
            !net.node(1)
                .saw(|e| matches!(e, Event::SubscriptionMatched { .. })),
            "seed {seed:#x}: the reader matched although the announcement was held"
        );
        let early = rng.range(1, 20);
        for i in 0..early {
            write_retrying(&mut net, 0, w, [0; 16], indexed_payload(i, 64));
        }
        net.run_for(50 * MS);
        // A reader created now, after those samples arrived, must not be handed them.
        let now = net.instant();
        let late = net.p(1).create_reader(now, reader_spec());
        net.flush();
        net.run_for(rng.range(0, 500) * MS);
        held.set(false);
        let ok = net.run_until(30 * SEC, |n| {
            n.node(1).saw(|e| matches!(e, Event::SubscriptionMatched { reader, matched: true, .. } if *reader == late))
        });
        assert!(ok, "seed {seed:#x}: the readers never matched the writer");
        for i in early..early + 10 {
            write_retrying(&mut net, 0, w, [0; 16], indexed_payload(i, 64));
        }
        net.run_for(SEC);
        let all: Vec<u64> = (0..early + 10).collect();
        assert_eq!(
            indices_delivered(&net, 1, r),
            all,
            "seed {seed:#x}: the first reader"
        );
        assert_eq!(
            indices_delivered(&net, 1, late),
            (early..early + 10).collect::<Vec<_>>(),
            "seed {seed:#x}: the reader created after the early samples arrived"
        );
        assert_eq!(
            net.p(1).stats().parked_data_delivered,
            early,
            "seed {seed:#x}"
        );
    });
}

#[test]
fn samples_of_a_writer_never_discovered_are_never_delivered() {
    let mut net = SimNet::new(3, Faults::none());
    net.add_node(node_config(1));
    net.add_node(node_config(2));
    let held = Rc::new(Cell::new(true));
    net.tamper = Some(hold_publications(held));
    let now = net.instant();
    let r = net.p(1).create_reader(now, reader_spec());
    let now = net.instant();
    let w = net.p(0).create_writer(
        now,
        WriterSpec {
            topic_name: "Early".into(),
            type_name: "Blob".into(),
            qos: EndpointQos::writer_default(),
            has_key: false,
        },
    );
    net.flush();
    assert!(net.run_until(30 * SEC, |n| n.node(0).p.writer_synced_readers(w) >= 1));
    for i in 0..5 {
        write_retrying(&mut net, 0, w, [0; 16], indexed_payload(i, 64));
    }
    net.run_for(10 * SEC);
    assert!(indices_delivered(&net, 1, r).is_empty());
    let st = net.p(1).stats();
    assert_eq!((st.parked_data, st.parked_data_delivered), (5, 0));
}

/// True for a datagram that carries a DATA of writer `w` to any reader (`readerId` UNKNOWN
/// followed by `w`'s entity id, as a DATA submessage lays them out).
fn carries_data_of(bytes: &[u8], w: EntityId) -> bool {
    let mut pattern = [0u8; 8];
    pattern[4..].copy_from_slice(&w.0);
    bytes.windows(8).any(|x| x == pattern)
}

#[test]
fn samples_handled_after_their_writers_goodbye_are_still_delivered() {
    for_each_seed("late_data", 20, |seed| {
        let mut rng = Rng::new(seed);
        let mut net = SimNet::new(seed, Faults::none());
        net.add_node(node_config(1));
        net.add_node(node_config(2));
        let mut wq = EndpointQos::writer_default();
        if rng.chance(0.5) {
            wq.reliability.kind = ReliabilityKind::BestEffort;
        }
        let (w, r) = matched_pair(&mut net, "Late", wq, EndpointQos::reader_default());
        assert!(net.run_until(10 * SEC, |n| n.node(0).p.writer_synced_readers(w) >= 1));
        let before = rng.range(0, 5);
        for i in 0..before {
            write_retrying(&mut net, 0, w, [0; 16], indexed_payload(i, 64));
        }
        net.run_for(10 * MS);
        // The next samples are held back, as by a receive thread that is not scheduled, while
        // the writer's deletion goes through.
        let held: Rc<RefCell<Vec<Vec<u8>>>> = Rc::default();
        let capture = held.clone();
        net.tamper = Some(Box::new(move |from, to, bytes: &mut Vec<u8>| {
            if from == 0 && to == 1 && carries_data_of(bytes, w) {
                capture.borrow_mut().push(std::mem::take(bytes));
            }
        }));
        let late = rng.range(1, 10);
        for i in before..before + late {
            write_retrying(&mut net, 0, w, [0; 16], indexed_payload(i, 64));
        }
        let now = net.instant();
        net.p(0).delete_writer(now, w);
        net.flush();
        let gone = net.run_until(10 * SEC, |n| {
            n.node(1)
                .saw(|e| matches!(e, Event::SubscriptionMatched { matched: false, .. }))
        });
        assert!(gone, "seed {seed:#x}: the reader never saw the writer go");
        net.tamper = None;
        // Within the drain period the held samples are still taken; past it, they are not.
        let too_late = rng.chance(0.25);
        let wait = if too_late { 2_500 } else { rng.range(0, 1_500) };
        net.run_for(wait * MS);
        assert!(
            !held.borrow().is_empty(),
            "seed {seed:#x}: nothing was held"
        );
        for bytes in held.take() {
            let now = net.instant();
            net.p(1).handle_datagram(now, &bytes);
            net.flush();
        }
        net.run_for(10 * MS);
        let expected = if too_late { before } else { before + late };
        let all: Vec<u64> = (0..expected).collect();
        assert_eq!(indices_delivered(&net, 1, r), all, "seed {seed:#x}");
        if !too_late {
            assert!(net.p(1).stats().drained_data >= late, "seed {seed:#x}");
        }
    });
}
