//! Proves the bit order of SequenceNumberSet and FragmentNumberSet (bit i = word i/32, mask
//! 1 << (31 - i%32)) on the wire and in memory, and their range checks.

use halyard_wire::*;

#[test]
fn sequence_number_set_bit_order() {
    let mut s = SequenceNumberSet::new(SequenceNumber(100), 64);
    assert!(s.insert(SequenceNumber(100)));
    assert!(s.insert(SequenceNumber(131)));
    assert!(s.insert(SequenceNumber(132)));
    assert!(s.insert(SequenceNumber(163)));
    assert_eq!(s.bitmap[0], 0x8000_0001);
    assert_eq!(s.bitmap[1], 0x8000_0001);
    assert!(!s.insert(SequenceNumber(99)));
    assert!(!s.insert(SequenceNumber(164)));
    assert!(s.contains(SequenceNumber(131)) && !s.contains(SequenceNumber(101)));
    let v: Vec<i64> = s.iter().map(|x| x.0).collect();
    assert_eq!(v, vec![100, 131, 132, 163]);
}

#[test]
fn sequence_number_set_wire_order() {
    let mut s = SequenceNumberSet::new(SequenceNumber(1), 3);
    s.insert(SequenceNumber(1));
    s.insert(SequenceNumber(3));
    let h = Header {
        version: ProtocolVersion::V2_5,
        vendor: VendorId::HALYARD,
        guid_prefix: GuidPrefix::UNKNOWN,
    };
    let mut b = MessageBuilder::new(Vec::new(), &h);
    b.acknack(&AckNack {
        reader_id: EntityId::UNKNOWN,
        writer_id: EntityId::UNKNOWN,
        reader_sn_state: s,
        count: 1,
        final_flag: false,
    });
    let bytes = b.finish();
    // header 20, submessage header 4, ids 8, base 8, numBits 4, then the single word (LE).
    assert_eq!(&bytes[40..44], &3u32.to_le_bytes());
    assert_eq!(&bytes[44..48], &0xa000_0000u32.to_le_bytes());
    assert_eq!(bytes.len(), 52);
}

#[test]
fn fragment_number_set_bit_order() {
    let mut s = FragmentNumberSet::new(1, 256);
    for n in [1, 32, 33, 256] {
        assert!(s.insert(n));
    }
    assert!(!s.insert(0) && !s.insert(257));
    assert_eq!(s.bitmap[0], 0x8000_0001);
    assert_eq!(s.bitmap[1], 0x8000_0000);
    assert_eq!(s.bitmap[7], 0x0000_0001);
    assert_eq!(s.iter().collect::<Vec<_>>(), vec![1, 32, 33, 256]);
    assert!(s.contains(256) && !s.contains(2));
}

#[test]
fn num_bits_is_clamped_and_empty_sets_work() {
    let s = SequenceNumberSet::new(SequenceNumber(1), 1000);
    assert_eq!(s.num_bits, 256);
    let mut e = FragmentNumberSet::new(5, 0);
    assert!(!e.insert(5));
    assert_eq!(e.iter().count(), 0);
    let mut top = SequenceNumberSet::new(SequenceNumber(i64::MAX - 1), 8);
    assert!(top.insert(SequenceNumber(i64::MAX)));
    assert!(!top.insert(SequenceNumber(i64::MIN)));
}
