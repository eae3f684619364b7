//! `Submessages::next_raw`, the header-only walk a sender uses to decide protection, agrees
//! with the full parse on every submessage's id and endpoints: on every captured datagram
//! (`tests/captures`), on seeded random mutations of them, and on a truncated DATA.

use halyard_wire::{EntityId, Message, Submessage, Submessages};

/// (id, (reader, writer)) of each submessage by the full parse, until its first error.
fn parsed(bytes: &[u8]) -> Vec<Option<(EntityId, EntityId)>> {
    let Ok(m) = Message::parse(bytes) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for sm in m.submessages() {
        let Ok(sm) = sm else { break };
        out.push(match sm {
            Submessage::Data(d) => Some((d.reader_id, d.writer_id)),
            Submessage::DataFrag(d) => Some((d.reader_id, d.writer_id)),
            Submessage::Heartbeat(h) => Some((h.reader_id, h.writer_id)),
            Submessage::HeartbeatFrag(h) => Some((h.reader_id, h.writer_id)),
            Submessage::Gap(g) => Some((g.reader_id, g.writer_id)),
            Submessage::AckNack(a) => Some((a.reader_id, a.writer_id)),
            Submessage::NackFrag(n) => Some((n.reader_id, n.writer_id)),
            _ => None,
        });
    }
    out
}

/// The same by the raw walk, until its first error.
fn raw(bytes: &[u8]) -> Vec<Option<(EntityId, EntityId)>> {
    let Some(subs) = bytes.get(20..) else {
        return Vec::new();
    };
    let mut walk = Submessages::over(subs);
    let mut out = Vec::new();
    while let Some(r) = walk.next_raw() {
        let Ok(r) = r else { break };
        out.push(r.endpoints.map(|e| (e.reader, e.writer)));
    }
    out
}

fn captures() -> Vec<(String, Vec<u8>)> {
    let mut v = Vec::new();
    let path = format!("{}/tests/captures", env!("CARGO_MANIFEST_DIR"));
    for e in std::fs::read_dir(&path).expect("captures directory") {
        let p = e.expect("dir entry").path();
        if p.extension().is_some_and(|x| x == "bin") {
            v.push((p.display().to_string(), std::fs::read(&p).expect("readable")));
        }
    }
    v
}

#[test]
fn the_raw_walk_names_the_endpoints_the_parse_finds() {
    let all = captures();
    assert!(all.len() >= 15, "expected the committed captures, found {}", all.len());
    let mut endpoint_submessages = 0;
    for (name, bytes) in &all {
        let full = parsed(bytes);
        let quick = raw(bytes);
        assert!(!full.is_empty(), "{name}: nothing parsed");
        // The walk may go further than the parse (it does not check bodies), never less far.
        assert!(quick.len() >= full.len(), "{name}: {quick:?} vs {full:?}");
        assert_eq!(&quick[..full.len()], &full[..], "{name}");
        endpoint_submessages += full.iter().flatten().count();
    }
    assert!(endpoint_submessages > 20, "{endpoint_submessages}");
}

#[test]
fn the_raw_walk_agrees_on_mutated_datagrams_and_never_panics() {
    // A small xorshift, seeded: replay a failure with the printed seed.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for (name, bytes) in captures() {
        for _ in 0..200 {
            let seed = next();
            let mut b = bytes.clone();
            let flips = 1 + seed % 4;
            for k in 0..flips {
                let at = (seed.rotate_left(16 * k as u32) as usize) % b.len();
                b[at] ^= 1 << (seed >> (8 * k) & 7);
            }
            if seed % 5 == 0 {
                b.truncate((seed >> 20) as usize % b.len());
            }
            let full = parsed(&b);
            let quick = raw(&b);
            let n = full.len().min(quick.len());
            assert_eq!(&quick[..n], &full[..n], "{name}, seed {seed:#x}");
        }
    }
}

#[test]
fn a_data_too_short_for_its_endpoint_ids_ends_the_walk_with_an_error() {
    // DATA (0x15), little-endian, body of 6 octets: extraFlags, octetsToInlineQos, 2 of the
    // readerId.
    let subs = [0x15, 0x01, 6, 0, 0, 0, 16, 0, 1, 2];
    let mut walk = Submessages::over(&subs);
    assert!(matches!(walk.next_raw(), Some(Err(_))));
    assert!(walk.next_raw().is_none());
    // The same with room for the ids: they are read at offsets 4 and 8 of the body.
    let subs = [0x15, 0x01, 12, 0, 0, 0, 16, 0, 1, 2, 3, 4, 5, 6, 7, 8];
    let mut walk = Submessages::over(&subs);
    let r = walk.next_raw().expect("one submessage").expect("it fits");
    let e = r.endpoints.expect("DATA names its endpoints");
    assert_eq!((e.reader, e.writer), (EntityId([1, 2, 3, 4]), EntityId([5, 6, 7, 8])));
    assert_eq!(r.body.len(), 12);
    assert!(walk.next_raw().is_none());
}
