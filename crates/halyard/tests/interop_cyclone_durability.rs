//! Proves TRANSIENT and PERSISTENT durability across vendors, with Cyclone DDS processes (the
//! `cyclonedds` Python package) on loopback:
//!
//! - a Halyard durability service serves the history of a Halyard PERSISTENT writer that has
//!   left to Cyclone TRANSIENT_LOCAL readers that start afterwards (two, one after the other),
//!   every sample once and each instance's in order (Cyclone ignores PID_ORIGINAL_WRITER_INFO,
//!   as RTPS lets it). Cyclone's TRANSIENT and PERSISTENT readers match but ask no writer for
//!   history: they wait for Cyclone's own durability service;
//! - the same service keeps what a Cyclone TRANSIENT writer wrote: after that process exited,
//!   a Halyard reader and a Cyclone reader started later both get it.
//!
//! (A Halyard reader getting history from a Cyclone TRANSIENT_LOCAL writer is
//! `interop_cyclone_py::transient_local_python_writer_halyard_late_reader`.)
#![cfg(feature = "durability")]
// A test driver, not the protocol core: it may read the clock for its deadlines.
#![allow(clippy::disallowed_methods)]

#[path = "common/python_peer.rs"]
mod python_peer;

use halyard::durability::{DurabilityConfig, DurabilityService, EmbeddedDurability};
use halyard::qos::{Durability, History};
use halyard::{
    DataReader, DataReaderQos, DataWriterQos, DomainParticipant, ParticipantOptions, PublisherQos,
    SubscriberQos,
};
use python_peer::{peer_available, secs, Peer, PeerOutput};
use std::time::{Duration, Instant};

/// The type of `tests/peers/peer_common.py` (`Keyed`).
#[derive(halyard::Topic, Clone, Debug, Default)]
#[topic(type_name = "HalyardKeyed")]
struct Keyed {
    #[key]
    id: i32,
    seq: u32,
    // `sequence<uint8>`, as the Python peer declares it (the types are checked).
    #[uint8]
    payload: Vec<u8>,
}

const N: u32 = 20;

fn options() -> ParticipantOptions {
    ParticipantOptions {
        interface: Some("lo".into()),
        durability: EmbeddedDurability::Off,
        ..Default::default()
    }
}

/// A standalone service on a fresh store file.
fn service(domain: u32, name: &str) -> DurabilityService {
    let dir = std::env::temp_dir().join(format!(
        "halyard-interop-durability-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    DurabilityService::start(
        domain,
        DurabilityConfig {
            store: Some(dir.join("store.sqlite")),
            participant: options(),
            ..Default::default()
        },
    )
    .expect("service starts")
}

/// A Cyclone reader started now: the samples it printed, as (seq, id).
fn cyclone_late_reader(
    domain: u32,
    topic: &str,
    durability: &str,
) -> (PeerOutput, Vec<(i64, i64)>) {
    let domain = domain.to_string();
    let mut py = Peer::spawn(
        "cyclone_sub.py",
        &[
            "--domain",
            &domain,
            "--topic",
            topic,
            "--type",
            "keyed",
            "--reliable",
            "--durability",
            durability,
            "--count",
            &N.to_string(),
            "--timeout",
            "8",
        ],
    );
    let o = py.finish(secs(20.0));
    let got = o
        .samples()
        .into_iter()
        .map(|(seq, id, _)| (seq, id.unwrap_or(-1)))
        .collect();
    (o, got)
}

/// Checks a Cyclone reader got samples 0..N once each, with their keys, each instance's in
/// order (a Cyclone `take` returns the samples grouped by instance).
fn check_history(o: &PeerOutput, got: &[(i64, i64)], what: &str) {
    o.check(o.ok, &format!("{what}: the Cyclone reader failed"));
    let mut seqs: Vec<i64> = got.iter().map(|&(seq, _)| seq).collect();
    seqs.sort_unstable();
    o.check(
        seqs == (0..N as i64).collect::<Vec<_>>(),
        &format!("{what}: want samples 0..{N} once each, got {got:?}"),
    );
    for id in 0..4 {
        let of_instance: Vec<i64> = got.iter().filter(|s| s.1 == id).map(|s| s.0).collect();
        o.check(
            of_instance.windows(2).all(|w| w[0] < w[1])
                && of_instance.iter().all(|seq| seq % 4 == id),
            &format!("{what}: instance {id} out of order or mixed up: {of_instance:?}"),
        );
    }
}

/// Takes until `n` samples arrived (or 15 s), then 300 ms more to see copies.
fn take_seqs(r: &DataReader<Keyed>, n: usize) -> Vec<u32> {
    let mut got = Vec::new();
    let end = Instant::now() + Duration::from_secs(15);
    let mut extra = None;
    loop {
        r.wait_for_data(Duration::from_millis(50));
        for s in r.take(1000).expect("take") {
            if let Some(d) = s.data {
                got.push(d.seq);
            }
        }
        let now = Instant::now();
        if got.len() >= n && extra.is_none() {
            extra = Some(now + Duration::from_millis(300));
        }
        if now >= end || extra.is_some_and(|e| now >= e) {
            return got;
        }
    }
}

#[test]
fn a_halyard_service_serves_a_departed_halyard_writers_history_to_late_cyclone_readers() {
    if !peer_available() {
        return;
    }
    const DOMAIN: u32 = 100;
    let topic = "DurableInteropH";
    let svc = service(DOMAIN, "h2c");
    {
        let p = DomainParticipant::with_options(DOMAIN, options()).expect("participant");
        let t = p.create_topic::<Keyed>(topic).expect("topic");
        let mut q = DataWriterQos::default()
            .reliable()
            .keep_all()
            .durability(Durability::Persistent);
        q.durability_service.history = History::KeepAll;
        q.writer_data_lifecycle.autodispose_unregistered_instances = false;
        let w = p
            .create_publisher(PublisherQos::default())
            .create_datawriter(&t, q)
            .expect("writer");
        w.wait_for_durability_services(1, Duration::from_secs(15))
            .expect("the service's reader matches");
        for i in 0..N {
            w.write(&Keyed {
                id: (i % 4) as i32,
                seq: i,
                payload: vec![i as u8; 8],
            })
            .expect("write");
        }
        w.wait_for_acknowledgments(Duration::from_secs(15))
            .expect("every sample stored");
    }
    // The writer's participant is gone: only the service has the samples.
    // TRANSIENT_LOCAL: a Cyclone reader asks writers for their history only then (its
    // `handle_as_transient_local`, src/core/ddsi/src/ddsi_endpoint.c); a Cyclone TRANSIENT or
    // PERSISTENT reader matches but waits for Cyclone's own durability service instead.
    for _ in 0..2 {
        let (o, got) = cyclone_late_reader(DOMAIN, topic, "transient-local");
        check_history(&o, &got, "TRANSIENT_LOCAL Cyclone reader");
    }
    // The samples, and each instance's unregistration when the writer was deleted.
    let s = svc.stats();
    assert_eq!(s.stored, N as u64 + 4, "stats: {s:?}");
    // Its readers do not take back what its own relays send.
    assert_eq!(s.duplicates, 0, "stats: {s:?}");
    assert!(s.problems.is_empty(), "problems: {:?}", s.problems);
}

#[test]
fn a_halyard_service_keeps_a_cyclone_transient_writers_samples_for_late_readers_of_both() {
    if !peer_available() {
        return;
    }
    const DOMAIN: u32 = 101;
    let topic = "DurableInteropC";
    let svc = service(DOMAIN, "c2h");
    let domain = DOMAIN.to_string();
    let count = N.to_string();
    let mut py = Peer::spawn(
        "cyclone_pub.py",
        &[
            "--domain",
            &domain,
            "--topic",
            topic,
            "--type",
            "keyed",
            "--reliable",
            "--durability",
            "transient",
            "--count",
            &count,
            "--size",
            "8",
            "--wait-match",
            "1",
            "--timeout",
            "15",
        ],
    );
    let o = py.finish(secs(25.0));
    o.check(o.ok, "the Cyclone writer failed");
    o.check(
        o.field("written") == Some(N as i64),
        "the Cyclone writer did not write everything (did it match the service?)",
    );
    // The writer waited for acknowledgments, which the service gives once it stored.
    let s = svc.stats();
    assert_eq!(
        s.stored, N as u64,
        "the service stored: {s:?}\n{}",
        o.report
    );

    let p = DomainParticipant::with_options(DOMAIN, options()).expect("participant");
    let t = p.create_topic::<Keyed>(topic).expect("topic");
    let r = p
        .create_subscriber(SubscriberQos::default())
        .create_datareader(
            &t,
            DataReaderQos::default()
                .reliable()
                .keep_all()
                .durability(Durability::Transient),
        )
        .expect("reader");
    let got = take_seqs(&r, N as usize);
    assert_eq!(
        got,
        (0..N).collect::<Vec<_>>(),
        "a late Halyard reader gets the Cyclone writer's samples once, in order"
    );
    let (o, got) = cyclone_late_reader(DOMAIN, topic, "transient-local");
    check_history(
        &o,
        &got,
        "late Cyclone reader of a Cyclone writer's samples",
    );
}
