//! Proves that a reliable reader that is deleted acknowledges what it received on its way
//! out, so its writer's delivery report shows it had everything however soon it left.

use crate::net::*;
use halyard_core::wire::EntityId;

/// A reliable pair on `topic`, and five samples the reader got, 300 µs after they were
/// written (100 µs away): before any HEARTBEAT asked the reader about them.
fn five_delivered(seed: u64, topic: &str) -> (SimNet, EntityId, EntityId) {
    let mut net = SimNet::new(seed, Faults::none());
    net.add_node(node_config(1));
    net.add_node(node_config(2));
    let (w, r) = matched_pair(
        &mut net,
        topic,
        reliable_keep_all_writer(),
        reliable_keep_all_reader(),
    );
    assert!(net.run_until(10 * SEC, |n| n.node(0).p.writer_synced_readers(w) >= 1));
    net.run_for(SEC);
    for i in 0..5 {
        write_retrying(&mut net, 0, w, [0; 16], indexed_payload(i, 64));
    }
    net.run_for(300_000);
    assert_eq!(
        indices_delivered(&net, 1, r).len(),
        5,
        "seed {seed:#x}: not all delivered"
    );
    (net, w, r)
}

#[test]
fn a_deleted_reliable_reader_acknowledges_what_it_received() {
    for_each_seed("deleted_reader_acknowledges", 20, |seed| {
        let (mut net, w, r) = five_delivered(seed, "Leaving");
        // The reader leaves before anything asks it.
        let now = net.instant();
        net.p(1).delete_reader(now, r);
        net.flush();
        net.run_for(SEC);
        let report = net.p(0).writer_deliveries(w);
        assert_eq!(report.len(), 1, "seed {seed:#x}: {report:?}");
        assert!(!report[0].matched, "seed {seed:#x}: {report:?}");
        assert_eq!(
            report[0].reception,
            halyard_core::Reception::Acknowledged {
                acknowledged: 5,
                owed: 5
            },
            "seed {seed:#x}"
        );
    });
}

/// The same when the reader's last ACKNACK is handled after its SEDP disposal (discovery and
/// data travel on different sockets): the departed reader's record still takes it.
#[test]
fn a_last_acknack_overtaken_by_the_readers_departure_still_counts() {
    for_each_seed("overtaken_acknack", 20, |seed| {
        let (mut net, w, r) = five_delivered(seed, "Overtaken");
        // Hold back the reader's ACKNACKs (readerId, writerId side by side) to the writer.
        let mut ids = [0u8; 8];
        ids[..4].copy_from_slice(&r.0);
        ids[4..].copy_from_slice(&w.0);
        let held: std::rc::Rc<std::cell::RefCell<Vec<Vec<u8>>>> = Default::default();
        let capture = held.clone();
        net.tamper = Some(Box::new(move |from, to, bytes: &mut Vec<u8>| {
            if from == 1 && to == 0 && bytes.windows(8).any(|x| x == ids) {
                capture.borrow_mut().push(std::mem::take(bytes));
            }
        }));
        let now = net.instant();
        net.p(1).delete_reader(now, r);
        net.flush();
        let gone = net.run_until(10 * SEC, |n| {
            n.node(0).saw(|e| {
                matches!(
                    e,
                    halyard_core::Event::PublicationMatched { matched: false, .. }
                )
            })
        });
        assert!(gone, "seed {seed:#x}: the writer never saw the reader go");
        net.tamper = None;
        assert!(
            !held.borrow().is_empty(),
            "seed {seed:#x}: no ACKNACK was held"
        );
        for bytes in held.take() {
            let now = net.instant();
            net.p(0).handle_datagram(now, &bytes);
        }
        let report = net.p(0).writer_deliveries(w);
        assert_eq!(
            report.first().map(|d| (d.matched, d.reception)),
            Some((
                false,
                halyard_core::Reception::Acknowledged {
                    acknowledged: 5,
                    owed: 5
                }
            )),
            "seed {seed:#x}: {report:?}"
        );
    });
}
