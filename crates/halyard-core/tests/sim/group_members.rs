//! Proves that a publisher's writers coming and going while it writes GROUP coherent sets
//! neither split a set nor hold one back: a writer on a topic the subscriber does not read
//! is deleted while sets it was a member of are still on their way, and a new writer that
//! the subscriber reads joins the publisher; every set reaches the subscriber whole, in one
//! step, soon after it was written, and nothing is counted lost.

use crate::net::*;
use halyard_core::wire::qos::{
    DurabilityKind, EndpointQos, History, PresentationAccessScope, ReliabilityKind,
};
use halyard_core::wire::EntityId;
use halyard_core::{ChangeKind, Event, NewChange, ReaderSpec, WriterSpec};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Writer numbers: the topic each writes; the subscriber reads all but `GD`.
const TOPICS: [&str; 4] = ["GA", "GB", "GD", "GE"];
const D: usize = 2;
const E: usize = 3;
const SETS: u8 = 24;
/// D is deleted after this set, E created before this one.
const D_GONE_AFTER: u8 = 8;
const E_FROM: u8 = 12;

/// Members received, as (writer number, member number), and the instants they came at.
type Received = (Vec<(u8, u8)>, Vec<u64>);

fn qos(mut q: EndpointQos) -> EndpointQos {
    q.history = History::KeepAll;
    q.reliability.kind = ReliabilityKind::Reliable;
    q.durability = DurabilityKind::TransientLocal;
    q.presentation.access_scope = PresentationAccessScope::Group;
    q.presentation.coherent_access = true;
    q
}

/// The members of set `set`, in write order, as (writer number, member number).
fn members(set: u8) -> Vec<(u8, u8)> {
    let mut v = vec![(0, 0)];
    if set.is_multiple_of(2) {
        v.push((1, 1));
    }
    if set <= D_GONE_AFTER {
        v.push((D as u8, v.len() as u8));
    }
    if set >= E_FROM {
        v.push((E as u8, v.len() as u8));
    }
    v
}

/// The members the subscriber reads.
fn read_members(set: u8) -> Vec<(u8, u8)> {
    members(set)
        .into_iter()
        .filter(|&(w, _)| w as usize != D)
        .collect()
}

fn create_writer(net: &mut SimNet, publisher: EntityId, topic: &str) -> EntityId {
    let now = net.instant();
    let p = net.p(0);
    let spec = WriterSpec {
        topic_name: topic.into(),
        type_name: "Blob".into(),
        qos: qos(EndpointQos::writer_default()),
        has_key: false,
    };
    let w = p.create_writer_disabled(now, spec);
    p.set_endpoint_group(w, publisher);
    p.enable_writer(now, w);
    net.flush();
    w
}

fn write(net: &mut SimNet, w: EntityId, payload: Vec<u8>) {
    let change = NewChange {
        kind: ChangeKind::Alive,
        key_hash: [0; 16],
        payload: Arc::new(payload),
        timestamp: None,
        original: None,
    };
    for _ in 0..100_000 {
        let now = net.instant();
        match net.write(0, now, w, change.clone()) {
            Ok(_) => {
                net.flush();
                return;
            }
            Err(halyard_core::WriteError::Full) => net.run_for(MS),
            Err(e) => panic!("seed {:#x}: write failed: {e:?}", net.seed),
        }
    }
    panic!("seed {:#x}: write blocked", net.seed);
}

#[test]
fn writers_coming_and_going_neither_split_nor_hold_back_group_sets() {
    let name = "writers_coming_and_going_neither_split_nor_hold_back_group_sets";
    for_each_seed(name, 40, |seed| {
        let mut rng = Rng::new(seed ^ 0x3E3B);
        let faults = Faults {
            reorder: 0.2,
            reorder_delay_ns: 3 * MS,
            jitter_ns: 500_000,
            ..Faults::lossy(rng.unit() * 0.1)
        };
        let mut net = SimNet::new(seed, faults);
        net.add_node(node_config(1));
        net.add_node(node_config(2));
        let publisher = net.p(0).create_group(true);
        let mut ws: Vec<Option<EntityId>> = TOPICS[..3]
            .iter()
            .map(|t| Some(create_writer(&mut net, publisher, t)))
            .collect();
        ws.push(None);
        let now = net.instant();
        let p = net.p(1);
        let sub = p.create_group(false);
        let mut readers = BTreeMap::new();
        for (n, t) in TOPICS.iter().enumerate().filter(|&(n, _)| n != D) {
            let spec = ReaderSpec {
                topic_name: (*t).into(),
                type_name: "Blob".into(),
                qos: qos(EndpointQos::reader_default()),
                has_key: false,
            };
            let r = p.create_reader_disabled(now, spec, None);
            p.set_endpoint_group(r, sub);
            p.enable_reader(now, r);
            readers.insert(r, n as u8);
        }
        let matched = net.run_until(30 * SEC, |n| {
            n.node(1)
                .events
                .iter()
                .filter(|(_, e)| matches!(e, Event::SubscriptionMatched { matched: true, .. }))
                .count()
                == 2
        });
        assert!(matched, "seed {seed:#x}: not matched");
        let mut written_at = BTreeMap::new();
        for set in 0..SETS {
            if set == E_FROM {
                ws[E] = Some(create_writer(&mut net, publisher, TOPICS[E]));
            }
            net.p(0).begin_group_coherent_set(publisher);
            for (w, i) in members(set) {
                let writer = ws[w as usize].expect("the writer exists");
                write(&mut net, writer, vec![0, 1, 0, 0, set, w, i, 0]);
                net.run_for(rng.range(0, 2) * MS);
            }
            let now = net.instant();
            net.p(0).end_group_coherent_set(now, publisher);
            net.flush();
            written_at.insert(set, net.now);
            if set == D_GONE_AFTER {
                // Gone while its last sets are still on their way to the subscriber.
                let now = net.instant();
                let d = ws[D].take().expect("D exists");
                net.p(0).delete_writer(now, d);
                net.flush();
            }
            net.run_for(rng.range(0, 20) * MS);
        }
        let want: usize = (0..SETS).map(|s| read_members(s).len()).sum();
        let done = net.run_until(60 * SEC, |n| n.node(1).samples.len() >= want);
        assert!(
            done,
            "seed {seed:#x}: {} of {want} samples came",
            net.node(1).samples.len()
        );
        net.run_for(SEC);

        // Set -> its members received and the instants they came at.
        let mut got: BTreeMap<u8, Received> = BTreeMap::new();
        for (t, s) in &net.node(1).samples {
            let p = &s.payload;
            assert_eq!(p.len(), 8, "seed {seed:#x}: an end marker taken for data?");
            assert_eq!(Some(&p[5]), readers.get(&s.reader), "seed {seed:#x}");
            let e = got.entry(p[4]).or_default();
            e.0.push((p[5], p[6]));
            e.1.push(*t);
        }
        for set in 0..SETS {
            let (m, at) = got
                .get(&set)
                .unwrap_or_else(|| panic!("seed {seed:#x}: set {set} never came"));
            let mut m = m.clone();
            m.sort_by_key(|&(_, i)| i);
            assert_eq!(
                m,
                read_members(set),
                "seed {seed:#x}: set {set} came in part"
            );
            assert!(
                at.iter().all(|&t| t == at[0]),
                "seed {seed:#x}: set {set} came piecemeal at {at:?}"
            );
            let late = at[0].saturating_sub(written_at[&set]);
            assert!(
                late < 2 * SEC,
                "seed {seed:#x}: set {set} came {} ms after it was written",
                late / MS
            );
        }
        let lost = net
            .node(1)
            .events
            .iter()
            .any(|(_, e)| matches!(e, Event::SampleLost { .. }));
        assert!(!lost, "seed {seed:#x}: samples counted lost");
    });
}
