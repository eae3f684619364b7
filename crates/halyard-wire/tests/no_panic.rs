//! Proves that ~100k random and mutated messages and discovery payloads never make the parsers
//! panic (a deterministic xorshift PRNG stands in for a fuzzer).

use halyard_wire::discovery::{parse_key_guid, EndpointData, ParticipantData, SecurityInfo};
use halyard_wire::param::{ParameterList, ValueReader};
use halyard_wire::qos::EndpointQos;
use halyard_wire::*;

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn seed_message() -> Vec<u8> {
    let h = Header {
        version: ProtocolVersion::V2_5,
        vendor: VendorId::HALYARD,
        guid_prefix: GuidPrefix([3; 12]),
    };
    let mut b = MessageBuilder::new(Vec::new(), &h);
    let (r, w) = (EntityId::new(1, 7), EntityId::new(2, 2));
    b.info_ts(Some(Time { seconds: 5, fraction: 6 }));
    b.info_dst(GuidPrefix([4; 12]));
    let key_hash =
        [0x70, 0, 16, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 1, 0, 0, 0];
    b.data(&Data {
        reader_id: r,
        writer_id: w,
        writer_sn: SequenceNumber(3),
        inline_qos: Some(ParameterList::new(&key_hash, true)),
        payload: Some(&[0, 1, 0, 0, 1, 2, 3, 4]),
        key_flag: false,
        non_standard_flag: false,
    });
    b.data_frag(&DataFrag {
        reader_id: r,
        writer_id: w,
        writer_sn: SequenceNumber(4),
        fragment_starting_num: 1,
        fragments_in_submessage: 2,
        fragment_size: 4,
        sample_size: 20,
        inline_qos: None,
        payload: &[1; 8],
        key_flag: false,
    });
    let set = SequenceNumberSet::new(SequenceNumber(1), 70);
    b.acknack(&AckNack {
        reader_id: r,
        writer_id: w,
        reader_sn_state: set,
        count: 1,
        final_flag: false,
    });
    b.gap(&Gap { reader_id: r, writer_id: w, gap_start: SequenceNumber(1), gap_list: set });
    b.heartbeat(&Heartbeat {
        reader_id: r,
        writer_id: w,
        first_sn: SequenceNumber(1),
        last_sn: SequenceNumber(2),
        count: 1,
        final_flag: false,
        liveliness_flag: false,
    });
    let fs = FragmentNumberSet::new(1, 40);
    b.nack_frag(&NackFrag {
        reader_id: r,
        writer_id: w,
        writer_sn: SequenceNumber(3),
        fragment_number_state: fs,
        count: 1,
    });
    b.heartbeat_frag(&HeartbeatFrag {
        reader_id: r,
        writer_id: w,
        writer_sn: SequenceNumber(3),
        last_fragment_num: 2,
        count: 1,
    });
    b.info_reply(&InfoReply {
        unicast: vec![Locator::udpv4([1, 2, 3, 4], 5)],
        multicast: vec![Locator::udpv4([1, 2, 3, 4], 5)],
    });
    b.info_src(&InfoSrc {
        version: ProtocolVersion::V2_5,
        vendor: VendorId::CYCLONE,
        guid_prefix: GuidPrefix([1; 12]),
    });
    b.pad(8);
    b.finish()
}

fn seed_endpoint() -> Vec<u8> {
    let mut qos = EndpointQos::writer_default();
    qos.partition = vec!["a".into(), "bc".into()];
    qos.user_data = vec![1, 2, 3];
    qos.data_representation = vec![0, 2];
    qos.deadline = halyard_wire::Duration::ZERO;
    let e = EndpointData {
        guid: Guid::new(GuidPrefix([1; 12]), EntityId::new(5, 2)),
        participant_guid: Some(Guid::new(GuidPrefix([1; 12]), EntityId::PARTICIPANT)),
        topic_name: "t".into(),
        type_name: "T".into(),
        qos,
        unicast_locators: vec![Locator::udpv4([1, 2, 3, 4], 5)],
        multicast_locators: vec![],
        expects_inline_qos: true,
        protocol_version: Some(ProtocolVersion::V2_5),
        vendor_id: Some(VendorId::HALYARD),
        type_max_size_serialized: Some(4),
        entity_name: Some("n".into()),
        content_filter: None,
        group_entity: None,
        security_info: Some(SecurityInfo { attributes: 0x8000_0001, plugin_attributes: 0 }),
        type_information: None,
    };
    let mut v = Vec::new();
    e.emit(&mut v);
    v
}

/// Walks everything reachable from a message, as a receiver would.
fn exercise_message(bytes: &[u8]) {
    let Ok(m) = Message::parse(bytes) else { return };
    for s in m.submessages() {
        match s {
            Ok(Submessage::Data(d)) => {
                if let Some(q) = d.inline_qos {
                    let _ = (q.key_hash(), q.status_info(), q.iter().count());
                }
                if let Some(p) = d.payload {
                    exercise_payload(p);
                }
            }
            Ok(Submessage::AckNack(a)) => assert!(a.reader_sn_state.iter().count() <= 256),
            Ok(_) => {}
            Err(_) => {}
        }
    }
}

fn exercise_payload(p: &[u8]) {
    let _ = ParticipantData::parse(p);
    let _ = EndpointData::parse(p);
    let _ = parse_key_guid(p);
    for le in [false, true] {
        let pl = ParameterList::new(p, le);
        let _ = pl.encoded_len();
        for param in pl.iter().flatten() {
            let mut r = ValueReader::new(param.value, le);
            let _ = (r.string(), r.octets(), r.locator(), r.u16(), r.guid(), r.duration());
        }
    }
}

fn mutate(rng: &mut XorShift, seed: &[u8]) -> Vec<u8> {
    let mut v = seed.to_vec();
    for _ in 0..1 + rng.below(8) {
        if v.is_empty() {
            break;
        }
        let i = rng.below(v.len());
        match rng.below(4) {
            0 => v[i] = rng.next() as u8,
            1 => v[i] ^= 1 << rng.below(8),
            2 => v.truncate(i),
            _ => v[i] = [0, 0xff, 0x7f, 0x80][rng.below(4)],
        }
    }
    v
}

#[test]
fn random_and_mutated_inputs_never_panic() {
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    let (msg, ep) = (seed_message(), seed_endpoint());
    assert!(Message::parse(&msg).unwrap().submessages().all(|s| s.is_ok()));
    assert!(EndpointData::parse(&ep).is_ok());
    for i in 0..100_000 {
        match i % 4 {
            0 => {
                let mut v = b"RTPS\x02\x05\x01\x10".to_vec();
                v.extend((0..rng.below(200)).map(|_| rng.next() as u8));
                exercise_message(&v);
            }
            1 => exercise_message(&mutate(&mut rng, &msg)),
            2 => exercise_payload(&mutate(&mut rng, &ep)),
            _ => {
                let mut v = vec![0, [2, 3, 0, 1][rng.below(4)], 0, 0];
                v.extend((0..rng.below(120)).map(|_| rng.next() as u8));
                exercise_payload(&v);
            }
        }
    }
}
