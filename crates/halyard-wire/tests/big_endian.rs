//! Proves that hand-built big-endian (E flag clear) DATA, HEARTBEAT, ACKNACK submessages and
//! big-endian parameter lists are parsed correctly.

use halyard_wire::param::{pid, ParameterList, ValueReader};
use halyard_wire::*;

fn message(subs: &[u8]) -> Vec<u8> {
    let mut m = b"RTPS\x02\x03\x01\x10".to_vec();
    m.extend_from_slice(&[7; 12]);
    m.extend_from_slice(subs);
    m
}

fn sub(id: u8, flags: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![id, flags];
    v.extend_from_slice(&(body.len() as u16).to_be_bytes());
    v.extend_from_slice(body);
    v
}

fn be_data_body(otiq: u16) -> Vec<u8> {
    let mut b = vec![0, 0];
    b.extend_from_slice(&otiq.to_be_bytes());
    b.extend_from_slice(&[0, 0, 0, 0, 0, 0, 1, 2]); // reader unknown, writer 000102
    b.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 5]); // sn = 2^32 + 5
    b.resize(b.len() + (otiq as usize - 16), 0xee); // extra bytes before the inline QoS
    b.extend_from_slice(&[0x00, 0x70, 0x00, 0x10]);
    b.extend_from_slice(&[0xab; 16]);
    b.extend_from_slice(&[0x00, 0x71, 0x00, 0x04, 0, 0, 0, 2]);
    b.extend_from_slice(&[0x00, 0x01, 0x00, 0x00]);
    b.extend_from_slice(&[0x00, 0x00, 0x00, 0x00, 0xde, 0xad, 0xbe, 0xef]);
    b
}

#[test]
fn big_endian_data() {
    for otiq in [16u16, 20] {
        let m = message(&sub(id::DATA, 0x02 | 0x04, &be_data_body(otiq)));
        let msg = Message::parse(&m).unwrap();
        assert_eq!(msg.header.vendor, VendorId::CYCLONE);
        let subs: Vec<_> = msg.submessages().collect();
        assert_eq!(subs.len(), 1);
        let Ok(Submessage::Data(d)) = &subs[0] else { panic!("{subs:?}") };
        assert_eq!(d.writer_id, EntityId([0, 0, 1, 2]));
        assert_eq!(d.writer_sn, SequenceNumber((1 << 32) + 5));
        let q = d.inline_qos.unwrap();
        assert!(!q.little_endian);
        assert_eq!(q.key_hash().unwrap(), Some([0xab; 16]));
        assert_eq!(q.status_info().unwrap(), 2);
        assert_eq!(d.payload, Some(&[0, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef][..]));
    }
}

#[test]
fn big_endian_heartbeat() {
    let mut body = vec![0, 0, 0, 0, 0, 0, 2, 0xc2];
    body.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 3]);
    body.extend_from_slice(&[0, 0, 0, 0, 0, 0, 1, 0]);
    body.extend_from_slice(&[0xff, 0xff, 0xff, 0xfe]);
    let m = message(&sub(id::HEARTBEAT, 0x02, &body));
    let msg = Message::parse(&m).unwrap();
    let Some(Ok(Submessage::Heartbeat(h))) = msg.submessages().next() else { panic!() };
    assert_eq!(h.writer_id, EntityId([0, 0, 2, 0xc2]));
    assert_eq!((h.first_sn, h.last_sn, h.count), (SequenceNumber(3), SequenceNumber(256), -2));
    assert!(h.final_flag && !h.liveliness_flag);
}

#[test]
fn big_endian_acknack() {
    let mut body = vec![0, 0, 0, 7, 0, 0, 0, 2];
    body.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 10]); // base 10
    body.extend_from_slice(&[0, 0, 0, 40]); // 40 bits
    body.extend_from_slice(&[0x80, 0, 0, 1, 0x40, 0xff, 0xff, 0xff]); // trailing bits beyond 40 set
    body.extend_from_slice(&[0, 0, 0, 6]);
    let m = message(&sub(id::ACKNACK, 0x02, &body));
    let msg = Message::parse(&m).unwrap();
    let Some(Ok(Submessage::AckNack(a))) = msg.submessages().next() else { panic!() };
    assert!(a.final_flag);
    assert_eq!(a.count, 6);
    let members: Vec<i64> = a.reader_sn_state.iter().map(|s| s.0).collect();
    assert_eq!(members, vec![10, 41, 43]); // 0x40 in word 1 is bit 33; the rest is masked off
    assert_eq!(a.reader_sn_state.num_bits, 40);
}

#[test]
fn big_endian_parameter_list() {
    let mut b = Vec::new();
    b.extend_from_slice(&[0x00, 0x00, 0x00, 0x04, 1, 2, 3, 4]); // PID_PAD, skipped
    b.extend_from_slice(&[0x00, 0x05, 0x00, 0x0c, 0, 0, 0, 6]);
    b.extend_from_slice(b"hello\0\0\0");
    b.extend_from_slice(&[0x00, 0x2f, 0x00, 0x18, 0, 0, 0, 1, 0, 0, 0x1c, 0xf2]);
    b.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 192, 168, 1, 2]);
    b.extend_from_slice(&[0x00, 0x01, 0x00, 0x00]);
    b.extend_from_slice(&[0xff; 8]); // after the sentinel: ignored
    let pl = ParameterList::new(&b, false);
    assert_eq!(pl.encoded_len().unwrap(), b.len() - 8);
    let params: Vec<_> = pl.iter().map(|p| p.unwrap()).collect();
    assert_eq!(params.len(), 2);
    assert_eq!(params[0].id, pid::TOPIC_NAME);
    assert_eq!(ValueReader::new(params[0].value, false).string().unwrap(), "hello");
    let loc = ValueReader::new(params[1].value, false).locator().unwrap();
    assert_eq!(loc.as_udpv4(), Some(([192, 168, 1, 2], 7410)));
    assert!(pl.find(pid::PAD).unwrap().is_none());
}
