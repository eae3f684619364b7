//! Proves that PID_CONTENT_FILTER_PROPERTY (0x0035) has the layout Fast DDS, RustDDS and
//! Connext use (four CDR strings, then a sequence of strings), round-trips in a SEDP
//! subscription in both byte orders, is not must-understand, and that a malformed one rejects
//! its sample instead of panicking.

use halyard_wire::discovery::*;
use halyard_wire::param::{pid, ParameterListWriter, ValueReader};
use halyard_wire::qos::EndpointQos;
use halyard_wire::*;

fn prefix() -> GuidPrefix {
    GuidPrefix([7; 12])
}

fn property() -> ContentFilterProperty {
    ContentFilterProperty {
        content_filtered_topic_name: "Square_filtered".into(),
        related_topic_name: "Square".into(),
        filter_class_name: DDSSQL.into(),
        filter_expression: "x > %0 AND color = %1".into(),
        expression_parameters: vec!["100".into(), "'BLUE'".into()],
    }
}

/// The value as the other implementations write it, by hand: u32 length (NUL included),
/// bytes, NUL, padding to 4, for each string; the parameter count before the parameters.
fn hand_made(big_endian: bool) -> Vec<u8> {
    let u32b = |v: u32| if big_endian { v.to_be_bytes() } else { v.to_le_bytes() };
    let mut v = Vec::new();
    let string = |v: &mut Vec<u8>, s: &str| {
        v.extend_from_slice(&u32b(s.len() as u32 + 1));
        v.extend_from_slice(s.as_bytes());
        v.push(0);
        while !v.len().is_multiple_of(4) {
            v.push(0);
        }
    };
    for s in ["Square_filtered", "Square", "DDSSQL", "x > %0 AND color = %1"] {
        string(&mut v, s);
    }
    v.extend_from_slice(&u32b(2));
    string(&mut v, "100");
    string(&mut v, "'BLUE'");
    v
}

fn reader(content_filter: Option<ContentFilterProperty>) -> EndpointData {
    EndpointData {
        guid: Guid::new(prefix(), EntityId::new(3, EntityId::KIND_READER_WITH_KEY)),
        participant_guid: Some(Guid::new(prefix(), EntityId::PARTICIPANT)),
        topic_name: "Square".into(),
        type_name: "ShapeType".into(),
        qos: EndpointQos::reader_default(),
        unicast_locators: vec![],
        multicast_locators: vec![],
        expects_inline_qos: false,
        protocol_version: Some(ProtocolVersion::V2_5),
        vendor_id: Some(VendorId::HALYARD),
        type_max_size_serialized: None,
        entity_name: None,
        content_filter,
        group_entity: None,
        security_info: None,
        type_information: None,
    }
}

/// A PL_CDR_LE subscription with the required parameters and a PID_CONTENT_FILTER_PROPERTY
/// whose value is `value`.
fn with_filter_value(value: &[u8]) -> Vec<u8> {
    let mut v = vec![0, 3, 0, 0];
    let mut w = ParameterListWriter::new(&mut v);
    w.guid(pid::ENDPOINT_GUID, Guid::new(prefix(), EntityId::new(1, EntityId::KIND_READER_NO_KEY)));
    w.string(pid::TOPIC_NAME, "t");
    w.string(pid::TYPE_NAME, "T");
    w.raw(pid::CONTENT_FILTER_PROPERTY, value);
    w.finish();
    v
}

#[test]
fn the_value_has_the_layout_of_the_other_implementations() {
    let p = property();
    let mut mine = Vec::new();
    p.emit(&mut mine, 0);
    assert_eq!(mine, hand_made(false));
    assert_eq!(p.encoded_len(), mine.len());
    for be in [false, true] {
        let bytes = hand_made(be);
        let got = ContentFilterProperty::parse(&mut ValueReader::new(&bytes, !be));
        assert_eq!(got, Ok(property()), "big endian: {be}");
    }
}

#[test]
fn a_subscription_round_trips_with_its_filter() {
    for cf in [Some(property()), None, Some(ContentFilterProperty::default())] {
        let e = reader(cf.clone());
        let mut v = Vec::new();
        e.emit(&mut v);
        let back = EndpointData::parse(&v).expect("parses");
        assert_eq!(back, e);
        assert_eq!(back.content_filter, cf);
    }
    // In a big-endian list too (Connext, for one, may send PL_CDR_BE).
    let mut v = vec![0, 2, 0, 0];
    let g = Guid::new(prefix(), EntityId::new(1, EntityId::KIND_READER_NO_KEY));
    let mut param = |id: u16, value: &[u8]| {
        v.extend_from_slice(&id.to_be_bytes());
        v.extend_from_slice(&(value.len() as u16).to_be_bytes());
        v.extend_from_slice(value);
    };
    param(pid::ENDPOINT_GUID, &g.to_bytes());
    param(pid::TOPIC_NAME, &[0, 0, 0, 2, b't', 0, 0, 0]);
    param(pid::TYPE_NAME, &[0, 0, 0, 2, b'T', 0, 0, 0]);
    param(pid::CONTENT_FILTER_PROPERTY, &hand_made(true));
    param(pid::SENTINEL, &[]);
    assert_eq!(EndpointData::parse(&v).unwrap().content_filter, Some(property()));
}

#[test]
fn it_is_not_must_understand() {
    assert_eq!(pid::CONTENT_FILTER_PROPERTY, 0x0035);
    assert_eq!(pid::CONTENT_FILTER_PROPERTY & pid::MUST_UNDERSTAND_FLAG, 0);
}

#[test]
fn malformed_filters_reject_the_sample() {
    let good = hand_made(false);
    assert!(EndpointData::parse(&with_filter_value(&good)).is_ok());
    // Cut anywhere: truncated, never a panic.
    for cut in (0..good.len()).step_by(4) {
        let r = EndpointData::parse(&with_filter_value(&good[..cut]));
        assert!(r.is_err(), "cut at {cut}: {r:?}");
    }
    // 101 parameters.
    let mut v = Vec::new();
    let mut p = property();
    p.expression_parameters = vec!["1".into(); MAX_EXPRESSION_PARAMETERS + 1];
    p.emit(&mut v, 0);
    assert!(matches!(EndpointData::parse(&with_filter_value(&v)), Err(WireError::InvalidField(_))));
    // A name longer than string<256>.
    let mut v = Vec::new();
    let mut p = property();
    p.related_topic_name = "r".repeat(MAX_FILTER_NAME_LEN + 1);
    p.emit(&mut v, 0);
    assert!(matches!(EndpointData::parse(&with_filter_value(&v)), Err(WireError::InvalidField(_))));
    // Not UTF-8.
    let mut v = good.clone();
    v[4] = 0xff;
    assert!(matches!(EndpointData::parse(&with_filter_value(&v)), Err(WireError::InvalidField(_))));
    // More parameters counted than the value holds.
    let mut v = good[..72].to_vec();
    v.extend_from_slice(&50u32.to_le_bytes());
    assert_eq!(EndpointData::parse(&with_filter_value(&v)), Err(WireError::Truncated));
}

#[test]
fn limits_hold_at_their_bounds() {
    let mut p = property();
    p.expression_parameters = (0..MAX_EXPRESSION_PARAMETERS).map(|i| i.to_string()).collect();
    p.content_filtered_topic_name = "c".repeat(MAX_FILTER_NAME_LEN);
    let e = reader(Some(p));
    let mut v = Vec::new();
    e.emit(&mut v);
    assert_eq!(EndpointData::parse(&v).unwrap(), e);
    // An expression too long for a parameter is not announced at all.
    let mut p = property();
    p.filter_expression = "x".repeat(70_000);
    let mut v = Vec::new();
    reader(Some(p)).emit(&mut v);
    assert_eq!(EndpointData::parse(&v).unwrap().content_filter, None);
}

#[test]
fn whatever_parses_emits_and_parses_back_the_same() {
    // The fuzz targets' invariant (fuzz/src/wire_checks.rs), over damaged filter values: every
    // byte set to a few values, and every length.
    let good = hand_made(false);
    for at in 0..good.len() {
        for b in [0x00, 0x01, 0x03, 0x7f, 0x80, 0xff] {
            let mut v = good.clone();
            v[at] = b;
            for len in [v.len(), at + 1] {
                let Ok(e) = EndpointData::parse(&with_filter_value(&v[..len])) else {
                    continue;
                };
                let mut out = Vec::new();
                e.emit(&mut out);
                assert_eq!(EndpointData::parse(&out).as_ref(), Ok(&e), "byte {at} = {b:#x}");
            }
        }
    }
}
