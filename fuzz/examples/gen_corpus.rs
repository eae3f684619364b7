//! Writes the seed corpora fuzz/corpus/<target>/ from the Cyclone captures
//! (crates/halyard-wire/tests/captures/*.bin) and from Halyard-emitted messages.
//!
//! Run from fuzz/: `cargo run --example gen_corpus` (stable is fine).

use halyard_cdr::{serialize, DataRepresentation};
use halyard_fuzz::cdr_check::{RichAppendable, RichFinal, RichMutable};
use halyard_fuzz::core_harness::{self, MS};
use halyard_wire::discovery::{EndpointData, ParticipantData};
use halyard_wire::param::{pid, ParameterList, ParameterListWriter};
use halyard_wire::*;
use halyard_core::{ChangeKind, Instant, NewChange, Participant, ReaderSpec, WriterSpec};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

struct Corpus {
    root: PathBuf,
    files: BTreeMap<(String, String), Vec<u8>>,
}

impl Corpus {
    fn add(&mut self, target: &str, name: &str, bytes: Vec<u8>) {
        self.files.insert((target.to_owned(), name.to_owned()), bytes);
    }
    fn write(&self) {
        for ((t, n), b) in &self.files {
            let dir = self.root.join(t);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join(n), b).unwrap();
        }
        println!("wrote {} seed files under {}", self.files.len(), self.root.display());
    }
}

/// DATA payloads and inline QoS lists (with a PL_CDR_LE/BE header) of a message.
fn extract(msg: &[u8]) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let (mut payloads, mut lists) = (Vec::new(), Vec::new());
    let Ok(m) = Message::parse(msg) else { return (payloads, lists) };
    for s in m.submessages().flatten() {
        let (qos, payload) = match s {
            Submessage::Data(d) => (d.inline_qos, d.payload),
            Submessage::DataFrag(d) => (d.inline_qos, Some(d.payload)),
            _ => continue,
        };
        if let Some(q) = qos {
            let mut v = vec![0, if q.little_endian { 3 } else { 2 }, 0, 0];
            v.extend_from_slice(q.bytes);
            lists.push(v);
        }
        if let Some(p) = payload {
            payloads.push(p.to_vec());
        }
    }
    (payloads, lists)
}

fn peer_config() -> halyard_core::ParticipantConfig {
    let mut c = core_harness::config();
    c.guid_prefix = GuidPrefix([0x01, 0x99, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x42]);
    c.metatraffic_unicast = vec![Locator::udpv4([127, 0, 0, 2], 7410)];
    c.default_unicast = vec![Locator::udpv4([127, 0, 0, 2], 7411)];
    c
}

/// A conversation between a Halyard peer and the fuzzed participant: every datagram the peer
/// sends it (SPDP, SEDP, DATA, DATA_FRAG, HEARTBEAT, ACKNACK ...), in order.
fn conversation() -> Vec<Vec<u8>> {
    let mut now = Instant::from_nanos(1_000 * MS);
    let mut target = core_harness::participant(now);
    let mut peer = Participant::new(peer_config(), now);
    let (rs, ws) = core_harness::specs();
    // The peer writes the topic the target reads and reads the topic the target writes.
    let pw = peer.create_writer(
        now,
        WriterSpec { topic_name: rs.topic_name.clone(), ..ws.clone() },
    );
    peer.create_reader(now, ReaderSpec { topic_name: ws.topic_name.clone(), ..rs.clone() });
    let mut sent = Vec::new();
    let mut written = 0;
    for step in 0..400 {
        if step > 5 && written < 3 && peer.matched_readers(pw).len() == 1 {
            written += 1;
            let len = [8usize, 2_500, 40][written - 1];
            let change = NewChange {
                kind: ChangeKind::Alive,
                key_hash: [written as u8; 16],
                payload: Arc::new(core_harness::keyed_seq(written as u32, 7, len)),
                timestamp: Some(Time::from_nanos(now.as_nanos() as i64)),
                original: None,
            };
            peer.write(now, pw, change).unwrap();
        }
        while let Some(t) = peer.poll_transmit() {
            target.handle_datagram(now, &t.payload);
            sent.push(t.payload);
        }
        while let Some(t) = target.poll_transmit() {
            peer.handle_datagram(now, &t.payload);
        }
        core_harness::drain(&mut target);
        while peer.poll_event().is_some() {}
        while peer.poll_sample().is_some() {}
        now = Instant::from_nanos(now.as_nanos() + 10 * MS);
        peer.handle_timeout(now);
        target.handle_timeout(now);
    }
    assert!(written == 3, "the Halyard peer never matched the fuzzed participant");
    sent
}

/// Messages built directly with MessageBuilder for submessages the captures lack.
fn built_messages() -> Vec<(&'static str, Vec<u8>)> {
    let header = Header {
        version: ProtocolVersion::V2_5,
        vendor: VendorId::HALYARD,
        guid_prefix: GuidPrefix([0x01, 0x99, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]),
    };
    let (rd, wr) = (EntityId([0, 0, 0x0b, 0x07]), EntityId([0, 0, 0x0b, 0x02]));
    let mut set = SequenceNumberSet::new(SequenceNumber(5), 40);
    set.insert(SequenceNumber(6));
    set.insert(SequenceNumber(44));
    let mut fset = FragmentNumberSet::new(2, 33);
    fset.insert(2);
    fset.insert(34);
    let mut qos = Vec::new();
    let mut w = ParameterListWriter::new(&mut qos);
    w.raw(pid::KEY_HASH, &[7; 16]);
    w.raw(pid::STATUS_INFO, &[0, 0, 0, 3]);
    w.finish();
    let mut out = Vec::new();
    let mut mb = MessageBuilder::new(Vec::new(), &header);
    mb.info_dst(GuidPrefix(core_harness::PREFIX));
    mb.info_src(&InfoSrc { version: ProtocolVersion::V2_5, vendor: VendorId::CYCLONE, guid_prefix: GuidPrefix([3; 12]) });
    mb.info_reply(&InfoReply {
        unicast: vec![Locator::udpv4([10, 0, 0, 1], 7411)],
        multicast: vec![Locator::udpv4([239, 255, 0, 1], 7401)],
    });
    mb.info_ts(None);
    mb.gap(&Gap { reader_id: rd, writer_id: wr, gap_start: SequenceNumber(2), gap_list: set });
    mb.nack_frag(&NackFrag { reader_id: rd, writer_id: wr, writer_sn: SequenceNumber(2), fragment_number_state: fset, count: 3 });
    mb.acknack(&AckNack { reader_id: rd, writer_id: wr, reader_sn_state: set, count: 4, final_flag: false });
    mb.heartbeat_frag(&HeartbeatFrag { reader_id: rd, writer_id: wr, writer_sn: SequenceNumber(2), last_fragment_num: 3, count: 1 });
    mb.pad(6);
    out.push(("halyard-built-info-gap-nackfrag", mb.finish()));

    let mut mb = MessageBuilder::new(Vec::new(), &header);
    mb.info_ts(Some(Time { seconds: 1_700_000_000, fraction: 99 }));
    let inline_qos = Some(ParameterList::new(&qos, true));
    mb.data(&Data {
        reader_id: rd,
        writer_id: wr,
        writer_sn: SequenceNumber(9),
        inline_qos,
        payload: Some(&[0, 3, 0, 0, 1, 0, 0, 0]),
        key_flag: true,
        non_standard_flag: false,
    });
    mb.data_frag(&DataFrag {
        reader_id: rd,
        writer_id: wr,
        writer_sn: SequenceNumber(10),
        fragment_starting_num: 2,
        fragments_in_submessage: 1,
        fragment_size: 4,
        sample_size: 10,
        inline_qos,
        payload: &[1, 2, 3, 4],
        key_flag: false,
    });
    mb.heartbeat(&Heartbeat { reader_id: rd, writer_id: wr, first_sn: SequenceNumber(1), last_sn: SequenceNumber(10), count: 5, final_flag: false, liveliness_flag: true });
    out.push(("halyard-built-data-inlineqos", mb.finish()));
    out
}

/// A big-endian copy of a message made of the submessages MessageBuilder emits (header
/// fields swapped by hand), to seed the E=0 paths.
fn big_endian_heartbeat() -> Vec<u8> {
    let mut v = b"RTPS\x02\x05\x01\x99".to_vec();
    v.extend_from_slice(&[9; 12]);
    v.extend_from_slice(&[id::HEARTBEAT, 0x00, 0, 28]);
    v.extend_from_slice(&[0, 0, 0x0b, 0x07, 0, 0, 0x0b, 0x02]);
    v.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 2]);
    v.extend_from_slice(&[id::ACKNACK, 0x02, 0, 28]);
    v.extend_from_slice(&[0, 0, 0x0b, 0x07, 0, 0, 0x0b, 0x02]);
    v.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 3, 0xa0, 0, 0, 0, 0, 0, 0, 7]);
    v
}

fn main() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR"));
    let captures = fuzz.join("../crates/halyard-wire/tests/captures");
    let mut c = Corpus { root: fuzz.join("corpus"), files: BTreeMap::new() };

    let mut caps: Vec<(String, Vec<u8>)> = std::fs::read_dir(&captures)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "bin"))
        .map(|p| (p.file_stem().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
        .collect();
    caps.sort();
    let mut messages: Vec<(String, Vec<u8>)> = caps.clone();
    for (n, m) in built_messages() {
        messages.push((n.to_owned(), m));
    }
    messages.push(("halyard-built-big-endian".into(), big_endian_heartbeat()));
    let conv = conversation();
    for (i, m) in conv.iter().enumerate().take(24) {
        messages.push((format!("halyard-conv-{i:02}"), m.clone()));
    }

    for (name, m) in &messages {
        c.add("rtps_message", name, m.clone());
        let (payloads, lists) = extract(m);
        for (i, p) in payloads.iter().enumerate().take(4) {
            c.add("parameter_list", &format!("{name}-payload{i}"), p.clone());
            c.add("cdr_decode", &format!("{name}-payload{i}"), p.clone());
        }
        for (i, l) in lists.iter().enumerate().take(2) {
            c.add("parameter_list", &format!("{name}-inlineqos{i}"), l.clone());
        }
        c.add("core_datagram", name, core_harness::join(&[m.clone()], 10));
    }
    for (name, m) in &caps {
        c.add("parameter_list", &format!("{name}-raw"), m.clone());
        c.add("cdr_decode", &format!("{name}-raw"), m.clone());
    }

    // Discovery data emitted by Halyard.
    let conv_payloads: Vec<Vec<u8>> = conv.iter().flat_map(|m| extract(m).0).collect();
    let mut n = 0;
    for p in &conv_payloads {
        if let Ok(d) = ParticipantData::parse(p) {
            let mut b = Vec::new();
            d.emit(&mut b);
            c.add("parameter_list", &format!("halyard-participant-{n}"), b);
            n += 1;
        }
        if let Ok(d) = EndpointData::parse(p) {
            let mut b = Vec::new();
            d.emit(&mut b);
            c.add("parameter_list", &format!("halyard-endpoint-{n}"), b);
            n += 1;
        }
    }

    // Rich CDR samples in every representation.
    for rep in [DataRepresentation::Xcdr1, DataRepresentation::Xcdr2] {
        let tag = format!("{rep:?}").to_lowercase();
        let mut b = Vec::new();
        serialize(&RichFinal::sample(), rep, &mut b).unwrap();
        c.add("cdr_decode", &format!("rich-final-{tag}"), b);
        let mut b = Vec::new();
        serialize(&RichAppendable::sample(), rep, &mut b).unwrap();
        c.add("cdr_decode", &format!("rich-appendable-{tag}"), b);
        let mut b = Vec::new();
        serialize(&RichMutable::sample(), rep, &mut b).unwrap();
        c.add("cdr_decode", &format!("rich-mutable-{tag}"), b);
        let mut b = Vec::new();
        serialize(&RichMutable::default(), rep, &mut b).unwrap();
        c.add("cdr_decode", &format!("rich-mutable-default-{tag}"), b);
    }

    // Multi-datagram sequences for the participant.
    let get = |n: &str| caps.iter().find(|(k, _)| k == n).unwrap().1.clone();
    let cyclone_seq: Vec<Vec<u8>> = [
        "cyclone-spdp",
        "cyclone-sedp-publication",
        "cyclone-sedp-subscription",
        "cyclone-heartbeat",
        "cyclone-data-keyedseq",
        "cyclone-acknack",
        "cyclone-acknack-sedp",
        "cyclone-data-ping",
        "cyclone-datafrag",
        "cyclone-datafrag-last",
        "cyclone-sedp-dispose",
    ]
    .iter()
    .map(|n| get(n))
    .collect();
    c.add("core_datagram", "cyclone-sequence", core_harness::join(&cyclone_seq, 5));
    let mut conv_seq: Vec<Vec<u8>> = conv.iter().take(core_harness::MAX_DATAGRAMS).cloned().collect();
    while conv_seq.iter().map(Vec::len).sum::<usize>() >= 65_536 {
        conv_seq.pop();
    }
    println!("conversation: {} datagrams from the Halyard peer, {} in the seed", conv.len(), conv_seq.len());
    c.add("core_datagram", "halyard-conversation", core_harness::join(&conv_seq, 1));
    c.write();
}
