//! Proves that datagrams captured from real Fast DDS 2.9.1 processes (the benchmark peer
//! `bench/peers/fastdds`, domain 77, loopback) parse completely and decode to what Fast DDS
//! sent: SPDP/SEDP discovery data, user DATA addressed to one reader, DATA_FRAG, HEARTBEAT,
//! ACKNACK, and the SPDP/SEDP disposals that carry only inline QoS (no key payload).
//!
//! Every Fast DDS datagram ends with the vendor-specific submessage 0x80 (Fast DDS
//! statistics, 56 bytes), which Halyard must skip as a `Submessage::Vendor` of another vendor.
//! See `tests/captures/README.md`, "Fast DDS 2.9.1 captures".

#[macro_use]
mod common;

use halyard_wire::discovery::{builtin_endpoint, EndpointData, ParticipantData};
use halyard_wire::param::pid;
use halyard_wire::qos::{DurabilityKind, History, ReliabilityKind};
use halyard_wire::{
    Data, DataFrag, EntityId, Guid, GuidPrefix, Message, MessageBuilder, ProtocolVersion,
    SequenceNumber, Submessage, VendorId,
};

const DIR: &str = "tests/captures/fastdds";

fn capture(name: &str) -> Vec<u8> {
    let path = format!("{}/{DIR}/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The header checks every Fast DDS capture passes, then all submessages (each must parse).
fn submessages(bytes: &[u8]) -> Vec<Submessage<'_>> {
    let msg = Message::parse(bytes).expect("valid RTPS header");
    assert_eq!(msg.header.vendor, VendorId::FASTDDS);
    assert_eq!(msg.header.version, ProtocolVersion { major: 2, minor: 3 });
    assert_eq!(msg.header.guid_prefix.0[..2], [0x01, 0x0f], "prefix starts with the vendor id");
    msg.submessages().map(|s| s.expect("every captured submessage parses")).collect()
}

fn prefix(bytes: &[u8]) -> GuidPrefix {
    Message::parse(bytes).expect("header").header.guid_prefix
}

fn kind(s: &Submessage<'_>) -> String {
    match s {
        Submessage::Data(_) => "DATA".into(),
        Submessage::DataFrag(_) => "DATA_FRAG".into(),
        Submessage::Heartbeat(_) => "HEARTBEAT".into(),
        Submessage::HeartbeatFrag(_) => "HEARTBEAT_FRAG".into(),
        Submessage::AckNack(_) => "ACKNACK".into(),
        Submessage::NackFrag(_) => "NACK_FRAG".into(),
        Submessage::Gap(_) => "GAP".into(),
        Submessage::InfoTs(_) => "INFO_TS".into(),
        Submessage::InfoDst(_) => "INFO_DST".into(),
        Submessage::InfoSrc(_) => "INFO_SRC".into(),
        Submessage::InfoReply(_) => "INFO_REPLY".into(),
        Submessage::Pad => "PAD".into(),
        Submessage::Vendor { id, .. } | Submessage::Unknown { id } => format!("0x{id:02x}"),
        _ => "?".into(),
    }
}

fn data_list(bytes: &[u8]) -> Vec<Data<'_>> {
    submessages(bytes)
        .into_iter()
        .filter_map(|s| match s {
            Submessage::Data(d) => Some(d),
            _ => None,
        })
        .collect()
}

fn one_data(bytes: &[u8]) -> Data<'_> {
    let mut v = data_list(bytes);
    assert_eq!(v.len(), 1, "one DATA");
    v.remove(0)
}

fn one_data_frag(bytes: &[u8]) -> DataFrag<'_> {
    let v: Vec<DataFrag<'_>> = submessages(bytes)
        .into_iter()
        .filter_map(|s| match s {
            Submessage::DataFrag(d) => Some(d),
            _ => None,
        })
        .collect();
    assert_eq!(v.len(), 1, "one DATA_FRAG");
    v[0]
}

/// The trailing statistics submessage: id 0x80, E flag, 56 bytes: destination locator
/// (kind, port, 16-byte address), a timestamp, then u64 datagram and byte counters and a
/// u64 high word of the byte counter. Returns (port, IPv4 address, datagram count, bytes).
fn statistics_trailer(bytes: &[u8]) -> (u32, [u8; 4], u64, u64) {
    let t = &bytes[bytes.len() - 60..];
    assert_eq!(t[..4], [0x80, 0x01, 56, 0], "statistics submessage header");
    let u32_at = |o: usize| u32::from_le_bytes(t[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_le_bytes(t[o..o + 8].try_into().unwrap());
    assert_eq!(u32_at(4), 1, "UDPv4 locator kind");
    let ip = [t[24], t[25], t[26], t[27]];
    assert_eq!(u64_at(52), 0, "high word of the byte counter");
    (u32_at(8), ip, u64_at(36), u64_at(44))
}

const EXPECTED: &[(&str, &[&str])] = &[
    ("fastdds-spdp.bin", &["INFO_TS", "DATA", "0x80"]),
    ("fastdds-spdp-dispose.bin", &["INFO_TS", "DATA", "0x80"]),
    ("fastdds-sedp-publication.bin", &["INFO_DST", "INFO_TS", "DATA", "0x80"]),
    ("fastdds-sedp-publication-pong.bin", &["INFO_DST", "INFO_TS", "DATA", "0x80"]),
    ("fastdds-sedp-subscription.bin", &["INFO_DST", "INFO_TS", "DATA", "INFO_TS", "DATA", "0x80"]),
    ("fastdds-sedp-dispose.bin", &["INFO_DST", "INFO_TS", "DATA", "0x80"]),
    ("fastdds-data-ping.bin", &["INFO_DST", "INFO_TS", "DATA", "HEARTBEAT", "0x80"]),
    ("fastdds-data-pong.bin", &["INFO_DST", "INFO_TS", "DATA", "0x80"]),
    ("fastdds-data-ping-1k.bin", &["INFO_DST", "INFO_TS", "DATA", "0x80"]),
    ("fastdds-data-uping-1k.bin", &["INFO_DST", "INFO_TS", "DATA", "0x80"]),
    ("fastdds-data-keyedseq.bin", &["INFO_DST", "INFO_TS", "DATA", "0x80"]),
    ("fastdds-heartbeat.bin", &["INFO_DST", "HEARTBEAT", "0x80"]),
    ("fastdds-acknack.bin", &["INFO_DST", "ACKNACK", "0x80"]),
    ("fastdds-acknack-sedp.bin", &["INFO_DST", "ACKNACK", "0x80"]),
    ("fastdds-datafrag.bin", &["INFO_DST", "INFO_TS", "DATA_FRAG", "0x80"]),
    ("fastdds-datafrag-last.bin", &["INFO_DST", "INFO_TS", "DATA_FRAG", "HEARTBEAT", "0x80"]),
];

#[test]
fn every_capture_parses_to_the_expected_submessages() {
    let dir = format!("{}/{DIR}", env!("CARGO_MANIFEST_DIR"));
    let mut on_disk: Vec<String> = std::fs::read_dir(dir)
        .expect("captures directory")
        .map(|e| e.expect("dir entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("fastdds-") && n.ends_with(".bin"))
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = EXPECTED.iter().map(|(n, _)| n.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed, "every committed capture is listed here");

    for (name, kinds) in EXPECTED {
        let bytes = capture(name);
        let found: Vec<String> = submessages(&bytes).iter().map(kind).collect();
        assert_eq!(found, *kinds, "{name}");
        // The only submessage Halyard does not know is Fast DDS's statistics trailer.
        let (port, ip, datagrams, sent) = statistics_trailer(&bytes);
        assert!((26650..26670).contains(&port), "{name}: domain 77 port {port}");
        assert!(ip == [127, 0, 0, 1] || ip == [239, 255, 0, 1], "{name}: {ip:?}");
        assert!(datagrams >= 1 && sent >= bytes.len() as u64, "{name}: counters");
    }
}

#[test]
fn fastdds_spdp_decodes_and_round_trips() {
    let bytes = capture("fastdds-spdp.bin");
    let d = one_data(&bytes);
    assert_eq!((d.writer_id, d.reader_id), (EntityId::SPDP_WRITER, EntityId::SPDP_READER));
    let payload = d.payload.expect("payload");
    assert_eq!(payload[..4], [0, 3, 0, 0], "PL_CDR_LE");
    let p = ParticipantData::parse(payload).expect("SPDP parses");
    assert_eq!(p.guid, Guid::new(prefix(&bytes), EntityId::PARTICIPANT));
    assert_eq!(p.vendor_id, VendorId::FASTDDS);
    assert_eq!(p.protocol_version, ProtocolVersion { major: 2, minor: 3 });
    assert_eq!(p.domain_id, None, "Fast DDS sends no PID_DOMAIN_ID");
    assert_eq!((p.lease_duration.seconds, p.lease_duration.fraction), (20, 0));
    assert_eq!(p.user_data, b"DDSPerf:0:14664:vm");
    assert_eq!(p.entity_name.as_deref(), Some("fastdds-perf"));
    assert_eq!(p.builtin_endpoints, 0x0c3f_0c3f);
    let standard = builtin_endpoint::PARTICIPANT_ANNOUNCER
        | builtin_endpoint::PARTICIPANT_DETECTOR
        | builtin_endpoint::PUBLICATIONS_ANNOUNCER
        | builtin_endpoint::PUBLICATIONS_DETECTOR
        | builtin_endpoint::SUBSCRIPTIONS_ANNOUNCER
        | builtin_endpoint::SUBSCRIPTIONS_DETECTOR
        | builtin_endpoint::PARTICIPANT_MESSAGE_DATA_WRITER
        | builtin_endpoint::PARTICIPANT_MESSAGE_DATA_READER;
    assert_eq!(p.builtin_endpoints & 0xffff, standard);
    // Domain 77, participant id 0: ports 7400 + 250 * 77 + {10, 11}; unicast only.
    assert_eq!(p.metatraffic_unicast.len(), 1);
    assert_eq!(p.metatraffic_unicast[0].as_udpv4(), Some(([127, 0, 0, 1], 26660)));
    assert_eq!(p.default_unicast.len(), 1);
    assert_eq!(p.default_unicast[0].as_udpv4(), Some(([127, 0, 0, 1], 26661)));
    assert!(p.metatraffic_multicast.is_empty() && p.default_multicast.is_empty());
    assert!(!p.expects_inline_qos);
    // Sent to the SPDP multicast group (the statistics trailer names the destination).
    let (port, ip, ..) = statistics_trailer(&bytes);
    assert_eq!((port, ip), (26650, [239, 255, 0, 1]));

    let mut again = Vec::new();
    p.emit(&mut again);
    assert_eq!(ParticipantData::parse(&again).expect("emitted SPDP parses"), p);
}

/// Re-emits every parsed submessage but the statistics trailer with [`MessageBuilder`].
fn reemit(bytes: &[u8]) -> Vec<u8> {
    let msg = Message::parse(bytes).expect("header");
    let mut mb = MessageBuilder::new(Vec::new(), &msg.header);
    for s in msg.submessages() {
        match s.expect("parses") {
            Submessage::InfoDst(p) => mb.info_dst(p),
            Submessage::InfoTs(t) => mb.info_ts(t),
            Submessage::Data(d) => {
                assert!(d.inline_qos.is_none_or(|q| q.little_endian));
                mb.data(&d)
            }
            Submessage::DataFrag(d) => {
                assert!(d.inline_qos.is_none_or(|q| q.little_endian));
                mb.data_frag(&d)
            }
            Submessage::Heartbeat(h) => mb.heartbeat(&h),
            Submessage::AckNack(a) => mb.acknack(&a),
            Submessage::Vendor { id: 0x80, .. } => {}
            other => panic!("not expected in the Fast DDS captures: {other:?}"),
        }
    }
    mb.finish()
}

#[test]
fn reemitting_the_parsed_submessages_reproduces_fast_dds_bytes() {
    for (name, _) in EXPECTED {
        let bytes = capture(name);
        let again = reemit(&bytes);
        // Everything but the 60-byte statistics trailer, byte for byte.
        assert!(again == bytes[..bytes.len() - 60], "{name}: re-emitted bytes differ");
    }
}

/// The GUID string ddsperf-style peers use as a partition name: `xxxxxxxx_xxxxxxxx_xxxxxxxx_000001c1`.
fn guid_string(p: GuidPrefix) -> String {
    let g = Guid::new(p, EntityId::PARTICIPANT).to_bytes();
    let words: Vec<String> =
        g.chunks(4).map(|w| w.iter().map(|b| format!("{b:02x}")).collect()).collect();
    words.join("_")
}

fn info_dst(bytes: &[u8]) -> GuidPrefix {
    first_of!(submessages(bytes), InfoDst, "INFO_DST")
}

fn sedp(bytes: &[u8], writer: EntityId, reader: EntityId) -> Vec<EndpointData> {
    data_list(bytes)
        .into_iter()
        .map(|d| {
            assert_eq!(
                (d.writer_id, d.reader_id),
                (writer, reader),
                "SEDP addressed to the reader"
            );
            let payload = d.payload.expect("payload");
            assert_eq!(payload[..4], [0, 3, 0, 0], "PL_CDR_LE");
            let e = EndpointData::parse(payload).expect("SEDP parses");
            // Halyard takes an announcement whose inline key hash names another endpoint as
            // damaged in transit and asks for it again: Fast DDS's must agree.
            if let Some(q) = d.inline_qos {
                let k = q.key_hash().expect("valid inline QoS");
                assert!(k.is_none_or(|k| k == e.guid.to_bytes()), "key hash is the GUID");
            }
            let mut again = Vec::new();
            e.emit(&mut again);
            assert_eq!(EndpointData::parse(&again).expect("emitted SEDP parses"), e);
            e
        })
        .collect()
}

#[test]
fn fastdds_sedp_publications_decode_with_their_qos() {
    let bytes = capture("fastdds-sedp-publication.bin");
    let me = prefix(&bytes);
    let pubs = sedp(&bytes, EntityId::SEDP_PUBLICATIONS_WRITER, EntityId::SEDP_PUBLICATIONS_READER);
    assert_eq!(pubs.len(), 1);
    let w = &pubs[0];
    assert_eq!(w.guid, Guid::new(me, EntityId([0, 0, 2, 2])));
    assert_eq!(w.participant_guid, Some(Guid::new(me, EntityId::PARTICIPANT)));
    assert_eq!((w.topic_name.as_str(), w.type_name.as_str()), ("DDSPerfRDataKS", "KeyedSeq"));
    assert_eq!(w.qos.reliability.kind, ReliabilityKind::Reliable);
    assert_eq!(w.qos.reliability.max_blocking_time.seconds, 10);
    assert_eq!(w.qos.durability, DurabilityKind::Volatile);
    // Fast DDS sends neither HISTORY nor RESOURCE_LIMITS: the defaults apply.
    assert_eq!(w.qos.history, History::KeepLast(1));
    assert_eq!(w.qos.resource_limits.max_samples, -1);
    assert!(w.qos.partition.is_empty(), "empty PID_PARTITION (0 names)");
    assert_eq!(w.unicast_locators.len(), 1);
    assert_eq!(w.unicast_locators[0].as_udpv4(), Some(([127, 0, 0, 1], 26663)));
    assert!(w.multicast_locators.is_empty());
    assert_eq!(w.protocol_version, Some(ProtocolVersion { major: 2, minor: 3 }));
    assert_eq!(w.vendor_id, Some(VendorId::FASTDDS));
    assert_eq!(w.type_max_size_serialized, Some(0x0100_0013));
    assert_eq!(w.entity_name, None);

    // The pong writer's partition is the GUID string of the participant it answers, which is
    // also the INFO_DST destination of this datagram.
    let bytes = capture("fastdds-sedp-publication-pong.bin");
    let pubs = sedp(&bytes, EntityId::SEDP_PUBLICATIONS_WRITER, EntityId::SEDP_PUBLICATIONS_READER);
    let pong = &pubs[0];
    assert_eq!(pong.guid, Guid::new(me, EntityId([0, 0, 3, 2])));
    assert_eq!(pong.topic_name, "DDSPerfRPongKS");
    let peer = guid_string(info_dst(&bytes));
    assert_eq!(peer, "010f78fd_a739239d_00000000_000001c1");
    assert_eq!(pong.qos.partition, [peer]);
}

#[test]
fn fastdds_sedp_subscriptions_decode() {
    let bytes = capture("fastdds-sedp-subscription.bin");
    let me = prefix(&bytes);
    let subs =
        sedp(&bytes, EntityId::SEDP_SUBSCRIPTIONS_WRITER, EntityId::SEDP_SUBSCRIPTIONS_READER);
    let found: Vec<(EntityId, &str)> =
        subs.iter().map(|r| (r.guid.entity, r.topic_name.as_str())).collect();
    assert_eq!(
        found,
        [(EntityId([0, 0, 1, 7]), "DDSPerfRPingKS"), (EntityId([0, 0, 2, 7]), "DDSPerfRDataKS")]
    );
    for r in &subs {
        assert_eq!(r.guid.prefix, me);
        assert_eq!(r.type_name, "KeyedSeq");
        assert_eq!(r.qos.reliability.kind, ReliabilityKind::Reliable);
        assert_eq!(r.qos.reliability.max_blocking_time.seconds, 10);
        assert!(!r.expects_inline_qos, "PID_EXPECTS_INLINE_QOS sent as false");
        assert_eq!(r.unicast_locators[0].as_udpv4(), Some(([127, 0, 0, 1], 26661)));
        assert_eq!(r.type_max_size_serialized, None, "readers do not send it");
        assert!(r.qos.partition.is_empty());
    }
}

#[test]
fn fastdds_disposals_carry_only_inline_qos() {
    // SEDP: the publication of fastdds-sedp-publication.bin, disposed and unregistered at exit.
    let bytes = capture("fastdds-sedp-dispose.bin");
    let d = one_data(&bytes);
    assert_eq!(d.writer_id, EntityId::SEDP_PUBLICATIONS_WRITER);
    assert_eq!(d.writer_sn, SequenceNumber(3));
    assert!(d.payload.is_none() && !d.key_flag, "no serialized key, only PID_KEY_HASH");
    let q = d.inline_qos.expect("inline QoS");
    assert_eq!(q.status_info().expect("valid"), 3);
    let w = Guid::new(prefix(&bytes), EntityId([0, 0, 2, 2]));
    assert_eq!(q.key_hash().expect("valid"), Some(w.to_bytes()));

    // SPDP: the participant's unregistration, with Fast DDS's PID_RELATED_SAMPLE_IDENTITY
    // (0x800f: writer GUID + sequence number of the sample it refers to).
    let bytes = capture("fastdds-spdp-dispose.bin");
    let me = prefix(&bytes);
    let d = one_data(&bytes);
    assert_eq!((d.writer_id, d.reader_id), (EntityId::SPDP_WRITER, EntityId::SPDP_READER));
    assert!(d.payload.is_none() && !d.key_flag);
    let q = d.inline_qos.expect("inline QoS");
    assert_eq!(q.status_info().expect("valid"), 3);
    assert_eq!(q.key_hash().expect("valid"), Some(Guid::new(me, EntityId::PARTICIPANT).to_bytes()));
    let ids: Vec<u16> = q.iter().map(|p| p.expect("valid").id).collect();
    assert_eq!(ids, [0x800f, pid::KEY_HASH, pid::STATUS_INFO]);
    let related = q.find(0x800f).expect("valid").expect("present").value;
    assert_eq!(related[..12], me.0);
    assert_eq!(related[12..16], EntityId::SPDP_WRITER.0);
    assert_eq!(related[16..], [0, 0, 0, 0, 1, 0, 0, 0], "sequence number 1 (high, low LE)");
}

/// (seq, keyval, baggage length) of a KeyedSeq CDR_LE payload, checking the header.
fn keyed_seq(p: &[u8]) -> (u32, u32, u32) {
    assert_eq!(p[..4], [0, 1, 0, 0], "CDR_LE, options 0");
    let at = |o: usize| u32::from_le_bytes(p[o..o + 4].try_into().unwrap());
    let n = at(12);
    assert_eq!(p.len(), 16 + n as usize, "payload = header + KeyedSeq");
    assert!(p[16..].iter().all(|&b| b == 0xee), "baggage");
    (at(4), at(8), n)
}

fn info_ts_nanos(bytes: &[u8]) -> i64 {
    submessages(bytes)
        .into_iter()
        .find_map(|s| match s {
            Submessage::InfoTs(Some(t)) => Some(t.to_nanos()),
            _ => None,
        })
        .expect("INFO_TS")
}

#[test]
fn fastdds_user_data_is_addressed_to_one_reader() {
    let (ping_w, ping_r) = (EntityId([0, 0, 1, 2]), EntityId([0, 0, 1, 7]));
    let (data_w, data_r) = (EntityId([0, 0, 2, 2]), EntityId([0, 0, 2, 7]));
    // (file, writer, reader, sn, (seq, keyval, baggage))
    let cases = [
        ("fastdds-data-keyedseq.bin", data_w, data_r, 2, (1, 0, 88)),
        ("fastdds-data-ping.bin", ping_w, ping_r, 2, (2, 0, 0)),
        ("fastdds-data-pong.bin", data_w, data_r, 1, (1, 0, 0)),
        ("fastdds-data-ping-1k.bin", ping_w, ping_r, 2, (2, 0, 1012)),
        ("fastdds-data-uping-1k.bin", ping_w, ping_r, 1, (1, 0, 1012)),
    ];
    for (name, w, r, sn, ks) in cases {
        let bytes = capture(name);
        let d = one_data(&bytes);
        assert_eq!((d.writer_id, d.reader_id, d.writer_sn), (w, r, SequenceNumber(sn)), "{name}");
        assert!(d.inline_qos.is_none() && !d.key_flag, "{name}: no inline QoS, no key hash");
        assert_eq!(keyed_seq(d.payload.expect("payload")), ks, "{name}");
        assert_ne!(info_dst(&bytes), prefix(&bytes), "{name}: INFO_DST names the peer");
    }
    // As in ddsperf, an odd source timestamp (in nanoseconds) marks a sample that wants an
    // answer: pings, and pongs (which echo the ping's timestamp); plain data samples are even.
    for name in ["fastdds-data-ping.bin", "fastdds-data-pong.bin", "fastdds-data-ping-1k.bin"] {
        assert_eq!(info_ts_nanos(&capture(name)) & 1, 1, "{name}");
    }
    assert_eq!(info_ts_nanos(&capture("fastdds-data-keyedseq.bin")) & 1, 0);

    // The ping's HEARTBEAT rides in the same datagram.
    let bytes = capture("fastdds-data-ping.bin");
    let hb = first_of!(submessages(&bytes), Heartbeat, "HEARTBEAT");
    assert_eq!((hb.reader_id, hb.writer_id), (ping_r, ping_w));
    assert_eq!((hb.first_sn.0, hb.last_sn.0, hb.count, hb.final_flag), (2, 2, 2, false));
}

#[test]
fn fastdds_heartbeat_and_acknacks_decode() {
    let bytes = capture("fastdds-heartbeat.bin");
    let hb = first_of!(submessages(&bytes), Heartbeat, "HEARTBEAT");
    // At match: sample 1 was written before the (volatile) reader existed, so first = 2.
    assert_eq!((hb.first_sn.0, hb.last_sn.0, hb.count), (2, 1, 1));
    assert!(!hb.final_flag && !hb.liveliness_flag);

    let acknack = |name: &str| {
        let bytes = capture(name);
        first_of!(submessages(&bytes), AckNack, "ACKNACK")
    };
    let an = acknack("fastdds-acknack.bin");
    assert_eq!((an.reader_id, an.writer_id), (EntityId([0, 0, 2, 7]), EntityId([0, 0, 2, 2])));
    assert_eq!(
        (an.reader_sn_state.base.0, an.reader_sn_state.num_bits, an.final_flag, an.count),
        (8, 0, true, 2)
    );
    // A non-final ACKNACK asking for SEDP publication 1.
    let an = acknack("fastdds-acknack-sedp.bin");
    assert_eq!(
        (an.reader_id, an.writer_id),
        (EntityId::SEDP_PUBLICATIONS_READER, EntityId::SEDP_PUBLICATIONS_WRITER)
    );
    assert_eq!((an.reader_sn_state.base.0, an.reader_sn_state.num_bits), (1, 1));
    assert!(an.reader_sn_state.contains(SequenceNumber(1)));
    assert_eq!((an.final_flag, an.count), (false, 1));
}

#[test]
fn fastdds_data_frag_fields() {
    const SAMPLE: u32 = 1_048_580; // 4-byte CDR header + KeyedSeq of 1 MiB
    const FRAG: u16 = 65_324; // one fragment per 65 500-byte datagram
    let bytes = capture("fastdds-datafrag.bin");
    let df = one_data_frag(&bytes);
    assert_eq!((df.reader_id, df.writer_id), (EntityId([0, 0, 2, 7]), EntityId([0, 0, 2, 2])));
    assert_eq!(df.writer_sn, SequenceNumber(1));
    assert_eq!(
        (df.fragment_starting_num, df.fragments_in_submessage, df.fragment_size, df.sample_size),
        (1, 1, FRAG, SAMPLE)
    );
    assert!(df.inline_qos.is_none() && !df.key_flag);
    assert_eq!(df.fragments().len(), FRAG as usize);
    let p = df.fragments();
    assert_eq!(p[..4], [0, 1, 0, 0], "CDR_LE header in fragment 1");
    assert_eq!(p[4..12], [0; 8], "seq 0, keyval 0");
    assert_eq!(u32::from_le_bytes(p[12..16].try_into().unwrap()), SAMPLE - 16, "baggage");

    let bytes = capture("fastdds-datafrag-last.bin");
    let last = one_data_frag(&bytes);
    let frags = SAMPLE.div_ceil(FRAG as u32);
    assert_eq!(frags, 17);
    assert_eq!((last.writer_sn, last.fragment_starting_num), (SequenceNumber(10), frags));
    assert_eq!(last.fragments().len() as u32, SAMPLE - (frags - 1) * FRAG as u32, "trimmed");
    let hb = first_of!(submessages(&bytes), Heartbeat, "HEARTBEAT after the last fragment");
    assert_eq!((hb.first_sn.0, hb.last_sn.0, hb.count), (10, 10, 23));
}
