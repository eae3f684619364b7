//! Proves that a GROUP coherent set is never split for a subscriber that joins late: its
//! readers get the publisher's TRANSIENT_LOCAL history per writer as each pairing matches,
//! some of the publisher's writers discovered long after the others (their announcements
//! dropped for a while), on a lossy, reordering network; every set written, historical or
//! live, reaches the subscriber whole in one step, and an application that reads the
//! readers one after the other inside begin/end access, while the sets' parts keep
//! arriving between its reads, sees each set whole in exactly one access round.

use crate::net::*;
use halyard_core::wire::message::HEADER_LEN;
use halyard_core::wire::qos::{
    DurabilityKind, EndpointQos, History, PresentationAccessScope, ReliabilityKind,
};
use halyard_core::wire::{EntityId, Guid};
use halyard_core::{ChangeKind, Event, NewChange, ReaderSpec, WriterSpec};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

const TOPICS: [&str; 3] = ["GA", "GB", "GC"];

/// The publisher's and subscriber's node indices.
const PUB: usize = 0;
const SUB: usize = 1;

fn qos(mut q: EndpointQos) -> EndpointQos {
    q.history = History::KeepAll;
    q.reliability.kind = ReliabilityKind::Reliable;
    q.durability = DurabilityKind::TransientLocal;
    q.presentation.access_scope = PresentationAccessScope::Group;
    q.presentation.coherent_access = true;
    q
}

/// The members of set `set`, in write order, as (writer number, member number): each
/// writer writes 0, 1 or 2 members (so some parts are empty), interleaved.
fn members(set: u8) -> Vec<(u8, u8)> {
    let per_writer: Vec<u8> = (0..3u8).map(|w| (set + w) % 3).collect();
    let mut v = Vec::new();
    for i in 0..2u8 {
        for (w, &n) in per_writer.iter().enumerate() {
            if i < n {
                v.push((w as u8, v.len() as u8));
            }
        }
    }
    v
}

/// A publisher (node [`PUB`]) with one writer per topic, and, once [`Run::join`] ran, a
/// subscriber (node [`SUB`]) with one reader per topic.
struct Run {
    net: SimNet,
    rng: Rng,
    publisher: EntityId,
    writers: Vec<EntityId>,
    subscriber: EntityId,
    readers: Vec<EntityId>,
    /// Sets written so far.
    written: u8,
    /// While set, the publication announcements of `late` writers do not reach the
    /// subscriber's node.
    hide: Rc<Cell<bool>>,
}

impl Run {
    fn new(seed: u64) -> Run {
        let mut rng = Rng::new(seed ^ 0x6A0C);
        let faults = Faults {
            loss: rng.unit() * 0.15,
            duplicate: rng.unit() * 0.05,
            reorder: rng.unit() * 0.3,
            reorder_delay_ns: 3 * MS,
            latency_ns: 100_000,
            jitter_ns: rng.range(0, 1_000_000),
            corrupt: 0.0,
        };
        let mut net = SimNet::new(seed, faults);
        net.add_node(node_config(1));
        let now = net.instant();
        let p = net.p(PUB);
        let publisher = p.create_group(true);
        let writers = TOPICS
            .iter()
            .map(|t| {
                let spec = WriterSpec {
                    topic_name: (*t).into(),
                    type_name: "Blob".into(),
                    qos: qos(EndpointQos::writer_default()),
                    has_key: false,
                };
                let w = p.create_writer_disabled(now, spec);
                p.set_endpoint_group(w, publisher);
                p.enable_writer(now, w);
                w
            })
            .collect();
        Run {
            net,
            rng,
            publisher,
            writers,
            subscriber: EntityId::UNKNOWN,
            readers: Vec::new(),
            written: 0,
            hide: Rc::new(Cell::new(false)),
        }
    }

    /// Writes the next set.
    fn write_set(&mut self) {
        let set = self.written;
        self.net.p(PUB).begin_group_coherent_set(self.publisher);
        for (w, i) in members(set) {
            let change = NewChange {
                kind: ChangeKind::Alive,
                key_hash: [0; 16],
                payload: Arc::new(vec![0, 1, 0, 0, set, w, i, 0]),
                timestamp: None,
                original: None,
            };
            let writer = self.writers[w as usize];
            let mut tries = 0;
            loop {
                let now = self.net.instant();
                match self.net.write(PUB, now, writer, change.clone()) {
                    Ok(_) => break,
                    Err(halyard_core::WriteError::Full) if tries < 100_000 => {
                        tries += 1;
                        self.net.run_for(MS);
                    }
                    Err(e) => panic!("seed {:#x}: write failed: {e:?}", self.net.seed),
                }
            }
            self.net.flush();
        }
        let now = self.net.instant();
        self.net.p(PUB).end_group_coherent_set(now, self.publisher);
        self.net.flush();
        self.written += 1;
    }

    /// Starts the subscriber's node with its readers, all enabled at once, and hides the
    /// announcements of a seeded subset of the publisher's writers (perhaps none, perhaps
    /// all) from it until [`Run::reveal`].
    fn join(&mut self) {
        let late: Vec<Guid> = self
            .writers
            .iter()
            .filter(|_| self.rng.chance(0.5))
            .map(|&w| Guid::new(self.net.node(PUB).p.guid_prefix(), w))
            .collect();
        let hide = Rc::clone(&self.hide);
        hide.set(!late.is_empty());
        self.net.tamper = Some(Box::new(move |from, to, bytes| {
            if from == PUB && to == SUB && hide.get() {
                drop_announcements(bytes, &late);
            }
        }));
        self.net.add_node(node_config(2));
        let now = self.net.instant();
        let p = self.net.p(SUB);
        self.subscriber = p.create_group(false);
        for t in TOPICS {
            let spec = ReaderSpec {
                topic_name: t.into(),
                type_name: "Blob".into(),
                qos: qos(EndpointQos::reader_default()),
                has_key: false,
            };
            let r = p.create_reader_disabled(now, spec, None);
            p.set_endpoint_group(r, self.subscriber);
            self.readers.push(r);
        }
        for &r in &self.readers {
            p.enable_reader(now, r);
        }
        self.net.flush();
    }

    /// Lets the hidden announcements through.
    fn reveal(&mut self) {
        self.hide.set(false);
    }

    /// What the subscriber's readers were handed, as (instant, reader number, set, writer,
    /// member).
    fn delivered(&self) -> Vec<(u64, usize, u8, u8, u8)> {
        let seed = self.net.seed;
        self.net
            .node(SUB)
            .samples
            .iter()
            .map(|(t, s)| {
                let r = self.readers.iter().position(|&r| r == s.reader);
                let r = r.unwrap_or_else(|| panic!("seed {seed:#x}: a sample for no reader"));
                let p = &s.payload;
                assert!(
                    p.len() == 8 && s.group.is_none(),
                    "seed {seed:#x}: a sample of {} bytes (an end marker taken for data?) or with \
                     its group mark",
                    p.len()
                );
                assert_eq!(
                    p[5] as usize, r,
                    "seed {seed:#x}: a sample on the wrong reader"
                );
                (*t, r, p[4], p[5], p[6])
            })
            .collect()
    }

    fn lost(&self) -> u64 {
        self.net
            .node(SUB)
            .events
            .iter()
            .filter_map(|(_, e)| match e {
                Event::SampleLost { count, .. } => Some(*count),
                _ => None,
            })
            .sum()
    }
}

/// Removes from datagram `bytes` the submessages that announce one of `writers` (SEDP
/// publication DATA naming its GUID); the rest of the datagram goes on.
fn drop_announcements(bytes: &mut Vec<u8>, writers: &[Guid]) {
    const DATA: u8 = 0x15;
    // A zero length is "to the end of the message", except for PAD and INFO_TS (RTPS 2.5
    // §9.4.5.1.3).
    const PAD: u8 = 0x01;
    const INFO_TS: u8 = 0x09;
    let Some(body) = bytes.get(HEADER_LEN..) else {
        return;
    };
    let mut kept = bytes[..HEADER_LEN].to_vec();
    let mut at = 0;
    while at + 4 <= body.len() {
        let (id, flags) = (body[at], body[at + 1]);
        let len = [body[at + 2], body[at + 3]];
        let len = if flags & 1 == 1 {
            u16::from_le_bytes(len)
        } else {
            u16::from_be_bytes(len)
        } as usize;
        let end = match len {
            0 if id != PAD && id != INFO_TS => body.len(),
            _ => (at + 4 + len).min(body.len()),
        };
        let sm = &body[at..end];
        let announces = id == DATA
            && sm.get(12..16) == Some(&EntityId::SEDP_PUBLICATIONS_WRITER.0[..])
            && writers
                .iter()
                .any(|g| sm.windows(16).any(|w| w == g.to_bytes()));
        if !announces {
            kept.extend_from_slice(sm);
        }
        at = end;
    }
    *bytes = kept;
}

/// Set -> its members received, in delivery order, and the instants they came at.
type Received = BTreeMap<u8, (Vec<(u8, u8)>, Vec<u64>)>;

/// The sets in what was delivered.
fn sets_of(got: &[(u64, usize, u8, u8, u8)]) -> Received {
    let mut m = Received::new();
    for &(t, _, set, w, i) in got {
        let e = m.entry(set).or_default();
        e.0.push((w, i));
        e.1.push(t);
    }
    m
}

/// Checks that every set written reached the subscriber whole, in one step, once.
fn assert_every_set_whole(run: &Run) {
    let seed = run.net.seed;
    let got = sets_of(&run.delivered());
    for set in 0..run.written {
        let Some((m, at)) = got.get(&set) else {
            panic!(
                "seed {seed:#x}: set {set} of {} never came ({} samples lost)",
                run.written,
                run.lost()
            );
        };
        let mut m = m.clone();
        m.sort_by_key(|&(_, i)| i);
        assert_eq!(m, members(set), "seed {seed:#x}: set {set} came in part");
        assert!(
            at.iter().all(|&t| t == at[0]),
            "seed {seed:#x}: set {set} reached the subscriber piecemeal at {at:?}"
        );
    }
    assert_eq!(run.lost(), 0, "seed {seed:#x}: samples lost");
}

/// Writes `history` sets, starts the subscriber, then writes `live` more at seeded
/// intervals, revealing the hidden writers at a seeded instant; `between` runs after each
/// live set (and until the end) for the application's part.
fn scenario(run: &mut Run, mut between: impl FnMut(&mut Run)) {
    let history = 1 + run.rng.range(0, 4) as u8;
    for _ in 0..history {
        run.write_set();
        run.net.run_for(run.rng.range(0, 5) * MS);
    }
    run.join();
    let reveal_at = run.net.now + run.rng.range(0, 1500) * MS;
    let live = 10;
    for _ in 0..live {
        let until = run.net.now + run.rng.range(1, 60) * MS;
        while run.net.now < until {
            between(run);
            if run.net.now >= reveal_at {
                run.reveal();
            }
        }
        run.write_set();
    }
    let end = run.net.now + 30 * SEC;
    while run.net.now < end {
        if run.net.now >= reveal_at {
            run.reveal();
        }
        between(run);
        let all: usize = (0..run.written).map(|s| members(s).len()).sum();
        if run.net.now >= reveal_at + SEC && run.delivered().len() >= all {
            break;
        }
    }
    run.net.run_for(SEC);
}

#[test]
fn a_late_subscriber_gets_every_group_set_whole() {
    for_each_seed("a_late_subscriber_gets_every_group_set_whole", 40, |seed| {
        let mut run = Run::new(seed);
        scenario(&mut run, |run| run.net.run_for(MS));
        assert_every_set_whole(&run);
    });
}

#[test]
fn access_rounds_see_each_group_set_whole_once() {
    for_each_seed("access_rounds_see_each_group_set_whole_once", 40, |seed| {
        let mut run = Run::new(seed);
        // Reader number -> how many of its samples the application took.
        let mut taken = [0usize; 3];
        let mut rounds: Vec<BTreeMap<u8, Vec<(u8, u8)>>> = Vec::new();
        scenario(&mut run, |run| {
            let order: Vec<usize> = match run.rng.range(0, 3) {
                0 => vec![0, 1, 2],
                1 => vec![2, 1, 0],
                _ => vec![1, 2, 0],
            };
            let sub = run.subscriber;
            run.net.p(SUB).begin_access(sub);
            let mut round: BTreeMap<u8, Vec<(u8, u8)>> = BTreeMap::new();
            for (k, &r) in order.iter().enumerate() {
                let got: Vec<_> = run
                    .delivered()
                    .into_iter()
                    .filter(|&(_, reader, ..)| reader == r)
                    .collect();
                for &(_, _, set, w, i) in &got[taken[r]..] {
                    round.entry(set).or_default().push((w, i));
                }
                taken[r] = got.len();
                if k + 1 < order.len() {
                    // The application between two reads: the sets' parts keep arriving.
                    let gap = run.rng.range(0, 2_000_000);
                    run.net.run_for(gap);
                }
            }
            run.net.p(SUB).end_access(sub);
            run.net.flush();
            if !round.is_empty() {
                rounds.push(round);
            }
            let pause = run.rng.range(0, 3) * MS;
            run.net.run_for(pause);
        });
        assert_every_set_whole(&run);
        let mut seen = BTreeMap::new();
        for (n, round) in rounds.iter().enumerate() {
            for (set, m) in round {
                let mut m = m.clone();
                m.sort_by_key(|&(_, i)| i);
                assert_eq!(
                    m,
                    members(*set),
                    "seed {seed:#x}: access round {n} saw part of set {set}"
                );
                if let Some(first) = seen.insert(*set, n) {
                    panic!("seed {seed:#x}: set {set} seen in rounds {first} and {n}");
                }
            }
        }
    });
}
