//! Proves that a volatile reliable reader which starts at the first HEARTBEAT it receives
//! (as Cyclone DDS 0.10 does, and as Halyard's readers do with other vendors' writers) gets
//! every sample written after it matched, even when everything the writer sent it before
//! that HEARTBEAT was lost; and that the writer never counts a sample acknowledged that the
//! reader did not receive.
//!
//! The writer's participant looks foreign to the reader's (its SPDP vendor id is rewritten on
//! the way to Cyclone's), so the reader synchronises on its first HEARTBEAT; a blackout of
//! the writer's user traffic to the reader then covers the match and the whole burst. Before
//! the writer held DATA back from a reader that had not yet heard where its stream starts, the
//! first HEARTBEAT the reader heard announced the burst's end: the reader skipped and
//! acknowledged all of it (seed 0xf1120875b5ae9014 of `security` did this with a damaged
//! vendor id and a damaged default locator).

use crate::net::*;
use halyard_core::wire::{EntityId, Message, Submessage, VendorId};
use std::cell::Cell;
use std::rc::Rc;

/// PID_VENDORID (0x0016) with Halyard's vendor id, in a little-endian parameter list.
const HALYARD_VENDOR_PARAM: [u8; 6] = [0x16, 0x00, 0x04, 0x00, 0x01, 0x99];

/// Rewrites the vendor id an SPDP announcement carries to Cyclone DDS's.
fn as_cyclone(bytes: &mut [u8]) {
    let param = HALYARD_VENDOR_PARAM;
    if let Some(i) = bytes.windows(param.len()).position(|w| w == param) {
        bytes[i + 4..i + 6].copy_from_slice(&VendorId::CYCLONE.0);
    }
}

/// True if the datagram carries a submessage of an application writer.
fn carries_user_writer(bytes: &[u8]) -> bool {
    let Ok(m) = Message::parse(bytes) else {
        return false;
    };
    let user = |e: EntityId| !e.is_builtin() && e != EntityId::UNKNOWN;
    m.submessages().flatten().any(|sm| match sm {
        Submessage::Data(d) => user(d.writer_id),
        Submessage::DataFrag(d) => user(d.writer_id),
        Submessage::Heartbeat(h) => user(h.writer_id),
        Submessage::Gap(g) => user(g.writer_id),
        _ => false,
    })
}

#[test]
fn reader_syncing_on_first_heartbeat_gets_a_burst_written_before_it() {
    for_each_seed("first_sync_burst_before_first_heartbeat", 30, |seed| {
        burst_before_first_heartbeat(seed, Faults::lossy(0.1));
    });
}

#[test]
fn reader_syncing_on_first_heartbeat_gets_a_burst_written_before_it_without_loss() {
    burst_before_first_heartbeat(1, Faults::none());
}

fn burst_before_first_heartbeat(seed: u64, faults: Faults) {
    let mut net = SimNet::new(seed, faults);
    let blackout = Rc::new(Cell::new(true));
    let dark = blackout.clone();
    net.tamper = Some(Box::new(move |from, to, bytes: &mut Vec<u8>| {
        if (from, to) != (0, 1) {
            return;
        }
        as_cyclone(bytes);
        if dark.get() && carries_user_writer(bytes) {
            // Not RTPS any more: dropped by the receiver.
            bytes[0] = b'X';
        }
    }));
    net.add_node(node_config(1));
    net.add_node(node_config(2));
    let (w, r) = matched_pair(
        &mut net,
        "FirstSync",
        reliable_keep_all_writer(),
        reliable_keep_all_reader(),
    );
    let n = 20;
    for i in 0..n {
        write_retrying(&mut net, 0, w, [0; 16], indexed_payload(i, 100));
    }
    net.run_for(SEC);
    blackout.set(false);
    // The writer must not count as acknowledged what the reader does not have.
    let premature = Rc::new(Cell::new(None));
    let seen = premature.clone();
    let ok = net.run_until(60 * SEC, |net| {
        let got = net.node(1).samples.len() as u64;
        let acked = net.nodes[0].p.writer_all_acked(w);
        if acked && got < n && seen.get().is_none() {
            seen.set(Some(got));
        }
        got >= n && acked
    });
    assert_eq!(
        premature.get(),
        None,
        "seed {seed:#x}: the writer saw everything acknowledged with only that many samples delivered"
    );
    assert!(
        ok,
        "seed {seed:#x}: got {} of {n} samples; stats {:?}",
        net.node(1).samples.len(),
        net.stats
    );
    let got: Vec<Option<u64>> = net
        .node(1)
        .samples
        .iter()
        .filter(|(_, s)| s.reader == r)
        .map(|(_, s)| parse_indexed(&s.payload))
        .collect();
    assert_exactly_once_in_order(seed, &got, n);
}
