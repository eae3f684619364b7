//! Proves that after a participant's lease expired on one side only (a partition longer than the
//! lease, one-way), rediscovery re-matches the endpoints and the reliable stream resumes: the
//! peer that kept its state answers the rejoined reader's fresh ACKNACK with a HEARTBEAT.

use crate::net::*;
use halyard_core::Event;

#[test]
fn one_sided_lease_expiry_rematches_and_resumes() {
    let mut net = SimNet::new(1, Faults::none());
    net.add_node(node_config(1));
    net.add_node(node_config(2));
    let (w, r) = matched_pair(
        &mut net,
        "Rejoin",
        reliable_keep_all_writer(),
        reliable_keep_all_reader(),
    );
    const N: u64 = 60;
    for i in 0..N / 2 {
        write_retrying(&mut net, 0, w, [0; 16], indexed_payload(i, 64));
        net.run_for(10 * MS);
    }
    net.run_for(SEC);
    // Node 0's datagrams stop reaching node 1 for longer than the lease (10 s); node 1 still
    // reaches node 0, so only node 1 drops its peer.
    net.tamper = Some(Box::new(move |from, _to, bytes: &mut Vec<u8>| {
        if from == 0 {
            // An RTPS header with a wrong protocol id is dropped by the receiver.
            bytes[0] = b'X';
        }
    }));
    net.run_for(12 * SEC);
    assert!(
        net.node(1).saw(|e| matches!(e, Event::ParticipantLost(_))),
        "the one-way outage did not expire the lease"
    );
    net.tamper = None;
    for i in N / 2..N {
        write_retrying(&mut net, 0, w, [0; 16], indexed_payload(i, 64));
        net.run_for(10 * MS);
    }
    let ok = net.run_until(30 * SEC, |n| {
        n.node(1).samples.len() as u64 >= N && n.nodes[0].p.writer_all_acked(w)
    });
    let rematched = net.node(1).events.iter().filter(|(_, e)| {
        matches!(e, Event::SubscriptionMatched { reader, matched: true, .. } if *reader == r)
    });
    assert_eq!(
        rematched.count(),
        2,
        "the reader did not match the writer again"
    );
    assert!(
        ok,
        "the stream did not resume within 30 s after the outage ended"
    );
    let delivered: Vec<Option<u64>> = net
        .node(1)
        .samples
        .iter()
        .map(|(_, s)| parse_indexed(&s.payload))
        .collect();
    assert_exactly_once_in_order(1, &delivered, N);
}
