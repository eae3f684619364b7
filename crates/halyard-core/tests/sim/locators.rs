//! Proves that of the unicast addresses a peer announces, only the one in a network this
//! participant reaches directly is used: a peer that also announces an address on another
//! network (its second interface) gets no datagram there, while data still flows. A peer none
//! of whose addresses is reachable gets them all (nothing better is known).

use crate::net::*;
use halyard_core::wire::Locator;

/// Node 2's unreachable second addresses (another network than the simulated 10.0.0.0/24).
fn elsewhere(port: u16) -> Locator {
    Locator::udpv4([192, 0, 2, 2], port)
}

/// Streams 50 samples from node 1 to node 2, which also announces addresses on 192.0.2.0/24;
/// returns the datagrams sent to those addresses and the samples delivered.
fn stream_to_two_homed_peer(seed: u64, reachable_known: bool) -> (u64, usize) {
    let mut net = SimNet::new(seed, Faults::lossy(0.1));
    let mut a = node_config(1);
    if !reachable_known {
        a.reachable_networks.clear();
    }
    net.add_node(a);
    let mut b = node_config(2);
    b.metatraffic_unicast.push(elsewhere(7410));
    b.default_unicast.push(elsewhere(7411));
    net.add_node(b);
    let (w, _) = matched_pair(
        &mut net,
        "TwoHomed",
        reliable_keep_all_writer(),
        reliable_keep_all_reader(),
    );
    for i in 0..50 {
        write_retrying(&mut net, 0, w, [0; 16], indexed_payload(i, 200));
    }
    net.run_until(30 * SEC, |n| n.nodes[0].p.writer_all_acked(w));
    let elsewhere_sends = net
        .sent_to
        .iter()
        .filter(|(l, _)| l.as_udpv4().is_some_and(|(ip, _)| ip == [192, 0, 2, 2]))
        .map(|(_, n)| n)
        .sum();
    (elsewhere_sends, net.node(1).samples.len())
}

#[test]
fn the_unreachable_address_of_a_peer_gets_nothing() {
    for_each_seed(
        "the_unreachable_address_of_a_peer_gets_nothing",
        20,
        |seed| {
            let (elsewhere, delivered) = stream_to_two_homed_peer(seed, true);
            assert_eq!(
                elsewhere, 0,
                "seed {seed:#x}: {elsewhere} datagrams went to the unreachable address"
            );
            assert_eq!(delivered, 50, "seed {seed:#x}: data did not flow");
        },
    );
}

#[test]
fn without_known_networks_every_address_is_used() {
    let (elsewhere, delivered) = stream_to_two_homed_peer(1, false);
    assert!(elsewhere > 0, "the second address was never tried");
    assert_eq!(delivered, 50);
}
