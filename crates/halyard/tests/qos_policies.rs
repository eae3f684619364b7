//! Proves the DCPS side of the QoS policies between two participants over loopback UDP:
//! DEADLINE statuses and listener calls on both sides, LIFESPAN in the reader's cache,
//! EXCLUSIVE ownership handed over when the owner is deleted, WRITER_DATA_LIFECYCLE
//! (unregister disposes; deleting a writer unregisters its instances), READER_DATA_LIFECYCLE
//! autopurge, the writer's RESOURCE_LIMITS.max_instances, a Halyard writer applying a remote
//! Halyard reader's TIME_BASED_FILTER on its side, and QoS that is refused with a message
//! naming the policy.
#![allow(clippy::disallowed_methods)] // tests above the core may read the clock

mod common;

use halyard::qos::Ownership;
use halyard::{
    DataReader, DataReaderListener, DataReaderQos, DataWriterQos, DeadlineMissedStatus,
    DomainParticipant, Error, InstanceState, PublisherQos, SubscriberQos,
};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::thread::sleep;
use std::time::{Duration, Instant};

#[derive(halyard::Topic, Clone, Debug, Default, PartialEq)]
#[topic(type_name = "QosTest")]
struct QosTest {
    #[key]
    id: u32,
    value: u32,
}

const T: Duration = Duration::from_secs(10);

fn participant(domain: u32) -> DomainParticipant {
    common::loopback_participant(domain)
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn reliable<Q: common::EndpointQosBuilder>(q: Q) -> Q {
    common::reliable_keep_all(q)
}

/// Two participants with a writer on the first and a reader on the second, matched.
fn pair(
    domain: u32,
    wq: DataWriterQos,
    rq: DataReaderQos,
) -> (
    DomainParticipant,
    DomainParticipant,
    halyard::DataWriter<QosTest>,
    DataReader<QosTest>,
) {
    let (a, b) = (participant(domain), participant(domain));
    let ta = a.create_topic::<QosTest>("QosTopic").unwrap();
    let tb = b.create_topic::<QosTest>("QosTopic").unwrap();
    let w = a
        .create_publisher(PublisherQos::default())
        .create_datawriter(&ta, wq)
        .unwrap();
    let r = b
        .create_subscriber(SubscriberQos::default())
        .create_datareader(&tb, rq)
        .unwrap();
    w.wait_for_matched(1, T).expect("matched");
    (a, b, w, r)
}

/// The instance state of each sample taken, after waiting `settle`.
fn states_after(r: &DataReader<QosTest>, settle: Duration) -> Vec<(u32, InstanceState, bool)> {
    sleep(settle);
    r.read(100)
        .unwrap()
        .into_iter()
        .map(|s| {
            let id = s.data.as_ref().map_or(u32::MAX, |d| d.id);
            (id, s.info.instance_state, s.info.valid_data)
        })
        .collect()
}

struct CountingListener(AtomicU32);

impl DataReaderListener for CountingListener {
    fn on_requested_deadline_missed(&self, _s: DeadlineMissedStatus) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn deadline_statuses_and_listener_count_each_missed_period_per_instance() {
    let mut wq = reliable(DataWriterQos::default());
    wq.deadline = ms(50);
    let mut rq = reliable(DataReaderQos::default());
    rq.deadline = ms(100);
    let (_a, _b, w, r) = pair(120, wq, rq);
    let calls = Arc::new(CountingListener(AtomicU32::new(0)));
    r.set_listener(Some(calls.clone())).unwrap();
    // Two instances written every 10 ms for 0.5 s: nothing is missed.
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(500) {
        w.write(&QosTest { id: 1, value: 0 }).unwrap();
        w.write(&QosTest { id: 2, value: 0 }).unwrap();
        sleep(Duration::from_millis(10));
    }
    assert_eq!(w.offered_deadline_missed_status().unwrap().total_count, 0);
    assert_eq!(r.requested_deadline_missed_status().unwrap().total_count, 0);
    // Instance 2 stops; instance 1 goes on for 1 s.
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(1) {
        w.write(&QosTest { id: 1, value: 1 }).unwrap();
        sleep(Duration::from_millis(10));
    }
    let offered = w.offered_deadline_missed_status().unwrap();
    let requested = r.requested_deadline_missed_status().unwrap();
    let instance2 = w.register_instance(&QosTest { id: 2, value: 0 }).unwrap();
    // 1 s / 50 ms = 20 offered, 1 s / 100 ms = 10 requested, give or take scheduling.
    assert!(
        (15..=21).contains(&offered.total_count),
        "offered {offered:?}"
    );
    assert!(
        (8..=11).contains(&requested.total_count),
        "requested {requested:?}"
    );
    assert_eq!(offered.last_instance_handle, instance2);
    assert_eq!(requested.last_instance_handle, instance2);
    assert_eq!(requested.total_count_change, requested.total_count);
    assert_eq!(
        r.requested_deadline_missed_status()
            .unwrap()
            .total_count_change,
        0
    );
    assert!(calls.0.load(Ordering::SeqCst) >= requested.total_count);
}

#[test]
fn lifespan_removes_expired_samples_from_the_reader_cache() {
    let mut wq = reliable(DataWriterQos::default());
    wq.lifespan = ms(200);
    let (_a, _b, w, r) = pair(121, wq, reliable(DataReaderQos::default()));
    for v in 0..5 {
        w.write(&QosTest { id: v, value: v }).unwrap();
    }
    w.wait_for_acknowledgments(T).unwrap();
    assert_eq!(r.read(100).unwrap().len(), 5, "samples arrive while alive");
    sleep(Duration::from_millis(300));
    assert!(r.take(100).unwrap().is_empty(), "expired samples were kept");
}

#[test]
fn exclusive_ownership_passes_to_the_weaker_writer_when_the_owner_is_deleted() {
    let (a, b) = (participant(122), participant(122));
    let ta = a.create_topic::<QosTest>("Owned").unwrap();
    let tb = b.create_topic::<QosTest>("Owned").unwrap();
    let exclusive = |mut q: DataWriterQos, strength| {
        q.ownership = Ownership::Exclusive;
        q.ownership_strength = strength;
        reliable(q)
    };
    let strong = a
        .create_publisher(PublisherQos::default())
        .create_datawriter(&ta, exclusive(DataWriterQos::default(), 10))
        .unwrap();
    let weak = b
        .create_publisher(PublisherQos::default())
        .create_datawriter(&tb, exclusive(DataWriterQos::default(), 5))
        .unwrap();
    let r = b
        .create_subscriber(SubscriberQos::default())
        .create_datareader(
            &tb,
            reliable(DataReaderQos::default().ownership(Ownership::Exclusive)),
        )
        .unwrap();
    r.wait_for_matched(2, T).unwrap();
    strong.wait_for_matched(1, T).unwrap();
    let values = |r: &DataReader<QosTest>| -> Vec<u32> {
        r.take(1000)
            .unwrap()
            .into_iter()
            .filter_map(|s| s.data.map(|d| d.value))
            .collect()
    };
    for i in 0..20 {
        strong.write(&QosTest { id: 1, value: 10 }).unwrap();
        if i == 0 {
            strong.wait_for_acknowledgments(T).unwrap();
        }
        weak.write(&QosTest { id: 1, value: 5 }).unwrap();
    }
    strong.wait_for_acknowledgments(T).unwrap();
    let owned = values(&r);
    assert!(
        !owned.is_empty() && owned.iter().all(|&v| v == 10),
        "{owned:?}"
    );
    drop(strong);
    sleep(Duration::from_millis(200));
    let _ = values(&r);
    for _ in 0..5 {
        weak.write(&QosTest { id: 1, value: 5 }).unwrap();
    }
    sleep(Duration::from_millis(100));
    assert_eq!(values(&r), vec![5; 5]);
}

#[test]
fn unregister_disposes_by_default_and_deleting_a_writer_unregisters_its_instances() {
    let (_a, _b, w, r) = pair(
        123,
        reliable(DataWriterQos::default()),
        reliable(DataReaderQos::default()),
    );
    w.write(&QosTest { id: 1, value: 1 }).unwrap();
    w.write(&QosTest { id: 2, value: 2 }).unwrap();
    w.unregister_instance(&QosTest { id: 1, value: 0 }).unwrap();
    w.wait_for_acknowledgments(T).unwrap();
    let s = states_after(&r, Duration::from_millis(50));
    assert!(
        s.contains(&(1, InstanceState::NotAliveDisposed, true)),
        "autodispose: unregistering disposed instance 1: {s:?}"
    );
    assert!(s.contains(&(2, InstanceState::Alive, true)), "{s:?}");
    drop(w);
    let s = states_after(&r, Duration::from_millis(300));
    assert!(
        s.contains(&(2, InstanceState::NotAliveDisposed, true)),
        "deleting the writer disposed instance 2: {s:?}"
    );

    // Without autodispose, unregistering leaves the instance without writers.
    let mut wq = reliable(DataWriterQos::default());
    wq.writer_data_lifecycle.autodispose_unregistered_instances = false;
    let (_a, _b, w, r) = pair(124, wq, reliable(DataReaderQos::default()));
    w.write(&QosTest { id: 1, value: 1 }).unwrap();
    w.unregister_instance(&QosTest { id: 1, value: 0 }).unwrap();
    w.wait_for_acknowledgments(T).unwrap();
    let s = states_after(&r, Duration::from_millis(50));
    assert!(
        s.contains(&(1, InstanceState::NotAliveNoWriters, true)),
        "{s:?}"
    );
}

#[test]
fn autopurge_removes_disposed_instances_after_the_delay() {
    let mut rq = reliable(DataReaderQos::default());
    rq.reader_data_lifecycle.autopurge_disposed_samples_delay = ms(200);
    let (_a, _b, w, r) = pair(125, reliable(DataWriterQos::default()), rq);
    w.write(&QosTest { id: 1, value: 1 }).unwrap();
    w.write(&QosTest { id: 2, value: 2 }).unwrap();
    w.dispose(&QosTest { id: 1, value: 0 }).unwrap();
    w.wait_for_acknowledgments(T).unwrap();
    let s = states_after(&r, Duration::from_millis(20));
    assert_eq!(s.len(), 3, "before the delay: {s:?}");
    let s = states_after(&r, Duration::from_millis(300));
    assert_eq!(s, vec![(2, InstanceState::Alive, true)], "after the delay");
}

#[test]
fn a_writer_refuses_instances_beyond_max_instances() {
    let p = participant(126);
    let t = p.create_topic::<QosTest>("Limited").unwrap();
    let mut wq = DataWriterQos::default();
    wq.resource_limits.max_instances = Some(2);
    let w = p
        .create_publisher(PublisherQos::default())
        .create_datawriter(&t, wq)
        .unwrap();
    w.write(&QosTest { id: 1, value: 0 }).unwrap();
    w.write(&QosTest { id: 2, value: 0 }).unwrap();
    w.write(&QosTest { id: 1, value: 1 }).unwrap();
    assert!(matches!(
        w.write(&QosTest { id: 3, value: 0 }),
        Err(Error::OutOfResources(_))
    ));
    w.unregister_instance(&QosTest { id: 2, value: 0 }).unwrap();
    w.write(&QosTest { id: 3, value: 0 }).unwrap();
}

/// Values taken from `r`, per instance id (1 and 2).
fn values_per_instance(r: &DataReader<QosTest>) -> [Vec<u32>; 2] {
    let mut out = [Vec::new(), Vec::new()];
    for s in r.take(1000).unwrap() {
        if let Some(d) = s.data {
            out[(d.id as usize).clamp(1, 2) - 1].push(d.value);
        }
    }
    out
}

#[test]
fn a_halyard_writer_withholds_what_a_remote_readers_time_filter_drops() {
    let (a, b) = (participant(128), participant(128));
    let ta = a.create_topic::<QosTest>("TimeFiltered").unwrap();
    let tb = b.create_topic::<QosTest>("TimeFiltered").unwrap();
    let w = a
        .create_publisher(PublisherQos::default())
        .create_datawriter(&ta, reliable(DataWriterQos::default()))
        .unwrap();
    let sub = b.create_subscriber(SubscriberQos::default());
    let mut rq = reliable(DataReaderQos::default());
    rq.time_based_filter = ms(100);
    let filtered = sub.create_datareader(&tb, rq).unwrap();
    let plain = sub
        .create_datareader(&tb, reliable(DataReaderQos::default()))
        .unwrap();
    w.wait_for_matched(2, T).unwrap();
    // Two instances at 100 Hz for one second of source time (the filter is measured on source
    // timestamps, so the test need not take that long).
    let start = halyard::wall_clock().to_nanos();
    for i in 0..100u32 {
        let stamp = halyard::Time::from_nanos(start + i64::from(i) * 10_000_000);
        for id in [1, 2] {
            w.write_w_timestamp(&QosTest { id, value: i }, stamp)
                .unwrap();
        }
    }
    w.wait_for_acknowledgments(T).unwrap();
    let every_tenth: Vec<u32> = (0..100).step_by(10).collect();
    assert_eq!(
        values_per_instance(&filtered),
        [every_tenth.clone(), every_tenth]
    );
    let all: Vec<u32> = (0..100).collect();
    assert_eq!(values_per_instance(&plain), [all.clone(), all]);
    // The 180 samples the reader's filter drops were not sent to it.
    assert_eq!(w.stats().unwrap().time_filtered_out, 180);
    assert_eq!(w.stats().unwrap().filtered_out, 0);
}

#[test]
fn inconsistent_qos_is_refused_naming_the_policy() {
    let p = participant(127);
    let t = p.create_topic::<QosTest>("Bad").unwrap();
    let mut rq = DataReaderQos::default();
    rq.deadline = ms(10);
    rq.time_based_filter = ms(20);
    let e = p
        .create_subscriber(SubscriberQos::default())
        .create_datareader(&t, rq)
        .err()
        .expect("refused");
    assert!(e.to_string().contains("DEADLINE"), "{e}");
    let mut wq = DataWriterQos::default();
    wq.lifespan = Duration::ZERO;
    let e = p
        .create_publisher(PublisherQos::default())
        .create_datawriter(&t, wq)
        .err()
        .expect("refused");
    assert!(e.to_string().contains("LIFESPAN"), "{e}");
}
