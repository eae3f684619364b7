//! The checks of the `rtps_message` and `parameter_list` fuzz targets.
//!
//! This file depends on `halyard_wire` and `std` only, so that the stable test
//! `crates/halyard-wire/tests/fuzz_corpus.rs` can include it verbatim (`#[path]`) and run the
//! committed corpora and regressions through exactly the same checks without nightly.
//!
//! Every function must never panic on any input; a panic (an assertion here or a panic inside
//! halyard-wire) is a bug.

use halyard_wire::discovery::{parse_key_guid, EndpointData, ParticipantData};
use halyard_wire::param::{pid, ParameterList, ParameterListWriter};
use halyard_wire::{Data, DataFrag, Header, Message, MessageBuilder, Submessage, WireError};

/// Values longer than this cannot be re-emitted by `ParameterListWriter` (documented:
/// the length field saturates), so round trips of such lists are not checked.
const MAX_EMITTABLE_VALUE: usize = 65_532;

/// `rtps_message`: parse, iterate every submessage, and for each parsed submessage
/// re-emit it alone with [`MessageBuilder`] and re-parse: parse → emit → parse.
pub fn check_rtps_message(data: &[u8]) {
    let Ok(msg) = Message::parse(data) else {
        return;
    };
    let header = msg.header;
    let mut n = 0usize;
    for sub in msg.submessages() {
        n += 1;
        assert!(n <= data.len() / 4 + 1, "more submessages than 4-byte headers fit");
        if let Ok(sub) = sub {
            round_trip_submessage(&header, &sub);
        }
    }
}

/// Re-encodes a parameter list (either byte order) as a little-endian list with the same
/// (id, value) sequence; None if it cannot be re-emitted faithfully.
fn reencode_list(list: &ParameterList<'_>) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut w = ParameterListWriter::new(&mut out);
    for p in list.iter() {
        let p = p.expect("inline QoS accepted by the submessage parser must iterate cleanly");
        if p.value.len() > MAX_EMITTABLE_VALUE {
            return None;
        }
        w.raw(p.id, p.value);
    }
    w.finish();
    Some(out)
}

/// The (id, value) pairs of a list that is known to be valid.
fn params<'a>(list: &ParameterList<'a>) -> Vec<(u16, &'a [u8])> {
    list.iter().map(|p| p.map(|p| (p.id, p.value)).expect("re-emitted list iterates")).collect()
}

/// The re-parsed list equals the original up to the 4-byte padding the writer adds to values.
fn assert_same_params(orig: &ParameterList<'_>, again: &ParameterList<'_>) {
    let (a, b) = (params(orig), params(again));
    assert_eq!(a.len(), b.len(), "inline QoS parameter count");
    for ((ia, va), (ib, vb)) in a.iter().zip(&b) {
        assert_eq!(ia, ib, "inline QoS parameter id");
        assert!(vb.starts_with(va) && vb.len() == va.len().div_ceil(4) * 4, "inline QoS value");
    }
}

/// `again` is `orig` followed by the (< 4) zero bytes of submessage padding.
fn assert_padded(orig: &[u8], again: &[u8], what: &str) {
    assert!(again.starts_with(orig), "{what}: re-parsed bytes do not start with the original");
    assert!(again.len() - orig.len() < 4, "{what}: more than 3 bytes of padding");
    assert!(again[orig.len()..].iter().all(|&b| b == 0), "{what}: non-zero padding");
}

fn emit_one(header: &Header, sub: &Submessage<'_>) -> Option<Vec<u8>> {
    let mut mb = MessageBuilder::new(Vec::new(), header);
    match sub {
        Submessage::Data(d) => {
            let qos = match &d.inline_qos {
                Some(l) => Some(reencode_list(l)?),
                None => None,
            };
            mb.data(&Data { inline_qos: qos.as_deref().map(|q| ParameterList::new(q, true)), ..*d })
        }
        Submessage::DataFrag(d) => {
            let qos = match &d.inline_qos {
                Some(l) => Some(reencode_list(l)?),
                None => None,
            };
            mb.data_frag(&DataFrag {
                inline_qos: qos.as_deref().map(|q| ParameterList::new(q, true)),
                ..*d
            })
        }
        Submessage::Heartbeat(hb) => mb.heartbeat(hb),
        Submessage::HeartbeatFrag(hb) => mb.heartbeat_frag(hb),
        Submessage::AckNack(an) => mb.acknack(an),
        Submessage::NackFrag(nf) => mb.nack_frag(nf),
        Submessage::Gap(g) => mb.gap(g),
        Submessage::InfoTs(t) => mb.info_ts(*t),
        Submessage::InfoDst(p) => mb.info_dst(*p),
        Submessage::InfoSrc(s) => mb.info_src(s),
        Submessage::InfoReply(r) => mb.info_reply(r),
        // PAD and unknown submessages carry nothing to compare.
        _ => return None,
    }
    Some(mb.finish())
}

fn frag_fields(d: &DataFrag<'_>) -> impl PartialEq + std::fmt::Debug {
    (
        d.reader_id,
        d.writer_id,
        d.writer_sn,
        d.fragment_starting_num,
        d.fragments_in_submessage,
        d.fragment_size,
        d.sample_size,
        d.key_flag,
    )
}

fn round_trip_submessage(header: &Header, sub: &Submessage<'_>) {
    let Some(bytes) = emit_one(header, sub) else {
        return;
    };
    let msg = Message::parse(&bytes).expect("emitted header parses");
    assert_eq!(msg.header, *header, "header round trip");
    let mut subs = msg.submessages();
    let again = match subs.next() {
        Some(Ok(s)) => s,
        other => panic!("emitted {sub:?} does not re-parse: {other:?}\nbytes {bytes:02x?}"),
    };
    assert!(subs.next().is_none(), "emitted one submessage, parsed more");
    match (sub, &again) {
        (Submessage::Data(a), Submessage::Data(b)) => {
            assert_eq!(
                (a.reader_id, a.writer_id, a.writer_sn, a.key_flag),
                (b.reader_id, b.writer_id, b.writer_sn, b.key_flag),
                "DATA fields"
            );
            match (&a.inline_qos, &b.inline_qos) {
                (None, None) => {}
                (Some(x), Some(y)) => assert_same_params(x, y),
                _ => panic!("DATA inline QoS presence changed"),
            }
            match (a.payload, b.payload) {
                (None, None) => {}
                (Some(x), Some(y)) => assert_padded(x, y, "DATA payload"),
                _ => panic!("DATA payload presence changed"),
            }
        }
        (Submessage::DataFrag(a), Submessage::DataFrag(b)) => {
            assert_eq!(frag_fields(a), frag_fields(b), "DATA_FRAG fields");
            match (&a.inline_qos, &b.inline_qos) {
                (None, None) => {}
                (Some(x), Some(y)) => assert_same_params(x, y),
                _ => panic!("DATA_FRAG inline QoS presence changed"),
            }
            assert_padded(a.payload, b.payload, "DATA_FRAG payload");
        }
        (Submessage::Heartbeat(a), Submessage::Heartbeat(b)) => assert_eq!(a, b),
        (Submessage::HeartbeatFrag(a), Submessage::HeartbeatFrag(b)) => assert_eq!(a, b),
        (Submessage::AckNack(a), Submessage::AckNack(b)) => assert_eq!(a, b),
        (Submessage::NackFrag(a), Submessage::NackFrag(b)) => assert_eq!(a, b),
        (Submessage::Gap(a), Submessage::Gap(b)) => assert_eq!(a, b),
        (Submessage::InfoTs(a), Submessage::InfoTs(b)) => assert_eq!(a, b),
        (Submessage::InfoDst(a), Submessage::InfoDst(b)) => assert_eq!(a, b),
        (Submessage::InfoSrc(a), Submessage::InfoSrc(b)) => assert_eq!(a, b),
        (Submessage::InfoReply(a), Submessage::InfoReply(b)) => assert_eq!(a, b),
        (a, b) => panic!("submessage kind changed: {a:?} -> {b:?}"),
    }
}

/// `parameter_list`: list iteration / find / key_hash / status_info in both byte orders, and
/// the discovery parsers; discovery data that parses must survive emit → parse unchanged.
pub fn check_parameter_list(data: &[u8]) {
    for le in [true, false] {
        check_list(ParameterList::new(data, le));
        // The same list behind a 4-byte encapsulation header, as the discovery parsers see it.
        if let Some(body) = data.get(4..) {
            check_list(ParameterList::new(body, le));
        }
    }

    check_discovery(data);
    // The same parameters read in the other byte order (PL_CDR_BE <-> PL_CDR_LE).
    if let Some(body) = data.get(4..) {
        for enc in [0x02u8, 0x03] {
            if data[..2] != [0, enc] {
                let mut v = Vec::with_capacity(data.len());
                v.extend_from_slice(&[0, enc, 0, 0]);
                v.extend_from_slice(body);
                check_discovery(&v);
            }
        }
    }
}

fn check_list(list: ParameterList<'_>) {
    let items: Vec<Result<_, WireError>> = list.iter().take(data_bound(list.bytes)).collect();
    let clean = items.iter().all(|r| r.is_ok());
    let encoded = list.encoded_len();
    assert_eq!(encoded.is_ok(), clean, "encoded_len and iteration disagree on validity");
    if let Ok(n) = encoded {
        assert!(n <= list.bytes.len() && n >= 4, "encoded_len {n} out of range");
        // The list truncated to its encoded length holds the same parameters.
        let head = ParameterList::new(&list.bytes[..n], list.little_endian);
        let again: Vec<_> = head.iter().map(|r| r.expect("prefix iterates").id).collect();
        let ids: Vec<_> = items.iter().map(|r| r.as_ref().unwrap().id).collect();
        assert_eq!(ids, again, "truncation to encoded_len changed the list");
        for (i, p) in items.iter().enumerate() {
            let p = p.as_ref().unwrap();
            assert_ne!(p.id, pid::PAD, "PAD must be skipped");
            assert_ne!(p.id, pid::SENTINEL, "SENTINEL must end the list");
            let first = ids.iter().position(|&id| id == p.id).unwrap();
            if first == i {
                let f = list.find(p.id).expect("find on a valid list").expect("present");
                assert_eq!(f.value, p.value, "find returns the first occurrence");
            }
        }
    }
    match list.key_hash() {
        Ok(Some(k)) => {
            let p = list.find(pid::KEY_HASH).unwrap().unwrap();
            assert_eq!(&p.value[..16], &k);
        }
        Ok(None) => assert!(matches!(list.find(pid::KEY_HASH), Ok(None))),
        Err(_) => {}
    }
    if let Ok(s) = list.status_info() {
        if s != 0 {
            assert!(matches!(list.find(pid::STATUS_INFO), Ok(Some(_))));
        }
    }
}

/// An upper bound on the number of parameters a list of these bytes can hold (4-byte headers).
fn data_bound(bytes: &[u8]) -> usize {
    bytes.len() / 4 + 2
}

fn check_discovery(payload: &[u8]) {
    if let Ok(p) = ParticipantData::parse(payload) {
        let mut buf = Vec::new();
        p.emit(&mut buf);
        let again = ParticipantData::parse(&buf)
            .unwrap_or_else(|e| panic!("emitted ParticipantData does not parse: {e:?}\n{p:?}"));
        assert_eq!(p, again, "ParticipantData emit -> parse");
    }
    if let Ok(e) = EndpointData::parse(payload) {
        let mut buf = Vec::new();
        e.emit(&mut buf);
        let again = EndpointData::parse(&buf)
            .unwrap_or_else(|err| panic!("emitted EndpointData does not parse: {err:?}\n{e:?}"));
        assert_eq!(e, again, "EndpointData emit -> parse");
        // Its key (PID_ENDPOINT_GUID) is what a dispose carries.
        assert_eq!(parse_key_guid(&buf), Ok(Some(e.guid)), "key of emitted EndpointData");
    }
    let _ = parse_key_guid(payload);
}
