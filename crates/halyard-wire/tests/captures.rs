//! Proves that datagrams captured from real Cyclone DDS 0.10 processes (ddsperf) parse
//! completely and decode to what Cyclone sent: SPDP/SEDP discovery data, user DATA, batched
//! DATA, DATA_FRAG + HEARTBEAT_FRAG, HEARTBEAT, ACKNACK and SEDP disposals.

#[macro_use]
mod common;

use halyard_wire::discovery::{builtin_endpoint, parse_key_guid, EndpointData, ParticipantData};
use halyard_wire::qos::{History, ReliabilityKind};
use halyard_wire::{EntityId, Message, MessageBuilder, Submessage, VendorId};

fn capture(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/captures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn submessages(bytes: &[u8]) -> Vec<Submessage<'_>> {
    let msg = Message::parse(bytes).expect("valid RTPS header");
    assert_eq!(msg.header.vendor, VendorId::CYCLONE);
    msg.submessages().map(|s| s.expect("every captured submessage parses")).collect()
}

#[test]
fn every_capture_parses_without_unknown_submessages() {
    let dir = format!("{}/tests/captures", env!("CARGO_MANIFEST_DIR"));
    let mut n = 0;
    for entry in std::fs::read_dir(dir).expect("captures directory") {
        let path = entry.expect("dir entry").path();
        if path.extension().is_some_and(|e| e == "bin") {
            let bytes = std::fs::read(&path).expect("readable");
            let subs = submessages(&bytes);
            assert!(!subs.is_empty(), "{path:?}");
            assert!(!subs.iter().any(|s| matches!(s, Submessage::Unknown { .. })), "{path:?}");
            n += 1;
        }
    }
    assert!(n >= 15, "expected the 15 committed captures, found {n}");
}

#[test]
fn cyclone_spdp_decodes() {
    let bytes = capture("cyclone-spdp.bin");
    let data = submessages(&bytes)
        .into_iter()
        .find_map(|s| match s {
            Submessage::Data(d) if d.writer_id == EntityId::SPDP_WRITER => Some(d),
            _ => None,
        })
        .expect("an SPDP DATA");
    let p = ParticipantData::parse(data.payload.expect("payload")).expect("SPDP parses");
    assert_eq!(p.vendor_id, VendorId::CYCLONE);
    assert_eq!(p.domain_id, Some(0));
    assert_eq!(p.lease_duration.seconds, 10);
    assert!(p.user_data.starts_with(b"DDSPerf:1:"));
    assert!(p.builtin_endpoints & builtin_endpoint::PUBLICATIONS_DETECTOR != 0);
    let (ip, port) = p.default_unicast[0].as_udpv4().expect("UDPv4 default locator");
    assert_eq!((ip, port > 0), ([127, 0, 0, 1], true));
    assert_eq!(p.metatraffic_multicast[0].as_udpv4(), Some(([239, 255, 0, 1], 7400)));
}

#[test]
fn cyclone_sedp_publications_decode_with_their_qos() {
    let bytes = capture("cyclone-sedp-publication.bin");
    let pubs: Vec<EndpointData> = submessages(&bytes)
        .into_iter()
        .filter_map(|s| match s {
            Submessage::Data(d) if d.writer_id == EntityId::SEDP_PUBLICATIONS_WRITER => {
                let e = EndpointData::parse(d.payload.expect("payload")).expect("SEDP parses");
                // An inline key hash must name the announced endpoint (Halyard re-requests
                // an announcement where it does not, as damaged in transit).
                let k = d.inline_qos.map(|q| q.key_hash().expect("valid inline QoS"));
                assert!(k.flatten().is_none_or(|k| k == e.guid.to_bytes()));
                Some(e)
            }
            _ => None,
        })
        .collect();
    let mut topics: Vec<&str> = pubs.iter().map(|p| p.topic_name.as_str()).collect();
    topics.sort_unstable();
    assert_eq!(topics, ["DDSPerfCPUStats", "DDSPerfRDataKS", "DDSPerfRPingKS", "DDSPerfRPongKS"]);
    let data = pubs.iter().find(|p| p.topic_name == "DDSPerfRDataKS").expect("data writer");
    assert_eq!(data.type_name, "KeyedSeq");
    assert_eq!(data.qos.reliability.kind, ReliabilityKind::Reliable);
    assert_eq!(data.qos.reliability.max_blocking_time.seconds, 10);
    assert_eq!(data.qos.history, History::KeepAll);
    assert_eq!(data.qos.resource_limits.max_samples, 10_000);
    let pong = pubs.iter().find(|p| p.topic_name == "DDSPerfRPongKS").expect("pong writer");
    assert_eq!(pong.qos.partition.len(), 1);
    assert_eq!(pong.qos.partition[0].len(), 35, "GUID partition string");
}

#[test]
fn cyclone_sedp_dispose_carries_status_and_key() {
    let bytes = capture("cyclone-sedp-dispose.bin");
    let d = first_of!(submessages(&bytes), Data, "DATA");
    assert!(d.key_flag);
    assert_eq!(d.inline_qos.expect("inline QoS").status_info().expect("valid"), 3);
    let guid = parse_key_guid(d.payload.expect("key payload")).expect("parses").expect("a GUID");
    assert!(guid.entity.is_writer());
}

#[test]
fn cyclone_user_data_heartbeat_and_acknack_decode() {
    let bytes = capture("cyclone-data-keyedseq.bin");
    let d = first_of!(submessages(&bytes), Data, "DATA");
    let p = d.payload.expect("payload");
    assert_eq!(&p[..4], &[0, 1, 0, 0], "CDR_LE");
    assert_eq!(u32::from_le_bytes([p[4], p[5], p[6], p[7]]), 2, "seq");
    assert_eq!(u32::from_le_bytes([p[12], p[13], p[14], p[15]]), 88, "baggage length");
    assert!(d.inline_qos.is_none() && d.reader_id == EntityId::UNKNOWN);

    let bytes = capture("cyclone-heartbeat.bin");
    let hb = first_of!(submessages(&bytes), Heartbeat, "HEARTBEAT");
    assert_eq!((hb.first_sn.0, hb.last_sn.0, hb.count), (3, 2, 2));

    let bytes = capture("cyclone-acknack.bin");
    let msg = Message::parse(&bytes).expect("header");
    let an = msg
        .submessages()
        .find_map(|s| match s {
            Ok(Submessage::AckNack(a)) => Some(a),
            _ => None,
        })
        .expect("ACKNACK");
    assert_eq!(
        (an.reader_sn_state.base.0, an.reader_sn_state.num_bits, an.final_flag),
        (4, 0, true)
    );
    // Re-emitting what we parsed and parsing again gives the same submessage.
    let mut mb = MessageBuilder::new(Vec::new(), &msg.header);
    mb.acknack(&an);
    let again = mb.finish();
    let an2 = Message::parse(&again)
        .expect("header")
        .submessages()
        .find_map(|s| match s {
            Ok(Submessage::AckNack(a)) => Some(a),
            _ => None,
        })
        .expect("ACKNACK");
    assert_eq!(an, an2);
}

#[test]
fn cyclone_batched_data_and_fragments_decode() {
    let bytes = capture("cyclone-data-batch.bin");
    let sns: Vec<i64> = submessages(&bytes)
        .into_iter()
        .filter_map(|s| match s {
            Submessage::Data(d) => Some(d.writer_sn.0),
            _ => None,
        })
        .collect();
    assert!(sns.len() >= 100, "batched datagram holds {} samples", sns.len());
    assert!(sns.windows(2).all(|w| w[1] == w[0] + 1), "consecutive sequence numbers");

    let bytes = capture("cyclone-datafrag.bin");
    let subs = submessages(&bytes);
    let df = subs
        .iter()
        .find_map(|s| match s {
            Submessage::DataFrag(d) => Some(*d),
            _ => None,
        })
        .expect("DATA_FRAG");
    assert_eq!(
        (df.fragment_starting_num, df.fragments_in_submessage, df.fragment_size),
        (1, 10, 1344)
    );
    assert_eq!(df.sample_size, 1_048_580);
    assert_eq!(df.fragments().len(), 13_440);
    assert!(subs
        .iter()
        .any(|s| matches!(s, Submessage::HeartbeatFrag(h) if h.last_fragment_num == 10)));

    let bytes = capture("cyclone-datafrag-last.bin");
    let last = submessages(&bytes)
        .into_iter()
        .rev()
        .find_map(|s| match s {
            Submessage::DataFrag(d) => Some(d),
            _ => None,
        })
        .expect("DATA_FRAG");
    assert_eq!(last.fragment_starting_num, 781);
    assert_eq!(
        last.fragments().len(),
        1_048_580 - 780 * 1344,
        "last fragment trimmed to the sample"
    );
}

/// Captured from two ddsperf processes with Cyclone's builtin security plugins (ECDSA P-256
/// identities, a governance with ENCRYPT for rtps, discovery, liveliness, metadata and data).
fn secure_capture(name: &str) -> Vec<u8> {
    capture(&format!("secure/{name}"))
}

#[test]
fn cyclone_secure_spdp_carries_its_security_parameters() {
    let bytes = secure_capture("spdp-secure.bin");
    let data = submessages(&bytes)
        .into_iter()
        .find_map(|s| match s {
            Submessage::Data(d) if d.writer_id == EntityId::SPDP_WRITER => Some(d),
            _ => None,
        })
        .expect("an SPDP DATA");
    let p = ParticipantData::parse(data.payload.expect("payload")).expect("SPDP parses");
    let info = p.security_info.expect("PID_PARTICIPANT_SECURITY_INFO");
    // Everything ENCRYPT: is_rtps/discovery/liveliness_protected + valid, and the plugin's
    // is_rtps/discovery/liveliness_encrypted + valid.
    assert_eq!((info.attributes, info.plugin_attributes), (0x8000_0007, 0x8000_0007));
    // Cyclone's IdentityToken in SPDP is the class id alone: no properties are sent.
    let id = p.identity_token.clone().expect("PID_IDENTITY_TOKEN");
    assert!(id.little_endian);
    assert_eq!(&id.cdr[..4], &20u32.to_le_bytes());
    assert_eq!(&id.cdr[4..24], b"DDS:Auth:PKI-DH:1.0\0");
    assert_eq!(&id.cdr[24..32], &[0; 8], "no properties, no binary properties");
    let perm = p.permissions_token.clone().expect("PID_PERMISSIONS_TOKEN");
    assert_eq!(&perm.cdr[4..31], b"DDS:Access:Permissions:1.0\0");
    use builtin_endpoint as be;
    for bit in [
        be::PARTICIPANT_STATELESS_MESSAGE_WRITER,
        be::PARTICIPANT_STATELESS_MESSAGE_READER,
        be::PARTICIPANT_VOLATILE_MESSAGE_SECURE_WRITER,
        be::PARTICIPANT_VOLATILE_MESSAGE_SECURE_READER,
        be::SECURE_PUBLICATION_WRITER,
        be::SECURE_SUBSCRIPTION_READER,
        be::SECURE_PARTICIPANT_MESSAGE_WRITER,
        be::SPDP_RELIABLE_PARTICIPANT_SECURE_READER,
    ] {
        assert!(p.builtin_endpoints & bit != 0, "builtin endpoint bit {bit:#x}");
    }
    // Re-emitting keeps every security parameter.
    let mut again = Vec::new();
    p.emit(&mut again);
    assert_eq!(ParticipantData::parse(&again).expect("re-parses"), p);
}

#[test]
fn cyclone_protected_messages_are_recognised_secure_submessages() {
    use halyard_wire::id;
    // A whole message under rtps protection: SRTPS_PREFIX, SEC_BODY, SRTPS_POSTFIX.
    let kinds = |name: &str| -> Vec<u8> {
        let bytes = secure_capture(name);
        submessages(&bytes)
            .iter()
            .map(|s| match s {
                Submessage::Unknown { id, .. } => *id,
                Submessage::InfoDst(_) => id::INFO_DST,
                Submessage::InfoTs(_) => id::INFO_TS,
                other => panic!("{name}: an unprotected {other:?}"),
            })
            .collect()
    };
    assert_eq!(kinds("srtps-message.bin"), [id::SRTPS_PREFIX, id::SEC_BODY, id::SRTPS_POSTFIX]);
    // A protected submessage (here in a message of the volatile secure channel):
    // SEC_PREFIX, SEC_BODY, SEC_POSTFIX after INFO_DST.
    assert_eq!(
        kinds("sec-submessage.bin"),
        [id::INFO_DST, id::SEC_PREFIX, id::SEC_BODY, id::SEC_POSTFIX]
    );
}
