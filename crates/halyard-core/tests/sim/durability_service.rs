//! Proves the core's part of TRANSIENT/PERSISTENT durability (module `relay`) on a lossy,
//! partitioned simulated network, with a minimal durability service written here: a reader
//! whose acknowledgments are held until the "service" stored a sample, and a relay writer that
//! serves what was stored.
//!
//! - A writer's `all_acked` means "stored": the service's held reader does not acknowledge
//!   what the service did not release.
//! - A reader that starts after the writer is gone gets every sample the services stored,
//!   exactly once and in order, from one or from two services (each sample carries its
//!   original writer and sequence number), under loss and a partition.
//! - A TRANSIENT KEEP_ALL writer whose history is full drops what every service stored
//!   instead of blocking.
//! - A reader matched to the writer and to the services gets each sample once: the relay
//!   sends it a GAP for what was stored after it matched, and copies are dropped.
//! - A service reader scoped to one participant (an embedded service) matches that
//!   participant's writers only; other participants' writers send it nothing.

use crate::net::*;
use halyard_core::wire::qos::DurabilityKind;
use halyard_core::wire::{EntityId, Guid, SequenceNumber};
use halyard_core::{ChangeKind, NewChange, ReaderSpec, WriterSpec};
use std::sync::Arc;

const TOPIC: &str = "Durable";
const KEY: [u8; 16] = [3; 16];

fn spec_w(durability: DurabilityKind) -> WriterSpec {
    let mut qos = reliable_keep_all_writer();
    qos.durability = durability;
    WriterSpec {
        topic_name: TOPIC.into(),
        type_name: "Blob".into(),
        qos,
        has_key: true,
    }
}

fn spec_r(durability: DurabilityKind) -> ReaderSpec {
    let mut qos = reliable_keep_all_reader();
    qos.durability = durability;
    ReaderSpec {
        topic_name: TOPIC.into(),
        type_name: "Blob".into(),
        qos,
        has_key: true,
    }
}

/// A minimal durability service on one node: a held TRANSIENT reader and a relay writer.
struct Service {
    node: usize,
    reader: EntityId,
    writer: EntityId,
    /// Samples of the node taken so far.
    taken: usize,
    /// What it stored: (original writer, sequence number).
    stored: Vec<(Guid, SequenceNumber)>,
    /// Whether it stores (and releases) at all.
    storing: bool,
    /// With released payloads (`Participant::set_relay_releases_payloads`): the bytes it
    /// stored, by locator; the relay holds only the metadata and asks for them.
    kept: Option<std::collections::BTreeMap<u64, Arc<Vec<u8>>>>,
    /// Events of its node looked at so far (for `PayloadsWanted`).
    events_seen: usize,
    /// Payloads handed back to the relay.
    restored: usize,
    /// Calls of `serve_wanted` that found payloads wanted (rounds through the "store").
    fetch_rounds: usize,
    /// Locators whose bytes it lost (answered `None`).
    forgotten: Vec<u64>,
    /// Fetches that fail before reads succeed (answered `payloads_unavailable`).
    failing_fetches: usize,
    /// Holds its relay's history back while it may (`Participant::defer_relay_history`;
    /// with released payloads only): what it stored and did not write to the relay.
    defers: bool,
    held: Vec<(NewChange, u64, usize)>,
    /// Times it wrote the held history to the relay (`RelayHistoryWanted`).
    histories_written: usize,
    /// Stored samples it wrote to the relay at once (not held back).
    written_live: usize,
}

impl Service {
    fn start(net: &mut SimNet, node: usize) -> Service {
        Service::start_with(net, node, true, false)
    }

    /// `catches_up`: false for a service keeping only its own participant's writers;
    /// `releases`: its relay holds only metadata, and fetches payloads from it.
    fn start_with(net: &mut SimNet, node: usize, catches_up: bool, releases: bool) -> Service {
        let now = net.instant();
        let reader = net
            .p(node)
            .create_reader(now, spec_r(DurabilityKind::Transient));
        net.p(node).hold_acknowledgments(now, reader);
        net.p(node).set_reader_catches_up(now, reader, catches_up);
        let writer = net
            .p(node)
            .create_writer(now, spec_w(DurabilityKind::Transient));
        net.p(node).set_writer_relay(writer);
        if releases {
            net.p(node).set_relay_releases_payloads(writer);
        }
        net.flush();
        Service {
            node,
            reader,
            writer,
            taken: 0,
            stored: Vec::new(),
            storing: true,
            kept: releases.then(Default::default),
            events_seen: 0,
            restored: 0,
            fetch_rounds: 0,
            forgotten: Vec::new(),
            failing_fetches: 0,
            defers: false,
            held: Vec::new(),
            histories_written: 0,
            written_live: 0,
        }
    }

    /// Answers the relay's `PayloadsWanted` from what it kept (but the `forgotten`
    /// locators), as a service answers from its store.
    fn serve_wanted(&mut self, net: &mut SimNet) {
        let Some(kept) = self.kept.as_ref() else {
            return;
        };
        let events = &net.node(self.node).events;
        let fresh = &events[self.events_seen..];
        let noticed = fresh.iter().any(|(_, e)| {
            matches!(e, halyard_core::Event::PayloadsWanted { writer } if *writer == self.writer)
        });
        let history_wanted = fresh.iter().any(|(_, e)| {
            matches!(e, halyard_core::Event::RelayHistoryWanted { writer } if *writer == self.writer)
        });
        self.events_seen = events.len();
        if history_wanted {
            // What it held back goes to the relay as metadata, in order; then the readers
            // that waited match.
            let now = net.instant();
            for (change, at, len) in self.held.drain(..) {
                let r = net
                    .p(self.node)
                    .write_released(now, self.writer, change, at, len);
                assert!(r.is_ok(), "seed {:#x}: relay write: {r:?}", net.seed);
            }
            net.p(self.node).complete_relay_history(now, self.writer);
            self.histories_written += 1;
            net.flush();
        }
        if !noticed {
            return;
        }
        let mut first = true;
        loop {
            let wanted = net.p(self.node).take_wanted_payloads(self.writer, 16);
            if wanted.is_empty() {
                break;
            }
            if std::mem::take(&mut first) {
                self.fetch_rounds += 1;
            }
            if self.failing_fetches > 0 {
                // A read that fails: asked again later, nothing is dropped.
                self.failing_fetches -= 1;
                let sns: Vec<_> = wanted.iter().map(|&(sn, _)| sn).collect();
                net.p(self.node).payloads_unavailable(self.writer, &sns);
                break;
            }
            let back: Vec<_> = wanted
                .iter()
                .map(|&(sn, at)| {
                    let p = kept
                        .get(&at)
                        .filter(|_| !self.forgotten.contains(&at))
                        .cloned();
                    (sn, p)
                })
                .collect();
            self.restored += back.iter().filter(|(_, p)| p.is_some()).count();
            let now = net.instant();
            net.p(self.node).restore_payloads(now, self.writer, back);
        }
        net.flush();
    }

    /// Stores what its reader received (once per original sample), relays it, releases the
    /// acknowledgments.
    fn pump(&mut self, net: &mut SimNet) {
        if !self.storing || !net.node(self.node).alive {
            return;
        }
        let fresh: Vec<_> = net.node(self.node).samples[self.taken..]
            .iter()
            .filter(|(_, s)| s.reader == self.reader)
            .map(|(_, s)| s.clone())
            .collect();
        self.taken = net.node(self.node).samples.len();
        for s in fresh {
            let original = s.original.unwrap_or((s.writer, s.sn));
            if !self.stored.contains(&original) {
                self.stored.push(original);
                let change = NewChange {
                    kind: ChangeKind::Alive,
                    key_hash: s.key_hash.unwrap_or(KEY),
                    payload: Arc::clone(&s.payload),
                    timestamp: s.source_timestamp,
                    original: Some(original),
                };
                let now = net.instant();
                let r = match self.kept.as_mut() {
                    Some(kept) => {
                        let at = kept.len() as u64;
                        kept.insert(at, Arc::clone(&s.payload));
                        if self.defers && net.p(self.node).defer_relay_history(self.writer) {
                            self.held.push((change, at, s.payload.len()));
                            Ok(SequenceNumber(0))
                        } else {
                            self.written_live += 1;
                            net.p(self.node).write_stored(now, self.writer, change, at)
                        }
                    }
                    None => net.write(self.node, now, self.writer, change),
                };
                assert!(r.is_ok(), "seed {:#x}: relay write: {r:?}", net.seed);
            }
            let now = net.instant();
            net.p(self.node)
                .release_acknowledgments(now, self.reader, s.writer, s.sn);
        }
        net.flush();
    }
}

/// Runs the network for `d` ns, pumping the services every millisecond.
fn run_services(net: &mut SimNet, services: &mut [Service], d: u64) {
    let end = net.now + d;
    while net.now < end {
        net.run_for(MS);
        for s in services.iter_mut() {
            s.pump(net);
            s.serve_wanted(net);
        }
    }
}

/// Runs the services until every relay's readers acknowledged all it holds (30 s at most).
fn run_until_relays_acked(net: &mut SimNet, services: &mut [Service]) {
    for _ in 0..3000 {
        if services
            .iter()
            .all(|s| net.node(s.node).p.writer_all_acked(s.writer))
        {
            return;
        }
        run_services(net, services, 10 * MS);
    }
}

/// The indices a node's reader `r` received, in order.
fn received(net: &SimNet, node: usize, r: EntityId) -> Vec<Option<u64>> {
    net.node(node)
        .samples
        .iter()
        .filter(|(_, s)| s.reader == r)
        .map(|(_, s)| parse_indexed(&s.payload))
        .collect()
}

fn faults() -> Faults {
    Faults {
        duplicate: 0.02,
        reorder: 0.1,
        reorder_delay_ns: 3 * MS,
        jitter_ns: 200_000,
        ..Faults::lossy(0.15)
    }
}

/// A TRANSIENT writer on node `a` and, on node `s`, a service that stores nothing yet (its
/// reader holds every acknowledgment), matched, on the lossy network of [`faults`].
struct HeldService {
    net: SimNet,
    a: usize,
    s: usize,
    w: EntityId,
    svc: Service,
}

fn held_service_matched(seed: u64) -> HeldService {
    let mut net = SimNet::new(seed, faults());
    let a = net.add_node(node_config(1));
    let s = net.add_node(node_config(2));
    let now = net.instant();
    let w = net
        .p(a)
        .create_writer(now, spec_w(DurabilityKind::Transient));
    let mut svc = Service::start(&mut net, s);
    svc.storing = false;
    let wg = Guid::new(net.p(a).guid_prefix(), w);
    let ok = net.run_until(30 * SEC, |n| {
        n.node(s).saw(|e| {
            matches!(e, halyard_core::Event::SubscriptionMatched { writer, matched: true, .. } if *writer == wg)
        })
    });
    assert!(ok, "seed {seed:#x}: the service's reader never matched");
    HeldService { net, a, s, w, svc }
}

#[test]
fn acknowledgment_waits_for_the_store() {
    for_each_seed("acknowledgment_waits_for_the_store", 30, |seed| {
        let HeldService {
            mut net,
            a,
            s,
            w,
            mut svc,
        } = held_service_matched(seed);
        for i in 0..50 {
            write_retrying(&mut net, a, w, KEY, indexed_payload(i, 64));
        }
        net.run_for(3 * SEC);
        assert_eq!(
            received(&net, s, svc.reader).len(),
            50,
            "seed {seed:#x}: the service's reader got everything"
        );
        assert!(
            !net.node(a).p.writer_all_acked(w),
            "seed {seed:#x}: acknowledged before the service stored anything"
        );
        svc.storing = true;
        let mut services = [svc];
        let mut acked = false;
        for _ in 0..3000 {
            run_services(&mut net, &mut services, 10 * MS);
            if net.node(a).p.writer_all_acked(w) {
                acked = true;
                break;
            }
        }
        assert!(acked, "seed {seed:#x}: not acknowledged once stored");
        assert_eq!(services[0].stored.len(), 50, "seed {seed:#x}");
    });
}

/// A writer writes `n` samples while `services` run, then leaves; a TRANSIENT reader starts
/// on a fresh node afterwards. Returns what it received.
fn late_joiner_after_writer_left(seed: u64, service_count: usize, n: u64) -> Vec<Option<u64>> {
    late_joiner_after_writer_left_with(seed, service_count, n, None, true, false, false).got
}

/// What [`late_joiner_after_writer_left_with`] ends with.
struct LateRun {
    /// What the late reader received.
    got: Vec<Option<u64>>,
    net: SimNet,
    services: Vec<Service>,
    /// Payload bytes each service's relay held in memory before the late reader started.
    relay_bytes_before: Vec<usize>,
}

/// Writes one sample, letting the services work while the writer's history is full.
fn write_pumping(net: &mut SimNet, services: &mut [Service], node: usize, w: EntityId, i: u64) {
    let change = NewChange {
        kind: ChangeKind::Alive,
        key_hash: KEY,
        payload: Arc::new(indexed_payload(i, 200)),
        timestamp: None,
        original: None,
    };
    for _ in 0..100_000 {
        let now = net.instant();
        match net.write(node, now, w, change.clone()) {
            Ok(_) => {
                net.flush();
                return;
            }
            Err(halyard_core::WriteError::Full) => run_services(net, services, MS),
            Err(e) => panic!("seed {:#x}: write failed: {e:?}", net.seed),
        }
    }
    panic!("seed {:#x}: write {i} blocked for 100 s virtual", net.seed);
}

/// As [`late_joiner_after_writer_left`], the writer's KEEP_ALL history limited to
/// `max_samples` if given.
fn late_joiner_after_writer_left_with(
    seed: u64,
    service_count: usize,
    n: u64,
    max_samples: Option<i32>,
    catches_up: bool,
    releases: bool,
    defers: bool,
) -> LateRun {
    let mut net = SimNet::new(seed, faults());
    let a = net.add_node(node_config(1));
    let mut services: Vec<Service> = (0..service_count)
        .map(|i| {
            let node = net.add_node(node_config(2 + i as u8));
            let mut svc = Service::start_with(&mut net, node, catches_up, releases);
            svc.defers = defers;
            svc
        })
        .collect();
    let late = net.add_node(node_config(9));
    let now = net.instant();
    let mut spec = spec_w(DurabilityKind::Transient);
    if let Some(m) = max_samples {
        spec.qos.resource_limits.max_samples = m;
    }
    let w = net.p(a).create_writer(now, spec);
    // The services see the writer; the late node is cut off from everything meanwhile.
    let everyone: Vec<usize> = (0..late).collect();
    net.partitions.push(Partition {
        a: everyone.clone(),
        b: vec![late],
        from: 0,
        until: u64::MAX,
    });
    let wg = Guid::new(net.p(a).guid_prefix(), w);
    let matched = |net: &SimNet, svc: &Service| {
        net.node(svc.node).events.iter().any(|(_, e)| {
            matches!(e, halyard_core::Event::SubscriptionMatched { reader, writer, matched: true } if *reader == svc.reader && *writer == wg)
        })
    };
    for _ in 0..3000 {
        run_services(&mut net, &mut services, 10 * MS);
        if services.iter().all(|s| matched(&net, s)) {
            break;
        }
    }
    assert!(
        services.iter().all(|s| matched(&net, s)),
        "seed {seed:#x}: a service never matched the writer"
    );
    // The second service is partitioned from the writer for a while: it catches up after.
    if service_count > 1 {
        let from = net.now;
        net.partitions.push(Partition {
            a: vec![a],
            b: vec![services[1].node],
            from,
            until: from + 2 * SEC,
        });
    }
    for i in 0..n {
        write_pumping(&mut net, &mut services, a, w, i);
        for s in services.iter_mut() {
            s.pump(&mut net);
        }
    }
    // Every sample stored (acknowledged by every service), then the writer's node is gone.
    let mut acked = false;
    for _ in 0..6000 {
        run_services(&mut net, &mut services, 10 * MS);
        // (A service cut off longer than a lease is no longer matched: all_acked alone may
        // hold without it.)
        if net.node(a).p.writer_all_acked(w) && services.iter().all(|s| s.stored.len() as u64 == n)
        {
            acked = true;
            break;
        }
    }
    assert!(
        acked,
        "seed {seed:#x}: the services never acknowledged everything; stored {:?}",
        services.iter().map(|s| s.stored.len()).collect::<Vec<_>>()
    );
    for s in &services {
        assert_eq!(
            s.stored.len() as u64,
            n,
            "seed {seed:#x}: service stored all"
        );
    }
    net.kill(a);
    net.partitions.clear();
    // The services' relays have what they hold acknowledged by each other (copies).
    run_until_relays_acked(&mut net, &mut services);
    let relay_bytes_before = services
        .iter()
        .map(|s| net.p(s.node).writer_history_bytes(s.writer))
        .collect();
    let now = net.instant();
    let r = net
        .p(late)
        .create_reader(now, spec_r(DurabilityKind::Transient));
    net.flush();
    for _ in 0..6000 {
        run_services(&mut net, &mut services, 10 * MS);
        if received(&net, late, r).len() as u64 >= n {
            break;
        }
    }
    // Copies from the second service would arrive within the next moments.
    run_services(&mut net, &mut services, 2 * SEC);
    LateRun {
        got: received(&net, late, r),
        net,
        services,
        relay_bytes_before,
    }
}

#[test]
fn late_joiner_gets_all_history_from_a_service_once_in_order() {
    for_each_seed(
        "late_joiner_gets_all_history_from_a_service_once_in_order",
        20,
        |seed| {
            let got = late_joiner_after_writer_left(seed, 1, 60);
            assert_exactly_once_in_order(seed, &got, 60);
        },
    );
}

#[test]
fn a_full_writer_history_drops_what_the_services_stored_instead_of_blocking() {
    // A TRANSIENT KEEP_ALL writer with room for 8 samples writes 60: it blocks only until
    // the service stored the oldest (without a service it would block for good, as
    // TRANSIENT_LOCAL does), and a late reader still gets all 60 from the service.
    for_each_seed(
        "a_full_writer_history_drops_what_the_services_stored_instead_of_blocking",
        20,
        |seed| {
            let got =
                late_joiner_after_writer_left_with(seed, 1, 60, Some(8), true, false, false).got;
            assert_exactly_once_in_order(seed, &got, 60);
            // A service that does not catch up from relays is a service all the same.
            let got =
                late_joiner_after_writer_left_with(seed, 1, 60, Some(8), false, false, false).got;
            assert_exactly_once_in_order(seed, &got, 60);
        },
    );
}

#[test]
fn relays_that_release_payloads_fetch_them_back_for_late_readers() {
    // The relays of two services keep only metadata once their readers acknowledged (no
    // payload bytes in memory while nobody needs them) and fetch the payloads back from the
    // service when a late reader asks, under loss, duplication and reordering: the late
    // reader still gets every sample once and in order, and the bytes are released again
    // once it acknowledged them.
    for_each_seed(
        "relays_that_release_payloads_fetch_them_back_for_late_readers",
        20,
        |seed| {
            let run = late_joiner_after_writer_left_with(seed, 2, 60, None, true, true, false);
            assert_exactly_once_in_order(seed, &run.got, 60);
            assert_eq!(
                run.relay_bytes_before,
                vec![0, 0],
                "seed {seed:#x}: relays held payloads nobody needed"
            );
            assert!(
                run.services.iter().any(|s| s.restored > 0),
                "seed {seed:#x}: no payload was fetched back"
            );
            // Once the late reader acknowledged what each relay sent it (a relay it matched
            // late may still be sending), the relays hold no payload again.
            let LateRun {
                mut net,
                mut services,
                ..
            } = run;
            run_until_relays_acked(&mut net, &mut services);
            for s in &services {
                assert_eq!(
                    net.node(s.node).p.writer_history_len(s.writer),
                    60,
                    "seed {seed:#x}: the relay keeps every change's metadata"
                );
                assert_eq!(
                    net.node(s.node).p.writer_history_bytes(s.writer),
                    0,
                    "seed {seed:#x}: restored payloads released again once acknowledged"
                );
            }
        },
    );
}

#[test]
fn relays_that_defer_their_history_write_it_for_a_late_reader_which_gets_all_once() {
    // Two services keeping their own participant's writers (their readers do not catch up
    // from relays) hold their relays' history back while no reader needs it: nothing they
    // store is written to a relay as it is stored. A reader that matches a relay later (the
    // late reader; under loss, the other service's reader too, when it matched late) makes
    // the service write the held-back history first. The late reader, under loss,
    // duplication and reordering, gets every sample once and in order.
    for_each_seed(
        "relays_that_defer_their_history_write_it_for_a_late_reader_which_gets_all_once",
        20,
        |seed| {
            let run = late_joiner_after_writer_left_with(seed, 2, 60, None, false, true, true);
            assert_exactly_once_in_order(seed, &run.got, 60);
            for s in &run.services {
                assert_eq!(
                    s.written_live, 0,
                    "seed {seed:#x}: a stored sample was written to a relay nobody needed it from"
                );
                // A relay whose history no reader asked for yet (the late reader may not have
                // discovered both services by the end) holds nothing; one that was asked holds
                // it all.
                let held = run.net.node(s.node).p.writer_history_len(s.writer);
                match s.histories_written {
                    0 => assert_eq!((held, s.held.len()), (0, 60), "seed {seed:#x}"),
                    _ => assert_eq!((held, s.held.len()), (60, 0), "seed {seed:#x}"),
                }
            }
            assert!(
                run.services.iter().any(|s| s.histories_written > 0),
                "seed {seed:#x}: the late reader got the history from no relay"
            );
            // Services that catch up from each other's relays: a relay matched with the other
            // service's reader, which needs every change as it is stored, holds nothing back
            // (what it held before that reader matched was written to it then).
            let run = late_joiner_after_writer_left_with(seed, 2, 60, None, true, true, true);
            assert_exactly_once_in_order(seed, &run.got, 60);
            for (i, s) in run.services.iter().enumerate() {
                let other = &run.services[1 - i];
                let other_reader =
                    Guid::new(run.net.node(other.node).p.guid_prefix(), other.reader);
                let node = &run.net.node(s.node).p;
                let in_relay = node.writer_history_len(s.writer);
                assert_eq!(in_relay + s.held.len(), 60, "seed {seed:#x}");
                if node.matched_readers(s.writer).contains(&other_reader) {
                    assert!(
                        s.held.is_empty(),
                        "seed {seed:#x}: a relay matched with a catching-up reader held history back"
                    );
                }
            }
        },
    );
}

#[test]
fn a_relay_loaded_without_payloads_serves_them_and_gaps_what_its_store_lost() {
    // A restarted service loads its store's history into its relay as metadata only
    // (`write_released`): a late reader gets every sample the store still has, in order,
    // fetched when it asks (the first three reads fail, and are asked again); the two the
    // store lost go to it as GAPs (no stall), and the relay holds no payload once the reader
    // acknowledged.
    for_each_seed(
        "a_relay_loaded_without_payloads_serves_them_and_gaps_what_its_store_lost",
        20,
        |seed| {
            let mut net = SimNet::new(seed, faults());
            let s = net.add_node(node_config(2));
            let late = net.add_node(node_config(9));
            let mut svc = Service::start_with(&mut net, s, true, true);
            svc.forgotten = vec![5, 17];
            svc.failing_fetches = 3;
            load_released(&mut net, &mut svc, 40, 300);
            assert_eq!(
                net.p(s).writer_history_bytes(svc.writer),
                0,
                "seed {seed:#x}"
            );
            let now = net.instant();
            let r = net
                .p(late)
                .create_reader(now, spec_r(DurabilityKind::Transient));
            net.flush();
            let mut services = [svc];
            for _ in 0..3000 {
                run_services(&mut net, &mut services, 10 * MS);
                if received(&net, late, r).len() >= 38
                    && net.node(s).p.writer_all_acked(services[0].writer)
                {
                    break;
                }
            }
            let expected: Vec<Option<u64>> =
                (0..40).filter(|i| ![5, 17].contains(i)).map(Some).collect();
            assert_eq!(received(&net, late, r), expected, "seed {seed:#x}");
            assert_eq!(
                services[0].failing_fetches, 0,
                "seed {seed:#x}: the failed reads were asked again"
            );
            assert_eq!(
                net.node(s).p.writer_history_len(services[0].writer),
                38,
                "seed {seed:#x}: the lost changes left the relay"
            );
            assert_eq!(
                net.node(s).p.writer_history_bytes(services[0].writer),
                0,
                "seed {seed:#x}: payloads released once acknowledged"
            );
        },
    );
}

/// Loads `svc`'s relay with `n` changes of one original writer as a restarted service loads
/// its store: released (`write_released`), their `len`-byte payloads kept by the service only.
/// Returns one payload's size.
fn load_released(net: &mut SimNet, svc: &mut Service, n: u64, len: usize) -> usize {
    let original = Guid::new(
        halyard_core::wire::GuidPrefix([7; 12]),
        EntityId([0, 0, 1, 2]),
    );
    let mut size = 0;
    for i in 0..n {
        let payload = Arc::new(indexed_payload(i, len));
        size = payload.len();
        if let Some(kept) = svc.kept.as_mut() {
            kept.insert(i, payload);
        }
        let change = NewChange {
            kind: ChangeKind::Alive,
            key_hash: KEY,
            payload: Arc::new(Vec::new()),
            timestamp: None,
            original: Some((original, SequenceNumber(i as i64 + 1))),
        };
        let now = net.instant();
        let r = net
            .p(svc.node)
            .write_released(now, svc.writer, change, i, size);
        assert!(r.is_ok(), "seed {:#x}: {r:?}", net.seed);
    }
    size
}

/// A relay loaded with `n` released changes of `len`-byte payloads and a late reader on the
/// lossy network: (what the reader received, fetch rounds, peak payload bytes the relay held,
/// payload bytes it holds at the end, one change's payload size).
fn late_read_of_a_loaded_relay(
    seed: u64,
    n: u64,
    len: usize,
) -> (Vec<Option<u64>>, usize, usize, usize, usize) {
    let mut net = SimNet::new(seed, faults());
    let s = net.add_node(node_config(2));
    let late = net.add_node(node_config(9));
    let mut svc = Service::start_with(&mut net, s, true, true);
    let size = load_released(&mut net, &mut svc, n, len);
    let now = net.instant();
    let r = net
        .p(late)
        .create_reader(now, spec_r(DurabilityKind::Transient));
    net.flush();
    let mut services = [svc];
    let mut peak = 0;
    for _ in 0..20_000 {
        run_services(&mut net, &mut services, 5 * MS);
        peak = peak.max(net.node(s).p.writer_history_bytes(services[0].writer));
        if received(&net, late, r).len() as u64 >= n
            && net.node(s).p.writer_all_acked(services[0].writer)
        {
            break;
        }
    }
    let end = net.node(s).p.writer_history_bytes(services[0].writer);
    (
        received(&net, late, r),
        services[0].fetch_rounds,
        peak,
        end,
        size,
    )
}

#[test]
fn a_relay_reads_ahead_of_a_late_readers_requests_within_a_bound() {
    // A late reader of a long history loaded without payloads asks for it a NACK at a time
    // (256 sequence numbers at most). The relay fetches the released changes after each one
    // asked for (RELAY_READ_AHEAD changes, fewer for large samples: RELAY_READ_AHEAD_BYTES),
    // so the service is asked a few times for the whole history rather than once per NACK
    // (each such round held the catch-up up), and the relay never holds the whole history.
    // The reader still gets every sample once, in order, under loss, duplication and
    // reordering.
    use halyard_core::config::{
        MAX_REQUESTED_PER_READER, RELAY_READ_AHEAD, RELAY_READ_AHEAD_BYTES,
    };
    // A quarter of a second a seed: one in 20 of the seeds asked for (50 of CI's 1000).
    for_each_seed_scaled(
        "a_relay_reads_ahead_of_a_late_readers_requests_within_a_bound",
        20,
        5,
        |seed| {
            // Small samples: the window is RELAY_READ_AHEAD changes.
            const N: u64 = 6000;
            let (got, rounds, peak, end, len) = late_read_of_a_loaded_relay(seed, N, 64);
            assert!(
                got == (0..N).map(Some).collect::<Vec<_>>(),
                "seed {seed:#x}: not every sample once in order ({} received)",
                got.len()
            );
            assert!(
                (rounds as u64) * 256 < N,
                "seed {seed:#x}: {rounds} fetch rounds for {N} samples: about one per NACK, no read-ahead"
            );
            let bound = (RELAY_READ_AHEAD as usize + MAX_REQUESTED_PER_READER) * len;
            assert!(
                peak <= bound && peak < N as usize * len,
                "seed {seed:#x}: the relay held {peak} B of payloads at once (bound {bound} B)"
            );
            assert_eq!(
                end, 0,
                "seed {seed:#x}: payloads released once acknowledged"
            );
            // Large samples: the window is RELAY_READ_AHEAD_BYTES, not RELAY_READ_AHEAD changes.
            const M: u64 = 1500;
            let (got, _, peak, end, len) = late_read_of_a_loaded_relay(seed, M, 8000);
            assert!(
                got == (0..M).map(Some).collect::<Vec<_>>(),
                "seed {seed:#x}: large samples: not every sample once in order ({} received)",
                got.len()
            );
            let bound = RELAY_READ_AHEAD_BYTES + 2 * 256 * len;
            assert!(
                peak <= bound,
                "seed {seed:#x}: large samples: the relay held {peak} B of payloads at once (bound {bound} B: the byte window and two NACKs)"
            );
            assert_eq!(
                end, 0,
                "seed {seed:#x}: large samples: payloads released once acknowledged"
            );
        },
    );
}

#[test]
fn two_services_do_not_duplicate_deliveries() {
    for_each_seed("two_services_do_not_duplicate_deliveries", 20, |seed| {
        let got = late_joiner_after_writer_left(seed, 2, 60);
        assert_eq!(
            got.len(),
            60,
            "seed {seed:#x}: each sample once, not once per service"
        );
        let mut sorted = got.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), 60, "seed {seed:#x}: no copies");
    });
}

#[test]
fn a_live_reader_gets_each_sample_once_with_a_service_running() {
    for_each_seed(
        "a_live_reader_gets_each_sample_once_with_a_service_running",
        20,
        |seed| {
            let mut net = SimNet::new(seed, faults());
            let a = net.add_node(node_config(1));
            let s = net.add_node(node_config(2));
            let b = net.add_node(node_config(3));
            let now = net.instant();
            let w = net
                .p(a)
                .create_writer(now, spec_w(DurabilityKind::Transient));
            let mut services = [Service::start(&mut net, s)];
            let now = net.instant();
            let r = net
                .p(b)
                .create_reader(now, spec_r(DurabilityKind::Transient));
            net.flush();
            // Half the samples before the reader matched anything, half after.
            for i in 0..40 {
                write_retrying(&mut net, a, w, KEY, indexed_payload(i, 100));
                services[0].pump(&mut net);
            }
            run_services(&mut net, &mut services, 5 * SEC);
            for i in 40..80 {
                write_retrying(&mut net, a, w, KEY, indexed_payload(i, 100));
                services[0].pump(&mut net);
            }
            for _ in 0..3000 {
                run_services(&mut net, &mut services, 10 * MS);
                if received(&net, b, r).len() >= 80 {
                    break;
                }
            }
            run_services(&mut net, &mut services, 2 * SEC);
            let got = received(&net, b, r);
            assert_eq!(got.len(), 80, "seed {seed:#x}: each sample once: {got:?}");
            let mut sorted = got.clone();
            sorted.sort();
            sorted.dedup();
            assert_eq!(sorted.len(), 80, "seed {seed:#x}: no copies");
        },
    );
}

/// Samples a held reader (node `node`, reader `r`) received from a relay of node `relay`
/// (rather than from the original writer), after `write`s of node `a`'s writer stored by a
/// service on node `s`; the held reader catches up from relays or not.
fn relayed_to_a_held_reader(seed: u64, catches_up: bool) -> (usize, usize) {
    let mut net = SimNet::new(seed, Faults::none());
    let a = net.add_node(node_config(1));
    let s = net.add_node(node_config(2));
    let c = net.add_node(node_config(3));
    let now = net.instant();
    let w = net
        .p(a)
        .create_writer(now, spec_w(DurabilityKind::Transient));
    let mut services = [Service::start(&mut net, s)];
    let now = net.instant();
    let held = net
        .p(c)
        .create_reader(now, spec_r(DurabilityKind::Transient));
    net.p(c).hold_acknowledgments(now, held);
    net.p(c).set_reader_catches_up(now, held, catches_up);
    net.flush();
    run_services(&mut net, &mut services, SEC);
    for i in 0..30 {
        write_retrying(&mut net, a, w, KEY, indexed_payload(i, 100));
        services[0].pump(&mut net);
    }
    run_services(&mut net, &mut services, 3 * SEC);
    let relay_prefix = net.p(s).guid_prefix();
    let got: Vec<_> = net
        .node(c)
        .samples
        .iter()
        .filter(|(_, x)| x.reader == held)
        .map(|(_, x)| x.writer.prefix == relay_prefix)
        .collect();
    (
        got.iter().filter(|&&r| !r).count(),
        got.iter().filter(|&&r| r).count(),
    )
}

#[test]
fn a_service_scoped_to_its_own_writers_gets_no_relay_copies() {
    for_each_seed(
        "a_service_scoped_to_its_own_writers_gets_no_relay_copies",
        5,
        |seed| {
            // A service that catches up gets every stored sample from the relay as well.
            let (direct, relayed) = relayed_to_a_held_reader(seed, true);
            assert_eq!(direct, 30, "seed {seed:#x}");
            assert_eq!(relayed, 30, "seed {seed:#x}: copies from the relay");
            // One scoped to its own writers gets them from the writer only: GAPs from relays.
            let (direct, relayed) = relayed_to_a_held_reader(seed, false);
            assert_eq!(direct, 30, "seed {seed:#x}");
            assert_eq!(relayed, 0, "seed {seed:#x}: no relay copies");
        },
    );
}

#[test]
fn a_service_reader_scoped_to_one_participant_matches_only_its_writers() {
    // An embedded service keeps its own participant's writers only: scoped to node a, its
    // reader on node c matches a's writer and gets a's samples, and b's writer (another
    // Halyard participant) neither matches it nor sends it anything, under loss.
    for_each_seed(
        "a_service_reader_scoped_to_one_participant_matches_only_its_writers",
        5,
        |seed| {
            let mut net = SimNet::new(seed, Faults::lossy(0.1));
            let a = net.add_node(node_config(1));
            let b = net.add_node(node_config(2));
            let c = net.add_node(node_config(3));
            let now = net.instant();
            let wa = net
                .p(a)
                .create_writer(now, spec_w(DurabilityKind::Transient));
            let wb = net
                .p(b)
                .create_writer(now, spec_w(DurabilityKind::Transient));
            let scope = net.p(a).guid_prefix();
            let held =
                net.p(c)
                    .create_reader_disabled(now, spec_r(DurabilityKind::Transient), None);
            net.p(c).hold_acknowledgments(now, held);
            net.p(c).set_reader_scope(now, held, Some(scope));
            net.p(c).enable_reader(now, held);
            net.run_for(SEC);
            for i in 0..30 {
                write_retrying(&mut net, a, wa, KEY, indexed_payload(i, 100));
                write_retrying(&mut net, b, wb, KEY, indexed_payload(100 + i, 100));
            }
            net.run_for(3 * SEC);
            let from: Vec<_> = net
                .node(c)
                .samples
                .iter()
                .filter(|(_, x)| x.reader == held)
                .map(|(_, x)| x.writer.prefix)
                .collect();
            assert_eq!(from.len(), 30, "seed {seed:#x}: a's samples");
            assert!(from.iter().all(|&p| p == scope), "seed {seed:#x}: only a's");
            let reader_guid = Guid {
                prefix: net.p(c).guid_prefix(),
                entity: held,
            };
            assert!(
                !matched_service(&net, b, wb, reader_guid),
                "seed {seed:#x}: b's writer matched the scoped reader"
            );
            assert!(
                matched_service(&net, a, wa, reader_guid),
                "seed {seed:#x}: a's writer did not match the scoped reader"
            );
            assert!(
                !net.node(a).saw(|e| matches!(e,
                    halyard_core::Event::PublicationMatched { reader, .. }
                    if *reader == reader_guid)),
                "seed {seed:#x}: a service's reader reached the application's statuses"
            );
        },
    );
}

/// Bytes of 16 KB samples a TRANSIENT writer gets to write unacknowledged to one reader on
/// another node that falls silent once matched (its node dies): a durability service's
/// reader (`service`) or an ordinary reliable one. The write that would pass the window is
/// the first refused.
fn unacknowledged_to_a_silent_reader(seed: u64, service: bool) -> usize {
    const SIZE: usize = 16 * 1024;
    let mut net = SimNet::new(seed, Faults::none());
    let a = net.add_node(node_config(1));
    let r = net.add_node(node_config(2));
    let now = net.instant();
    let w = net
        .p(a)
        .create_writer(now, spec_w(DurabilityKind::Transient));
    let reader = if service {
        Service::start(&mut net, r).reader
    } else {
        net.p(r)
            .create_reader(now, spec_r(DurabilityKind::Transient))
    };
    let reader_guid = Guid {
        prefix: net.p(r).guid_prefix(),
        entity: reader,
    };
    let matched = net.run_until(30 * SEC, |n| {
        matched_service(n, a, w, reader_guid)
            || n.node(a).saw(|e| {
                matches!(e,
                halyard_core::Event::PublicationMatched { reader, matched: true, .. }
                if *reader == reader_guid)
            })
    });
    assert!(matched, "seed {seed:#x}: the reader never matched");
    net.kill(r);
    let mut written = 0;
    for i in 0..4096 {
        let change = NewChange {
            kind: ChangeKind::Alive,
            key_hash: KEY,
            payload: Arc::new(indexed_payload(i, SIZE)),
            timestamp: None,
            original: None,
        };
        let now = net.instant();
        match net.write(a, now, w, change) {
            Ok(_) => written += SIZE,
            Err(halyard_core::WriteError::Full) => return written,
            Err(e) => panic!("seed {seed:#x}: write failed: {e:?}"),
        }
        net.flush();
    }
    panic!("seed {seed:#x}: 4096 samples of {SIZE} B written to a silent reader, no window");
}

/// A durability service's reader acknowledges only what its service committed (a batch
/// waits up to the commit delay), so a writer it matched may have the whole high-water mark
/// unacknowledged, where an ordinary reader gets the floor's window.
#[test]
fn a_writer_read_by_a_durability_service_has_the_high_water_window() {
    for_each_seed(
        "a_writer_read_by_a_durability_service_has_the_high_water_window",
        4,
        |seed| {
            let cfg = node_config(1);
            let (floor, high) = (cfg.writer_window_floor_bytes, cfg.writer_high_water_bytes);
            assert!(
                floor < high,
                "the defaults changed: floor {floor}, high {high}"
            );
            let ordinary = unacknowledged_to_a_silent_reader(seed, false);
            let service = unacknowledged_to_a_silent_reader(seed, true);
            assert!(
                (floor - 16 * 1024..=floor).contains(&ordinary),
                "seed {seed:#x}: {ordinary} B unacknowledged to an ordinary reader, window {floor}"
            );
            assert!(
                (high - 16 * 1024..=high).contains(&service),
                "seed {seed:#x}: {service} B unacknowledged to a service's reader, window {high}"
            );
        },
    );
}

/// A service's reader acknowledges only what its service stored, so its ACKNACK, based there,
/// reaches 256 changes at most: changes lost further on are named by Halyard's NACK, and
/// repaired before the service stores anything. (Before, they waited for the service's
/// commits to bring the ACKNACK within reach: a late service on a fast stream of small
/// samples was repaired 256 changes per commit, and the stream kept that pace.)
#[test]
fn a_service_reader_gets_losses_beyond_its_acknack_repaired_before_it_stores() {
    for_each_seed(
        "a_service_reader_gets_losses_beyond_its_acknack_repaired_before_it_stores",
        20,
        |seed| {
            let HeldService {
                mut net,
                a,
                s,
                w,
                svc,
            } = held_service_matched(seed);
            const N: u64 = 2000;
            for i in 0..N {
                write_retrying(&mut net, a, w, KEY, indexed_payload(i, 64));
            }
            let held = svc.reader;
            let mut services = [svc];
            let got_all = |net: &SimNet| {
                let mut got: Vec<Option<u64>> = received(net, s, held);
                got.sort();
                got.dedup();
                got.len() as u64 == N
            };
            for _ in 0..100 {
                if got_all(&net) {
                    break;
                }
                run_services(&mut net, &mut services, 100 * MS);
            }
            let got = received(&net, s, held).len();
            assert!(
                got_all(&net),
                "seed {seed:#x}: the service's reader got {got} of {N} in 10 s with nothing stored"
            );
            assert!(
                !net.node(a).p.writer_all_acked(w),
                "seed {seed:#x}: acknowledged though the service stored nothing"
            );
            assert!(services[0].stored.is_empty(), "seed {seed:#x}");
        },
    );
}

/// A writer whose participant feeds its process's embedded service in memory
/// (`Participant::set_fed_service`): the service's reader is handed the history held at the
/// match and every change written after, in order, nothing of it travels the lossy network,
/// and the writer counts as acknowledged exactly what the service says it stored; the
/// reader's own ACKNACKs, which know nothing of it, move nothing.
#[test]
fn a_fed_service_reader_is_handed_every_change_and_acknowledges_by_its_commits() {
    for_each_seed("a_fed_service_reader_is_handed_every_change", 20, |seed| {
        let mut net = SimNet::new(seed, faults());
        let a = net.add_node(node_config(1));
        let s = net.add_node(node_config(2));
        let service_prefix = net.p(s).guid_prefix();
        net.p(a).set_fed_service(Some(service_prefix));
        let now = net.instant();
        let w = net
            .p(a)
            .create_writer(now, spec_w(DurabilityKind::Transient));
        for i in 0..10 {
            write_retrying(&mut net, a, w, KEY, indexed_payload(i, 64));
        }
        let mut svc = Service::start(&mut net, s);
        svc.storing = false;
        let reader = Guid::new(service_prefix, svc.reader);
        let ok = net.run_until(30 * SEC, |n| matched_service(n, a, w, reader));
        assert!(
            ok,
            "seed {seed:#x}: the writer never matched the service's reader"
        );
        // The history was handed at the match: storing it at once acknowledges it, whatever
        // the reader, which matches the writer on its side about now, says on the wire (its
        // first ACKNACK acknowledges nothing, and arrives before or after this).
        assert!(
            net.p(a).fed_ack(w, reader, SequenceNumber(11)),
            "seed {seed:#x}"
        );
        let ok = net.run_until(30 * SEC, |n| {
            n.node(s).saw(|e| {
                matches!(e, halyard_core::Event::SubscriptionMatched { reader: r, matched: true, .. } if *r == svc.reader)
            })
        });
        assert!(
            ok,
            "seed {seed:#x}: the service's reader never matched the writer"
        );
        net.run_for(SEC);
        assert!(
            !net.p(a).fed_ack(w, reader, SequenceNumber(11)),
            "seed {seed:#x}: the reader's own ACKNACK undid what the service stored"
        );
        for i in 10..50 {
            write_retrying(&mut net, a, w, KEY, indexed_payload(i, 64));
        }
        net.run_for(2 * SEC);
        let mut fed = Vec::new();
        while let Some(x) = net.p(a).poll_fed() {
            assert_eq!(x.reader, svc.reader, "seed {seed:#x}");
            assert_eq!(x.writer, Guid::new(net.node(a).p.guid_prefix(), w));
            fed.push((x.sn, parse_indexed(&x.payload)));
        }
        let want: Vec<(SequenceNumber, Option<u64>)> = (0..50)
            .map(|i| (SequenceNumber(i as i64 + 1), Some(i)))
            .collect();
        assert_eq!(
            fed, want,
            "seed {seed:#x}: the history, then each change, in order"
        );
        assert!(
            received(&net, s, svc.reader).is_empty(),
            "seed {seed:#x}: the fed reader got data over the network"
        );
        assert!(
            !net.node(a).p.writer_all_acked(w),
            "seed {seed:#x}: acknowledged before the service said it stored anything"
        );
        assert_eq!(
            net.node(a).p.writer_service_readers(w),
            vec![halyard_core::ServiceReader {
                reader,
                fed: true,
                synced: true,
                stored_all: false,
            }],
            "seed {seed:#x}"
        );
        assert_eq!(
            net.node(a).p.writer_synced_readers(w),
            0,
            "seed {seed:#x}: a service's reader is no application peer"
        );
        assert!(
            net.p(a).fed_ack(w, reader, SequenceNumber(31)),
            "seed {seed:#x}"
        );
        assert!(
            !net.node(a).p.writer_all_acked(w),
            "seed {seed:#x}: 31..50 not stored"
        );
        assert!(
            net.p(a).fed_ack(w, reader, SequenceNumber(51)),
            "seed {seed:#x}"
        );
        assert!(
            net.node(a).p.writer_all_acked(w),
            "seed {seed:#x}: all stored"
        );
    });
}

/// Whether writer `w` of node `node` matched durability service reader `reader` (a
/// service's reader is listed apart from the application's peers).
fn matched_service(net: &SimNet, node: usize, w: EntityId, reader: Guid) -> bool {
    net.node(node)
        .p
        .writer_service_readers(w)
        .iter()
        .any(|s| s.reader == reader)
}
