//! Proves that one damaged SPDP announcement carrying a zero lease does not make the receiver
//! drop a live participant (and with it the match and the reliable stream's state).

use crate::net::*;
use halyard_core::Event;
use std::cell::Cell;
use std::rc::Rc;

/// Finds `needle` in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[test]
fn zero_lease_in_one_spdp_does_not_drop_the_peer() {
    let mut net = SimNet::new(1, Faults::none());
    net.add_node(node_config(1));
    net.add_node(node_config(2));
    // Once armed, the next SPDP announcement from node 0 to node 1 carries a zero lease
    // (PID_PARTICIPANT_LEASE_DURATION, 10 s turned into 0 s).
    let armed = Rc::new(Cell::new(false));
    let hit = Rc::new(Cell::new(false));
    let (arm, h) = (armed.clone(), hit.clone());
    net.tamper = Some(Box::new(move |from, to, bytes: &mut Vec<u8>| {
        if from == 0 && to == 1 && arm.get() && !h.get() {
            let lease = [2, 0, 8, 0, 10, 0, 0, 0, 0, 0, 0, 0];
            if let Some(i) = find(bytes, &lease) {
                bytes[i + 4] = 0;
                h.set(true);
            }
        }
    }));
    let (w, _r) = matched_pair(
        &mut net,
        "Lease",
        reliable_keep_all_writer(),
        reliable_keep_all_reader(),
    );
    armed.set(true);
    const N: u64 = 100;
    for i in 0..N {
        write_retrying(&mut net, 0, w, [0; 16], indexed_payload(i, 64));
        net.run_for(100 * MS);
    }
    net.run_for(5 * SEC);
    assert!(
        hit.get(),
        "the crafted corruption did not hit an announcement"
    );
    assert!(
        !net.node(1).saw(|e| matches!(e, Event::ParticipantLost(_))),
        "a single zero-lease announcement dropped a live participant"
    );
    let delivered: Vec<Option<u64>> = net
        .node(1)
        .samples
        .iter()
        .map(|(_, s)| parse_indexed(&s.payload))
        .collect();
    assert_exactly_once_in_order(1, &delivered, N);
}
