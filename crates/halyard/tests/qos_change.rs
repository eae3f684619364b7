//! Proves `set_qos` between two participants over loopback UDP: a writer's DEADLINE change
//! unmatches a reader it no longer satisfies (both statuses name DEADLINE) and matches it
//! again when it satisfies it again; a publisher's PARTITION change moves its writers from one
//! reader to another, with data following; a reader's TIME_BASED_FILTER change takes effect,
//! on the Halyard writer's side too;
//! immutable policies are refused naming the policy, and nothing changes.
#![allow(clippy::disallowed_methods)] // tests above the core may read the clock

mod common;

use halyard::qos::ReliabilityKind;
use halyard::{
    DataReader, DataReaderQos, DataWriterQos, DomainParticipant, Error, PublisherQos, QosPolicyId,
    SubscriberQos,
};
use std::thread::sleep;
use std::time::{Duration, Instant};

#[derive(halyard::Topic, Clone, Debug, Default, PartialEq)]
#[topic(type_name = "QosChange")]
struct QosChange {
    #[key]
    id: u32,
    value: u32,
}

const T: Duration = Duration::from_secs(10);

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn group(partition: &str) -> PublisherQos {
    PublisherQos::default().partition([partition])
}

fn subscriber_group(partition: &str) -> SubscriberQos {
    SubscriberQos::default().partition([partition])
}

/// Waits until `f` holds, or fails saying what was awaited.
fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < T, "{what} within {T:?}");
        sleep(Duration::from_millis(10));
    }
}

/// Waits until `r` holds a sample with `value`.
fn receives(r: &DataReader<QosChange>, value: u32) {
    eventually(&format!("value {value} received"), || {
        r.take(100)
            .unwrap()
            .iter()
            .any(|s| s.data.as_ref().is_some_and(|d| d.value == value))
    });
}

fn participant(domain: u32) -> DomainParticipant {
    common::loopback_participant(domain)
}

#[test]
fn writer_deadline_change_unmatches_and_rematches_a_remote_reader() {
    let (a, b) = (participant(140), participant(140));
    let ta = a.create_topic::<QosChange>("Change").unwrap();
    let tb = b.create_topic::<QosChange>("Change").unwrap();
    let mut wq = DataWriterQos::default();
    wq.deadline = ms(100);
    let w = a
        .create_publisher(PublisherQos::default())
        .create_datawriter(&ta, wq)
        .unwrap();
    let mut rq = DataReaderQos::default();
    rq.reliability.kind = ReliabilityKind::Reliable;
    rq.deadline = ms(200);
    let r = b
        .create_subscriber(SubscriberQos::default())
        .create_datareader(&tb, rq)
        .unwrap();
    w.wait_for_matched(1, T).expect("matched");
    r.wait_for_matched(1, T).expect("matched");

    // Immutable: refused with the policy named, and the QoS stays as it was.
    let before = w.qos().unwrap();
    let mut bad = before.clone();
    bad.reliability.kind = ReliabilityKind::BestEffort;
    let e = w.set_qos(bad).unwrap_err();
    assert!(
        matches!(
            e,
            Error::ImmutablePolicy {
                policy: QosPolicyId::Reliability
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("RELIABILITY"), "{e}");
    assert_eq!(w.qos().unwrap(), before);
    let mut bad = r.qos().unwrap();
    bad.history = halyard::qos::History::KeepLast(3);
    let e = r.set_qos(bad).unwrap_err();
    assert!(
        matches!(
            e,
            Error::ImmutablePolicy {
                policy: QosPolicyId::History
            }
        ),
        "{e}"
    );

    // 300 ms offered against 200 ms requested: unmatched on both sides, DEADLINE named.
    let mut slower = w.qos().unwrap();
    slower.deadline = ms(300);
    w.set_qos(slower).unwrap();
    assert_eq!(w.qos().unwrap().deadline, ms(300));
    eventually("both sides unmatched", || {
        w.publication_matched_status().unwrap().current_count == 0
            && r.subscription_matched_status().unwrap().current_count == 0
    });
    let offered = w.offered_incompatible_qos_status().unwrap();
    assert_eq!(offered.last_policy_id, Some(QosPolicyId::Deadline));
    eventually("the reader names DEADLINE", || {
        r.requested_incompatible_qos_status()
            .unwrap()
            .last_policy_id
            == Some(QosPolicyId::Deadline)
    });

    // Back to 100 ms: matched again, and data flows.
    let mut faster = w.qos().unwrap();
    faster.deadline = ms(100);
    w.set_qos(faster).unwrap();
    w.wait_for_matched(1, T).expect("rematched");
    r.wait_for_matched(1, T).expect("rematched");
    w.write(&QosChange { id: 1, value: 7 }).unwrap();
    receives(&r, 7);
}

#[test]
fn publisher_partition_change_moves_its_writers() {
    let (a, b) = (participant(141), participant(141));
    let ta = a.create_topic::<QosChange>("Moving").unwrap();
    let tb = b.create_topic::<QosChange>("Moving").unwrap();
    let publisher = a.create_publisher(group("red"));
    let mut wq = DataWriterQos::default();
    wq.reliability.kind = ReliabilityKind::Reliable;
    let w = publisher.create_datawriter(&ta, wq).unwrap();
    let mut rq = DataReaderQos::default();
    rq.reliability.kind = ReliabilityKind::Reliable;
    let red = b
        .create_subscriber(subscriber_group("red"))
        .create_datareader(&tb, rq.clone())
        .unwrap();
    let blue = b
        .create_subscriber(subscriber_group("blu?"))
        .create_datareader(&tb, rq)
        .unwrap();
    red.wait_for_matched(1, T).expect("red matched");
    w.wait_for_matched(1, T).expect("writer matched");
    w.write(&QosChange { id: 1, value: 1 }).unwrap();
    receives(&red, 1);

    publisher.set_qos(group("blue")).unwrap();
    assert_eq!(publisher.qos().partition, vec!["blue".to_string()]);
    // The writer takes its publisher's partitions: it announces them.
    eventually("the writer announces partition blue", || {
        b.discovered_publications()
            .iter()
            .any(|e| e.topic_name == "Moving" && e.qos.partition == ["blue"])
    });
    blue.wait_for_matched(1, T).expect("blue matched");
    eventually("red unmatched", || {
        red.subscription_matched_status().unwrap().current_count == 0
    });
    eventually("the writer sees only blue", || {
        let s = w.publication_matched_status().unwrap();
        s.current_count == 1 && s.total_count == 2
    });
    // A partition change is not an incompatibility.
    assert_eq!(w.offered_incompatible_qos_status().unwrap().total_count, 0);
    assert_eq!(
        red.requested_incompatible_qos_status().unwrap().total_count,
        0
    );
    w.write(&QosChange { id: 1, value: 2 }).unwrap();
    receives(&blue, 2);
    sleep(Duration::from_millis(200));
    assert!(
        red.take(100).unwrap().is_empty(),
        "red still hears the writer"
    );
}

#[test]
fn reader_time_filter_change_takes_effect() {
    let (a, b) = (participant(142), participant(142));
    let ta = a.create_topic::<QosChange>("Filtered").unwrap();
    let tb = b.create_topic::<QosChange>("Filtered").unwrap();
    let mut wq = DataWriterQos::default();
    wq.reliability.kind = ReliabilityKind::Reliable;
    let w = a
        .create_publisher(PublisherQos::default())
        .create_datawriter(&ta, wq)
        .unwrap();
    let mut rq = DataReaderQos::default();
    rq.reliability.kind = ReliabilityKind::Reliable;
    rq.history = halyard::qos::History::KeepAll;
    let r = b
        .create_subscriber(SubscriberQos::default())
        .create_datareader(&tb, rq)
        .unwrap();
    w.wait_for_matched(1, T).expect("matched");
    r.wait_for_matched(1, T).expect("matched");
    let burst = |from: u32| {
        for v in from..from + 10 {
            w.write(&QosChange { id: 1, value: v }).unwrap();
        }
        w.wait_for_acknowledgments(T).unwrap();
        sleep(Duration::from_millis(100));
        r.take(100).unwrap().len()
    };
    assert_eq!(burst(0), 10, "no filter: every sample");
    assert_eq!(w.stats().unwrap().time_filtered_out, 0);
    let mut q = r.qos().unwrap();
    q.time_based_filter = ms(10_000);
    r.set_qos(q).unwrap();
    assert_eq!(
        burst(100),
        1,
        "10 s minimum separation: one sample per burst"
    );
    // set_qos returned once the writer's participant had the new announcement: the writer
    // sent the reader the first sample of the burst only.
    assert_eq!(w.stats().unwrap().time_filtered_out, 9);
    let mut q = r.qos().unwrap();
    q.time_based_filter = Duration::ZERO;
    r.set_qos(q).unwrap();
    assert_eq!(burst(200), 10, "filter off again: every sample");
    assert_eq!(w.stats().unwrap().time_filtered_out, 9);
}

#[test]
fn entity_factory_creates_disabled_endpoints_until_enable() {
    let (a, b) = (participant(143), participant(143));
    let ta = a.create_topic::<QosChange>("Later").unwrap();
    let tb = b.create_topic::<QosChange>("Later").unwrap();
    let mut wq = DataWriterQos::default();
    wq.reliability.kind = ReliabilityKind::Reliable;
    let w = a
        .create_publisher(PublisherQos::default().autoenable_created_entities(false))
        .create_datawriter(&ta, wq)
        .unwrap();
    let mut rq = DataReaderQos::default();
    rq.reliability.kind = ReliabilityKind::Reliable;
    let r = b
        .create_subscriber(SubscriberQos::default().autoenable_created_entities(false))
        .create_datareader(&tb, rq)
        .unwrap();
    assert!(!w.is_enabled() && !r.is_enabled());
    assert!(matches!(
        w.write(&QosChange { id: 1, value: 1 }),
        Err(Error::NotEnabled)
    ));
    assert!(matches!(r.take(10), Err(Error::NotEnabled)));
    // Not announced: nothing matches while both are disabled, nor with one enabled.
    w.enable().unwrap();
    sleep(Duration::from_millis(500));
    assert_eq!(w.publication_matched_status().unwrap().current_count, 0);
    r.enable().unwrap();
    w.wait_for_matched(1, T)
        .expect("matched once both are enabled");
    r.wait_for_matched(1, T).expect("matched");
    w.write(&QosChange { id: 1, value: 9 }).unwrap();
    receives(&r, 9);
}
