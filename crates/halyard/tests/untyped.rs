//! Proves that untyped (serialized) endpoints interoperate with typed ones and with Cyclone DDS both ways: the bytes and keys a reader gets are the writer's, keyed instances are disposed and unregistered (key hashes computed by the reader's key support when Cyclone sends none), TRANSIENT_LOCAL history, listeners, WaitSets and ReadConditions work, and malformed samples are refused.

// A test driver, not the protocol core: it may read the clock for its deadlines.
#![allow(clippy::disallowed_methods)]

#[path = "common/python_peer.rs"]
mod python_peer;

use halyard::cdr::{self, CdrError, DataRepresentation, Extensibility};
use halyard::qos::History;
use halyard::{
    DataReaderQos, DataWriterQos, DomainParticipant, Error, InstanceState, KeySupport,
    ParticipantOptions, PublisherQos, Sample, SubscriberQos, Topic, UntypedDataReader, UntypedType,
    WaitSet,
};
use python_peer::{peer_available, secs, Peer};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The type the python peers (tests/peers/peer_common.py) write and read.
#[derive(halyard::Topic, Clone, Debug, Default, PartialEq)]
#[topic(type_name = "HalyardKeyed")]
struct Keyed {
    #[key]
    id: i32,
    seq: u32,
    // `sequence<uint8>`, as the Python peer declares it (the types are checked).
    #[uint8]
    payload: Vec<u8>,
}

/// Key support computed from the bytes alone, as a dynamic type would: the key is the
/// leading int32 of an XCDR1 little-endian body, its key hash the big-endian value padded
/// with zeros to 16 bytes (XTypes 1.3 §7.6.8).
struct LeadingI32Key;

impl LeadingI32Key {
    fn key(payload: &[u8]) -> Result<[u8; 4], CdrError> {
        match payload {
            [0x00, 0x01, _, _, a, b, c, d, ..] => Ok([*a, *b, *c, *d]),
            [0x00, 0x01, ..] => Err(CdrError::Truncated),
            [x, y, ..] => Err(CdrError::BadEncapsulation(u16::from_be_bytes([*x, *y]))),
            _ => Err(CdrError::Truncated),
        }
    }
}

impl KeySupport for LeadingI32Key {
    fn key_hash(&self, payload: &[u8], _key_only: bool) -> Result<[u8; 16], CdrError> {
        let k = i32::from_le_bytes(Self::key(payload)?);
        let mut h = [0u8; 16];
        h[..4].copy_from_slice(&k.to_be_bytes());
        Ok(h)
    }

    fn serialized_key(&self, sample: &[u8]) -> Result<Vec<u8>, CdrError> {
        let mut out = vec![0x00, 0x01, 0x00, 0x00];
        out.extend_from_slice(&Self::key(sample)?);
        Ok(out)
    }
}

fn keyed_type() -> UntypedType {
    UntypedType::keyed(
        "HalyardKeyed",
        Extensibility::Final,
        Arc::new(LeadingI32Key),
    )
}

fn participant(domain: u32) -> DomainParticipant {
    DomainParticipant::with_options(
        domain,
        ParticipantOptions {
            interface: Some("lo".into()),
            ..Default::default()
        },
    )
    .expect("create participant")
}

/// `q` made RELIABLE and KEEP_ALL (a writer's or a reader's QoS).
macro_rules! reliable_keep_all {
    ($q:expr) => {
        $q.reliable().keep_all()
    };
}

fn sample(id: i32, seq: u32) -> Keyed {
    Keyed {
        id,
        seq,
        payload: (0..(seq as u8 % 7)).collect(),
    }
}

fn bytes_of(s: &Keyed) -> Vec<u8> {
    let mut b = Vec::new();
    cdr::serialize(s, DataRepresentation::Xcdr1, &mut b).unwrap();
    b
}

/// Takes from `rd` until `done` says enough or 10 s passed, waiting on a WaitSet with a
/// ReadCondition of the reader.
fn take_until(
    rd: &UntypedDataReader,
    done: impl Fn(&[Sample<Vec<u8>>]) -> bool,
) -> Vec<Sample<Vec<u8>>> {
    let ws = WaitSet::new();
    ws.attach_condition(rd.create_readcondition(true)).unwrap();
    let end = Instant::now() + Duration::from_secs(10);
    let mut got = Vec::new();
    while !done(&got) && Instant::now() < end {
        let _ = ws.wait(Duration::from_millis(200));
        got.extend(rd.take(1000).unwrap());
    }
    got
}

#[test]
fn typed_writer_to_untyped_reader_bytes_keys_and_dispose() {
    let (a, b) = (participant(83), participant(83));
    let topic: Topic<Keyed> = a.create_topic("UntypedA").unwrap();
    let wr = a
        .create_publisher(PublisherQos::default())
        .create_datawriter(&topic, reliable_keep_all!(DataWriterQos::default()))
        .unwrap();
    let ut = b.create_untyped_topic("UntypedA", keyed_type()).unwrap();
    let rd = b
        .create_subscriber(SubscriberQos::default())
        .create_untyped_datareader(&ut, reliable_keep_all!(DataReaderQos::default()), None)
        .unwrap();
    // Both sides matched before writing: a VOLATILE reader gets what is written after.
    wr.wait_for_matched(1, secs(10.0)).unwrap();
    rd.wait_for_matched(1, secs(10.0)).unwrap();
    let sent: Vec<Keyed> = (0..6).map(|i| sample(i % 3, i as u32)).collect();
    for s in &sent {
        wr.write(s).unwrap();
    }
    wr.dispose(&sent[1]).unwrap();
    let got = take_until(&rd, |g| g.len() >= 7);
    let data: Vec<&Sample<Vec<u8>>> = got.iter().filter(|s| s.info.valid_data).collect();
    assert_eq!(data.len(), 6, "{got:?}");
    for (s, want) in data.iter().zip(&sent) {
        assert_eq!(s.data.as_deref(), Some(&bytes_of(want)[..]));
        assert_eq!(s.info.instance_handle.0, cdr::key_hash(want).unwrap());
        assert_eq!(
            rd.lookup_instance(s.data.as_deref().unwrap()).unwrap(),
            s.info.instance_handle
        );
    }
    let disposed: Vec<_> = got.iter().filter(|s| !s.info.valid_data).collect();
    assert_eq!(disposed.len(), 1, "{got:?}");
    assert_eq!(
        disposed[0].info.instance_state,
        InstanceState::NotAliveDisposed
    );
    assert_eq!(
        disposed[0].info.instance_handle.0,
        cdr::key_hash(&sent[1]).unwrap()
    );
    assert_eq!(rd.subscription_matched_status().unwrap().current_count, 1);
}

#[test]
fn untyped_writer_to_typed_reader_values_dispose_and_unregister() {
    let (a, b) = (participant(84), participant(84));
    let ut = a.create_untyped_topic("UntypedB", keyed_type()).unwrap();
    let mut wq = reliable_keep_all!(DataWriterQos::default());
    wq.writer_data_lifecycle.autodispose_unregistered_instances = false;
    let wr = a
        .create_publisher(PublisherQos::default())
        .create_untyped_datawriter(&ut, wq, None)
        .unwrap();
    let topic: Topic<Keyed> = b.create_topic("UntypedB").unwrap();
    let rd = b
        .create_subscriber(SubscriberQos::default())
        .create_datareader(&topic, reliable_keep_all!(DataReaderQos::default()))
        .unwrap();
    // Both sides matched before writing: a VOLATILE reader gets what is written after.
    wr.wait_for_matched(1, secs(10.0)).unwrap();
    rd.wait_for_matched(1, secs(10.0)).unwrap();
    let sent: Vec<Keyed> = (0..4).map(|i| sample(10 + i, i as u32 * 3)).collect();
    for s in &sent {
        wr.write(&bytes_of(s)).unwrap();
    }
    wr.dispose(&bytes_of(&sent[0])).unwrap();
    wr.unregister_instance(&bytes_of(&sent[1])).unwrap();
    wr.wait_for_acknowledgments(secs(10.0)).unwrap();
    let end = Instant::now() + Duration::from_secs(10);
    let mut got = Vec::new();
    while got.len() < 6 && Instant::now() < end {
        rd.wait_for_data(Duration::from_millis(100));
        got.extend(rd.take(100).unwrap());
    }
    let values: Vec<&Keyed> = got.iter().filter_map(|s| s.data.as_ref()).collect();
    assert_eq!(
        values,
        sent.iter().collect::<Vec<_>>(),
        "reader matched {:?}, stats {:?}",
        rd.subscription_matched_status().unwrap(),
        b.stats()
    );
    let state_of = |k: &Keyed| {
        let h = cdr::key_hash(k).unwrap();
        got.iter()
            .rev()
            .find(|s| s.info.instance_handle.0 == h)
            .map(|s| s.info.instance_state)
    };
    assert_eq!(state_of(&sent[0]), Some(InstanceState::NotAliveDisposed));
    assert_eq!(state_of(&sent[1]), Some(InstanceState::NotAliveNoWriters));
    assert_eq!(state_of(&sent[2]), Some(InstanceState::Alive));
    // Deleting the writer unregisters the instances it still has registered.
    drop(wr);
    let end = Instant::now() + Duration::from_secs(10);
    let mut after = Vec::new();
    while after.len() < 2 && Instant::now() < end {
        rd.wait_for_data(Duration::from_millis(100));
        after.extend(rd.take(100).unwrap());
    }
    let mut handles: Vec<[u8; 16]> = after
        .iter()
        .filter(|s| s.info.instance_state == InstanceState::NotAliveNoWriters)
        .map(|s| s.info.instance_handle.0)
        .collect();
    handles.sort();
    let mut want = vec![
        cdr::key_hash(&sent[2]).unwrap(),
        cdr::key_hash(&sent[3]).unwrap(),
    ];
    want.sort();
    assert_eq!(handles, want, "{after:?}");
}

#[test]
fn untyped_writer_refuses_malformed_samples() {
    let a = participant(85);
    let keyless = UntypedType::keyless("Blob", Extensibility::Final);
    let t = a.create_untyped_topic("UntypedC", keyless).unwrap();
    let publisher = a.create_publisher(PublisherQos::default());
    let wr = publisher
        .create_untyped_datawriter(&t, DataWriterQos::default(), None)
        .unwrap();
    let bad_param = |r: halyard::Result<()>| matches!(r, Err(Error::BadParameter(_)));
    assert!(bad_param(wr.write(&[0x00])), "no encapsulation header");
    assert!(matches!(
        wr.write(&[0x12, 0x34, 0, 0]),
        Err(Error::Serialization(CdrError::BadEncapsulation(0x1234)))
    ));
    // XCDR2 bytes on a writer whose readers were matched on XCDR1.
    assert!(bad_param(wr.write(&[0x00, 0x07, 0, 0, 1, 0, 0, 0])));
    assert!(bad_param(wr.dispose(&[0x00, 0x01, 0, 0, 1, 0, 0, 0])));
    wr.write(&[0x00, 0x01, 0, 0, 1, 0, 0, 0]).unwrap();
    let kt = a.create_untyped_topic("UntypedD", keyed_type()).unwrap();
    let kw = publisher
        .create_untyped_datawriter(&kt, DataWriterQos::default(), None)
        .unwrap();
    // The key support's own error reaches the caller.
    assert!(matches!(
        kw.write(&[0x00, 0x01, 0, 0, 1]),
        Err(Error::Serialization(CdrError::Truncated))
    ));
    assert!(a.create_untyped_topic("", keyed_type()).is_err());
}

#[test]
fn cyclone_writer_to_untyped_reader() {
    if !peer_available() {
        return;
    }
    let dp = participant(86);
    let ut = dp.create_untyped_topic("UntypedPy", keyed_type()).unwrap();
    let rd = dp
        .create_subscriber(SubscriberQos::default())
        .create_untyped_datareader(&ut, reliable_keep_all!(DataReaderQos::default()), None)
        .unwrap();
    let mut py = Peer::spawn(
        "cyclone_pub.py",
        &[
            "--domain",
            "86",
            "--topic",
            "UntypedPy",
            "--type",
            "keyed",
            "--count",
            "8",
            "--size",
            "5",
            "--timeout",
            "15",
            "--wait-match",
            "1",
            "--linger",
            "1",
        ],
    );
    let got = take_until(&rd, |g| g.len() >= 8);
    let o = py.finish(secs(20.0));
    o.check(o.ok, "python pub failed");
    o.check(
        got.len() == 8,
        &format!("got {} samples: {got:?}", got.len()),
    );
    for (i, s) in got.iter().enumerate() {
        let want = Keyed {
            id: i as i32 % 4,
            seq: i as u32,
            payload: (0..5).collect(),
        };
        let bytes = s.data.as_deref().expect("valid data");
        // Cyclone's bytes decode to what it wrote; they are Halyard's encoding of it (the
        // encapsulation options may carry Cyclone's padding count).
        assert_eq!(cdr::deserialize::<Keyed>(bytes).unwrap(), want);
        assert_eq!(&bytes[..2], &bytes_of(&want)[..2]);
        assert_eq!(&bytes[4..], &bytes_of(&want)[4..]);
        assert_eq!(s.info.instance_handle.0, cdr::key_hash(&want).unwrap());
    }
}

#[test]
fn untyped_writer_to_cyclone_reader() {
    if !peer_available() {
        return;
    }
    let dp = participant(86);
    let ut = dp
        .create_untyped_topic("UntypedPy2", UntypedType::of::<Keyed>())
        .unwrap();
    let wr = dp
        .create_publisher(PublisherQos::default())
        .create_untyped_datawriter(&ut, reliable_keep_all!(DataWriterQos::default()), None)
        .unwrap();
    let mut py = Peer::spawn(
        "cyclone_sub.py",
        &[
            "--domain",
            "86",
            "--topic",
            "UntypedPy2",
            "--type",
            "keyed",
            "--count",
            "6",
            "--timeout",
            "15",
            "--wait-match",
            "1",
            "--linger",
            "1",
        ],
    );
    wr.wait_for_matched(1, secs(10.0)).unwrap();
    if !py.wait_line("\"reader_matched\"", secs(10.0)) {
        let o = py.finish(secs(20.0));
        o.check(false, "the python reader never matched the untyped writer");
    }
    for i in 0..6u32 {
        let s = Keyed {
            id: i as i32 % 2,
            seq: i,
            payload: vec![7; i as usize],
        };
        wr.write(&bytes_of(&s)).unwrap();
    }
    wr.wait_for_acknowledgments(secs(10.0)).unwrap();
    let o = py.finish(secs(20.0));
    o.check(o.ok, "python sub failed");
    let mut got = o.samples();
    got.sort();
    let want: Vec<(i64, Option<i64>, i64)> = (0..6).map(|i| (i, Some(i % 2), i)).collect();
    o.check(got == want, &format!("python got {got:?}"));
}

/// Counts a reader's data-available and a writer's publication-matched callbacks.
#[derive(Default)]
struct Counter(std::sync::atomic::AtomicUsize);

impl halyard::DataReaderListener for Counter {
    fn on_data_available(&self) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl halyard::DataWriterListener for Counter {
    fn on_publication_matched(&self, _status: halyard::MatchedStatus) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

#[test]
fn untyped_transient_local_writer_serves_a_late_untyped_reader_with_listeners() {
    let (a, b) = (participant(85), participant(85));
    let ut = a.create_untyped_topic("UntypedE", keyed_type()).unwrap();
    let mut wq = DataWriterQos::default();
    wq.durability = halyard::qos::Durability::TransientLocal;
    wq.history = History::KeepLast(2);
    let matched = Arc::new(Counter::default());
    let wr = a
        .create_publisher(PublisherQos::default())
        .create_untyped_datawriter(&ut, wq, Some(matched.clone()))
        .unwrap();
    // Three samples of instance 1 (history keeps the last two) and one of instance 2.
    let sent = [sample(1, 0), sample(1, 1), sample(1, 2), sample(2, 3)];
    for s in &sent {
        wr.write(&bytes_of(s)).unwrap();
    }
    let mut rq = reliable_keep_all!(DataReaderQos::default());
    rq.durability = halyard::qos::Durability::TransientLocal;
    let available = Arc::new(Counter::default());
    let late = b.create_untyped_topic("UntypedE", keyed_type()).unwrap();
    let rd = b
        .create_subscriber(SubscriberQos::default())
        .create_untyped_datareader(&late, rq, Some(available.clone()))
        .unwrap();
    let got = take_until(&rd, |g| g.len() >= 3);
    let bytes: Vec<Vec<u8>> = got.iter().filter_map(|s| s.data.clone()).collect();
    let mut want: Vec<Vec<u8>> = sent[1..].iter().map(bytes_of).collect();
    let mut sorted = bytes.clone();
    sorted.sort();
    want.sort();
    assert_eq!(sorted, want);
    // Listeners run on the receive thread after the cache is updated: give them a moment.
    let end = Instant::now() + Duration::from_secs(5);
    let count = |c: &Counter| c.0.load(std::sync::atomic::Ordering::SeqCst);
    while (count(&available) == 0 || count(&matched) == 0) && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(count(&available) >= 1, "no data-available callback");
    assert!(count(&matched) >= 1, "no publication-matched callback");
}

/// The last instance state of each instance in `samples`, by key hash.
fn last_states(samples: &[Sample<Vec<u8>>]) -> std::collections::BTreeMap<[u8; 16], InstanceState> {
    samples
        .iter()
        .map(|s| (s.info.instance_handle.0, s.info.instance_state))
        .collect()
}

fn keyed_hash(id: i32) -> [u8; 16] {
    cdr::key_hash(&sample(id, 0)).unwrap()
}

#[test]
fn cyclone_writer_dispose_and_unregister_reach_an_untyped_reader() {
    if !peer_available() {
        return;
    }
    let dp = participant(86);
    let ut = dp.create_untyped_topic("UntypedPyI", keyed_type()).unwrap();
    let rd = dp
        .create_subscriber(SubscriberQos::default())
        .create_untyped_datareader(&ut, reliable_keep_all!(DataReaderQos::default()), None)
        .unwrap();
    let mut py = Peer::spawn(
        "cyclone_instances.py",
        &[
            "--domain",
            "86",
            "--topic",
            "UntypedPyI",
            "--write",
            "--timeout",
            "8",
        ],
    );
    // Cyclone sends no key hash (GenerateKeyhash is off by default): the reader's key support
    // computes the instances, of the samples and of the key-only dispose and unregister.
    let want = [
        (keyed_hash(1), InstanceState::Alive),
        (keyed_hash(2), InstanceState::NotAliveDisposed),
        (keyed_hash(3), InstanceState::NotAliveNoWriters),
    ];
    let got = take_until(&rd, |g| last_states(g) == want.into_iter().collect());
    let o = py.finish(secs(15.0));
    o.check(o.ok, "python writer failed");
    assert_eq!(last_states(&got), want.into_iter().collect(), "{got:?}");
    assert_eq!(got.iter().filter(|s| s.info.valid_data).count(), 3);
}

#[test]
fn untyped_dispose_and_unregister_reach_a_cyclone_reader() {
    if !peer_available() {
        return;
    }
    let dp = participant(86);
    let ut = dp
        .create_untyped_topic("UntypedPyJ", UntypedType::of::<Keyed>())
        .unwrap();
    let mut wq = reliable_keep_all!(DataWriterQos::default());
    wq.writer_data_lifecycle.autodispose_unregistered_instances = false;
    let wr = dp
        .create_publisher(PublisherQos::default())
        .create_untyped_datawriter(&ut, wq, None)
        .unwrap();
    let mut py = Peer::spawn(
        "cyclone_instances.py",
        &[
            "--domain",
            "86",
            "--topic",
            "UntypedPyJ",
            "--read",
            "--count",
            "100",
            "--timeout",
            "5",
        ],
    );
    wr.wait_for_matched(1, secs(10.0)).unwrap();
    assert!(py.wait_line("\"ready\"", secs(10.0)));
    for id in 1..=3 {
        wr.write(&bytes_of(&sample(id, id as u32))).unwrap();
    }
    wr.dispose(&bytes_of(&sample(2, 0))).unwrap();
    wr.unregister_instance(&bytes_of(&sample(3, 0))).unwrap();
    wr.wait_for_acknowledgments(secs(10.0)).unwrap();
    let o = py.finish(secs(15.0));
    o.check(o.ok, "python reader failed");
    // Instance handles are Cyclone's own: map them to ids through the valid samples.
    let lines: Vec<&String> = o.lines.iter().filter(|l| l.contains("\"state\"")).collect();
    let mut state_of_id = std::collections::BTreeMap::new();
    for l in &lines {
        let h = handle(l);
        let id = lines
            .iter()
            .find(|m| handle(m) == h && python_peer::json_int(m, "id").is_some())
            .and_then(|m| python_peer::json_int(m, "id"));
        let state = l
            .split("\"state\": \"")
            .nth(1)
            .and_then(|s| s.split('"').next());
        state_of_id.insert(id, state.map(str::to_string));
    }
    let want: std::collections::BTreeMap<_, _> = [
        (Some(1), Some("alive".to_string())),
        (Some(2), Some("disposed".to_string())),
        (Some(3), Some("no_writers".to_string())),
    ]
    .into_iter()
    .collect();
    o.check(
        state_of_id == want,
        &format!("states by id: {state_of_id:?}"),
    );
}

/// The `"handle"` of a python peer's line, as text (a u64 may not fit `json_int`).
fn handle(line: &str) -> Option<String> {
    let rest = line.split("\"handle\": ").nth(1)?;
    Some(rest.split(',').next()?.to_string())
}
