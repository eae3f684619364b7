//! Proves that malformed messages yield errors (ending iteration) instead of panics, and that the
//! octetsToNextHeader = 0 and unknown-submessage rules of RTPS 2.5 §8.3.4.1 / §9.4.5.1.3 hold.

use halyard_wire::*;

fn message(subs: &[u8]) -> Vec<u8> {
    let mut m = b"RTPS\x02\x05\x01\x99".to_vec();
    m.extend_from_slice(&[1; 12]);
    m.extend_from_slice(subs);
    m
}

/// A little-endian submessage with an explicit octetsToNextHeader.
fn sub_len(id: u8, flags: u8, len: u16, body: &[u8]) -> Vec<u8> {
    let mut v = vec![id, flags | 1];
    v.extend_from_slice(&len.to_le_bytes());
    v.extend_from_slice(body);
    v
}

fn sub(id: u8, flags: u8, body: &[u8]) -> Vec<u8> {
    sub_len(id, flags, body.len() as u16, body)
}

fn all(m: &[u8]) -> Vec<Result<Submessage<'_>, WireError>> {
    Message::parse(m).unwrap().submessages().collect()
}

fn data_body(payload: &[u8]) -> Vec<u8> {
    let mut b = vec![0, 0, 16, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 1, 0, 0, 0];
    b.extend_from_slice(payload);
    b
}

#[test]
fn header_errors() {
    assert_eq!(Message::parse(b"RTPS").err(), Some(WireError::Truncated));
    let mut m = message(&[]);
    assert!(Message::parse(&m).is_ok());
    m[4] = 1;
    assert_eq!(Message::parse(&m).err(), Some(WireError::UnsupportedVersion));
    m[0] = b'X';
    assert_eq!(Message::parse(&m).err(), Some(WireError::BadMagic));
}

#[test]
fn zero_length_last_submessage_extends_to_end() {
    let mut s = sub(id::INFO_DST, 0, &[2; 12]);
    s.extend(sub_len(id::DATA, 0x04, 0, &data_body(&[0, 1, 0, 0, 1, 2, 3, 4, 5, 6])));
    let m = message(&s);
    let subs = all(&m);
    assert_eq!(subs.len(), 2);
    let Ok(Submessage::Data(d)) = &subs[1] else { panic!("{subs:?}") };
    assert_eq!(d.payload, Some(&[0, 1, 0, 0, 1, 2, 3, 4, 5, 6][..]));
}

#[test]
fn zero_length_pad_and_info_ts_are_empty() {
    let mut s = sub_len(id::PAD, 0, 0, &[]);
    s.extend(sub_len(id::INFO_TS, 0x02, 0, &[]));
    s.extend(sub(id::INFO_DST, 0, &[3; 12]));
    s.extend(sub_len(id::INFO_TS, 0, 0, &[]));
    let m = message(&s);
    let subs = all(&m);
    assert!(matches!(subs[0], Ok(Submessage::Pad)));
    assert!(matches!(subs[1], Ok(Submessage::InfoTs(None))));
    assert!(matches!(subs[2], Ok(Submessage::InfoDst(p)) if p == GuidPrefix([3; 12])));
    assert_eq!(subs[3].as_ref().err(), Some(&WireError::Truncated));
    assert_eq!(subs.len(), 4);
}

#[test]
fn unknown_submessages_are_skipped() {
    let mut s = sub(0x80, 0, &[9; 8]);
    s.extend(sub(0x33, 0, &[9; 4]));
    s.extend(sub(id::INFO_DST, 0, &[4; 12]));
    let m = message(&s);
    let subs = all(&m);
    assert!(matches!(
        subs[0],
        Ok(Submessage::Vendor { id: 0x80, body: [9, 9, 9, 9, 9, 9, 9, 9], .. })
    ));
    assert!(matches!(subs[1], Ok(Submessage::Unknown { id: 0x33 })));
    assert!(matches!(subs[2], Ok(Submessage::InfoDst(_))));
}

#[test]
fn overrunning_length_ends_iteration() {
    let mut s = sub(id::INFO_DST, 0, &[4; 12]);
    s.extend(sub_len(id::INFO_DST, 0, 16, &[4; 12]));
    s.extend(sub(id::INFO_DST, 0, &[4; 12]));
    let m = message(&s[..s.len() - 16]);
    let subs = all(&m);
    assert_eq!(subs.len(), 2);
    assert_eq!(subs[1].as_ref().err(), Some(&WireError::BadSubmessageLength));
    let m = message(&[id::PAD, 1, 0]);
    assert_eq!(all(&m)[0].as_ref().err(), Some(&WireError::Truncated));
}

#[test]
fn short_bodies_are_truncated_errors() {
    for sid in [
        id::DATA,
        id::DATA_FRAG,
        id::HEARTBEAT,
        id::HEARTBEAT_FRAG,
        id::ACKNACK,
        id::NACK_FRAG,
        id::GAP,
    ] {
        let mut s = sub(sid, 0, &[1; 12]);
        s.extend(sub(id::INFO_DST, 0, &[4; 12]));
        let m = message(&s);
        let subs = all(&m);
        assert_eq!(subs.len(), 1, "error ends iteration");
        assert!(subs[0].is_err(), "{sid:#x}");
    }
    for sid in [id::INFO_DST, id::INFO_SRC, id::INFO_REPLY, id::INFO_REPLY_IP4, id::INFO_TS] {
        assert_eq!(
            all(&message(&sub(sid, 0, &[0; 3])))[0].as_ref().err(),
            Some(&WireError::Truncated)
        );
    }
}

#[test]
fn invalid_fields_are_rejected() {
    let acknack = |base: i64, bits: u32| {
        let mut b = vec![0; 8];
        b.extend_from_slice(&((base >> 32) as i32).to_le_bytes());
        b.extend_from_slice(&(base as u32).to_le_bytes());
        b.extend_from_slice(&bits.to_le_bytes());
        b.extend_from_slice(&[0; 36]);
        message(&sub(id::ACKNACK, 0, &b))
    };
    let m = acknack(1, 257);
    assert!(matches!(all(&m)[0], Err(WireError::InvalidField(_))));
    let m = acknack(0, 1);
    assert!(matches!(all(&m)[0], Err(WireError::InvalidField(_))));
    let m = acknack(-5, 1);
    assert!(matches!(all(&m)[0], Err(WireError::InvalidField(_))));
    let m = acknack(1, 256);
    assert!(all(&m)[0].is_ok());
}

fn frag_body(start: u32, n: u16, size: u16, sample: u32, payload: &[u8]) -> Vec<u8> {
    let mut b = vec![0, 0, 28, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 1, 0, 0, 0];
    b.extend_from_slice(&start.to_le_bytes());
    b.extend_from_slice(&n.to_le_bytes());
    b.extend_from_slice(&size.to_le_bytes());
    b.extend_from_slice(&sample.to_le_bytes());
    b.extend_from_slice(payload);
    b
}

#[test]
fn data_frag_validation_and_clamping() {
    for (start, size, sample) in [(0, 4, 100), (1, 0, 100), (26, 4, 100)] {
        let m = message(&sub(id::DATA_FRAG, 0, &frag_body(start, 1, size, sample, &[0; 4])));
        assert!(matches!(all(&m)[0], Err(WireError::InvalidField(_))), "{start} {size} {sample}");
    }
    // The fragments are clamped to fragmentsInSubmessage * fragmentSize; the payload keeps
    // the rest (encoded fragments are longer).
    let m = message(&sub(id::DATA_FRAG, 0, &frag_body(1, 2, 4, 100, &[5; 12])));
    let Ok(Submessage::DataFrag(f)) = &all(&m)[0] else { panic!() };
    assert_eq!((f.fragments().len(), f.payload.len()), (8, 12));
    // Clamped to what is left of the sample.
    let m = message(&sub(id::DATA_FRAG, 0, &frag_body(3, 1, 4, 10, &[5; 4])));
    let Ok(Submessage::DataFrag(f)) = &all(&m)[0] else { panic!() };
    assert_eq!((f.fragments().len(), f.fragments_len()), (2, 2));
}

#[test]
fn data_inline_qos_errors() {
    // Q flag without a sentinel.
    let m = message(&sub(id::DATA, 0x02, &data_body(&[0x70, 0, 16, 0, 1, 2, 3, 4])));
    assert_eq!(all(&m)[0].as_ref().err(), Some(&WireError::BadParameterList));
    // octetsToInlineQos pointing past the end.
    let mut b = data_body(&[]);
    b[2] = 200;
    let m = message(&sub(id::DATA, 0x04, &b));
    assert!(matches!(all(&m)[0], Err(WireError::InvalidField(_))));
    // octetsToInlineQos overlapping the fixed fields.
    b[2] = 12;
    let m = message(&sub(id::DATA, 0x04, &b));
    assert!(matches!(all(&m)[0], Err(WireError::InvalidField(_))));
}

#[test]
fn heartbeat_range_is_checked() {
    let hb = |first: u32, last: u32| {
        let mut b = vec![0; 8];
        b.extend_from_slice(&[0, 0, 0, 0]);
        b.extend_from_slice(&first.to_le_bytes());
        b.extend_from_slice(&[0, 0, 0, 0]);
        b.extend_from_slice(&last.to_le_bytes());
        b.extend_from_slice(&[1, 0, 0, 0]);
        message(&sub(id::HEARTBEAT, 0, &b))
    };
    assert!(all(&hb(1, 0))[0].is_ok(), "empty writer history");
    assert!(all(&hb(0, 5))[0].is_err());
    assert!(all(&hb(5, 3))[0].is_err());
}

#[test]
fn huge_locator_counts_do_not_allocate() {
    let mut b = u32::MAX.to_le_bytes().to_vec();
    b.extend_from_slice(&[0; 24]);
    let m = message(&sub(id::INFO_REPLY, 0, &b));
    assert_eq!(all(&m)[0].as_ref().err(), Some(&WireError::Truncated));
    let mut b = 20u32.to_le_bytes().to_vec();
    b.extend_from_slice(&[0; 24 * 20]);
    let m = message(&sub(id::INFO_REPLY, 0, &b));
    let Ok(Submessage::InfoReply(r)) = &all(&m)[0] else { panic!() };
    assert_eq!(r.unicast.len(), MAX_REPLY_LOCATORS);
}

#[test]
fn info_reply_ip4() {
    let mut b = vec![];
    b.extend_from_slice(&0x0a00_0001u32.to_le_bytes());
    b.extend_from_slice(&7411u32.to_le_bytes());
    b.extend_from_slice(&0xefff_0001u32.to_le_bytes());
    b.extend_from_slice(&7401u32.to_le_bytes());
    let m = message(&sub(id::INFO_REPLY_IP4, 0x02, &b));
    let Ok(Submessage::InfoReply(r)) = &all(&m)[0] else { panic!() };
    assert_eq!(r.unicast, vec![Locator::udpv4([10, 0, 0, 1], 7411)]);
    assert_eq!(r.multicast, vec![Locator::udpv4([239, 255, 0, 1], 7401)]);
}
