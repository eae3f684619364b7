//! Proves the DCPS API's behaviour between participants over loopback UDP: WaitSets with
//! Read-, Status- and GuardConditions, reader and writer listeners, the DCPSParticipant /
//! DCPSPublication builtin-topic readers, delivery under injected faults, a deleted writer's
//! lingering until its readers have everything, and which of a peer's addresses are used.
#![allow(clippy::disallowed_methods)] // tests above the core may read the clock

mod common;

use halyard::qos::{DataRepresentation, ReliabilityKind};
use halyard::{
    Condition, DataReaderListener, DataReaderQos, DataWriterListener, DataWriterQos,
    DomainParticipant, GuardCondition, InstanceState, ParticipantOptions, PublisherQos, StatusMask,
    SubscriberQos, WaitSet,
};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(halyard::Topic, Clone, Debug, Default, PartialEq)]
#[topic(type_name = "ApiTest")]
struct ApiTest {
    #[key]
    id: u32,
    text: String,
}

fn participant(domain: u32, user_data: &str) -> DomainParticipant {
    DomainParticipant::with_options(
        domain,
        ParticipantOptions {
            interface: Some("lo".into()),
            user_data: user_data.as_bytes().to_vec(),
            ..Default::default()
        },
    )
    .expect("participant on lo")
}

fn reliable_reader_qos() -> DataReaderQos {
    let mut q = DataReaderQos::default();
    q.reliability.kind = ReliabilityKind::Reliable;
    q
}

const T: Duration = Duration::from_secs(10);

#[test]
fn waitset_wakes_on_read_condition_and_times_out_without_data() {
    let (a, b) = (participant(81, "a"), participant(81, "b"));
    let topic = a.create_topic::<ApiTest>("WaitSetTopic").unwrap();
    let w = a
        .create_publisher(PublisherQos::default())
        .create_datawriter(&topic, DataWriterQos::default())
        .unwrap();
    let topic_b = b.create_topic::<ApiTest>("WaitSetTopic").unwrap();
    let r = b
        .create_subscriber(SubscriberQos::default())
        .create_datareader(&topic_b, reliable_reader_qos())
        .unwrap();
    w.wait_for_matched(1, T).expect("matched");

    let ws = WaitSet::new();
    let rc = r.create_readcondition(true);
    ws.attach_condition(rc.clone()).unwrap();
    let start = Instant::now();
    assert!(matches!(
        ws.wait(Duration::from_millis(200)),
        Err(halyard::Error::Timeout)
    ));
    assert!(start.elapsed() >= Duration::from_millis(190));

    w.write(&ApiTest {
        id: 7,
        text: "hello".into(),
    })
    .unwrap();
    let triggered = ws.wait(T).expect("the read condition triggers");
    assert_eq!(triggered.len(), 1);
    let samples = r.take_w_condition(10, &rc).unwrap();
    assert_eq!(samples[0].data.as_ref().unwrap().text, "hello");
    assert!(!rc.trigger_value(), "taken: nothing unread remains");
    ws.detach_condition(&Condition::Read(rc.clone())).unwrap();
    assert!(
        ws.detach_condition(&Condition::Read(rc)).is_err(),
        "detaching twice is an error"
    );
}

#[test]
fn status_condition_tracks_matching_until_the_status_is_read() {
    let (a, b) = (participant(82, "a"), participant(82, "b"));
    let topic = a.create_topic::<ApiTest>("StatusTopic").unwrap();
    let w = a
        .create_publisher(PublisherQos::default())
        .create_datawriter(&topic, DataWriterQos::default())
        .unwrap();
    let sc = w.status_condition();
    sc.set_enabled_statuses(StatusMask::PUBLICATION_MATCHED);
    assert!(!sc.trigger_value());
    let ws = WaitSet::new();
    ws.attach_condition(sc.clone()).unwrap();

    let topic_b = b.create_topic::<ApiTest>("StatusTopic").unwrap();
    let r = b
        .create_subscriber(SubscriberQos::default())
        .create_datareader(&topic_b, reliable_reader_qos())
        .unwrap();
    ws.wait(T)
        .expect("PUBLICATION_MATCHED triggers the status condition");
    assert!(sc
        .changed_statuses()
        .intersects(StatusMask::PUBLICATION_MATCHED));
    // Listing the matched peers leaves the status unread.
    assert_eq!(
        w.matched_subscriptions().unwrap(),
        vec![r.instance_handle()]
    );
    assert!(sc.trigger_value());
    eventually("the reader lists the writer", || {
        r.matched_publications().unwrap() == vec![w.instance_handle()]
    });
    let status = w.publication_matched_status().unwrap();
    assert_eq!((status.current_count, status.total_count), (1, 1));
    assert!(
        !sc.trigger_value(),
        "reading the status resets its changed flag"
    );
    drop(w);
    eventually("the deleted writer is no longer listed", || {
        r.matched_publications().unwrap().is_empty()
    });
}

#[test]
fn guard_condition_wakes_a_waiting_thread() {
    let ws = Arc::new(WaitSet::new());
    let g = GuardCondition::new();
    ws.attach_condition(g.clone()).unwrap();
    let ws2 = ws.clone();
    let waiter = std::thread::spawn(move || ws2.wait(T).map(|v| v.len()));
    std::thread::sleep(Duration::from_millis(50));
    g.set_trigger_value(true);
    assert_eq!(waiter.join().unwrap().unwrap(), 1);
}

#[derive(Default)]
struct Counts {
    data: AtomicU32,
    matched: AtomicU32,
    incompatible: AtomicU32,
    liveliness: AtomicU32,
}

impl DataReaderListener for Counts {
    fn on_data_available(&self) {
        self.data.fetch_add(1, Ordering::SeqCst);
    }
    fn on_subscription_matched(&self, s: halyard::status::MatchedStatus) {
        self.matched.store(s.current_count, Ordering::SeqCst);
    }
    fn on_requested_incompatible_qos(&self, s: halyard::status::IncompatibleQosStatus) {
        self.incompatible.store(s.total_count, Ordering::SeqCst);
    }
    fn on_liveliness_changed(&self, s: halyard::status::LivelinessChangedStatus) {
        self.liveliness.store(s.alive_count, Ordering::SeqCst);
    }
}

impl DataWriterListener for Counts {
    fn on_publication_matched(&self, s: halyard::status::MatchedStatus) {
        self.matched.store(s.current_count, Ordering::SeqCst);
    }
    fn on_offered_incompatible_qos(&self, s: halyard::status::IncompatibleQosStatus) {
        self.incompatible.store(s.total_count, Ordering::SeqCst);
    }
}

fn eventually(what: &str, f: impl Fn() -> bool) {
    let deadline = Instant::now() + T;
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn listeners_report_matches_data_liveliness_and_incompatible_qos() {
    let (a, b) = (participant(83, "a"), participant(83, "b"));
    let topic = a.create_topic::<ApiTest>("ListenerTopic").unwrap();
    let topic_b = b.create_topic::<ApiTest>("ListenerTopic").unwrap();
    let wl = Arc::new(Counts::default());
    let rl = Arc::new(Counts::default());
    let w = a
        .create_publisher(PublisherQos::default())
        .create_datawriter_with_listener(&topic, DataWriterQos::default(), Some(wl.clone()))
        .unwrap();
    let _r = b
        .create_subscriber(SubscriberQos::default())
        .create_datareader_with_listener(&topic_b, reliable_reader_qos(), Some(rl.clone()))
        .unwrap();
    eventually("writer on_publication_matched", || {
        wl.matched.load(Ordering::SeqCst) == 1
    });
    eventually("reader on_subscription_matched", || {
        rl.matched.load(Ordering::SeqCst) == 1
    });
    eventually("reader on_liveliness_changed", || {
        rl.liveliness.load(Ordering::SeqCst) == 1
    });
    w.wait_for_matched(1, T).unwrap();
    w.write(&ApiTest {
        id: 1,
        text: "x".into(),
    })
    .unwrap();
    eventually("reader on_data_available", || {
        rl.data.load(Ordering::SeqCst) >= 1
    });

    // A best-effort writer against a reliable reader: both sides hear about it.
    let mut be = DataWriterQos::default();
    be.reliability.kind = ReliabilityKind::BestEffort;
    let wl2 = Arc::new(Counts::default());
    let _w2 = a
        .create_publisher(PublisherQos::default())
        .create_datawriter_with_listener(&topic, be, Some(wl2.clone()))
        .unwrap();
    eventually("writer on_offered_incompatible_qos", || {
        wl2.incompatible.load(Ordering::SeqCst) >= 1
    });
    eventually("reader on_requested_incompatible_qos", || {
        rl.incompatible.load(Ordering::SeqCst) >= 1
    });
}

#[test]
fn builtin_readers_show_discovered_participants_and_publications() {
    let a = participant(84, "observer");
    let parts = a.builtin_participant_reader();
    let pubs = a.builtin_publication_reader();
    let b = participant(84, "peer-b");
    let topic_b = b.create_topic::<ApiTest>("BuiltinTopic").unwrap();
    let _w = b
        .create_publisher(PublisherQos::default())
        .create_datawriter(&topic_b, DataWriterQos::default())
        .unwrap();

    assert!(parts.wait_for_data(T), "DCPSParticipant sample");
    let seen = parts.read(100);
    let peer = seen
        .iter()
        .find_map(|s| s.data.as_ref().filter(|p| p.user_data == b"peer-b"))
        .expect("peer-b discovered");
    assert_eq!(peer.guid.prefix, b.guid_prefix());

    eventually("DCPSPublication of BuiltinTopic", || {
        pubs.read(100).iter().any(|s| {
            s.data
                .as_ref()
                .is_some_and(|p| p.topic_name == "BuiltinTopic" && p.type_name == "ApiTest")
        })
    });

    let prefix = b.guid_prefix();
    drop(_w);
    drop(b);
    eventually("a disposal notice for peer-b", || {
        parts.take(100).iter().any(|s| {
            !s.info.valid_data
                && s.info.instance_state == InstanceState::NotAliveDisposed
                && s.info.instance_handle.0[..12] == prefix.0
        })
    });
}

#[test]
fn xcdr2_writers_reach_readers_that_accept_xcdr2_and_are_refused_by_xcdr1_only_readers() {
    let (a, b) = (participant(85, "a"), participant(85, "b"));
    let topic = a.create_topic::<ApiTest>("Xcdr2Topic").unwrap();
    let topic_b = b.create_topic::<ApiTest>("Xcdr2Topic").unwrap();
    let mut wq = DataWriterQos::default();
    wq.data_representation = Some(DataRepresentation::Xcdr2);
    let w = a
        .create_publisher(PublisherQos::default())
        .create_datawriter(&topic, wq)
        .unwrap();
    let sub = b.create_subscriber(SubscriberQos::default());
    let r = sub
        .create_datareader(&topic_b, reliable_reader_qos())
        .unwrap();
    let mut only1 = reliable_reader_qos();
    only1.data_representation = vec![DataRepresentation::Xcdr1];
    let r1 = sub.create_datareader(&topic_b, only1).unwrap();
    w.wait_for_matched(1, T).unwrap();
    w.write(&ApiTest {
        id: 3,
        text: "two".into(),
    })
    .unwrap();
    assert!(r.wait_for_data(T));
    let s = r.take(1).unwrap();
    assert_eq!(
        s[0].data,
        Some(ApiTest {
            id: 3,
            text: "two".into()
        })
    );
    eventually(
        "XCDR1-only reader reports DATA_REPRESENTATION incompatibility",
        || {
            r1.requested_incompatible_qos_status()
                .unwrap()
                .last_policy_id
                == Some(halyard::QosPolicyId::DataRepresentation)
        },
    );
}

#[test]
fn unicast_initial_peers_discover_without_multicast() {
    // Domain 86: unicast ports are 7410 + 250*86 + 2*index; list the first few indexes as peers.
    let base = 7410 + 250 * 86;
    let peers: Vec<std::net::SocketAddrV4> = (0..6)
        .map(|i| std::net::SocketAddrV4::new(std::net::Ipv4Addr::LOCALHOST, (base + 2 * i) as u16))
        .collect();
    let opts = |name: &str| ParticipantOptions {
        interface: Some("lo".into()),
        user_data: name.as_bytes().to_vec(),
        initial_peers: peers.clone(),
        disable_multicast: true,
        ..Default::default()
    };
    let a = DomainParticipant::with_options(86, opts("a")).unwrap();
    let b = DomainParticipant::with_options(86, opts("b")).unwrap();
    eventually("unicast discovery", || {
        a.discovered_participants()
            .iter()
            .any(|p| p.user_data == b"b")
    });
    let seen = a.discovered_participants();
    let pb = seen.iter().find(|p| p.user_data == b"b").unwrap();
    assert!(
        pb.metatraffic_multicast.is_empty(),
        "b announced no multicast locator"
    );
    let topic = a.create_topic::<ApiTest>("UnicastTopic").unwrap();
    let topic_b = b.create_topic::<ApiTest>("UnicastTopic").unwrap();
    let w = a
        .create_publisher(PublisherQos::default())
        .create_datawriter(&topic, DataWriterQos::default())
        .unwrap();
    let r = b
        .create_subscriber(SubscriberQos::default())
        .create_datareader(&topic_b, reliable_reader_qos())
        .unwrap();
    w.wait_for_matched(1, T).unwrap();
    w.write(&ApiTest {
        id: 1,
        text: "unicast".into(),
    })
    .unwrap();
    assert!(r.wait_for_data(T));
    let no_peers = ParticipantOptions {
        interface: Some("lo".into()),
        disable_multicast: true,
        ..Default::default()
    };
    assert!(matches!(
        DomainParticipant::with_options(86, no_peers),
        Err(halyard::Error::BadParameter(_))
    ));
}

/// Writes 100 best-effort samples from a participant of domain `domain` to readers in three
/// other participants, with a fifth participant that has no reader; returns what each reader
/// got and how many data datagrams the bystander saw (it only sees multicast traffic).
fn fan_out_to_three(domain: u32, unicast_user_data: bool) -> (Vec<usize>, u64) {
    let opts = |name: &str, unicast: bool| ParticipantOptions {
        interface: Some("lo".into()),
        user_data: name.as_bytes().to_vec(),
        unicast_user_data: unicast,
        ..Default::default()
    };
    let a = DomainParticipant::with_options(domain, opts("writer", unicast_user_data)).unwrap();
    let bystander = DomainParticipant::with_options(domain, opts("bystander", false)).unwrap();
    let readers: Vec<_> = (0..3)
        .map(|i| {
            let p = DomainParticipant::with_options(domain, opts(&format!("r{i}"), false)).unwrap();
            let t = p.create_topic::<ApiTest>("FanOutTopic").unwrap();
            let r = p
                .create_subscriber(SubscriberQos::default())
                .create_datareader(&t, DataReaderQos::default())
                .unwrap();
            (p, r)
        })
        .collect();
    let topic = a.create_topic::<ApiTest>("FanOutTopic").unwrap();
    let w = a
        .create_publisher(PublisherQos::default())
        .create_datawriter(&topic, DataWriterQos::default())
        .unwrap();
    w.wait_for_matched(3, T).unwrap();
    eventually("the bystander discovers the writer", || {
        bystander
            .discovered_participants()
            .iter()
            .any(|p| p.user_data == b"writer")
    });
    // Best effort readers match a moment after the writer does.
    std::thread::sleep(Duration::from_millis(300));
    let before = bystander.stats().unmatched_data;
    for id in 0..100 {
        w.write(&ApiTest {
            id,
            text: "fan-out".into(),
        })
        .unwrap();
        std::thread::sleep(Duration::from_millis(2));
    }
    std::thread::sleep(Duration::from_millis(500));
    let got = readers
        .iter()
        .map(|(_, r)| r.take(1000).map_or(0, |v| v.len()))
        .collect();
    (got, bystander.stats().unmatched_data - before)
}

#[test]
fn new_data_for_readers_of_several_participants_goes_once_by_multicast() {
    let (got, bystander_saw) = fan_out_to_three(91, false);
    assert!(
        got.iter().all(|&n| n >= 95),
        "best-effort readers got {got:?} of 100 over loopback multicast"
    );
    assert!(
        bystander_saw >= 95,
        "a participant without a reader saw {bystander_saw} data datagrams: not multicast"
    );
    let (got, bystander_saw) = fan_out_to_three(92, true);
    assert!(
        got.iter().all(|&n| n >= 95),
        "unicast: readers got {got:?} of 100"
    );
    assert_eq!(
        bystander_saw, 0,
        "unicast_user_data still sent data by multicast"
    );
}

#[test]
fn entity_handles_are_thread_safe() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<DomainParticipant>();
    send_sync::<halyard::DataWriter<ApiTest>>();
    send_sync::<halyard::DataReader<ApiTest>>();
    send_sync::<halyard::Publisher>();
    send_sync::<halyard::Subscriber>();
    send_sync::<halyard::Topic<ApiTest>>();
    send_sync::<WaitSet>();
    send_sync::<halyard::StatusCondition>();
    send_sync::<halyard::ReadCondition>();
    send_sync::<GuardCondition>();
    // And used from several threads at once: four writers' threads share one DataWriter.
    let (a, b) = (participant(87, "a"), participant(87, "b"));
    let topic = a.create_topic::<ApiTest>("SharedWriter").unwrap();
    let topic_b = b.create_topic::<ApiTest>("SharedWriter").unwrap();
    let mut wq = DataWriterQos::default();
    wq.history = halyard::qos::History::KeepAll;
    let w = Arc::new(
        a.create_publisher(PublisherQos::default())
            .create_datawriter(&topic, wq)
            .unwrap(),
    );
    let mut rq = reliable_reader_qos();
    rq.history = halyard::qos::History::KeepAll;
    let r = b
        .create_subscriber(SubscriberQos::default())
        .create_datareader(&topic_b, rq)
        .unwrap();
    w.wait_for_matched(1, T).unwrap();
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let w = w.clone();
            std::thread::spawn(move || {
                for i in 0..250 {
                    w.write(&ApiTest {
                        id: t,
                        text: format!("{i}"),
                    })
                    .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    w.wait_for_acknowledgments(T).unwrap();
    let mut got = 0;
    let mut last = [-1i64; 4];
    while got < 1000 {
        assert!(r.wait_for_data(T), "only {got} of 1000 samples arrived");
        for s in r.take(1000).unwrap() {
            let d = s.data.unwrap();
            let i: i64 = d.text.parse().unwrap();
            assert!(i > last[d.id as usize], "per-instance order");
            last[d.id as usize] = i;
            got += 1;
        }
    }
}

#[test]
fn bad_core_configuration_is_rejected_with_a_reason() {
    let tuned = |tune: fn(&mut halyard_core::ParticipantConfig)| {
        DomainParticipant::with_options(
            88,
            ParticipantOptions {
                interface: Some("lo".into()),
                tuning: Some(tune),
                ..Default::default()
            },
        )
    };
    assert!(matches!(
        tuned(|c| c.fragment_size = 100),
        Err(halyard::Error::BadParameter(_))
    ));
    assert!(matches!(
        tuned(|c| c.max_message_size = 70_000),
        Err(halyard::Error::BadParameter(_))
    ));
    assert!(matches!(
        tuned(|c| c.lease_duration = Duration::from_millis(10)),
        Err(halyard::Error::BadParameter(_))
    ));
    assert!(
        tuned(|c| c.lease_duration = Duration::from_secs(1)).is_ok(),
        "a short lease is fine: SPDP follows it"
    );
    assert!(matches!(
        DomainParticipant::with_options(
            88,
            ParticipantOptions {
                interface: Some("no-such-if9".into()),
                ..Default::default()
            }
        ),
        Err(halyard::Error::Interface(_))
    ));
}

#[test]
fn reliable_delivery_survives_injected_drops_duplicates_and_reordering_on_real_sockets() {
    let faulty = |name: &str, seed: u64| ParticipantOptions {
        interface: Some("lo".into()),
        user_data: name.as_bytes().to_vec(),
        fault_injection: Some(halyard::FaultConfig {
            seed,
            drop_send: 0.15,
            drop_receive: 0.15,
            duplicate: 0.05,
            reorder: 0.1,
        }),
        ..Default::default()
    };
    let a = DomainParticipant::with_options(89, faulty("a", 0xA11CE)).unwrap();
    let b = DomainParticipant::with_options(89, faulty("b", 0xB0B)).unwrap();
    let topic = a.create_topic::<ApiTest>("FaultyLink").unwrap();
    let topic_b = b.create_topic::<ApiTest>("FaultyLink").unwrap();
    let mut wq = DataWriterQos::default();
    wq.history = halyard::qos::History::KeepAll;
    wq.reliability.max_blocking_time = T;
    let w = a
        .create_publisher(PublisherQos::default())
        .create_datawriter(&topic, wq)
        .unwrap();
    let mut rq = reliable_reader_qos();
    rq.history = halyard::qos::History::KeepAll;
    let r = b
        .create_subscriber(SubscriberQos::default())
        .create_datareader(&topic_b, rq)
        .unwrap();
    w.wait_for_matched(1, Duration::from_secs(30))
        .expect("matched despite faults");
    const N: u32 = 400;
    for i in 0..N {
        // Every 50th sample is 40 KB: fragmented, so NACK_FRAG repair is exercised too.
        let text = if i % 50 == 0 {
            "x".repeat(40_000)
        } else {
            format!("{i}")
        };
        w.write(&ApiTest { id: i, text }).unwrap();
    }
    w.wait_for_acknowledgments(Duration::from_secs(60))
        .expect("all acknowledged");
    let mut got = Vec::new();
    while got.len() < N as usize {
        assert!(r.wait_for_data(T), "only {} of {N} samples", got.len());
        got.extend(
            r.take(1000)
                .unwrap()
                .into_iter()
                .filter_map(|s| s.data.map(|d| d.id)),
        );
    }
    assert_eq!(got, (0..N).collect::<Vec<_>>(), "exactly once, in order");
    let (fa, fb) = (a.fault_stats().unwrap(), b.fault_stats().unwrap());
    println!("injected faults: a {fa:?}, b {fb:?}");
    assert!(
        fa.dropped > 0
            && fb.dropped > 0
            && fa.duplicated + fb.duplicated > 0
            && fa.reordered + fb.reordered > 0
    );
}

/// Writes 300 samples over a link that drops 30 % of what the writer side sends, then drops
/// the writer at once; returns the ids the reader got.
fn write_then_drop_writer(domain: u32, linger: Duration) -> Vec<u32> {
    let opts = |name: &str, faults: Option<halyard::FaultConfig>| ParticipantOptions {
        interface: Some("lo".into()),
        user_data: name.as_bytes().to_vec(),
        fault_injection: faults,
        writer_linger: Some(linger),
        ..Default::default()
    };
    let lossy = halyard::FaultConfig {
        seed: 0x11D6E2,
        drop_send: 0.3,
        ..Default::default()
    };
    let a = DomainParticipant::with_options(domain, opts("a", Some(lossy))).unwrap();
    let b = DomainParticipant::with_options(domain, opts("b", None)).unwrap();
    let topic = a.create_topic::<ApiTest>("Linger").unwrap();
    let topic_b = b.create_topic::<ApiTest>("Linger").unwrap();
    let mut rq = reliable_reader_qos();
    rq.history = halyard::qos::History::KeepAll;
    let r = b
        .create_subscriber(SubscriberQos::default())
        .create_datareader(&topic_b, rq)
        .unwrap();
    let mut wq = DataWriterQos::default();
    wq.history = halyard::qos::History::KeepAll;
    let w = a
        .create_publisher(PublisherQos::default())
        .create_datawriter(&topic, wq)
        .unwrap();
    w.wait_for_matched(1, Duration::from_secs(30)).unwrap();
    const N: u32 = 300;
    for i in 0..N {
        let text = format!("{i}");
        w.write(&ApiTest { id: i, text }).unwrap();
    }
    let dropped_at = Instant::now();
    drop(w);
    println!(
        "writer_linger {linger:?}: dropping the writer took {:?}",
        dropped_at.elapsed()
    );
    let mut got = Vec::new();
    while r.wait_for_data(Duration::from_millis(500)) {
        let batch = r.take(1000).unwrap();
        got.extend(batch.into_iter().filter_map(|s| s.data.map(|d| d.id)));
    }
    got
}

#[test]
fn a_dropped_writer_lingers_until_its_reliable_reader_has_everything() {
    let got = write_then_drop_writer(90, Duration::from_secs(1));
    assert_eq!(got, (0..300).collect::<Vec<_>>(), "exactly once, in order");
    // The same run without lingering loses part of the unacknowledged tail (each sample in it
    // was lost with 30 % probability; three tries make a run that loses none negligible).
    let lost_without = (91..94).any(|d| write_then_drop_writer(d, Duration::ZERO).len() < 300);
    assert!(
        lost_without,
        "without lingering every sample arrived three times: the test proves nothing"
    );
}

/// An IPv4 address of this host on another interface than loopback, if there is one.
fn non_loopback_address() -> Option<std::net::Ipv4Addr> {
    let probe = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    // No datagram is sent: connecting a UDP socket only picks the route and source address.
    probe.connect("192.0.2.200:9").ok()?;
    match probe.local_addr().ok()?.ip() {
        std::net::IpAddr::V4(ip) if !ip.is_loopback() && !ip.is_unspecified() => Some(ip),
        _ => None,
    }
}

/// A fake peer with a best-effort reader of `ApiTest` on topic `Locators`, announcing two
/// unicast addresses: 127.0.0.1 and `other`. Halyard (on lo, 127.0.0.0/8) writes 50 samples
/// to it; returns the datagrams received at each address.
fn datagrams_to_two_homed_peer(domain: u32, other: std::net::Ipv4Addr, tune: bool) -> (u64, u64) {
    use common::*;
    use halyard_wire::{EntityId, Guid, Locator};
    let on_lo = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let elsewhere = std::net::UdpSocket::bind((other, 0)).unwrap();
    let locs = [&on_lo, &elsewhere].map(|s| match s.local_addr().unwrap() {
        std::net::SocketAddr::V4(a) => Locator::udpv4(a.ip().octets(), a.port()),
        std::net::SocketAddr::V6(_) => unreachable!("bound to IPv4"),
    });
    let counters = [&on_lo, &elsewhere].map(|s| {
        let s = s.try_clone().unwrap();
        s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
        std::thread::spawn(move || {
            let (mut n, mut buf) = (0u64, vec![0u8; 65_536]);
            let deadline = Instant::now() + Duration::from_secs(8);
            while Instant::now() < deadline {
                if s.recv(&mut buf).is_ok() {
                    n += 1;
                }
            }
            n
        })
    });
    let forget_networks: fn(&mut halyard_core::ParticipantConfig) =
        |cfg| cfg.reachable_networks.clear();
    let dp = DomainParticipant::with_options(
        domain,
        ParticipantOptions {
            interface: Some("lo".into()),
            tuning: tune.then_some(forget_networks),
            ..Default::default()
        },
    )
    .unwrap();
    let topic = dp.create_topic::<ApiTest>("Locators").unwrap();
    let w = dp
        .create_publisher(PublisherQos::default())
        .create_datawriter(&topic, DataWriterQos::default())
        .unwrap();
    let prefix = fake_prefix(3, domain);
    let reader = Guid::new(prefix, EntityId::new(1, EntityId::KIND_READER_WITH_KEY));
    let mut rq = halyard_wire::qos::EndpointQos::reader_default();
    rq.reliability.kind = halyard_wire::qos::ReliabilityKind::BestEffort;
    let sub = endpoint_data(reader, "Locators", "ApiTest", rq);
    let spdp = spdp_datagram(domain, prefix, &locs, FULL_BUILTIN);
    let sedp = sedp_datagrams(prefix, 1, &[(reader, sub)], 1);
    let (ip, port) = dp.unicast_locator().as_udpv4().unwrap();
    let halyard_at = std::net::SocketAddr::from((ip, port));
    let deadline = Instant::now() + Duration::from_secs(5);
    while w.publication_matched_status().unwrap().current_count == 0 {
        assert!(Instant::now() < deadline, "the fake reader never matched");
        on_lo.send_to(&spdp, halyard_at).unwrap();
        on_lo.send_to(&sedp[0], halyard_at).unwrap();
        std::thread::sleep(Duration::from_millis(50));
    }
    for i in 0..50 {
        let text = format!("{i}");
        w.write(&ApiTest { id: i, text }).unwrap();
    }
    let [lo, other] = counters.map(|t| t.join().unwrap());
    (lo, other)
}

#[test]
fn no_datagram_goes_to_a_peer_address_outside_the_interface_used() {
    let Some(other) = non_loopback_address() else {
        println!("SKIP: this host has no non-loopback IPv4 address to announce");
        return;
    };
    let (lo, elsewhere) = datagrams_to_two_homed_peer(94, other, false);
    println!("a peer announcing 127.0.0.1 and {other}: {lo} datagrams to the first, {elsewhere} to the second");
    assert!(lo >= 50, "only {lo} datagrams reached the loopback address");
    assert_eq!(elsewhere, 0, "datagrams went to {other}, outside lo");
    // Without knowing its networks, Halyard used every address: the test can tell.
    let (_, elsewhere) = datagrams_to_two_homed_peer(95, other, true);
    assert!(elsewhere > 0, "the second address got nothing even so");
}

thread_local! {
    /// Set while this thread is inside `DataWriter::write`.
    static IN_WRITE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Counts data-available calls, and those made on a thread that was inside a `write`.
#[derive(Default)]
struct WhereCalled {
    calls: AtomicU32,
    inside_write: AtomicU32,
}

impl DataReaderListener for WhereCalled {
    fn on_data_available(&self) {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if IN_WRITE.with(|f| f.get()) {
            self.inside_write.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// A thread that writes while a receive thread of its participant gets data hands that data
/// over (the receive thread leaves datagrams to the holder of the participant's lock, see
/// the runtime): the listener calls they cause must not run on the writing thread, inside
/// its `write`. An application that holds a lock of its own while it writes and takes it in
/// the listener would deadlock there (`halyard perf ping` did, with such a lock around its
/// ping state).
#[test]
fn listeners_never_run_inside_the_applications_write() {
    let (a, b) = (participant(88, "a"), participant(88, "b"));
    let ab = a.create_topic::<ApiTest>("AtoB").unwrap();
    let ab_b = b.create_topic::<ApiTest>("AtoB").unwrap();
    let ba = a.create_topic::<ApiTest>("BtoA").unwrap();
    let ba_b = b.create_topic::<ApiTest>("BtoA").unwrap();
    let heard = Arc::new(WhereCalled::default());
    let w_a = a
        .create_publisher(PublisherQos::default())
        .create_datawriter(&ab, DataWriterQos::default())
        .unwrap();
    let _r_a = a
        .create_subscriber(SubscriberQos::default())
        .create_datareader_with_listener(&ba, reliable_reader_qos(), Some(heard.clone()))
        .unwrap();
    let _r_b = b
        .create_subscriber(SubscriberQos::default())
        .create_datareader(&ab_b, reliable_reader_qos())
        .unwrap();
    let w_b = b
        .create_publisher(PublisherQos::default())
        .create_datawriter(&ba_b, DataWriterQos::default())
        .unwrap();
    w_a.wait_for_matched(1, T).unwrap();
    w_b.wait_for_matched(1, T).unwrap();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let from_b = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut id = 0u32;
            while !stop.load(Ordering::SeqCst) {
                id = id.wrapping_add(1);
                let s = ApiTest {
                    id: id % 16,
                    text: "b".repeat(2000),
                };
                w_b.write(&s).unwrap();
            }
        })
    };
    let text = "a".repeat(4000);
    for id in 0..40_000u32 {
        let s = ApiTest {
            id: id % 16,
            text: text.clone(),
        };
        IN_WRITE.with(|f| f.set(true));
        let written = w_a.write(&s);
        IN_WRITE.with(|f| f.set(false));
        written.unwrap();
        if id > 20_000 && heard.calls.load(Ordering::SeqCst) > 1000 {
            break;
        }
    }
    stop.store(true, Ordering::SeqCst);
    from_b.join().unwrap();
    let calls = heard.calls.load(Ordering::SeqCst);
    assert!(
        calls > 100,
        "the listener ran {calls} times: no traffic to judge by"
    );
    assert_eq!(
        heard.inside_write.load(Ordering::SeqCst),
        0,
        "of {calls} listener calls, some ran inside the application's write"
    );
}

/// A writer's delivery report: a reliable reader that acknowledged everything and left is
/// still listed, as it stood when it left; a best-effort reader's delivery is unknown; a
/// reader of the writer's own participant is local.
#[test]
fn the_delivery_report_tells_what_each_reader_acknowledged_even_after_it_left() {
    use halyard::Reception;
    let (a, b) = (participant(144, "a"), participant(144, "b"));
    let topic = a.create_topic::<ApiTest>("DeliveryReport").unwrap();
    let w = a
        .create_publisher(PublisherQos::default())
        .create_datawriter(&topic, DataWriterQos::default())
        .unwrap();
    let topic_b = b.create_topic::<ApiTest>("DeliveryReport").unwrap();
    let sub_b = b.create_subscriber(SubscriberQos::default());
    let reliable = sub_b
        .create_datareader(&topic_b, reliable_reader_qos())
        .unwrap();
    let best_effort = sub_b
        .create_datareader(&topic_b, DataReaderQos::default())
        .unwrap();
    let local = a
        .create_subscriber(SubscriberQos::default())
        .create_datareader(&topic, reliable_reader_qos())
        .unwrap();
    w.wait_for_matched(3, T).expect("three readers matched");
    for id in 0..5 {
        w.write(&ApiTest {
            id,
            text: "x".into(),
        })
        .unwrap();
    }
    w.wait_for_acknowledgments(T).expect("acknowledged");
    let report = w.delivery_report().unwrap();
    assert_eq!(report.len(), 3, "{report:?}");
    let of = |kind: fn(&Reception) -> bool| report.iter().filter(|d| kind(&d.reception)).count();
    assert_eq!(of(|r| matches!(r, Reception::Local)), 1, "{report:?}");
    assert_eq!(of(|r| matches!(r, Reception::Unknown)), 1, "{report:?}");
    assert!(
        report.iter().any(|d| d.reception
            == Reception::Acknowledged {
                acknowledged: 5,
                owed: 5
            }
            && d.matched
            && !d.durability_service),
        "{report:?}"
    );
    // The reliable reader takes its samples and goes; the writer remembers how it stood.
    assert_eq!(reliable.take(10).unwrap().len(), 5);
    drop(reliable);
    let gone = Instant::now();
    while w.delivery_report().unwrap().iter().all(|d| d.matched) {
        assert!(gone.elapsed() < T, "the reader's departure was never seen");
        std::thread::sleep(Duration::from_millis(20));
    }
    w.write(&ApiTest {
        id: 9,
        text: "after".into(),
    })
    .unwrap();
    let report = w.delivery_report().unwrap();
    let left: Vec<_> = report.iter().filter(|d| !d.matched).collect();
    assert_eq!(left.len(), 1, "{report:?}");
    assert!(
        left[0].has_everything(),
        "owed nothing written after it left: {report:?}"
    );
    drop((best_effort, local));
}
