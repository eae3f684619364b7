//! Proves that SPDP/SEDP discovery data round-trips through PL_CDR (with non-default QoS), that
//! big-endian PL_CDR parses, and that must-understand, missing and invalid parameters are rejected.

use halyard_wire::discovery::*;
use halyard_wire::param::{pid, ParameterList, ParameterListWriter};
use halyard_wire::qos::*;
use halyard_wire::*;

fn prefix() -> GuidPrefix {
    GuidPrefix([0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b])
}

fn participant() -> ParticipantData {
    ParticipantData {
        guid: Guid::new(prefix(), EntityId::PARTICIPANT),
        protocol_version: ProtocolVersion { major: 2, minor: 4 },
        vendor_id: VendorId::HALYARD,
        domain_id: Some(3),
        domain_tag: "tag".into(),
        expects_inline_qos: true,
        metatraffic_unicast: vec![Locator::udpv4([10, 0, 0, 1], 7410)],
        metatraffic_multicast: vec![Locator::udpv4([239, 255, 0, 1], 7400)],
        default_unicast: vec![
            Locator::udpv4([10, 0, 0, 1], 7411),
            Locator { kind: 2, port: 7411, address: [0xfe; 16] },
        ],
        default_multicast: vec![],
        builtin_endpoints: builtin_endpoint::PARTICIPANT_ANNOUNCER
            | builtin_endpoint::TOPICS_DETECTOR,
        lease_duration: Duration { seconds: 20, fraction: 5 },
        manual_liveliness_count: 4,
        user_data: vec![1, 2, 3, 4, 5],
        entity_name: Some("héllo".into()),
        identity_token: Some(EncodedToken {
            little_endian: true,
            // class_id "DDS:Auth:PKI-DH:1.0", no properties, no binary properties.
            cdr: [&[20, 0, 0, 0][..], b"DDS:Auth:PKI-DH:1.0\0", &[0; 8]].concat(),
        }),
        permissions_token: Some(EncodedToken {
            little_endian: true,
            cdr: vec![1, 0, 0, 0, 0, 0, 0, 0],
        }),
        security_info: Some(SecurityInfo {
            attributes: 0x8000_0007,
            plugin_attributes: 0x8000_0007,
        }),
        properties: vec![
            ("__Pid".into(), "4242".into()),
            ("__Hostname".into(), "h".into()),
            ("__ProcessName".into(), String::new()),
        ],
    }
}

fn qos_all_changed() -> EndpointQos {
    let d = Duration { seconds: 1, fraction: 2 };
    EndpointQos {
        durability: DurabilityKind::TransientLocal,
        durability_service: DurabilityService {
            service_cleanup_delay: d,
            history: History::KeepAll,
            limits: ResourceLimits {
                max_samples: 1,
                max_instances: 2,
                max_samples_per_instance: 3,
            },
        },
        deadline: d,
        latency_budget: d,
        liveliness: Liveliness { kind: LivelinessKind::ManualByTopic, lease_duration: d },
        reliability: Reliability {
            kind: ReliabilityKind::BestEffort,
            max_blocking_time: Duration::ZERO,
        },
        destination_order: DestinationOrderKind::BySourceTimestamp,
        history: History::KeepLast(7),
        resource_limits: ResourceLimits {
            max_samples: 10,
            max_instances: 20,
            max_samples_per_instance: 30,
        },
        lifespan: d,
        ownership: OwnershipKind::Exclusive,
        ownership_strength: -9,
        presentation: Presentation {
            access_scope: PresentationAccessScope::Group,
            coherent_access: true,
            ordered_access: true,
        },
        partition: vec!["p1".into(), "".into(), "longer partition".into()],
        time_based_filter: d,
        user_data: vec![9],
        topic_data: vec![8, 8],
        group_data: vec![7, 7, 7],
        transport_priority: 5,
        data_representation: vec![2, 0, 1],
        // Local policies: not in discovery, so they decode as their defaults.
        writer_data_lifecycle: Default::default(),
        reader_data_lifecycle: Default::default(),
    }
}

fn endpoint(kind: u8, qos: EndpointQos) -> EndpointData {
    EndpointData {
        guid: Guid::new(prefix(), EntityId::new(0x123, kind)),
        participant_guid: Some(Guid::new(prefix(), EntityId::PARTICIPANT)),
        topic_name: "Square".into(),
        type_name: "ShapeType".into(),
        qos,
        unicast_locators: vec![Locator::udpv4([1, 2, 3, 4], 5000)],
        multicast_locators: vec![Locator::udpv4([239, 1, 2, 3], 5001)],
        expects_inline_qos: true,
        protocol_version: Some(ProtocolVersion::V2_5),
        vendor_id: Some(VendorId::HALYARD),
        type_max_size_serialized: Some(1234),
        entity_name: Some("writer".into()),
        content_filter: None,
        group_entity: Some(EntityId::new(0x7, 0x08)),
        security_info: Some(SecurityInfo {
            attributes: 0x8000_0003,
            plugin_attributes: 0x8000_0001,
        }),
        type_information: Some(TypeInformationBytes { little_endian: true, xcdr2: vec![7; 12] }),
    }
}

fn emit_ep(e: &EndpointData) -> Vec<u8> {
    let mut v = Vec::new();
    e.emit(&mut v);
    v
}

fn ids(payload: &[u8]) -> Vec<u16> {
    ParameterList::new(&payload[4..], true).iter().map(|p| p.unwrap().id).collect()
}

#[test]
fn participant_round_trip() {
    let p = participant();
    let mut v = vec![0xee];
    p.emit(&mut v);
    assert_eq!(&v[1..5], &[0, 3, 0, 0]);
    assert_eq!(ParticipantData::parse(&v[1..]).unwrap(), p);
}

#[test]
fn participant_defaults() {
    let mut v = vec![0, 3, 0, 0];
    let mut w = ParameterListWriter::new(&mut v);
    w.guid(pid::PARTICIPANT_GUID, Guid::new(prefix(), EntityId::PARTICIPANT));
    w.finish();
    let p = ParticipantData::parse(&v).unwrap();
    assert_eq!(p.lease_duration, Duration { seconds: 100, fraction: 0 });
    assert_eq!((p.domain_id, p.domain_tag.as_str(), p.expects_inline_qos), (None, "", false));
}

#[test]
fn endpoint_round_trips_with_non_default_qos() {
    for kind in [EntityId::KIND_WRITER_WITH_KEY, EntityId::KIND_READER_NO_KEY] {
        let e = endpoint(kind, qos_all_changed());
        assert_eq!(EndpointData::parse(&emit_ep(&e)).unwrap(), e);
    }
}

#[test]
fn endpoint_default_qos_is_mostly_omitted() {
    let mut e = endpoint(EntityId::KIND_READER_WITH_KEY, EndpointQos::reader_default());
    e.participant_guid = None;
    e.protocol_version = None;
    e.vendor_id = None;
    e.entity_name = None;
    e.type_max_size_serialized = None;
    let v = emit_ep(&e);
    let got = ids(&v);
    for id in [
        pid::RELIABILITY,
        pid::DURABILITY,
        pid::HISTORY,
        pid::TOPIC_NAME,
        pid::TYPE_NAME,
        pid::ENDPOINT_GUID,
    ] {
        assert!(got.contains(&id), "{id:#x}");
    }
    for id in [
        pid::DEADLINE,
        pid::PARTITION,
        pid::LIVELINESS,
        pid::PARTICIPANT_GUID,
        pid::VENDORID,
        pid::ENTITY_NAME,
    ] {
        assert!(!got.contains(&id), "{id:#x}");
    }
    assert_eq!(EndpointData::parse(&v).unwrap(), e);
    // A writer's default reliability (RELIABLE) is the default when absent.
    let w = endpoint(EntityId::KIND_WRITER_NO_KEY, EndpointQos::writer_default());
    assert_eq!(EndpointData::parse(&emit_ep(&w)).unwrap().qos, EndpointQos::writer_default());
}

/// Builds a PL_CDR_LE endpoint payload with the required parameters and `extra`.
fn with_extra(extra: impl FnOnce(&mut ParameterListWriter<'_>)) -> Vec<u8> {
    let mut v = vec![0, 3, 0, 0];
    let mut w = ParameterListWriter::new(&mut v);
    extra(&mut w);
    w.string(pid::TOPIC_NAME, "t");
    w.string(pid::TYPE_NAME, "T");
    w.guid(
        pid::ENDPOINT_GUID,
        Guid::new(prefix(), EntityId::new(1, EntityId::KIND_READER_WITH_KEY)),
    );
    w.finish();
    v
}

#[test]
fn must_understand_rejection() {
    let v = with_extra(|w| w.u32(0x4099, 1));
    assert_eq!(EndpointData::parse(&v), Err(WireError::MustUnderstand(0x4099)));
    let v = with_extra(|w| w.u32(0xc099, 1)); // vendor-specific: skipped
    assert!(EndpointData::parse(&v).is_ok());
    let v = with_extra(|w| w.u32(0x0099, 1)); // unknown, not must-understand: skipped
    assert!(EndpointData::parse(&v).is_ok());
    let v = with_extra(|w| w.string(pid::DOMAIN_TAG, "x")); // understood only by SPDP
    assert_eq!(EndpointData::parse(&v), Err(WireError::MustUnderstand(pid::DOMAIN_TAG)));
    let mut p = vec![0, 3, 0, 0];
    let mut w = ParameterListWriter::new(&mut p);
    w.guid(pid::PARTICIPANT_GUID, Guid::default());
    w.raw(0x4077, &[]);
    w.finish();
    assert_eq!(ParticipantData::parse(&p), Err(WireError::MustUnderstand(0x4077)));
}

#[test]
fn missing_required_parameters() {
    let mut v = vec![0, 3, 0, 0];
    ParameterListWriter::new(&mut v).finish();
    assert_eq!(ParticipantData::parse(&v), Err(WireError::MissingParameter(pid::PARTICIPANT_GUID)));
    assert_eq!(EndpointData::parse(&v), Err(WireError::MissingParameter(pid::ENDPOINT_GUID)));
    let mut v = vec![0, 3, 0, 0];
    let mut w = ParameterListWriter::new(&mut v);
    w.guid(pid::ENDPOINT_GUID, Guid::default());
    w.string(pid::TOPIC_NAME, "t");
    w.finish();
    assert_eq!(EndpointData::parse(&v), Err(WireError::MissingParameter(pid::TYPE_NAME)));
}

#[test]
fn invalid_values_are_rejected() {
    let v = with_extra(|w| w.u32(pid::DURABILITY, 9));
    assert!(matches!(EndpointData::parse(&v), Err(WireError::InvalidField(_))));
    let v = with_extra(|w| w.raw(pid::DURABILITY, &[]));
    assert_eq!(EndpointData::parse(&v), Err(WireError::Truncated));
    let v = with_extra(|w| w.u32(pid::PARTITION, 65));
    assert!(matches!(EndpointData::parse(&v), Err(WireError::InvalidField(_))));
    let v = with_extra(|w| {
        w.with(pid::DATA_REPRESENTATION, |b| b.extend_from_slice(&u32::MAX.to_le_bytes()))
    });
    assert_eq!(EndpointData::parse(&v), Err(WireError::Truncated));
    let v = with_extra(|w| w.octets(pid::ENTITY_NAME, &[4, 0, 0, 0, 0xff, 0xfe, 0, 0]));
    assert!(matches!(EndpointData::parse(&v), Err(WireError::InvalidField(_))));
    assert_eq!(EndpointData::parse(&[0, 9, 0, 0, 1, 0, 0, 0]), Err(WireError::BadEncapsulation(9)));
    assert_eq!(EndpointData::parse(&[0, 3]), Err(WireError::Truncated));
    let mut v = with_extra(|_| {});
    v.truncate(v.len() - 4);
    assert_eq!(EndpointData::parse(&v), Err(WireError::BadParameterList));
}

#[test]
fn legacy_reliability_values() {
    for (wire, kind) in [
        (0u32, ReliabilityKind::BestEffort),
        (3, ReliabilityKind::Reliable),
        (1, ReliabilityKind::BestEffort),
        (2, ReliabilityKind::Reliable),
    ] {
        let v = with_extra(|w| {
            w.with(pid::RELIABILITY, |b| {
                b.extend_from_slice(&wire.to_le_bytes());
                b.extend_from_slice(&[0; 8]);
            })
        });
        assert_eq!(EndpointData::parse(&v).unwrap().qos.reliability.kind, kind);
    }
}

#[test]
fn locator_lists_are_capped() {
    let v = with_extra(|w| {
        (0..40).for_each(|i| w.locator(pid::UNICAST_LOCATOR, &Locator::udpv4([1, 1, 1, i], 1)))
    });
    assert_eq!(EndpointData::parse(&v).unwrap().unicast_locators.len(), MAX_LOCATORS);
}

#[test]
fn big_endian_participant() {
    let mut v = vec![0, 2, 0, 0];
    v.extend_from_slice(&[0x00, 0x50, 0x00, 0x10]);
    v.extend_from_slice(&Guid::new(prefix(), EntityId::PARTICIPANT).to_bytes());
    v.extend_from_slice(&[0x00, 0x15, 0x00, 0x04, 2, 1, 0, 0]);
    v.extend_from_slice(&[0x00, 0x16, 0x00, 0x04, 1, 0x10, 0, 0]);
    v.extend_from_slice(&[0x00, 0x02, 0x00, 0x08, 0, 0, 0, 30, 0x80, 0, 0, 0]);
    v.extend_from_slice(&[0x00, 0x58, 0x00, 0x04, 0, 0, 0x0c, 0x3f]);
    v.extend_from_slice(&[0x00, 0x32, 0x00, 0x18, 0, 0, 0, 1, 0, 0, 0x1c, 0xf2]);
    v.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 1, 1, 1]);
    v.extend_from_slice(&[0x40, 0x14, 0x00, 0x08, 0, 0, 0, 3, b'a', b'b', 0, 0]);
    v.extend_from_slice(&[0x80, 0x07, 0x00, 0x04, 9, 9, 9, 9]);
    v.extend_from_slice(&[0x00, 0x01, 0x00, 0x00]);
    let p = ParticipantData::parse(&v).unwrap();
    assert_eq!(p.guid, Guid::new(prefix(), EntityId::PARTICIPANT));
    assert_eq!(
        (p.protocol_version, p.vendor_id),
        (ProtocolVersion { major: 2, minor: 1 }, VendorId::CYCLONE)
    );
    assert_eq!(p.lease_duration, Duration { seconds: 30, fraction: 0x8000_0000 });
    assert_eq!(p.builtin_endpoints, 0x0c3f);
    assert_eq!(p.metatraffic_unicast, vec![Locator::udpv4([10, 1, 1, 1], 7410)]);
    assert_eq!(p.domain_tag, "ab");
}

#[test]
fn key_guid() {
    let g = Guid::new(prefix(), EntityId::new(4, 2));
    let e = endpoint(EntityId::KIND_WRITER_WITH_KEY, EndpointQos::writer_default());
    assert_eq!(parse_key_guid(&emit_ep(&e)).unwrap(), Some(e.guid));
    let mut v = vec![0, 3, 0, 0];
    let mut w = ParameterListWriter::new(&mut v);
    w.guid(pid::PARTICIPANT_GUID, g);
    w.finish();
    assert_eq!(parse_key_guid(&v).unwrap(), Some(g));
    for enc in [0u8, 1] {
        let mut k = vec![0, enc, 0, 0];
        k.extend_from_slice(&g.to_bytes());
        assert_eq!(parse_key_guid(&k).unwrap(), Some(g));
        assert_eq!(parse_key_guid(&k[..10]), Err(WireError::Truncated));
    }
    let mut v = vec![0, 2, 0, 0];
    v.extend_from_slice(&[0, 1, 0, 0]);
    assert_eq!(parse_key_guid(&v).unwrap(), None);
    assert_eq!(parse_key_guid(&[0, 7, 0, 0]), Err(WireError::BadEncapsulation(7)));
}
