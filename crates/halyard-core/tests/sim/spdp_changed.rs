//! Proves that when a known participant's SPDP announcement changes (here: the first one
//! reached us with a damaged metatraffic locator, the next ones are right) the builtin SEDP
//! proxies follow the new locators, so discovery converges instead of talking to a dead address.

use crate::net::*;
use std::cell::Cell;
use std::rc::Rc;

/// Finds `needle` in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The UDPv4 locator body of 10.0.0.`host`:7410 as it appears in a parameter list.
fn metatraffic_locator(host: u8) -> Vec<u8> {
    let mut v = vec![0xf2, 0x1c, 0, 0];
    v.extend_from_slice(&[0; 12]);
    v.extend_from_slice(&[10, 0, 0, host]);
    v
}

#[test]
fn changed_spdp_locators_update_builtin_proxies() {
    let mut net = SimNet::new(1, Faults::none());
    let a = net.add_node(node_config(1));
    // Node b's first announcement reaches node a with its metatraffic locator turned into
    // 10.0.0.9 (no such host); later ones arrive intact.
    let hit = Rc::new(Cell::new(false));
    let h = hit.clone();
    net.tamper = Some(Box::new(move |from, to, bytes: &mut Vec<u8>| {
        if from == 1 && to == 0 && !h.get() {
            if let Some(i) = find(bytes, &metatraffic_locator(2)) {
                bytes[i + 19] = 9;
                h.set(true);
            }
        }
    }));
    let b = net.add_node(node_config(2));
    let (w, r) = square_pair(&mut net, a, b);
    let ok = run_until_pair_matched(&mut net, (a, w), (b, r), 30 * SEC);
    assert!(
        ok,
        "no match within 30 s virtual after a corrected SPDP announcement"
    );
}
