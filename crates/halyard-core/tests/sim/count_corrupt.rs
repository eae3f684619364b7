//! Proves that one ACKNACK or HEARTBEAT whose count was pushed up by a bit flip (0x3007 ->
//! 0x13007, the flip that wedged seed 0x3cc4051165910c4c of the swarm test) cannot make the peer
//! ignore every later genuine submessage as stale: the stream still converges promptly.

use crate::net::*;
use halyard_core::wire::EntityId;

const ACKNACK: u8 = 0x06;
const HEARTBEAT: u8 = 0x07;
const SAMPLES: u64 = 300;

/// Flips bit `bit` of the count (the submessage's last 4 bytes) of the `nth` submessage of kind
/// `kind` addressed to or from a user (non-builtin) endpoint in a datagram; returns true if it
/// did. `seen` counts such submessages across calls.
fn flip_count(bytes: &mut [u8], kind: u8, nth: u32, seen: &mut u32, bit: u32) -> bool {
    let mut off = 20;
    while off + 4 <= bytes.len() {
        let (id, flags) = (bytes[off], bytes[off + 1]);
        let raw = [bytes[off + 2], bytes[off + 3]];
        let len = if flags & 1 != 0 {
            u16::from_le_bytes(raw)
        } else {
            u16::from_be_bytes(raw)
        } as usize;
        let end = off + 4 + len;
        if end > bytes.len() {
            return false;
        }
        // readerId at +4, writerId at +8; the entity kind is the last byte of an EntityId.
        let writer_kind = bytes[off + 11];
        let user = writer_kind & 0xc0 == 0;
        if id == kind && user && len >= 12 {
            *seen += 1;
            if *seen == nth {
                let count = &mut bytes[end - 4..end];
                let byte = if flags & 1 != 0 { bit / 8 } else { 3 - bit / 8 } as usize;
                count[byte] ^= 1 << (bit % 8);
                return true;
            }
        }
        off = end;
    }
    false
}

/// A reliable KEEP_ALL stream of `SAMPLES` samples (high-water mark 64 KiB so the writer blocks
/// on acknowledgments) where the `nth` user submessage of `kind` sent by node `from` gets bit
/// `bit` of its count flipped. Asserts exact, in-order delivery and acknowledgment within a
/// bounded virtual time.
fn stream_with_flipped_count(from: usize, kind: u8, nth: u32, bit: u32) {
    let mut net = SimNet::new(7, Faults::lossy(0.05));
    let mut c1 = node_config(1);
    c1.writer_high_water_bytes = 64 * 1024;
    net.add_node(c1);
    net.add_node(node_config(2));
    let (w, _r): (EntityId, EntityId) = matched_pair(
        &mut net,
        "Stream",
        reliable_keep_all_writer(),
        reliable_keep_all_reader(),
    );
    let mut seen = 0u32;
    let mut flipped = false;
    let flag = std::rc::Rc::new(std::cell::Cell::new(false));
    let f2 = flag.clone();
    net.tamper = Some(Box::new(move |src, _to, bytes: &mut Vec<u8>| {
        if src == from && !flipped && flip_count(bytes, kind, nth, &mut seen, bit) {
            flipped = true;
            f2.set(true);
        }
    }));
    let start = net.now;
    for i in 0..SAMPLES {
        let change = halyard_core::NewChange {
            kind: halyard_core::ChangeKind::Alive,
            key_hash: [0; 16],
            payload: std::sync::Arc::new(indexed_payload(i, 1000)),
            timestamp: None,
            original: None,
        };
        loop {
            let now = net.instant();
            match net.write(0, now, w, change.clone()) {
                Ok(_) => break,
                Err(halyard_core::WriteError::Full) => {
                    assert!(
                        net.now - start < 60 * SEC,
                        "write {i} blocked: the peer ignores genuine counts after the flip"
                    );
                    net.run_for(MS);
                }
                Err(e) => panic!("write {i}: {e:?}"),
            }
        }
        net.flush();
        net.run_for(MS);
    }
    net.faults = Faults::none();
    let done = net.run_until(30 * SEC, |n| {
        n.node(1).samples.len() as u64 >= SAMPLES && n.nodes[0].p.writer_all_acked(w)
    });
    assert!(flag.get(), "the crafted flip never happened");
    assert!(done, "no convergence after the flipped count");
    let delivered: Vec<Option<u64>> = net
        .node(1)
        .samples
        .iter()
        .map(|(_, s)| parse_indexed(&s.payload))
        .collect();
    assert_exact(&delivered);
}

fn assert_exact(delivered: &[Option<u64>]) {
    for (pos, d) in delivered.iter().enumerate() {
        assert_eq!(*d, Some(pos as u64), "delivery #{pos}");
    }
    assert_eq!(delivered.len() as u64, SAMPLES);
}

#[test]
fn acknack_count_pushed_up_by_a_bit_flip_does_not_wedge_the_writer() {
    // Bit 16: the exact flip of the swarm seed (ignored for 65 535 ACKNACKs before the fix).
    stream_with_flipped_count(1, ACKNACK, 5, 16);
    // Bit 12: a smaller forward jump, ignored for 4 095 ACKNACKs before the fix.
    stream_with_flipped_count(1, ACKNACK, 5, 12);
}

#[test]
fn heartbeat_count_pushed_up_by_a_bit_flip_does_not_wedge_the_reader() {
    stream_with_flipped_count(0, HEARTBEAT, 3, 16);
}
