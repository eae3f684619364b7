//! Proves TRANSIENT and PERSISTENT durability between participants over loopback UDP: a
//! standalone service (in memory and on a store file) serves a reader that starts after the
//! writer is gone, exactly once and in order; a restarted service serves what it stored
//! before; the embedded service keeps a deleted writer's samples; two services do not
//! duplicate deliveries; a writer's `wait_for_acknowledgments` means "stored"; a full store
//! refuses and says so; a type change on a stored topic is refused; disposed instances are
//! purged after SERVICE_CLEANUP_DELAY; a damaged store file is refused and left untouched;
//! a late reader gets the history of its partitions only, and a filtered one what its filter
//! accepts; a restarted service loads its store without the payloads, and lets go of those
//! read back for late readers once they acknowledged them.
#![cfg(feature = "durability")]
#![allow(clippy::disallowed_methods)] // tests above the core may read the clock

mod common;

use halyard::durability::{DurabilityConfig, DurabilityService, EmbeddedDurability};
use halyard::qos::{Durability, History};
use halyard::{
    DataReader, DataReaderQos, DataWriter, DataWriterQos, DomainParticipant, ParticipantOptions,
    PublisherQos, SubscriberQos,
};
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(halyard::Topic, Clone, Debug, Default, PartialEq)]
#[topic(type_name = "Durable::Sample")]
struct Sample {
    #[key]
    id: u32,
    seq: u32,
    text: String,
}

#[derive(halyard::Topic, Clone, Debug, Default, PartialEq)]
#[topic(type_name = "Durable::Other")]
struct Other {
    value: u64,
}

const T: Duration = Duration::from_secs(15);

fn options(embedded: EmbeddedDurability) -> ParticipantOptions {
    ParticipantOptions {
        interface: Some("lo".into()),
        durability: embedded,
        ..Default::default()
    }
}

fn participant(domain: u32) -> DomainParticipant {
    DomainParticipant::with_options(domain, options(EmbeddedDurability::Off)).expect("participant")
}

fn service(domain: u32, store: Option<PathBuf>) -> DurabilityService {
    DurabilityService::start(
        domain,
        DurabilityConfig {
            store,
            participant: options(EmbeddedDurability::Off),
            ..Default::default()
        },
    )
    .expect("service starts")
}

/// A fresh directory for store files.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("halyard-durability-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

fn durable_writer_qos(kind: Durability) -> DataWriterQos {
    let mut q = common::reliable_keep_all(DataWriterQos::default());
    q.durability = kind;
    q.durability_service.history = History::KeepAll;
    // Deleting the writer unregisters its instances without disposing them: durable data
    // stay (with autodispose, DDS disposes them and the service purges them after the
    // SERVICE_CLEANUP_DELAY, as `disposed_instances_are_purged_after_the_cleanup_delay` shows).
    q.writer_data_lifecycle.autodispose_unregistered_instances = false;
    q
}

fn durable_reader_qos(kind: Durability) -> DataReaderQos {
    let mut q = common::reliable_keep_all(DataReaderQos::default());
    q.durability = kind;
    q
}

fn writer(p: &DomainParticipant, topic: &str, q: DataWriterQos) -> DataWriter<Sample> {
    let t = p.create_topic::<Sample>(topic).expect("topic");
    p.create_publisher(PublisherQos::default())
        .create_datawriter(&t, q)
        .expect("writer")
}

fn reader(p: &DomainParticipant, topic: &str, kind: Durability) -> DataReader<Sample> {
    let t = p.create_topic::<Sample>(topic).expect("topic");
    p.create_subscriber(SubscriberQos::default())
        .create_datareader(&t, durable_reader_qos(kind))
        .expect("reader")
}

fn sample(i: u32) -> Sample {
    Sample {
        id: i % 4,
        seq: i,
        text: format!("indicator {i}"),
    }
}

/// Writes `n` samples once `services` services' readers and `readers` application readers
/// are there, and waits until they are all acknowledged (stored).
fn write_stored(w: &DataWriter<Sample>, services: u32, readers: u32, n: u32) {
    w.wait_for_durability_services(services, T)
        .expect("the services' readers match");
    w.wait_for_matched(readers, T).expect("the readers match");
    for i in 0..n {
        w.write(&sample(i)).expect("write");
    }
    w.wait_for_acknowledgments(T).expect("every sample stored");
}

/// Takes until `n` samples arrived (or `T`), then a little more to see copies.
fn take_all(r: &DataReader<Sample>, n: usize) -> Vec<u32> {
    let mut got = Vec::new();
    let end = Instant::now() + T;
    while got.len() < n && Instant::now() < end {
        r.wait_for_data(Duration::from_millis(100));
        for s in r.take(10_000).expect("take") {
            if let Some(d) = s.data {
                got.push(d.seq);
            }
        }
    }
    std::thread::sleep(Duration::from_millis(500));
    for s in r.take(10_000).expect("take") {
        if let Some(d) = s.data {
            got.push(d.seq);
        }
    }
    got
}

#[test]
fn a_late_reader_gets_transient_history_from_a_service_after_the_writer_left() {
    let domain = 61;
    let svc = service(domain, None);
    {
        let a = participant(domain);
        let w = writer(&a, "Indicators", durable_writer_qos(Durability::Transient));
        write_stored(&w, 1, 0, 200);
    }
    let b = participant(domain);
    let r = reader(&b, "Indicators", Durability::Transient);
    let got = take_all(&r, 200);
    assert_eq!(
        got,
        (0..200).collect::<Vec<_>>(),
        "every sample once, in order"
    );
    let stats = svc.stats();
    // 200 samples and the unregistration of each of the 4 instances when the writer left.
    assert_eq!(stats.stored, 204, "{stats:?}");
    assert!(stats.problems.is_empty(), "{:?}", stats.problems);
}

#[test]
fn persistent_samples_survive_a_restart_of_the_service() {
    let domain = 62;
    let dir = scratch("restart");
    let store = dir.join("store.sqlite");
    {
        let svc = service(domain, Some(store.clone()));
        let a = participant(domain);
        let w = writer(&a, "Persisted", durable_writer_qos(Durability::Persistent));
        write_stored(&w, 1, 0, 100);
        drop(w);
        drop(a);
        let stats = svc.stop();
        assert_eq!(stats.stored, 104, "{stats:?}");
    }
    let svc = service(domain, Some(store));
    let stats = svc.stats();
    assert_eq!(stats.loaded, 104, "the restarted service loads the store");
    assert_eq!(
        stats.relay_payload_bytes, 0,
        "the store is loaded without its payloads"
    );
    let b = participant(domain);
    let r = reader(&b, "Persisted", Durability::Persistent);
    assert_eq!(take_all(&r, 100), (0..100).collect::<Vec<_>>());
    // A TRANSIENT_LOCAL reader (what other vendors offer) is served too.
    let c = participant(domain);
    let r = reader(&c, "Persisted", Durability::TransientLocal);
    assert_eq!(take_all(&r, 100), (0..100).collect::<Vec<_>>());
    // The payloads read back for them are let go once they acknowledged.
    let deadline = Instant::now() + Duration::from_secs(10);
    while svc.stats().relay_payload_bytes > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(svc.stats().relay_payload_bytes, 0, "{:?}", svc.stats());
}

#[test]
fn the_embedded_service_keeps_a_deleted_writers_samples() {
    let domain = 63;
    let a =
        DomainParticipant::with_options(domain, options(EmbeddedDurability::On { store: None }))
            .expect("participant");
    {
        let w = writer(&a, "Embedded", durable_writer_qos(Durability::Transient));
        write_stored(&w, 1, 0, 50);
    }
    let stats = a.embedded_durability_stats().expect("an embedded service");
    assert_eq!(stats.stored, 54, "{stats:?}");
    // Handed over in memory, none through the network.
    assert_eq!(stats.fed, 54, "{stats:?}");
    let b = participant(domain);
    let r = reader(&b, "Embedded", Durability::Transient);
    assert_eq!(take_all(&r, 50), (0..50).collect::<Vec<_>>());
}

#[test]
fn embedded_services_get_only_their_own_participants_writers() {
    // Two processes each writing the same durable topic, each with its embedded service: a
    // service keeps its own participant's writers only, so the other participant's writer
    // does not match it (it would send it every sample for nothing) and each writer matches
    // its own service and the plain reader, not the other service.
    let domain = 71;
    let embedded = || {
        DomainParticipant::with_options(domain, options(EmbeddedDurability::On { store: None }))
            .expect("participant")
    };
    let (a, b) = (embedded(), embedded());
    let c = participant(domain);
    let r = reader(&c, "Scoped", Durability::Transient);
    let wa = writer(&a, "Scoped", durable_writer_qos(Durability::Transient));
    let wb = writer(&b, "Scoped", durable_writer_qos(Durability::Transient));
    for w in [&wa, &wb] {
        w.wait_for_durability_services(1, T)
            .expect("its own service");
        w.wait_for_matched(1, T).expect("the reader");
    }
    // Discovery on loopback takes milliseconds: another match would be there by now.
    std::thread::sleep(Duration::from_millis(1500));
    for (name, w) in [("a", &wa), ("b", &wb)] {
        let matched = w.publication_matched_status().unwrap().current_count;
        assert_eq!(matched, 1, "writer {name}: the reader only");
        let services = w.durability_services();
        assert_eq!(services.len(), 1, "writer {name}: {services:?}");
        assert!(services[0].embedded, "writer {name}: its own service");
    }
    for i in 0..20 {
        wa.write(&sample(i)).expect("write");
        wb.write(&sample(100 + i)).expect("write");
    }
    for w in [&wa, &wb] {
        w.wait_for_acknowledgments(T).expect("stored and received");
    }
    let mut got = take_all(&r, 40);
    got.sort_unstable();
    let mut want: Vec<u32> = (0..20).chain(100..120).collect();
    want.sort_unstable();
    assert_eq!(got, want);
    for (name, p) in [("a", &a), ("b", &b)] {
        let stats = p.embedded_durability_stats().expect("embedded service");
        assert_eq!(stats.stored, 20, "service {name}: {stats:?}");
    }
}

#[test]
fn two_services_deliver_each_sample_once() {
    let domain = 64;
    let (s1, s2) = (service(domain, None), service(domain, None));
    {
        let a = participant(domain);
        let w = writer(&a, "Twice", durable_writer_qos(Durability::Transient));
        write_stored(&w, 2, 0, 100);
    }
    let b = participant(domain);
    let r = reader(&b, "Twice", Durability::Transient);
    assert_eq!(take_all(&r, 100), (0..100).collect::<Vec<_>>());
    assert_eq!(s1.stats().stored, 104);
    assert_eq!(s2.stats().stored, 104);
}

#[test]
fn a_live_reader_gets_each_sample_once_while_a_service_runs() {
    let domain = 65;
    let _svc = service(domain, None);
    let a = participant(domain);
    let w = writer(&a, "Live", durable_writer_qos(Durability::Transient));
    let b = participant(domain);
    let r = reader(&b, "Live", Durability::Transient);
    write_stored(&w, 1, 1, 100);
    assert_eq!(take_all(&r, 100), (0..100).collect::<Vec<_>>());
}

#[test]
fn a_relay_holds_no_history_until_a_late_reader_needs_it_which_then_gets_all_of_it_once() {
    let domain = 72;
    let svc = service(domain, None);
    let a = participant(domain);
    let w = writer(&a, "Held", durable_writer_qos(Durability::Transient));
    let b = participant(domain);
    let live = reader(&b, "Held", Durability::Transient);
    write_stored(&w, 1, 1, 300);
    assert_eq!(take_all(&live, 300), (0..300).collect::<Vec<_>>());
    let held = svc.stats();
    assert_eq!(held.stored, 300, "{held:?}");
    assert_eq!(
        held.relay_held_samples, 0,
        "the live reader got every sample from the writer: the relay holds none of them"
    );
    // A late reader: the relay is written the whole history first, and the reader gets it
    // once, in order, then what the writer writes next, once.
    let c = participant(domain);
    let late = reader(&c, "Held", Durability::Transient);
    assert_eq!(take_all(&late, 300), (0..300).collect::<Vec<_>>());
    assert_eq!(svc.stats().relay_held_samples, 300);
    w.wait_for_matched(2, T)
        .expect("the late reader matches the writer");
    for i in 300..400 {
        w.write(&sample(i)).expect("write");
    }
    w.wait_for_acknowledgments(T).expect("every sample stored");
    assert_eq!(take_all(&late, 100), (300..400).collect::<Vec<_>>());
    assert_eq!(take_all(&live, 100), (300..400).collect::<Vec<_>>());
    let end = svc.stats();
    assert_eq!(end.stored, 400, "{end:?}");
    assert!(end.problems.is_empty(), "{:?}", end.problems);
}

#[test]
fn a_full_store_refuses_the_sample_says_why_and_withholds_the_acknowledgment() {
    let domain = 66;
    let svc = service(domain, None);
    let a = participant(domain);
    let mut q = durable_writer_qos(Durability::Transient);
    q.durability_service.resource_limits.max_samples = Some(10);
    let w = writer(&a, "Full", q);
    w.wait_for_durability_services(1, T)
        .expect("the service's reader matches");
    for i in 0..20 {
        w.write(&sample(i)).expect("write");
    }
    assert!(
        w.wait_for_acknowledgments(Duration::from_secs(2)).is_err(),
        "what the store refused is not acknowledged"
    );
    let stats = svc.stats();
    assert_eq!(stats.stored, 10, "{stats:?}");
    assert!(stats.refused_full >= 1, "{stats:?}");
    assert!(
        stats.problems.iter().any(|p| p.contains("max_samples")),
        "{:?}",
        stats.problems
    );
}

#[test]
fn a_type_change_on_a_stored_topic_is_refused_with_a_message() {
    let domain = 67;
    let svc = service(domain, None);
    let a = participant(domain);
    let w = writer(&a, "Typed", durable_writer_qos(Durability::Transient));
    write_stored(&w, 1, 0, 5);
    let t = a.create_topic::<Other>("Typed").expect("topic");
    let other = a
        .create_publisher(PublisherQos::default())
        .create_datawriter(&t, durable_writer_qos(Durability::Transient))
        .expect("writer");
    other.write(&Other { value: 1 }).expect("write");
    let end = Instant::now() + T;
    while svc.stats().problems.is_empty() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(50));
    }
    let problems = svc.stats().problems;
    assert!(
        problems
            .iter()
            .any(|p| p.contains("Durable::Other") && p.contains("refused")),
        "{problems:?}"
    );
    assert_eq!(svc.stats().stored, 5, "nothing of the other type is stored");
}

#[test]
fn disposed_instances_are_purged_after_the_cleanup_delay() {
    let domain = 68;
    let svc = service(domain, None);
    {
        let a = participant(domain);
        let mut q = durable_writer_qos(Durability::Transient);
        q.durability_service.service_cleanup_delay = Duration::from_nanos(300_000_000);
        q.writer_data_lifecycle.autodispose_unregistered_instances = false;
        let w = writer(&a, "Cleanup", q);
        w.wait_for_durability_services(1, T).expect("match");
        for i in 0..4 {
            w.write(&sample(i)).expect("write");
        }
        w.dispose(&sample(1)).expect("dispose");
        w.wait_for_acknowledgments(T).expect("stored");
    }
    let end = Instant::now() + T;
    while svc.stats().purged_instances == 0 && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(svc.stats().purged_instances, 1, "{:?}", svc.stats());
    let b = participant(domain);
    let r = reader(&b, "Cleanup", Durability::Transient);
    let got = take_all(&r, 3);
    assert_eq!(got, vec![0, 2, 3], "instance 1 was purged");
}

#[test]
fn a_damaged_store_file_is_refused_and_left_untouched() {
    let dir = scratch("damaged");
    let path = dir.join("store.sqlite");
    let garbage: Vec<u8> = (0..8192u32).map(|i| (i * 7 + 3) as u8).collect();
    std::fs::write(&path, &garbage).expect("write");
    let e = DurabilityService::start(
        69,
        DurabilityConfig {
            store: Some(path.clone()),
            participant: options(EmbeddedDurability::Off),
            ..Default::default()
        },
    )
    .err()
    .expect("refused");
    let msg = e.to_string();
    assert!(msg.contains("store.sqlite"), "{msg}");
    assert_eq!(std::fs::read(&path).expect("read"), garbage, "untouched");
}

#[test]
fn late_readers_get_only_their_partitions_and_what_their_filter_accepts() {
    let domain = 70;
    let svc = service(domain, None);
    {
        // Two writers of one topic, in partitions "east" and "west": two channels.
        let a = participant(domain);
        let t = a.create_topic::<Sample>("Regional").expect("topic");
        for (partition, first) in [("east", 0u32), ("west", 100)] {
            let group = PublisherQos::default().partition([partition]);
            let w = a
                .create_publisher(group)
                .create_datawriter(&t, durable_writer_qos(Durability::Transient))
                .expect("writer");
            w.wait_for_durability_services(1, T)
                .expect("the service's reader matches");
            for i in first..first + 20 {
                w.write(&sample(i)).expect("write");
            }
            w.wait_for_acknowledgments(T).expect("stored");
        }
    }
    assert_eq!(svc.stats().channels, 2, "{:?}", svc.stats());
    let b = participant(domain);
    let t = b.create_topic::<Sample>("Regional").expect("topic");
    let east = SubscriberQos::default().partition(["east"]);
    let r = b
        .create_subscriber(east.clone())
        .create_datareader(&t, durable_reader_qos(Durability::Transient))
        .expect("reader");
    assert_eq!(take_all(&r, 20), (0..20).collect::<Vec<_>>(), "east only");
    // A filtered reader in both partitions: what its filter accepts, of both channels.
    let both = SubscriberQos::default().partition(["east", "west"]);
    let cft = b
        .create_contentfilteredtopic("EvenOnes", &t, "id = 0 OR id = 2", vec![])
        .expect("filter");
    let r = b
        .create_subscriber(both)
        .create_datareader_filtered(&cft, durable_reader_qos(Durability::Transient), None)
        .expect("filtered reader");
    let mut got = take_all(&r, 20);
    got.sort_unstable();
    let want: Vec<u32> = (0..20).chain(100..120).filter(|i| i % 2 == 0).collect();
    assert_eq!(got, want, "each accepted sample of both partitions, once");
}
