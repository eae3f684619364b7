//! Proves the exact wire bytes (written by hand from XTypes 1.3 §7.4) of a final XCDR1 struct,
//! an appendable XCDR2 struct with its DHEADER and mutable XCDR1/XCDR2 structs.

mod types;

use halyard_cdr::{deserialize, serialize, DataRepresentation, Topic};
use types::KeyedSeq;

fn encode<T: halyard_cdr::TopicType>(v: &T, rep: DataRepresentation) -> Vec<u8> {
    let mut out = Vec::new();
    serialize(v, rep, &mut out).unwrap();
    out
}

#[test]
fn keyed_seq_xcdr1_le() {
    let v = KeyedSeq {
        seq: 1,
        keyval: 2,
        baggage: vec![0xaa, 0xbb, 0xcc],
    };
    let expected = [
        0x00, 0x01, 0x00, 0x01, // CDR_LE, options: 1 byte of padding at the end
        0x01, 0x00, 0x00, 0x00, // seq
        0x02, 0x00, 0x00, 0x00, // keyval
        0x03, 0x00, 0x00, 0x00, // baggage length
        0xaa, 0xbb, 0xcc, // baggage
        0x00, // padding to a multiple of 4
    ];
    let bytes = encode(&v, DataRepresentation::Xcdr1);
    assert_eq!(bytes, expected);
    assert_eq!(deserialize::<KeyedSeq>(&bytes).unwrap(), v);
}

/// Appendable: XCDR2 prefixes a DHEADER.
#[derive(Topic, Debug, Clone, PartialEq, Default)]
#[topic(extensibility = "appendable")]
struct App {
    a: u8,
    b: u64,
    s: String,
}

#[test]
fn appendable_xcdr2_le() {
    let v = App {
        a: 7,
        b: 0x0102_0304_0506_0708,
        s: "hi".into(),
    };
    let expected = [
        0x00, 0x09, 0x00, 0x01, // D_CDR2_LE, 1 byte of end padding
        0x13, 0x00, 0x00, 0x00, // DHEADER = 19 bytes follow
        0x07, 0x00, 0x00, 0x00, // a, then padding: u64 aligns to 4 in XCDR2
        0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, // b
        0x03, 0x00, 0x00, 0x00, b'h', b'i', 0x00, // s: length incl. NUL, chars, NUL
        0x00, // end padding
    ];
    let bytes = encode(&v, DataRepresentation::Xcdr2);
    assert_eq!(bytes, expected);
    assert_eq!(deserialize::<App>(&bytes).unwrap(), v);
}

/// Mutable: XCDR2 DHEADER + EMHEADERs, XCDR1 PL_CDR.
#[derive(Topic, Debug, Clone, PartialEq, Default)]
#[topic(extensibility = "mutable")]
struct Mut {
    #[key]
    #[id(1)]
    x: u32,
    #[id(2)]
    name: String,
    #[id(5)]
    o: Option<u16>,
}

fn mut_sample() -> Mut {
    Mut {
        x: 0x1122_3344,
        name: "ab".into(),
        o: None,
    }
}

#[test]
fn mutable_xcdr2_le() {
    let expected = [
        0x00, 0x0b, 0x00, 0x01, // PL_CDR2_LE, 1 byte of end padding
        0x17, 0x00, 0x00, 0x00, // DHEADER = 23
        0x01, 0x00, 0x00, 0xa0, // EMHEADER: M (key) | LC=2 (4 bytes) | id 1
        0x44, 0x33, 0x22, 0x11, // x
        0x02, 0x00, 0x00, 0x40, // EMHEADER: LC=4 (NEXTINT gives the size) | id 2
        0x07, 0x00, 0x00, 0x00, // NEXTINT = 7
        0x03, 0x00, 0x00, 0x00, b'a', b'b', 0x00, // name
        0x00, // end padding (absent optional o is omitted)
    ];
    let bytes = encode(&mut_sample(), DataRepresentation::Xcdr2);
    assert_eq!(bytes, expected);
    assert_eq!(deserialize::<Mut>(&bytes).unwrap(), mut_sample());
}

#[test]
fn mutable_xcdr1_pl_cdr_le() {
    let expected = [
        0x00, 0x03, 0x00, 0x00, // PL_CDR_LE
        0x01, 0x40, 0x04, 0x00, // PID 1 | must-understand (key), length 4
        0x44, 0x33, 0x22, 0x11, // x
        0x02, 0x00, 0x07, 0x00, // PID 2, length 7
        0x03, 0x00, 0x00, 0x00, b'a', b'b', 0x00, // name
        0x00, // alignment of the next parameter header
        0x02, 0x3f, 0x00, 0x00, // PID_LIST_END
    ];
    let bytes = encode(&mut_sample(), DataRepresentation::Xcdr1);
    assert_eq!(bytes, expected);
    assert_eq!(deserialize::<Mut>(&bytes).unwrap(), mut_sample());
}

/// Optional members of a final struct.
#[derive(Topic, Debug, Clone, PartialEq, Default)]
struct Opt {
    a: Option<u16>,
    b: Option<u16>,
}

#[test]
fn optionals_in_final_struct() {
    let v = Opt {
        a: Some(0x0102),
        b: None,
    };
    let xcdr2 = [
        0x00, 0x07, 0x00, 0x03, // CDR2_LE, 3 bytes of end padding
        0x01, 0x00, 0x02, 0x01, // a present, pad, a
        0x00, 0x00, 0x00, 0x00, // b absent, end padding
    ];
    let xcdr1 = [
        0x00, 0x01, 0x00, 0x00, // CDR_LE
        0x00, 0x00, 0x02, 0x00, // parameter header: id 0, length 2
        0x02, 0x01, 0x00, 0x00, // a, alignment of the next header
        0x01, 0x00, 0x00, 0x00, // parameter header: id 1, length 0 = absent
    ];
    assert_eq!(encode(&v, DataRepresentation::Xcdr2), xcdr2);
    assert_eq!(encode(&v, DataRepresentation::Xcdr1), xcdr1);
    assert_eq!(deserialize::<Opt>(&xcdr1).unwrap(), v);
    assert_eq!(deserialize::<Opt>(&xcdr2).unwrap(), v);
}

/// A member longer than 65535 bytes switches XCDR1 PL_CDR to the extended header.
#[derive(Topic, Debug, Clone, PartialEq, Default)]
#[topic(extensibility = "mutable")]
struct Big {
    data: Vec<u8>,
    tail: u32,
}

#[test]
fn large_pl_cdr_member_uses_extended_header() {
    let v = Big {
        data: vec![5; 70_000],
        tail: 9,
    };
    let bytes = encode(&v, DataRepresentation::Xcdr1);
    let header = [
        0x01, 0x3f, 0x08, 0x00, // PID_EXTENDED, length 8
        0x00, 0x00, 0x00, 0x00, // member id 0
        0x74, 0x11, 0x01, 0x00, // member length 70004
    ];
    assert_eq!(&bytes[4..16], &header);
    assert_eq!(deserialize::<Big>(&bytes).unwrap(), v);
}
