//! Proves that a durability service's readers and relay writers produce no status of an
//! application's writers and readers (matched counts, incompatible QoS, liveliness, deadline,
//! lost samples, and the listener calls of each), standalone or embedded in the writer's own
//! process, while their data still flow: writers' acknowledgments wait for the services, and
//! late readers get the relays' history.
#![cfg(feature = "durability")]
#![allow(clippy::disallowed_methods)] // tests above the core may read the clock

use halyard::durability::{DurabilityConfig, DurabilityService, EmbeddedDurability};
use halyard::qos::{Durability, ReliabilityKind};
use halyard::status::{DeadlineMissedStatus, IncompatibleQosStatus, LivelinessChangedStatus};
use halyard::{
    DataReaderListener, DataReaderQos, DataWriterListener, DataWriterQos, DomainParticipant,
    MatchedStatus, ParticipantOptions, PublisherQos, SubscriberQos,
};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(halyard::Topic, Clone, Debug, Default, PartialEq)]
#[topic(type_name = "Sight::Shape")]
struct Shape {
    #[key]
    color: String,
    size: u32,
}

const T: Duration = Duration::from_secs(15);

fn options(durability: EmbeddedDurability) -> ParticipantOptions {
    ParticipantOptions {
        interface: Some("lo".into()),
        durability,
        ..Default::default()
    }
}

fn participant(domain: u32) -> DomainParticipant {
    DomainParticipant::with_options(domain, options(EmbeddedDurability::Off)).expect("participant")
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("halyard-sight-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
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

fn writer_qos(kind: Durability) -> DataWriterQos {
    let mut q = DataWriterQos::default();
    q.reliability.kind = ReliabilityKind::Reliable;
    q.history = halyard::qos::History::KeepAll;
    q.durability = kind;
    q.writer_data_lifecycle.autodispose_unregistered_instances = false;
    q
}

fn reader_qos(kind: Durability) -> DataReaderQos {
    let mut q = DataReaderQos::default();
    q.reliability.kind = ReliabilityKind::Reliable;
    q.history = halyard::qos::History::KeepAll;
    q.durability = kind;
    q
}

/// Counts every listener call a writer or a reader gets.
#[derive(Default)]
struct Calls {
    matched: AtomicU32,
    incompatible: AtomicU32,
    liveliness: AtomicU32,
    deadline: AtomicU32,
    lost: AtomicU32,
}

impl Calls {
    fn total(&self) -> [u32; 5] {
        [
            &self.matched,
            &self.incompatible,
            &self.liveliness,
            &self.deadline,
            &self.lost,
        ]
        .map(|c| c.load(Ordering::SeqCst))
    }
}

impl DataWriterListener for Calls {
    fn on_publication_matched(&self, _: MatchedStatus) {
        self.matched.fetch_add(1, Ordering::SeqCst);
    }
    fn on_offered_incompatible_qos(&self, _: IncompatibleQosStatus) {
        self.incompatible.fetch_add(1, Ordering::SeqCst);
    }
}

impl DataReaderListener for Calls {
    fn on_subscription_matched(&self, _: MatchedStatus) {
        self.matched.fetch_add(1, Ordering::SeqCst);
    }
    fn on_requested_incompatible_qos(&self, _: IncompatibleQosStatus) {
        self.incompatible.fetch_add(1, Ordering::SeqCst);
    }
    fn on_liveliness_changed(&self, _: LivelinessChangedStatus) {
        self.liveliness.fetch_add(1, Ordering::SeqCst);
    }
    fn on_requested_deadline_missed(&self, _: DeadlineMissedStatus) {
        self.deadline.fetch_add(1, Ordering::SeqCst);
    }
    fn on_sample_lost(&self, _: u64) {
        self.lost.fetch_add(1, Ordering::SeqCst);
    }
}

fn shape(size: u32) -> Shape {
    Shape {
        color: "RED".into(),
        size,
    }
}

/// A PERSISTENT writer of `topic` stores a shape in the service on `domain` and leaves: the
/// service has a PERSISTENT channel of the topic from then on.
fn store_a_persistent_shape(domain: u32, topic: &str) {
    let p = participant(domain);
    let t = p.create_topic::<Shape>(topic).expect("topic");
    let w = p
        .create_publisher(PublisherQos::default())
        .create_datawriter(&t, writer_qos(Durability::Persistent))
        .expect("writer");
    w.wait_for_durability_services(1, T)
        .expect("the service's reader");
    w.write(&shape(1)).expect("write");
    w.wait_for_acknowledgments(T).expect("stored");
}

/// The OMG suite's Test_Durability_8 failure: a TRANSIENT writer on a topic whose service
/// also keeps a PERSISTENT channel was told at once, with no subscriber at all, that a reader
/// (the service's PERSISTENT one) requests more than it offers, and counted the service's
/// TRANSIENT reader as a matched reader.
#[test]
fn a_writer_gets_no_status_from_the_services_readers() {
    let domain = 150;
    let dir = scratch("writer");
    let svc = service(domain, Some(dir.join("store.sqlite")));
    store_a_persistent_shape(domain, "Square");
    let p = participant(domain);
    let t = p.create_topic::<Shape>("Square").expect("topic");
    let calls = Arc::new(Calls::default());
    let w = p
        .create_publisher(PublisherQos::default())
        .create_datawriter_with_listener(
            &t,
            writer_qos(Durability::Transient),
            Some(calls.clone() as Arc<dyn DataWriterListener>),
        )
        .expect("writer");
    // The service's TRANSIENT reader comes after its PERSISTENT one, which the writer has
    // thus seen (and found incompatible) by then.
    w.wait_for_durability_services(1, T)
        .expect("the service's TRANSIENT reader matches");
    w.write(&shape(2)).expect("write");
    w.wait_for_acknowledgments(T)
        .expect("acknowledgment waits for the service: stored");
    assert_eq!(calls.total(), [0; 5], "no listener call");
    assert_eq!(w.offered_incompatible_qos_status().unwrap().total_count, 0);
    assert_eq!(w.publication_matched_status().unwrap().current_count, 0);
    assert_eq!(w.publication_matched_status().unwrap().total_count, 0);
    let services = w.durability_services();
    assert_eq!(services.len(), 1, "{services:?}");
    assert!(services[0].stored_all && !services[0].embedded);
    assert!(
        matches!(
            w.wait_for_matched(1, Duration::from_millis(300)),
            Err(halyard::Error::Timeout)
        ),
        "no application reader to wait for"
    );
    // An application reader is counted, alone.
    let q = participant(domain);
    let tq = q.create_topic::<Shape>("Square").expect("topic");
    let _r = q
        .create_subscriber(SubscriberQos::default())
        .create_datareader(&tq, reader_qos(Durability::Volatile))
        .expect("reader");
    w.wait_for_matched(1, T).expect("the reader matches");
    assert_eq!(w.publication_matched_status().unwrap().current_count, 1);
    assert_eq!(calls.matched.load(Ordering::SeqCst), 1);
    assert!(
        svc.stats().problems.is_empty(),
        "{:?}",
        svc.stats().problems
    );
}

/// The embedded service of the writer's own process is out of sight too.
#[test]
fn a_writer_gets_no_status_from_its_embedded_service() {
    let domain = 151;
    let p =
        DomainParticipant::with_options(domain, options(EmbeddedDurability::On { store: None }))
            .expect("participant");
    let t = p.create_topic::<Shape>("Circle").expect("topic");
    let calls = Arc::new(Calls::default());
    let w = p
        .create_publisher(PublisherQos::default())
        .create_datawriter_with_listener(
            &t,
            writer_qos(Durability::Transient),
            Some(calls.clone() as Arc<dyn DataWriterListener>),
        )
        .expect("writer");
    w.wait_for_durability_services(1, T)
        .expect("the embedded service's reader");
    w.write(&shape(3)).expect("write");
    w.wait_for_acknowledgments(T).expect("stored");
    let services = w.durability_services();
    assert_eq!(services.len(), 1, "{services:?}");
    assert!(services[0].embedded && services[0].stored_all);
    assert!(
        matches!(
            w.wait_for_stored(1, Duration::from_millis(300)),
            Err(halyard::Error::Timeout)
        ),
        "the embedded service does not outlive the process"
    );
    assert_eq!(calls.total(), [0; 5]);
    assert_eq!(w.publication_matched_status().unwrap().current_count, 0);
}

/// A late reader gets a relay's history, but no status of the relay: not matched, not alive,
/// no incompatible QoS (a PERSISTENT reader and the TRANSIENT relay), nothing lost. (The
/// deadline of relayed history is proven with a writer killed, in `halyard-cli`'s
/// `durable_last_value` tests.)
#[test]
fn a_reader_gets_the_relays_history_and_no_status_from_it() {
    let domain = 152;
    let svc = service(domain, None);
    {
        let a = participant(domain);
        let t = a.create_topic::<Shape>("Triangle").expect("topic");
        let w = a
            .create_publisher(PublisherQos::default())
            .create_datawriter(&t, writer_qos(Durability::Transient))
            .expect("writer");
        w.wait_for_durability_services(1, T).expect("the service");
        for size in 0..5 {
            w.write(&Shape {
                color: format!("C{size}"),
                size,
            })
            .expect("write");
        }
        w.wait_for_stored(1, T).expect("stored");
    }
    let b = participant(domain);
    let t = b.create_topic::<Shape>("Triangle").expect("topic");
    let calls = Arc::new(Calls::default());
    let r = b
        .create_subscriber(SubscriberQos::default())
        .create_datareader_with_listener(
            &t,
            reader_qos(Durability::Transient),
            Some(calls.clone() as Arc<dyn DataReaderListener>),
        )
        .expect("reader");
    let persistent_calls = Arc::new(Calls::default());
    let persistent = b
        .create_subscriber(SubscriberQos::default())
        .create_datareader_with_listener(
            &t,
            reader_qos(Durability::Persistent),
            Some(persistent_calls.clone() as Arc<dyn DataReaderListener>),
        )
        .expect("reader");
    let mut got = Vec::new();
    let end = Instant::now() + T;
    while got.len() < 5 && Instant::now() < end {
        r.wait_for_data(Duration::from_millis(100));
        got.extend(
            r.take(100)
                .expect("take")
                .into_iter()
                .filter_map(|s| s.data.map(|d| d.size)),
        );
    }
    got.sort_unstable();
    assert_eq!(got, vec![0, 1, 2, 3, 4], "the relay's history");
    // Time for the relay's heartbeats and the PERSISTENT reader's discovery of it.
    std::thread::sleep(Duration::from_millis(1000));
    assert_eq!(calls.total(), [0; 5], "no listener call of the relay");
    assert_eq!(persistent_calls.total(), [0; 5]);
    assert_eq!(r.subscription_matched_status().unwrap().total_count, 0);
    assert_eq!(r.liveliness_changed_status().unwrap().alive_count, 0);
    assert_eq!(r.stats().unwrap().sample_lost, 0);
    assert_eq!(
        persistent
            .requested_incompatible_qos_status()
            .unwrap()
            .total_count,
        0
    );
    drop(svc);
}

/// An embedded service serves what its store holds of another run only for the channels its
/// own participant writes: a process with a TRANSIENT writer of a topic does not announce a
/// relay of the PERSISTENT history an earlier process stored in the same file (every reader
/// of the topic, other vendors' included, would see it as a writer), and serves that history
/// once it writes PERSISTENT data of the topic itself.
#[test]
fn an_embedded_service_serves_a_stored_channel_once_its_participant_writes_it() {
    let domain = 153;
    let dir = scratch("dormant");
    let store = dir.join("store.sqlite");
    let embedded = || {
        DomainParticipant::with_options(
            domain,
            options(EmbeddedDurability::On {
                store: Some(store.clone()),
            }),
        )
        .expect("participant")
    };
    {
        let earlier = embedded();
        let t = earlier.create_topic::<Shape>("Hexagon").expect("topic");
        let w = earlier
            .create_publisher(PublisherQos::default())
            .create_datawriter(&t, writer_qos(Durability::Persistent))
            .expect("writer");
        w.wait_for_durability_services(1, T)
            .expect("its embedded service");
        w.write(&shape(7)).expect("write");
        w.wait_for_acknowledgments(T).expect("stored");
    }
    let later = embedded();
    let t = later.create_topic::<Shape>("Hexagon").expect("topic");
    let publisher = later.create_publisher(PublisherQos::default());
    let _transient = publisher
        .create_datawriter(&t, writer_qos(Durability::Transient))
        .expect("writer");
    let observer = participant(domain);
    let relays = |kind: Durability| {
        observer
            .discovered_publications()
            .iter()
            .filter(|ed| {
                ed.topic_name == "Hexagon"
                    && halyard::qos::Durability::from(ed.qos.durability) == kind
                    && halyard::durability::is_service_endpoint(ed)
            })
            .count()
    };
    let end = Instant::now() + T;
    while relays(Durability::Transient) == 0 && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        relays(Durability::Transient),
        1,
        "the TRANSIENT channel's relay"
    );
    // Discovery on loopback takes milliseconds: the PERSISTENT relay, announced by then
    // if it were served, would be here.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        relays(Durability::Persistent),
        0,
        "the stored PERSISTENT channel is not served by a participant that does not write it"
    );
    let _persistent = publisher
        .create_datawriter(&t, writer_qos(Durability::Persistent))
        .expect("writer");
    let tq = observer.create_topic::<Shape>("Hexagon").expect("topic");
    let r = observer
        .create_subscriber(SubscriberQos::default())
        .create_datareader(&tq, reader_qos(Durability::Persistent))
        .expect("reader");
    let mut got = Vec::new();
    let end = Instant::now() + T;
    while got.is_empty() && Instant::now() < end {
        r.wait_for_data(Duration::from_millis(100));
        got.extend(
            r.take(100)
                .expect("take")
                .into_iter()
                .filter_map(|s| s.data.map(|d| d.size)),
        );
    }
    assert_eq!(
        got,
        vec![7],
        "the stored history, served once the participant writes it"
    );
}
