//! Proves PRESENTATION coherent access (TOPIC scope) through the DCPS API over loopback UDP:
//! a reader that asked for coherent access never takes part of a set, whether it is in
//! another participant or in the writer's own; a reader that did not ask takes every member
//! and no empty sample for the end-of-set markers; begin/end calls nest and an unmatched end
//! is refused. GROUP scope: a subscriber (remote, and in the writer's participant) takes a
//! publisher's sets whole across its two readers, and with ordered access reads a
//! publisher's samples across three readers in the order they were written; while access is
//! open (nested or not), nothing new reaches a GROUP subscriber's readers, and it all comes at
//! the outermost end of access.
#![allow(clippy::disallowed_methods)] // tests above the core may read the clock

mod common;

use halyard::qos::{Presentation, PresentationAccessScope};
use halyard::{DataReader, DataReaderQos, DataWriterQos, Error, PublisherQos, SubscriberQos};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

#[derive(halyard::Topic, Clone, Debug, Default, PartialEq)]
#[topic(type_name = "CoherentSample")]
struct CoherentSample {
    #[key]
    id: u32,
    set: u32,
}

const T: Duration = Duration::from_secs(10);
const SETS: u32 = 30;
const MEMBERS: u32 = 4;

/// Reliable KEEP_ALL, for a writer's or a reader's QoS.
fn qos<Q: common::EndpointQosBuilder>(q: Q) -> Q {
    q.reliable().keep_all()
}

/// TOPIC-scope PRESENTATION, with coherent access or not, for a publisher's or subscriber's
/// QoS.
fn topic_scope(coherent: bool) -> Presentation {
    Presentation {
        access_scope: PresentationAccessScope::Topic,
        coherent_access: coherent,
        ordered_access: false,
    }
}

/// Takes until `SETS * MEMBERS` samples came or `T` passed; every take must hold whole sets
/// only when `whole` (returns the number of takes that returned something).
fn take_all(r: &DataReader<CoherentSample>, whole: bool) -> (usize, BTreeMap<u32, u32>) {
    take_up_to(r, MEMBERS, whole)
}

/// As [`take_all`] for a reader that takes `members` of each set, whole.
fn take_sets(r: &DataReader<CoherentSample>, members: u32) -> (usize, BTreeMap<u32, u32>) {
    take_up_to(r, members, true)
}

fn take_up_to(
    r: &DataReader<CoherentSample>,
    members: u32,
    whole: bool,
) -> (usize, BTreeMap<u32, u32>) {
    let mut per_set: BTreeMap<u32, u32> = BTreeMap::new();
    let mut takes = 0;
    let start = Instant::now();
    while per_set.values().sum::<u32>() < SETS * members && start.elapsed() < T {
        let got = r.take(usize::MAX).unwrap();
        if got.is_empty() {
            std::thread::sleep(Duration::from_micros(200));
            continue;
        }
        takes += 1;
        let mut this: BTreeMap<u32, u32> = BTreeMap::new();
        for s in &got {
            let d = s
                .data
                .as_ref()
                .expect("no invalid samples: markers are not samples");
            *this.entry(d.set).or_default() += 1;
        }
        if whole {
            assert!(
                this.values().all(|&n| n == members),
                "a take returned part of a set: {this:?}"
            );
        }
        for (set, n) in this {
            *per_set.entry(set).or_default() += n;
        }
    }
    (takes, per_set)
}

#[test]
fn coherent_readers_never_take_part_of_a_set() {
    let (a, b) = (
        common::loopback_participant(160),
        common::loopback_participant(160),
    );
    let ta = a.create_topic::<CoherentSample>("Sets").unwrap();
    let tb = b.create_topic::<CoherentSample>("Sets").unwrap();
    let publisher = a.create_publisher(PublisherQos::default().presentation(topic_scope(true)));
    let w = publisher
        .create_datawriter(&ta, qos(DataWriterQos::default()))
        .unwrap();
    let remote = b
        .create_subscriber(SubscriberQos::default().presentation(topic_scope(true)))
        .create_datareader(&tb, qos(DataReaderQos::default()))
        .unwrap();
    let plain = b
        .create_subscriber(SubscriberQos::default().presentation(topic_scope(false)))
        .create_datareader(&tb, qos(DataReaderQos::default()))
        .unwrap();
    let local = a
        .create_subscriber(SubscriberQos::default().presentation(topic_scope(true)))
        .create_datareader(&ta, qos(DataReaderQos::default()))
        .unwrap();
    // A coherent reader with a content filter: the writer filters member 1 out of each set
    // (a GAP), and the sets still arrive whole (3 members).
    let cft = b
        .create_contentfilteredtopic("SetsBut1", &tb, "id <> 1", vec![])
        .unwrap();
    let filtered = b
        .create_subscriber(SubscriberQos::default().presentation(topic_scope(true)))
        .create_datareader_filtered(&cft, qos(DataReaderQos::default()), None)
        .unwrap();
    w.wait_for_matched(4, T).expect("matched");
    remote.wait_for_matched(1, T).unwrap();
    plain.wait_for_matched(1, T).unwrap();

    let writer = std::thread::spawn(move || {
        for set in 0..SETS {
            publisher.begin_coherent_changes().unwrap();
            publisher.begin_coherent_changes().unwrap(); // nested: one set
            for id in 0..MEMBERS {
                w.write(&CoherentSample { id, set }).unwrap();
                std::thread::sleep(Duration::from_micros(500));
            }
            publisher.end_coherent_changes().unwrap();
            publisher.end_coherent_changes().unwrap();
        }
        assert!(matches!(
            publisher.end_coherent_changes(),
            Err(Error::PreconditionNotMet(_))
        ));
        w.wait_for_acknowledgments(T).unwrap();
        (publisher, w)
    });
    let readers = std::thread::scope(|s| {
        let r = s.spawn(|| take_all(&remote, true));
        let l = s.spawn(|| take_all(&local, true));
        let p = s.spawn(|| take_all(&plain, false));
        let f = s.spawn(|| take_sets(&filtered, MEMBERS - 1));
        (
            r.join().unwrap(),
            l.join().unwrap(),
            p.join().unwrap(),
            f.join().unwrap(),
        )
    });
    let _keep = writer.join().unwrap();
    let ((_, remote_sets), (_, local_sets), (plain_takes, plain_sets), (_, filtered_sets)) =
        readers;
    let three: BTreeMap<u32, u32> = (0..SETS).map(|s| (s, MEMBERS - 1)).collect();
    assert_eq!(filtered_sets, three, "the filtered coherent reader");
    let all: BTreeMap<u32, u32> = (0..SETS).map(|s| (s, MEMBERS)).collect();
    assert_eq!(remote_sets, all, "the remote coherent reader");
    assert_eq!(local_sets, all, "the local coherent reader");
    assert_eq!(plain_sets, all, "the reader without coherent access");
    assert!(plain_takes > 0);
}

/// GROUP coherent access for a publisher's or subscriber's QoS.
fn group_qos() -> Presentation {
    Presentation {
        access_scope: PresentationAccessScope::Group,
        coherent_access: true,
        ordered_access: false,
    }
}

/// The members of group set `set` per writer (0: topic GA, 1: topic GB): every third set has
/// a part from GA's writer only.
fn group_members(set: u32) -> [u32; 2] {
    if set % 3 == 2 {
        [3, 0]
    } else {
        [2, 2]
    }
}

/// Takes from a subscriber's two readers (GA's first) inside begin/end_access until every
/// set came or `T` passed, checking after each round that every set whose GA part was taken
/// had its GB part taken too (delivered in the same step, it was there when GB was taken
/// after GA), and that no take held part of a writer's part. Returns set -> members per
/// reader.
fn take_group(
    sub: &halyard::Subscriber,
    ra: &DataReader<CoherentSample>,
    rb: &DataReader<CoherentSample>,
) -> [BTreeMap<u32, u32>; 2] {
    let want: u32 = (0..SETS)
        .map(|s| group_members(s).iter().sum::<u32>())
        .sum();
    let mut seen: [BTreeMap<u32, u32>; 2] = [BTreeMap::new(), BTreeMap::new()];
    let start = Instant::now();
    while seen.iter().map(|m| m.values().sum::<u32>()).sum::<u32>() < want && start.elapsed() < T {
        sub.begin_access().unwrap();
        for (i, r) in [ra, rb].into_iter().enumerate() {
            let mut this: BTreeMap<u32, u32> = BTreeMap::new();
            for smp in r.take(usize::MAX).unwrap() {
                let d = smp.data.expect("markers are not samples");
                *this.entry(d.set).or_default() += 1;
            }
            for (set, n) in this {
                assert_eq!(
                    n,
                    group_members(set)[i],
                    "reader {i} took part of its part of set {set}"
                );
                *seen[i].entry(set).or_default() += n;
            }
        }
        sub.end_access().unwrap();
        for set in seen[0].keys() {
            let b = group_members(*set)[1];
            assert_eq!(
                seen[1].get(set).copied().unwrap_or(0),
                b,
                "set {set}: the GA part was taken but not the GB part (piecemeal delivery)"
            );
        }
        std::thread::sleep(Duration::from_micros(300));
    }
    seen
}

#[test]
fn group_coherent_sets_reach_a_subscriber_whole_across_its_readers() {
    let (a, b) = (
        common::loopback_participant(162),
        common::loopback_participant(162),
    );
    let wq = qos(DataWriterQos::default());
    let rq = qos(DataReaderQos::default());
    let publisher = a.create_publisher(PublisherQos::default().presentation(group_qos()));
    let topics_a = [
        a.create_topic::<CoherentSample>("GA").unwrap(),
        a.create_topic::<CoherentSample>("GB").unwrap(),
    ];
    let topics_b = [
        b.create_topic::<CoherentSample>("GA").unwrap(),
        b.create_topic::<CoherentSample>("GB").unwrap(),
    ];
    // Endpoints take their group's PRESENTATION (GROUP scope).
    let wq2 = wq.clone();
    let ws: Vec<_> = topics_a
        .iter()
        .map(|t| publisher.create_datawriter(t, wq2.clone()).unwrap())
        .collect();
    let rq2 = rq.clone();
    let remote_sub = b.create_subscriber(SubscriberQos::default().presentation(group_qos()));
    let remote: Vec<_> = topics_b
        .iter()
        .map(|t| remote_sub.create_datareader(t, rq2.clone()).unwrap())
        .collect();
    let local_sub = a.create_subscriber(SubscriberQos::default().presentation(group_qos()));
    let local: Vec<_> = topics_a
        .iter()
        .map(|t| local_sub.create_datareader(t, rq2.clone()).unwrap())
        .collect();
    for w in &ws {
        w.wait_for_matched(2, T).expect("matched");
    }
    for r in &remote {
        r.wait_for_matched(1, T).unwrap();
    }
    eventually_announced_with_group_scope(&b, "GA");

    let writer = std::thread::spawn(move || {
        for set in 0..SETS {
            publisher.begin_coherent_changes().unwrap();
            let m = group_members(set);
            for i in 0..m[0].max(m[1]) {
                for (k, w) in ws.iter().enumerate() {
                    if i < m[k] {
                        w.write(&CoherentSample { id: i, set }).unwrap();
                        std::thread::sleep(Duration::from_micros(300));
                    }
                }
            }
            publisher.end_coherent_changes().unwrap();
        }
        for w in &ws {
            w.wait_for_acknowledgments(T).unwrap();
        }
        (publisher, ws)
    });
    let (remote_seen, local_seen) = std::thread::scope(|s| {
        let r = s.spawn(|| take_group(&remote_sub, &remote[0], &remote[1]));
        let l = s.spawn(|| take_group(&local_sub, &local[0], &local[1]));
        (r.join().unwrap(), l.join().unwrap())
    });
    let _keep = writer.join().unwrap();
    for (who, seen) in [("remote", remote_seen), ("local", local_seen)] {
        for (i, m) in seen.iter().enumerate() {
            let want: BTreeMap<u32, u32> = (0..SETS)
                .map(|s| (s, group_members(s)[i]))
                .filter(|(_, n)| *n > 0)
                .collect();
            assert_eq!(m, &want, "the {who} subscriber's reader {i}");
        }
    }
}

/// GROUP ordered access for a publisher's or subscriber's QoS.
fn group_ordered_qos() -> Presentation {
    Presentation {
        access_scope: PresentationAccessScope::Group,
        coherent_access: false,
        ordered_access: true,
    }
}

/// Reads a GROUP-ordered subscriber's readers the way DDS says: inside begin/end_access, one
/// sample from each reader `get_datareaders` lists, in turn. Returns the `set` field (the
/// global write order) of what was taken.
fn take_in_group_order(sub: &halyard::Subscriber, rs: &[DataReader<CoherentSample>]) -> Vec<u32> {
    sub.begin_access().unwrap();
    let list = sub.get_datareaders().unwrap();
    let mut got = Vec::new();
    for h in list {
        let r = rs
            .iter()
            .find(|r| r.instance_handle() == h)
            .expect("a listed reader is one of the subscriber's");
        let s = r.take(1).unwrap();
        assert_eq!(s.len(), 1, "a listed reader had its sample");
        got.push(s[0].data.as_ref().expect("valid").set);
    }
    sub.end_access().unwrap();
    got
}

#[test]
fn group_ordered_access_reads_a_publishers_samples_in_its_order_across_readers() {
    const N: u32 = 60;
    let (a, b) = (
        common::loopback_participant(163),
        common::loopback_participant(163),
    );
    let wq = qos(DataWriterQos::default());
    let publisher = a.create_publisher(PublisherQos::default().presentation(group_ordered_qos()));
    let names = ["OA", "OB", "OC"];
    let ws: Vec<_> = names
        .iter()
        .map(|n| {
            let t = a.create_topic::<CoherentSample>(n).unwrap();
            publisher.create_datawriter(&t, wq.clone()).unwrap()
        })
        .collect();
    let rq = qos(DataReaderQos::default());
    let remote_sub =
        b.create_subscriber(SubscriberQos::default().presentation(group_ordered_qos()));
    let remote: Vec<_> = names
        .iter()
        .map(|n| {
            let t = b.create_topic::<CoherentSample>(n).unwrap();
            remote_sub.create_datareader(&t, rq.clone()).unwrap()
        })
        .collect();
    let local_sub = a.create_subscriber(SubscriberQos::default().presentation(group_ordered_qos()));
    let local: Vec<_> = names
        .iter()
        .map(|n| {
            let t = a.create_topic::<CoherentSample>(n).unwrap();
            local_sub.create_datareader(&t, rq.clone()).unwrap()
        })
        .collect();
    for w in &ws {
        w.wait_for_matched(2, T).expect("matched");
    }
    for r in &remote {
        r.wait_for_matched(1, T).unwrap();
    }
    // Outside begin/end_access the ordered list is refused.
    assert!(matches!(
        remote_sub.get_datareaders(),
        Err(Error::PreconditionNotMet(_))
    ));
    // OA's samples wait in a batch until the end: they arrive after the others written
    // later, so arrival order is not the publisher's order.
    ws[0]
        .set_batching(Some(halyard::Batching {
            max_bytes: 60_000,
            max_flush_delay: Duration::from_secs(5),
        }))
        .unwrap();
    // The publisher's order across its writers: a pseudo-random walk over the three topics,
    // `set` numbering the writes.
    let mut k = 7u32;
    for set in 0..N {
        k = k.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        ws[(k >> 16) as usize % 3]
            .write(&CoherentSample { id: set % 5, set })
            .unwrap();
    }
    std::thread::sleep(Duration::from_millis(100));
    ws[0].flush().unwrap();
    for w in &ws {
        w.wait_for_acknowledgments(T).unwrap();
    }
    let start = Instant::now();
    let unread = |sub: &halyard::Subscriber| {
        sub.begin_access().unwrap();
        let n = sub.get_datareaders().unwrap().len();
        sub.end_access().unwrap();
        n
    };
    while (unread(&remote_sub) < N as usize || unread(&local_sub) < N as usize)
        && start.elapsed() < T
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    let want: Vec<u32> = (0..N).collect();
    assert_eq!(
        take_in_group_order(&remote_sub, &remote),
        want,
        "remote subscriber"
    );
    assert_eq!(
        take_in_group_order(&local_sub, &local),
        want,
        "local subscriber"
    );
    // A subscriber without GROUP ordered access lists each reader with unread samples once.
    let plain_sub = b.create_subscriber(SubscriberQos::default().presentation(topic_scope(false)));
    let _plain = plain_sub
        .create_datareader(
            &b.create_topic::<CoherentSample>("OA").unwrap(),
            qos(DataReaderQos::default()),
        )
        .unwrap();
    assert!(plain_sub.get_datareaders().unwrap().len() <= 1);
}

/// Takes everything from `r`: the `set` fields.
fn take_sets_of(r: &DataReader<CoherentSample>) -> Vec<u32> {
    r.take(usize::MAX)
        .unwrap()
        .into_iter()
        .map(|s| s.data.expect("valid").set)
        .collect()
}

#[test]
fn group_access_holds_what_arrives_until_its_end() {
    let (a, b) = (
        common::loopback_participant(183),
        common::loopback_participant(183),
    );
    let wq = qos(DataWriterQos::default());
    let publisher = a.create_publisher(PublisherQos::default().presentation(group_qos()));
    let ws: Vec<_> = ["HA", "HB"]
        .iter()
        .map(|n| {
            let t = a.create_topic::<CoherentSample>(n).unwrap();
            publisher.create_datawriter(&t, wq.clone()).unwrap()
        })
        .collect();
    let rq = qos(DataReaderQos::default());
    let readers = |p: &halyard::DomainParticipant, sub: &halyard::Subscriber| -> Vec<_> {
        ["HA", "HB"]
            .iter()
            .map(|n| {
                let t = p.create_topic::<CoherentSample>(n).unwrap();
                sub.create_datareader(&t, rq.clone()).unwrap()
            })
            .collect()
    };
    let remote_sub = b.create_subscriber(SubscriberQos::default().presentation(group_qos()));
    let remote = readers(&b, &remote_sub);
    let local_sub = a.create_subscriber(SubscriberQos::default().presentation(group_qos()));
    let local = readers(&a, &local_sub);
    // A subscriber without GROUP access: begin_access holds nothing back.
    let plain_sub = b.create_subscriber(SubscriberQos::default().presentation(topic_scope(false)));
    let plain = plain_sub
        .create_datareader(
            &b.create_topic::<CoherentSample>("HB").unwrap(),
            qos(DataReaderQos::default()),
        )
        .unwrap();
    for w in &ws {
        w.wait_for_matched(2, T).expect("matched");
    }
    ws[1].wait_for_matched(3, T).expect("matched");
    let write_set = |set: u32| {
        publisher.begin_coherent_changes().unwrap();
        for w in &ws {
            w.write(&CoherentSample { id: 0, set }).unwrap();
        }
        publisher.end_coherent_changes().unwrap();
        for w in &ws {
            w.wait_for_acknowledgments(T).unwrap();
        }
    };
    for sub in [&remote_sub, &local_sub] {
        sub.begin_access().unwrap();
        sub.begin_access().unwrap();
    }
    plain_sub.begin_access().unwrap();
    // The first reader is read, then a set arrives whole (acknowledged by the subscriber's
    // participant) before the second reader is read: it must not show its part of it.
    for rs in [&remote, &local] {
        assert!(take_sets_of(&rs[0]).is_empty());
    }
    write_set(1);
    for (who, rs) in [("remote", &remote), ("local", &local)] {
        assert!(!rs[1].wait_for_data(Duration::from_millis(100)), "{who}");
        assert_eq!(
            take_sets_of(&rs[1]),
            Vec::<u32>::new(),
            "{who}: part of a set during access"
        );
    }
    assert_eq!(
        take_sets_of(&plain),
        vec![1],
        "the plain subscriber got its sample at once"
    );
    plain_sub.end_access().unwrap();
    // Still nested once: still held.
    for (who, sub, rs) in [
        ("remote", &remote_sub, &remote),
        ("local", &local_sub, &local),
    ] {
        sub.end_access().unwrap();
        assert_eq!(
            take_sets_of(&rs[0]),
            Vec::<u32>::new(),
            "{who}: held while nested"
        );
        sub.end_access().unwrap();
        // The outermost end: the set, in both readers.
        assert!(rs[1].wait_for_data(T), "{who}");
        sub.begin_access().unwrap();
        assert_eq!(take_sets_of(&rs[0]), vec![1], "{who}");
        assert_eq!(take_sets_of(&rs[1]), vec![1], "{who}");
        sub.end_access().unwrap();
    }
}

#[test]
fn bad_presentation_values_are_refused() {
    let a = common::loopback_participant(161);
    let t = a.create_topic::<CoherentSample>("Refused").unwrap();
    let group_coherent_ordered = Presentation {
        access_scope: PresentationAccessScope::Group,
        coherent_access: true,
        ordered_access: true,
    };
    a.create_publisher(PublisherQos::default().presentation(group_coherent_ordered))
        .create_datawriter(&t, qos(DataWriterQos::default()))
        .expect("GROUP coherent and ordered access are accepted");
    let s = a.create_subscriber(SubscriberQos::default());
    s.begin_access().unwrap();
    s.end_access().unwrap();
    assert!(matches!(s.end_access(), Err(Error::PreconditionNotMet(_))));
}

/// Waits until `p` discovered a publication of `topic` announced with GROUP access scope (the
/// scope its publisher gave it).
fn eventually_announced_with_group_scope(p: &halyard::DomainParticipant, topic: &str) {
    let start = Instant::now();
    while !p.discovered_publications().iter().any(|e| {
        e.topic_name == topic
            && e.qos.presentation.access_scope == halyard::qos::wire::PresentationAccessScope::Group
    }) {
        assert!(
            start.elapsed() < T,
            "a GROUP-scope publication of {topic} within {T:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}
