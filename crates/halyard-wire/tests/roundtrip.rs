//! Proves that every submessage kind emitted by `MessageBuilder` parses back to the same values.

use halyard_wire::param::{pid, ParameterListWriter};
use halyard_wire::*;

fn header() -> Header {
    Header {
        version: ProtocolVersion::V2_5,
        vendor: VendorId::HALYARD,
        guid_prefix: GuidPrefix([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]),
    }
}

fn builder() -> MessageBuilder {
    MessageBuilder::new(vec![0xaa; 7], &header())
}

/// Parses `bytes` and returns all submessages, panicking on errors.
fn parse_all(bytes: &[u8]) -> Vec<Submessage<'_>> {
    let m = Message::parse(bytes).unwrap();
    assert_eq!(m.header, header());
    m.submessages().map(|s| s.unwrap()).collect()
}

fn rid() -> EntityId {
    EntityId::new(7, EntityId::KIND_READER_WITH_KEY)
}

fn wid() -> EntityId {
    EntityId::new(9, EntityId::KIND_WRITER_WITH_KEY)
}

/// A DATA from `wid()` to `reader` (inline QoS given as little-endian bytes).
fn data<'a>(
    reader: EntityId,
    sn: SequenceNumber,
    qos: Option<&'a [u8]>,
    payload: Option<&'a [u8]>,
    key_flag: bool,
) -> Data<'a> {
    Data {
        reader_id: reader,
        writer_id: wid(),
        writer_sn: sn,
        inline_qos: qos.map(|q| param::ParameterList::new(q, true)),
        payload,
        key_flag,
        non_standard_flag: false,
    }
}

/// A DATA_FRAG of sample 4 from `wid()` to `rid()`: (first fragment, count, size, sample size).
fn frag<'a>(
    (start, count, size, sample): (u32, u16, u16, u32),
    qos: Option<&'a [u8]>,
    payload: &'a [u8],
    key_flag: bool,
) -> DataFrag<'a> {
    DataFrag {
        reader_id: rid(),
        writer_id: wid(),
        writer_sn: SequenceNumber(4),
        fragment_starting_num: start,
        fragments_in_submessage: count,
        fragment_size: size,
        sample_size: sample,
        inline_qos: qos.map(|q| param::ParameterList::new(q, true)),
        payload,
        key_flag,
    }
}

#[test]
fn header_is_written_by_new() {
    let b = builder();
    assert!(b.is_empty());
    assert_eq!(b.len(), HEADER_LEN);
    assert_eq!(&b.as_bytes()[..8], b"RTPS\x02\x05\x01\x99");
    assert_eq!(parse_all(b.as_bytes()).len(), 0);
}

#[test]
fn data_with_inline_qos_and_payload() {
    let mut qos = Vec::new();
    let mut w = ParameterListWriter::new(&mut qos);
    w.raw(pid::KEY_HASH, &[5; 16]);
    w.raw(pid::STATUS_INFO, &[0, 0, 0, 3]);
    w.finish();
    let payload = [0, 1, 0, 0, 1, 2, 3, 4];
    let sn = SequenceNumber((3 << 32) | 0xffff_fffe);
    let mut b = builder();
    b.data(&data(rid(), sn, Some(&qos), Some(&payload), false));
    let bytes = b.finish();
    assert_eq!(bytes[HEADER_LEN + 1], 0x01 | 0x02 | 0x04);
    let subs = parse_all(&bytes);
    let Submessage::Data(d) = &subs[0] else { panic!("{subs:?}") };
    assert_eq!((d.reader_id, d.writer_id, d.writer_sn), (rid(), wid(), sn));
    assert_eq!(d.payload, Some(&payload[..]));
    assert!(!d.key_flag && !d.non_standard_flag);
    let q = d.inline_qos.unwrap();
    assert_eq!(q.bytes, &qos[..]);
    assert_eq!(q.key_hash().unwrap(), Some([5; 16]));
    assert_eq!(q.status_info().unwrap(), 3);
}

#[test]
fn data_key_and_empty_variants() {
    let mut b = builder();
    b.data(&data(rid(), SequenceNumber(1), None, Some(&[0, 1, 0, 0, 9, 9, 9, 9]), true));
    b.data(&data(EntityId::UNKNOWN, SequenceNumber(2), None, None, false));
    b.data(&data(EntityId::UNKNOWN, SequenceNumber(3), None, Some(&[0, 1, 0, 0, 1]), false));
    let bytes = b.finish();
    let subs = parse_all(&bytes);
    assert_eq!(subs.len(), 3);
    let Submessage::Data(k) = &subs[0] else { panic!() };
    assert!(k.key_flag);
    assert_eq!(k.payload, Some(&[0, 1, 0, 0, 9, 9, 9, 9][..]));
    assert!(k.inline_qos.is_none());
    let Submessage::Data(e) = &subs[1] else { panic!() };
    assert_eq!(e.payload, None);
    let Submessage::Data(p) = &subs[2] else { panic!() };
    // The payload is padded to 4 bytes; the padding is part of the submessage body.
    assert_eq!(p.payload, Some(&[0, 1, 0, 0, 1, 0, 0, 0][..]));
}

#[test]
fn data_frag_strips_padding_beyond_sample_size() {
    let mut b = builder();
    let payload = [7u8; 5];
    b.data_frag(&frag((3, 1, 10, 25), None, &payload, false));
    b.data_frag(&frag((1, 2, 10, 25), None, &[1u8; 20], true));
    let bytes = b.finish();
    let subs = parse_all(&bytes);
    let Submessage::DataFrag(f) = &subs[0] else { panic!() };
    assert_eq!((f.fragment_starting_num, f.fragments_in_submessage), (3, 1));
    assert_eq!((f.fragment_size, f.sample_size), (10, 25));
    assert_eq!(f.fragments(), &payload[..]);
    assert_eq!(f.payload.len(), 8, "the padding stays in payload");
    assert!(!f.key_flag && f.inline_qos.is_none());
    let Submessage::DataFrag(g) = &subs[1] else { panic!() };
    assert_eq!(g.fragments(), &[1u8; 20][..]);
    assert!(g.key_flag);
}

#[test]
fn data_frag_with_inline_qos() {
    let mut qos = Vec::new();
    let mut w = ParameterListWriter::new(&mut qos);
    w.u32(pid::TYPE_MAX_SIZE_SERIALIZED, 99);
    w.finish();
    let mut b = builder();
    b.data_frag(&frag((1, 1, 8, 100), Some(&qos), &[3u8; 8], false));
    let bytes = b.finish();
    let Submessage::DataFrag(f) = &parse_all(&bytes)[0] else { panic!() };
    assert_eq!(f.inline_qos.unwrap().bytes, &qos[..]);
    assert_eq!(f.payload, &[3u8; 8][..]);
}

#[test]
fn heartbeat_and_heartbeat_frag() {
    let hb = Heartbeat {
        reader_id: rid(),
        writer_id: wid(),
        first_sn: SequenceNumber(1),
        last_sn: SequenceNumber(1 << 40),
        count: -5,
        final_flag: true,
        liveliness_flag: true,
    };
    let hf = HeartbeatFrag {
        reader_id: rid(),
        writer_id: wid(),
        writer_sn: SequenceNumber(77),
        last_fragment_num: 12,
        count: 3,
    };
    let mut b = builder();
    b.heartbeat(&hb);
    b.heartbeat(&Heartbeat { final_flag: false, liveliness_flag: false, ..hb });
    b.heartbeat_frag(&hf);
    let bytes = b.finish();
    let subs = parse_all(&bytes);
    assert!(matches!(subs[0], Submessage::Heartbeat(h) if h == hb));
    assert!(matches!(subs[1], Submessage::Heartbeat(h) if !h.final_flag && !h.liveliness_flag));
    assert!(matches!(subs[2], Submessage::HeartbeatFrag(h) if h == hf));
}

#[test]
fn acknack_gap_nack_frag() {
    let mut set = SequenceNumberSet::new(SequenceNumber(10), 40);
    for sn in [10, 11, 41, 49] {
        assert!(set.insert(SequenceNumber(sn)));
    }
    let an = AckNack {
        reader_id: rid(),
        writer_id: wid(),
        reader_sn_state: set,
        count: 9,
        final_flag: true,
    };
    let gap =
        Gap { reader_id: rid(), writer_id: wid(), gap_start: SequenceNumber(5), gap_list: set };
    let mut fs = FragmentNumberSet::new(2, 256);
    fs.insert(2);
    fs.insert(257);
    let nf = NackFrag {
        reader_id: rid(),
        writer_id: wid(),
        writer_sn: SequenceNumber(3),
        fragment_number_state: fs,
        count: 1,
    };
    let empty = AckNack {
        reader_sn_state: SequenceNumberSet::new(SequenceNumber(1), 0),
        final_flag: false,
        ..an
    };
    let mut b = builder();
    b.acknack(&an);
    b.gap(&gap);
    b.nack_frag(&nf);
    b.acknack(&empty);
    let bytes = b.finish();
    let subs = parse_all(&bytes);
    assert!(matches!(subs[0], Submessage::AckNack(a) if a == an));
    assert!(matches!(subs[1], Submessage::Gap(g) if g == gap));
    assert!(matches!(subs[2], Submessage::NackFrag(n) if n == nf));
    assert!(matches!(subs[3], Submessage::AckNack(a) if a == empty));
}

#[test]
fn bitmap_words_follow_num_bits() {
    let an = AckNack {
        reader_id: rid(),
        writer_id: wid(),
        reader_sn_state: SequenceNumberSet::new(SequenceNumber(1), 33),
        count: 1,
        final_flag: false,
    };
    let mut b = builder();
    b.acknack(&an);
    let bytes = b.finish();
    // reader+writer 8, base 8, numBits 4, two words 8, count 4.
    assert_eq!(u16::from_le_bytes([bytes[22], bytes[23]]), 32);
}

#[test]
fn info_submessages_and_pad() {
    let src = InfoSrc {
        version: ProtocolVersion { major: 2, minor: 4 },
        vendor: VendorId::CYCLONE,
        guid_prefix: GuidPrefix([9; 12]),
    };
    let reply = InfoReply {
        unicast: vec![
            Locator::udpv4([10, 0, 0, 1], 7410),
            Locator { kind: 2, port: 1, address: [3; 16] },
        ],
        multicast: vec![Locator::udpv4([239, 255, 0, 1], 7400)],
    };
    let t = Time { seconds: 1_700_000_000, fraction: 0x8000_0000 };
    let mut b = builder();
    b.info_ts(Some(t));
    b.info_ts(None);
    b.info_dst(GuidPrefix([4; 12]));
    b.info_src(&src);
    b.info_reply(&reply);
    b.info_reply(&InfoReply { unicast: reply.unicast.clone(), multicast: vec![] });
    b.pad(6);
    b.pad(0);
    let bytes = b.finish();
    let subs = parse_all(&bytes);
    assert_eq!(subs.len(), 8);
    assert!(matches!(subs[0], Submessage::InfoTs(Some(x)) if x == t));
    assert!(matches!(subs[1], Submessage::InfoTs(None)));
    assert!(matches!(subs[2], Submessage::InfoDst(p) if p == GuidPrefix([4; 12])));
    assert!(matches!(subs[3], Submessage::InfoSrc(s) if s == src));
    assert!(matches!(&subs[4], Submessage::InfoReply(r) if *r == reply));
    assert!(
        matches!(&subs[5], Submessage::InfoReply(r) if r.multicast.is_empty() && r.unicast.len() == 2)
    );
    assert!(matches!(subs[6], Submessage::Pad));
    assert!(matches!(subs[7], Submessage::Pad));
}

#[test]
fn every_submessage_is_padded_and_sized() {
    let mut b = builder();
    b.data(&data(rid(), SequenceNumber(1), None, Some(&[0, 1, 0, 0, 1, 2, 3]), false));
    b.pad(3);
    b.info_dst(GuidPrefix([1; 12]));
    let bytes = b.finish();
    let mut pos = HEADER_LEN;
    let mut n = 0;
    while pos < bytes.len() {
        assert_eq!(bytes[pos + 1] & 1, 1, "E flag");
        let len = u16::from_le_bytes([bytes[pos + 2], bytes[pos + 3]]) as usize;
        assert_eq!(len % 4, 0);
        pos += 4 + len;
        n += 1;
    }
    assert_eq!((pos, n), (bytes.len(), 3));
}

#[test]
fn truncate_undoes_submessages() {
    let mut b = builder();
    b.info_dst(GuidPrefix([1; 12]));
    let mark = b.len();
    b.info_ts(None);
    b.truncate(mark);
    assert_eq!(b.len(), mark);
    b.truncate(0);
    assert!(b.is_empty());
    assert_eq!(b.len(), HEADER_LEN);
}

#[test]
fn reception_report_round_trips_and_other_vendor_ids_stay_opaque() {
    let r = ReceptionReport {
        reader_id: rid(),
        writer_id: wid(),
        count: 7,
        interval_us: 20_000,
        bytes: 12_345_678,
        complete: 11,
        lost: 2,
    };
    let mut b = builder();
    b.reception_report(&r);
    b.vendor(0xfe, 0, &[1, 2, 3, 4]);
    let bytes = b.finish();
    let subs = parse_all(&bytes);
    let Submessage::Vendor { id, flags, body } = subs[0] else { panic!("{subs:?}") };
    assert_eq!((id, body.len()), (id::HALYARD_RECEPTION_REPORT, ReceptionReport::LEN));
    assert_eq!(ReceptionReport::parse(flags, body), Ok(r));
    assert!(matches!(subs[1], Submessage::Vendor { id: 0xfe, body: [1, 2, 3, 4], .. }));
    assert_eq!(
        ReceptionReport::parse(flags, &body[..20]),
        Err(WireError::Truncated),
        "a short report is an error, not a panic"
    );
}

#[test]
fn halyard_nack_round_trips_as_a_vendor_submessage() {
    let mut set = SequenceNumberSet::new(SequenceNumber(1000), 200);
    set.insert(SequenceNumber(1000));
    set.insert(SequenceNumber(1199));
    let an = AckNack {
        reader_id: rid(),
        writer_id: wid(),
        reader_sn_state: set,
        count: 9,
        final_flag: false,
    };
    let mut b = builder();
    b.halyard_nack(&an);
    let bytes = b.finish();
    let subs = parse_all(&bytes);
    let Submessage::Vendor { id, flags, body } = subs[0] else { panic!("{subs:?}") };
    assert_eq!(id, id::HALYARD_NACK);
    assert_eq!(AckNack::parse_halyard_nack(flags, body), Ok(an));
    assert_eq!(
        AckNack::parse_halyard_nack(flags, &body[..10]),
        Err(WireError::Truncated),
        "a short NACK is an error, not a panic"
    );
}
