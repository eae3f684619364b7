//! Proves that every supported member kind round-trips through XCDR1 and XCDR2 for final,
//! appendable and mutable structs, and that hand-built big-endian inputs decode.

mod types;

use halyard_cdr::{
    deserialize, deserialize_key, serialize, serialize_key, DataRepresentation, Extensibility,
    Topic, TopicType,
};
use types::*;

const REPS: [DataRepresentation; 2] = [DataRepresentation::Xcdr1, DataRepresentation::Xcdr2];

fn round_trip<T: TopicType + PartialEq + std::fmt::Debug>(v: &T) {
    for rep in REPS {
        let mut buf = vec![0xee; 3]; // serialize appends; existing content is kept
        serialize(v, rep, &mut buf).unwrap();
        assert_eq!(&buf[..3], &[0xee; 3]);
        let body = &buf[3..];
        assert_eq!(body.len() % 4, 0, "{rep:?}: padded to 4");
        assert_eq!(deserialize::<T>(body).unwrap(), *v, "{rep:?}");
    }
}

#[test]
fn rich_final_round_trips() {
    round_trip(&RichFinal::sample());
    round_trip(&RichFinal::default());
}

#[test]
fn rich_appendable_round_trips() {
    round_trip(&RichAppendable::sample());
    round_trip(&RichAppendable::default());
}

#[test]
fn rich_mutable_round_trips() {
    round_trip(&RichMutable::sample());
    round_trip(&RichMutable::default());
}

#[test]
fn key_only_round_trip_defaults_other_members() {
    let v = RichMutable::sample();
    for rep in REPS {
        let mut buf = Vec::new();
        serialize_key(&v, rep, &mut buf).unwrap();
        let k: RichMutable = deserialize_key(&buf).unwrap();
        assert_eq!((k.id, k.name.as_str()), (v.id, "key"));
        assert_eq!(k.pts, vec![]);
    }
}

#[test]
fn topic_metadata() {
    assert_eq!(KeyedSeq::type_name(), "KeyedSeq");
    assert_eq!(RichFinal::type_name(), "RichFinal");
    assert_eq!(RichMutable::extensibility(), Extensibility::Mutable);
    assert!(KeyedSeq::has_key());
    assert_eq!(KeyedSeq::key_max_size(), Some(4));
    assert_eq!(RichFinal::key_max_size(), None);
}

/// A final type for big-endian decoding.
#[derive(Topic, Debug, Clone, PartialEq, Default)]
struct BePoint {
    x: i32,
    y: f64,
}

/// An appendable type for big-endian decoding.
#[derive(Topic, Debug, Clone, PartialEq, Default)]
#[topic(extensibility = "appendable")]
struct BeApp {
    x: i32,
    y: f64,
}

/// A mutable type for big-endian decoding.
#[derive(Topic, Debug, Clone, PartialEq, Default)]
#[topic(extensibility = "mutable")]
struct BeMut {
    #[id(1)]
    x: i32,
    #[id(2)]
    v: Vec<u16>,
}

#[test]
fn decodes_big_endian_xcdr1_final() {
    let bytes = [
        0x00, 0x00, 0x00, 0x00, // CDR_BE
        0x00, 0x00, 0x00, 0x01, // x = 1
        0x00, 0x00, 0x00, 0x00, // pad: f64 aligns to 8 in XCDR1
        0x3f, 0xf8, 0, 0, 0, 0, 0, 0, // y = 1.5
    ];
    assert_eq!(
        deserialize::<BePoint>(&bytes).unwrap(),
        BePoint { x: 1, y: 1.5 }
    );
}

#[test]
fn decodes_big_endian_xcdr2_appendable() {
    let bytes = [
        0x00, 0x08, 0x00, 0x00, // D_CDR2_BE
        0x00, 0x00, 0x00, 0x0c, // DHEADER = 12
        0xff, 0xff, 0xff, 0xfe, // x = -2
        0x3f, 0xf8, 0, 0, 0, 0, 0, 0, // y = 1.5, only 4-aligned in XCDR2
    ];
    assert_eq!(
        deserialize::<BeApp>(&bytes).unwrap(),
        BeApp { x: -2, y: 1.5 }
    );
}

#[test]
fn decodes_big_endian_xcdr2_mutable_any_order_and_length_codes() {
    let bytes = [
        0x00, 0x0a, 0x00, 0x00, // PL_CDR2_BE
        0x00, 0x00, 0x00, 0x1c, // DHEADER = 28
        0x00, 0x00, 0x00, 0x07, // EMHEADER: LC=0 (1 byte), id 7: unknown, skipped
        0x55, 0x00, 0x00, 0x00, // its byte + padding
        0x60, 0x00, 0x00, 0x02, // EMHEADER: LC=6 (4 + NEXTINT*4), id 2
        0x00, 0x00, 0x00, 0x01, // NEXTINT = sequence count 1 → member = 8 bytes
        0x00, 0x09, 0x00, 0x00, // v = [9] + padding inside the member
        0x20, 0x00, 0x00, 0x01, // EMHEADER: LC=2 (4 bytes), id 1
        0x00, 0x00, 0x01, 0x00, // x = 256
    ];
    assert_eq!(
        deserialize::<BeMut>(&bytes).unwrap(),
        BeMut { x: 256, v: vec![9] }
    );
}
